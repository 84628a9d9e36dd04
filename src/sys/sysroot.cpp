#include "sys/sysroot.hpp"

#include "sys/fd_read.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <mutex>
#include <utility>

#include "sys/text.hpp"

namespace perfgap::sys {
namespace {

bool harmless(int err) {
  switch (err) {
    case ENOENT: case ENOTDIR: case EACCES: case EPERM: case EINVAL:
    case ENODEV: case ENXIO: case EOPNOTSUPP: case ENODATA:
      return true;
    default:
      return false;
  }
}

ReadError error_for(int err, std::string_view path) {
  return ReadError{harmless(err) ? ReadError::unavailable : ReadError::failed, err,
                   std::string(path)};
}

// Seccomp profiles of some container runtimes answer ENOSYS or EPERM to openat2 (older
// kernels ENOSYS, some filters EINVAL); then every path is walked by hand from the root
// (walk_in below), with the same rules as RESOLVE_IN_ROOT: never a plain open() of a path
// that may hold links.
std::atomic<bool> openat2_works{true};
std::atomic<unsigned long> walks_done{0};

bool openat2_wanted() {
  static const bool wanted = [] {
    const char* v = std::getenv("PERFGAP_NO_OPENAT2");
    return v == nullptr || std::strcmp(v, "1") != 0;
  }();
  return wanted && openat2_works.load(std::memory_order_relaxed);
}

constexpr int kMaxLinks = 40;  // the kernel's MAXSYMLINKS, as openat2 counts them

// The directories walked so far, the root excluded (it is never closed here): a ".." pops
// one, so a walk can never climb above the root, whatever the tree's links say.
class Walk {
 public:
  explicit Walk(int root) : root_(root) {}
  ~Walk() {
    for (auto& d : stack_) ::close(d.fd);
  }
  Walk(const Walk&) = delete;
  Walk& operator=(const Walk&) = delete;

  int top() const { return stack_.empty() ? root_ : stack_.back().fd; }
  bool top_is_dir() const { return stack_.empty() || stack_.back().is_dir; }
  bool at_root() const { return stack_.empty(); }
  void push(int fd, std::string name, const struct stat& st) { stack_.push_back({fd, std::move(name), S_ISDIR(st.st_mode), st}); }
  void pop() {
    ::close(stack_.back().fd);
    stack_.pop_back();
  }
  void to_root() {
    while (!stack_.empty()) pop();
  }
  // The directory holding the final object and the object's name in it.
  int parent() const { return stack_.size() < 2 ? root_ : stack_[stack_.size() - 2].fd; }
  const std::string& name() const { return stack_.back().name; }
  const struct stat& top_stat() const { return stack_.back().st; }
  // A new O_PATH descriptor of the final object.
  int dup_top() const { return stack_.empty() ? ::openat(root_, ".", O_PATH | O_CLOEXEC) : ::fcntl(top(), F_DUPFD_CLOEXEC, 0); }

 private:
  struct Dir {
    int fd;
    std::string name;
    bool is_dir;
    struct stat st;
  };
  int root_;
  std::vector<Dir> stack_;
};

void push_components(std::vector<std::string>& todo, std::string_view path) {
  auto parts = split(path, '/');
  for (auto it = parts.rbegin(); it != parts.rend(); ++it) todo.emplace_back(*it);
}

// Resolves `path` one component at a time from `root`: each component opened O_PATH |
// O_NOFOLLOW, a link read with readlinkat and its target walked in its place (absolute
// targets from the tree's root), ".." clamped at the root, more than 40 links ELOOP. The
// final link is followed when `follow_last`. Returns 0 or an errno.
int walk_in(std::string_view path, bool follow_last, Walk& w) {
  walks_done.fetch_add(1, std::memory_order_relaxed);
  std::vector<std::string> todo;  // components still to walk, the next one last
  push_components(todo, path);
  int links = 0;
  while (!todo.empty()) {
    std::string c = std::move(todo.back());
    todo.pop_back();
    // Anything after a non-directory ("file/x", "file/.", "file/..", "file/") is ENOTDIR.
    if (!w.top_is_dir()) return ENOTDIR;
    if (c.empty() || c == ".") continue;
    if (c == "..") {
      if (!w.at_root()) w.pop();
      continue;
    }
    int fd = ::openat(w.top(), c.c_str(), O_PATH | O_NOFOLLOW | O_CLOEXEC);
    if (fd < 0) return errno;
    struct stat st {};
    if (::fstat(fd, &st) != 0) {
      int err = errno;
      ::close(fd);
      return err;
    }
    const bool last = todo.empty();
    if (S_ISLNK(st.st_mode) && (!last || follow_last)) {
      if (++links > kMaxLinks) {
        ::close(fd);
        return ELOOP;
      }
      char buf[4096];
      ssize_t n = ::readlinkat(fd, "", buf, sizeof buf);
      int err = errno;
      ::close(fd);
      if (n < 0) return err;
      if (n == 0) return ENOENT;
      if (static_cast<std::size_t>(n) == sizeof buf) return ENAMETOOLONG;
      std::string_view target(buf, static_cast<std::size_t>(n));
      if (target.front() == '/') w.to_root();  // absolute: from the tree's root, never the host's
      push_components(todo, target);
      continue;
    }
    w.push(fd, std::move(c), st);
  }
  return 0;
}

// How a tree object is wanted: a descriptor of it (following a final link or not), or open
// for reading, which only regular files and directories are: device nodes, FIFOs and
// sockets of a tree are never opened (a GPU node would initialise; a FIFO could block).
enum class Want { path_follow, path_nofollow, regular, directory };

// The kind check shared by both resolvers: 0 when `st` is what `want` opens.
int kind_error(const struct stat& st, Want want) {
  if (want == Want::regular) {
    if (S_ISDIR(st.st_mode)) return EISDIR;
    if (!S_ISREG(st.st_mode)) return ENXIO;
  }
  if (want == Want::directory && !S_ISDIR(st.st_mode)) return ENOTDIR;
  return 0;
}

constexpr int kReadFlags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;

// An open file is the object that was checked (same device and inode), or EAGAIN.
int same_object(int fd, const struct stat& checked) {
  struct stat now {};
  if (::fstat(fd, &now) != 0 || now.st_dev != checked.st_dev || now.st_ino != checked.st_ino) {
    ::close(fd);
    errno = EAGAIN;
    return -1;
  }
  return fd;
}

int open_walked(int root, std::string_view rel, Want want) {
  Walk w(root);
  if (int err = walk_in(rel, want != Want::path_nofollow, w); err != 0) {
    errno = err;
    return -1;
  }
  if (want == Want::path_follow || want == Want::path_nofollow) return w.dup_top();
  struct stat root_st {};
  if (w.at_root()) {
    if (::fstat(root, &root_st) != 0) return -1;
  }
  const struct stat& st = w.at_root() ? root_st : w.top_stat();
  if (int err = kind_error(st, want); err != 0) {
    errno = err;
    return -1;
  }
  if (want == Want::directory) return ::openat(w.top(), ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
  // A regular file: opened by its name in its directory, not following a link swapped in.
  int fd = ::openat(w.parent(), w.name().c_str(), kReadFlags | O_NOFOLLOW);
  if (fd < 0) return -1;
  return same_object(fd, st);
}

long openat2_in(int root, const std::string& rel, int flags) {
  struct open_how how {};
  how.flags = static_cast<unsigned long long>(flags);
  how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
  // With RESOLVE_IN_ROOT the kernel answers EAGAIN when a rename or mount anywhere on the
  // system raced with a ".." step (sysfs links are full of them): retry, as openat2(2) asks.
  // Found as a transient "not readable" cpufreq file on a machine busy compiling.
  long fd = -1;
  for (int attempt = 0; attempt < 64; ++attempt) {
    fd = ::syscall(SYS_openat2, root, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || errno != EAGAIN) break;
  }
  return fd;
}

int open_in(int root_fd, std::string_view path, Want want) {
  std::string rel(path);
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  if (!openat2_wanted()) return open_walked(root_fd, rel, want);
  const int path_flags = O_PATH | O_CLOEXEC | (want == Want::path_nofollow ? O_NOFOLLOW : 0);
  long p = openat2_in(root_fd, rel, path_flags);
  if (p < 0) {
    const int err = errno;
    if (err != ENOSYS && err != EPERM && err != EINVAL) return -1;
    // ENOSYS: no openat2 here. EPERM/EINVAL can be a seccomp filter or a real answer: only
    // give up on openat2 when the walk by hand reaches the object.
    int fd = open_walked(root_fd, rel, want);
    if (err == ENOSYS || fd >= 0) openat2_works.store(false);
    if (fd < 0 && err != ENOSYS) errno = err;
    return fd;
  }
  int pfd = static_cast<int>(p);
  if (want == Want::path_follow || want == Want::path_nofollow) return pfd;
  struct stat st {};
  int rc = ::fstat(pfd, &st);
  int err = rc != 0 ? errno : kind_error(st, want);
  if (err != 0) {
    ::close(pfd);
    errno = err;
    return -1;
  }
  if (want == Want::directory) {
    int fd = ::openat(pfd, ".", O_RDONLY | O_DIRECTORY | O_CLOEXEC);
    err = errno;
    ::close(pfd);
    errno = err;
    return fd;
  }
  ::close(pfd);
  long fd = openat2_in(root_fd, rel, kReadFlags);
  if (fd < 0) return -1;
  return same_object(static_cast<int>(fd), st);
}

std::pair<std::string_view, std::string_view> split_parent(std::string_view path) {
  auto slash = path.rfind('/');
  if (slash == std::string_view::npos) return {".", path};
  return {slash == 0 ? std::string_view("/") : path.substr(0, slash), path.substr(slash + 1)};
}

}  // namespace

std::string ReadError::reason() const {
  switch (kind) {
    case too_large: return "larger than the read limit";
    case timed_out: return "read timed out";
    default: break;
  }
  switch (err) {
    case ENOENT: case ENOTDIR: return "not present";
    case EACCES: case EPERM: return "permission denied";
    case EINVAL: return "invalid for this system";
    case ENODEV: case ENXIO: return "no such device";
    case EOPNOTSUPP: return "not supported";
    case ENODATA: return "no data";
    default: return std::strerror(err);
  }
}

std::string join(std::string_view dir, std::string_view name) {
  std::string out(dir);
  if (out.empty() || out.back() != '/') out.push_back('/');
  out.append(name);
  return out;
}

Sysroot Sysroot::live() { return Sysroot(); }

tl::expected<Sysroot, std::string> Sysroot::at(const std::string& dir) {
  int fd = ::open(dir.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (fd < 0) {
    return tl::unexpected(dir + ": " + (errno == ENOTDIR ? std::string("not a directory")
                                                          : std::string(std::strerror(errno))));
  }
  Sysroot s;
  s.root_ = dir.empty() ? "." : dir;
  s.root_fd_ = std::shared_ptr<int>(new int(fd), [](int* p) { ::close(*p); delete p; });
  return s;
}

namespace {

std::atomic<bool> read_log_on{false};
std::mutex read_log_mutex;
std::vector<std::string> read_log;

void log_read(std::string_view path) {
  if (!read_log_on.load(std::memory_order_relaxed)) return;
  std::lock_guard lock(read_log_mutex);
  read_log.emplace_back(path);
}

}  // namespace

void start_read_log() {
  std::lock_guard lock(read_log_mutex);
  read_log.clear();
  read_log_on.store(true);
}

std::vector<std::string> stop_read_log() {
  read_log_on.store(false);
  std::lock_guard lock(read_log_mutex);
  return std::exchange(read_log, {});
}

ReadResult<int> Sysroot::open_read(std::string_view path) const {
  log_read(path);
  const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;  // a FIFO must not hang us
  int fd = is_live() ? ::open(std::string(path).c_str(), flags) : open_in(*root_fd_, path, Want::regular);
  if (fd < 0) return tl::unexpected(error_for(errno, path));
  return fd;
}

ReadResult<std::string> Sysroot::read(std::string_view path, std::size_t max_bytes) const {
  auto fd = open_read(path);
  if (!fd) return tl::unexpected(fd.error());
  std::string out;
  int err = 0;
  switch (read_fd_to_end(*fd, max_bytes, out, err)) {
    case FdRead::ok: return out;
    case FdRead::too_large: return tl::unexpected(ReadError{ReadError::too_large, 0, std::string(path)});
    case FdRead::error: break;
  }
  return tl::unexpected(error_for(err, path));
}

ReadResult<std::string> Sysroot::read_value(std::string_view path) const {
  auto r = read(path, 1u << 16);
  if (!r) return r;
  return std::string(trim_ws(*r));
}

std::vector<ReadResult<std::string>> Sysroot::read_values_in(std::string_view dir, const std::vector<std::string>& names) const {
  std::vector<ReadResult<std::string>> out;
  out.reserve(names.size());
  const int dir_flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  const int dfd = is_live() ? ::open(std::string(dir).c_str(), dir_flags) : open_in(*root_fd_, dir, Want::directory);
  if (dfd < 0) {
    // Each read answers for itself, as read_value would (the directory's error, per name).
    for (const auto& name : names) out.push_back(read_value(join(dir, name)));
    return out;
  }
  for (const auto& name : names) {
    const std::string path = join(dir, name);
    if (name.empty() || name == "." || name == ".." || name.find('/') != std::string::npos) {
      out.push_back(read_value(path));
      continue;
    }
    log_read(path);
    // In a tree a link is not followed here (it could point anywhere): such a name takes the
    // full resolution of read_value, as does anything not a regular file.
    int fd = ::openat(dfd, name.c_str(), O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK | (is_live() ? 0 : O_NOFOLLOW));
    if (fd >= 0 && !is_live()) {
      struct stat st {};
      if (::fstat(fd, &st) != 0 || !S_ISREG(st.st_mode)) {
        ::close(fd);
        fd = -1;
        errno = ELOOP;
      }
    }
    if (fd < 0) {
      if (!is_live() && (errno == ELOOP || errno == ENXIO)) out.push_back(read_value(path));
      else out.push_back(tl::unexpected(error_for(errno, path)));
      continue;
    }
    std::string text;
    int err = 0;
    switch (read_fd_to_end(fd, 1u << 16, text, err)) {
      case FdRead::ok: out.push_back(std::string(trim_ws(text))); break;
      case FdRead::too_large: out.push_back(tl::unexpected(ReadError{ReadError::too_large, 0, path})); break;
      case FdRead::error: out.push_back(tl::unexpected(error_for(err, path))); break;
    }
  }
  ::close(dfd);
  return out;
}

ReadResult<std::vector<std::string>> Sysroot::list(std::string_view dir) const {
  log_read(dir);
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = is_live() ? ::open(std::string(dir).c_str(), flags) : open_in(*root_fd_, dir, Want::directory);
  if (fd < 0) return tl::unexpected(error_for(errno, dir));
  DIR* d = ::fdopendir(fd);
  if (d == nullptr) {
    int err = errno;
    ::close(fd);
    return tl::unexpected(error_for(err, dir));
  }
  std::vector<std::string> names;
  while (dirent* e = ::readdir(d)) {
    if (std::strcmp(e->d_name, ".") == 0 || std::strcmp(e->d_name, "..") == 0) continue;
    names.emplace_back(e->d_name);
  }
  ::closedir(d);
  std::sort(names.begin(), names.end());
  return names;
}

ReadResult<std::string> Sysroot::readlink(std::string_view path) const {
  log_read(path);
  char buf[4096];
  ssize_t n;
  if (is_live()) {
    n = ::readlink(std::string(path).c_str(), buf, sizeof buf);
  } else {
    auto [parent, base] = split_parent(path);
    int dfd = open_in(*root_fd_, parent, Want::path_follow);
    if (dfd < 0) return tl::unexpected(error_for(errno, path));
    n = ::readlinkat(dfd, std::string(base).c_str(), buf, sizeof buf);
    int err = errno;
    ::close(dfd);
    errno = err;
  }
  if (n < 0) return tl::unexpected(error_for(errno, path));
  return std::string(buf, static_cast<std::size_t>(n));
}

ReadResult<struct stat> Sysroot::stat(std::string_view path) const {
  log_read(path);
  struct stat st {};
  if (is_live()) {
    if (::stat(std::string(path).c_str(), &st) != 0) return tl::unexpected(error_for(errno, path));
    return st;
  }
  int fd = open_in(*root_fd_, path, Want::path_follow);
  if (fd < 0) return tl::unexpected(error_for(errno, path));
  int rc = ::fstat(fd, &st);
  int err = errno;
  ::close(fd);
  if (rc != 0) return tl::unexpected(error_for(err, path));
  return st;
}

void force_no_openat2_for_tests(bool off) { openat2_works.store(!off); }
bool openat2_in_use() { return openat2_wanted(); }
unsigned long tree_walks() { return walks_done.load(); }

}  // namespace perfgap::sys
