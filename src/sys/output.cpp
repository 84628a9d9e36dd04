#include "sys/output.hpp"

#include <fcntl.h>
#include <limits.h>
#include <stdlib.h>
#include <sys/socket.h>
#include <sys/stat.h>
#include <sys/un.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <filesystem>
#include <cstring>

namespace perfgap::sys {
namespace {

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    if (n == 0) {
      errno = EIO;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

std::string err_text(int err) { return std::strerror(err); }

// Where one --output lands, decided before anything is opened.
struct Target {
  enum Kind { standard, descriptor, atomic, direct, socket } kind = standard;
  std::string path;  // the file to replace (atomic) or to open (direct, socket)
  int fd = STDOUT_FILENO;
  mode_t mode = 0644;  // atomic: the replaced file's permissions, else 0644
};

std::string dir_of(const std::string& p) {
  auto slash = p.rfind('/');
  if (slash == std::string::npos) return ".";
  return slash == 0 ? "/" : p.substr(0, slash);
}

// A dangling link's final name: the chain followed by hand (relative targets from the
// link's directory), at most 40 links.
tl::expected<std::string, std::string> dangling_target(const std::string& path) {
  std::string p = path;
  for (int hops = 0; hops <= 40; ++hops) {
    struct stat st {};
    if (::lstat(p.c_str(), &st) != 0) {
      if (errno == ENOENT) return p;
      return tl::unexpected(path + ": " + err_text(errno));
    }
    if (!S_ISLNK(st.st_mode)) return tl::unexpected(path + ": cannot resolve the link");
    char buf[PATH_MAX];
    ssize_t n = ::readlink(p.c_str(), buf, sizeof buf - 1);
    if (n <= 0) return tl::unexpected(path + ": " + err_text(n < 0 ? errno : ENOENT));
    std::string t(buf, static_cast<std::size_t>(n));
    p = t.front() == '/' ? t : dir_of(p) + "/" + t;
  }
  return tl::unexpected(path + ": " + err_text(ELOOP));
}

const char* kind_name(mode_t m) {
  if (S_ISDIR(m)) return "is a directory";
  if (S_ISBLK(m)) return "is a block device";
  return "is not a regular file, character device, FIFO or socket";
}

tl::expected<Target, std::string> resolve(const std::string& path) {
  if (output_is_stdout(path)) return Target{};
  struct stat lst {};
  const bool is_link = ::lstat(path.c_str(), &lst) == 0 && S_ISLNK(lst.st_mode);
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) {
    const int err = errno;
    if (err != ENOENT) return tl::unexpected(path + ": " + err_text(err));
    if (!is_link) return Target{Target::atomic, path, -1, 0644};
    auto final_path = dangling_target(path);
    if (!final_path) return tl::unexpected(final_path.error());
    return Target{Target::atomic, *final_path, -1, 0644};
  }
  if (is_link) {
    // /dev/stdout, /dev/fd/1, /proc/self/fd/2: our own descriptor, whatever it is.
    for (int fd : {STDOUT_FILENO, STDERR_FILENO}) {
      struct stat fs {};
      if (::fstat(fd, &fs) == 0 && fs.st_dev == st.st_dev && fs.st_ino == st.st_ino) return Target{Target::descriptor, path, fd};
    }
  }
  if (S_ISCHR(st.st_mode) || S_ISFIFO(st.st_mode)) return Target{Target::direct, path, -1};
  if (S_ISSOCK(st.st_mode)) return Target{Target::socket, path, -1};
  if (!S_ISREG(st.st_mode)) return tl::unexpected(path + ": " + kind_name(st.st_mode) + " (--output takes a file, -, or a device/FIFO)");
  if (!is_link) return Target{Target::atomic, path, -1, static_cast<mode_t>(st.st_mode & 07777)};
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) return tl::unexpected(path + ": " + err_text(errno));
  return Target{Target::atomic, real, -1, static_cast<mode_t>(st.st_mode & 07777)};
}

tl::expected<void, std::string> write_socket(const std::string& shown, const std::string& path, const std::string& content) {
  sockaddr_un addr{};
  addr.sun_family = AF_UNIX;
  if (path.size() >= sizeof addr.sun_path) return tl::unexpected(shown + ": socket path too long");
  std::memcpy(addr.sun_path, path.c_str(), path.size() + 1);
  int err = 0;
  for (int type : {SOCK_STREAM, SOCK_SEQPACKET, SOCK_DGRAM}) {
    int fd = ::socket(AF_UNIX, type | SOCK_CLOEXEC, 0);
    if (fd < 0) return tl::unexpected(shown + ": " + err_text(errno));
    if (::connect(fd, reinterpret_cast<sockaddr*>(&addr), sizeof addr) != 0) {
      err = errno;
      ::close(fd);
      if (err == EPROTOTYPE) continue;  // another socket type listens there
      break;
    }
    bool ok = write_all(fd, content);
    err = errno;
    ::close(fd);
    if (!ok) return tl::unexpected(shown + ": write failed: " + err_text(err));
    return {};
  }
  return tl::unexpected(shown + ": " + err_text(err));
}

tl::expected<void, std::string> replace_file(const std::string& shown, const std::string& path, const std::string& content, mode_t mode) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return tl::unexpected(shown + ": cannot create a temporary file beside it: " + err_text(errno));
  ::fchmod(fd, mode);
  bool ok = write_all(fd, content) && ::fsync(fd) == 0;
  int err = errno;
  if (::close(fd) != 0 && ok) {
    ok = false;
    err = errno;
  }
  if (!ok) {
    ::unlink(tmp.c_str());
    return tl::unexpected(shown + ": write failed: " + err_text(err));
  }
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    err = errno;
    ::unlink(tmp.c_str());
    return tl::unexpected(shown + ": " + err_text(err));
  }
  return {};
}

}  // namespace

bool output_is_stdout(const std::string& path) { return path.empty() || path == "-"; }

tl::expected<void, std::string> check_output(const std::string& path) {
  auto t = resolve(path);
  if (!t) return tl::unexpected(t.error());
  if (t->kind == Target::atomic) {
    const std::string dir = dir_of(t->path);
    struct stat st {};
    if (::stat(dir.c_str(), &st) != 0 || !S_ISDIR(st.st_mode)) return tl::unexpected(path + ": its directory " + dir + " does not exist");
    if (::access(dir.c_str(), W_OK) != 0) return tl::unexpected(path + ": its directory " + dir + " is not writable");
  }
  return {};
}

tl::expected<void, std::string> write_output(const std::string& path, const std::string& content) {
  auto t = resolve(path);
  if (!t) return tl::unexpected(t.error());
  switch (t->kind) {
    case Target::standard:
      return write_stdout(content);
    case Target::descriptor:
      if (!write_all(t->fd, content)) return tl::unexpected(path + ": write failed: " + err_text(errno));
      return {};
    case Target::socket:
      return write_socket(path, t->path, content);
    case Target::direct: {
      // A FIFO waits for its reader here, as a shell redirection does.
      int fd = ::open(t->path.c_str(), O_WRONLY | O_CLOEXEC | O_NOCTTY);
      if (fd < 0) return tl::unexpected(path + ": " + err_text(errno));
      bool ok = write_all(fd, content);
      int err = errno;
      if (::close(fd) != 0 && ok) {
        ok = false;
        err = errno;
      }
      if (!ok) return tl::unexpected(path + ": write failed: " + err_text(err));
      return {};
    }
    case Target::atomic:
      return replace_file(path, t->path, content, t->mode);
  }
  return {};
}

tl::expected<void, std::string> write_atomically(const std::string& path, const std::string& content) {
  return replace_file(path, path, content, 0644);
}

tl::expected<void, std::string> write_stdout(const std::string& content) {
  if (!write_all(STDOUT_FILENO, content)) return tl::unexpected(std::string("stdout: ") + std::strerror(errno));
  return {};
}

tl::expected<void, std::string> make_output_directory(const std::string& path) {
  std::error_code ec;
  if (std::filesystem::is_directory(path, ec)) return {};
  if (std::filesystem::exists(path, ec)) return tl::unexpected(std::string("is not a directory"));
  std::filesystem::create_directories(path, ec);
  if (ec) return tl::unexpected("cannot create: " + ec.message());
  return {};
}

}  // namespace perfgap::sys
