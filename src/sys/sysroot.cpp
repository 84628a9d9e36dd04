#include "sys/sysroot.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <linux/openat2.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

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

// Seccomp profiles of some container runtimes answer ENOSYS or EPERM to openat2; then the
// tree is opened with plain openat, which only differs for absolute links inside the tree.
std::atomic<bool> openat2_works{true};

int open_in(int root_fd, std::string_view path, int flags) {
  std::string rel(path);
  while (!rel.empty() && rel.front() == '/') rel.erase(0, 1);
  if (rel.empty()) rel = ".";
  if (openat2_works.load(std::memory_order_relaxed)) {
    struct open_how how {};
    how.flags = static_cast<unsigned long long>(flags);
    how.resolve = RESOLVE_IN_ROOT | RESOLVE_NO_MAGICLINKS;
    long fd = ::syscall(SYS_openat2, root_fd, rel.c_str(), &how, sizeof how);
    if (fd >= 0 || (errno != ENOSYS && errno != EPERM)) return static_cast<int>(fd);
    if (errno == ENOSYS) openat2_works.store(false);
    if (errno == EPERM) {
      // EPERM can be a real permission answer; only give up on openat2 when openat agrees
      // the object is reachable.
      int plain = ::openat(root_fd, rel.c_str(), flags);
      if (plain >= 0) openat2_works.store(false);
      return plain;
    }
  }
  // Without openat2 the tree is only protected against ".." in the path itself; links inside
  // a tree are followed as the host resolves them (trees are the user's own captures).
  for (std::size_t pos = 0; (pos = rel.find("..", pos)) != std::string::npos; pos += 2) {
    bool starts = pos == 0 || rel[pos - 1] == '/';
    bool ends = pos + 2 == rel.size() || rel[pos + 2] == '/';
    if (starts && ends) {
      errno = ENOENT;
      return -1;
    }
  }
  return ::openat(root_fd, rel.c_str(), flags);
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

ReadResult<int> Sysroot::open_read(std::string_view path) const {
  const int flags = O_RDONLY | O_CLOEXEC | O_NOCTTY | O_NONBLOCK;  // a FIFO must not hang us
  int fd = is_live() ? ::open(std::string(path).c_str(), flags) : open_in(*root_fd_, path, flags);
  if (fd < 0) return tl::unexpected(error_for(errno, path));
  return fd;
}

ReadResult<std::string> Sysroot::read(std::string_view path, std::size_t max_bytes) const {
  auto fd = open_read(path);
  if (!fd) return tl::unexpected(fd.error());
  std::string out;
  char buf[65536];  // /proc/interrupts of a 384-CPU node is ~2 MB: fewer, larger reads
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(*fd);
      if (err == EAGAIN) return out;  // a non-blocking device with nothing queued
      return tl::unexpected(error_for(err, path));
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      ::close(*fd);
      return tl::unexpected(ReadError{ReadError::too_large, 0, std::string(path)});
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(*fd);
  return out;
}

ReadResult<std::string> Sysroot::read_value(std::string_view path) const {
  auto r = read(path, 1u << 16);
  if (!r) return r;
  return std::string(trim_ws(*r));
}

ReadResult<std::vector<std::string>> Sysroot::list(std::string_view dir) const {
  const int flags = O_RDONLY | O_DIRECTORY | O_CLOEXEC;
  int fd = is_live() ? ::open(std::string(dir).c_str(), flags) : open_in(*root_fd_, dir, flags);
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
  char buf[4096];
  ssize_t n;
  if (is_live()) {
    n = ::readlink(std::string(path).c_str(), buf, sizeof buf);
  } else {
    auto [parent, base] = split_parent(path);
    int dfd = open_in(*root_fd_, parent, O_PATH | O_DIRECTORY | O_CLOEXEC);
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
  struct stat st {};
  if (is_live()) {
    if (::stat(std::string(path).c_str(), &st) != 0) return tl::unexpected(error_for(errno, path));
    return st;
  }
  int fd = open_in(*root_fd_, path, O_PATH | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(error_for(errno, path));
  int rc = ::fstat(fd, &st);
  int err = errno;
  ::close(fd);
  if (rc != 0) return tl::unexpected(error_for(err, path));
  return st;
}

}  // namespace perfgap::sys
