#include "sys/named_file.hpp"

#include "sys/fd_read.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>

namespace perfgap::sys {
namespace {

std::string why(int err) { return "cannot open: " + std::string(std::strerror(err)); }

std::string mib(std::size_t bytes) { return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes"; }

// An open descriptor ready for blocking reads, or why not.
tl::expected<int, std::string> open_named(const std::string& path, std::size_t max_bytes) {
  int fd = path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(why(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return tl::unexpected(why(err));
  }
  std::string bad = refused_kind(st, path == "-");
  if (bad.empty() && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes) bad = "larger than " + mib(max_bytes);
  if (!bad.empty()) {
    ::close(fd);
    return tl::unexpected(bad);
  }
  // The open did not wait; the reads may (a pipe's writer is still writing). A FIFO that
  // never had a writer reads as empty.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

std::string refused_kind(const struct ::stat& st, bool is_stdin) {
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (S_ISBLK(st.st_mode)) return "is a block device";
  if (S_ISSOCK(st.st_mode)) return "is a socket";
  // A device streams forever (/dev/zero, /dev/urandom) or is a terminal: refused at once
  // rather than read up to the size limit. Standard input is taken as given ("-").
  if (S_ISCHR(st.st_mode) && !is_stdin) return "is a character device (a regular file, a pipe or - expected)";
  return "";
}

tl::expected<std::string, std::string> read_named_file(const std::string& path, std::size_t max_bytes) {
  auto fd = open_named(path, max_bytes);
  if (!fd) return tl::unexpected(fd.error());
  std::string out;
  // A regular file's size is known: one allocation instead of doublings (profiles are 100s of MB).
  struct stat st {};
  if (::fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    out.reserve(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), max_bytes) + 1);
  int err = 0;
  switch (read_fd_to_end(*fd, max_bytes, out, err)) {
    case FdRead::ok: return out;
    case FdRead::too_large: return tl::unexpected("larger than " + mib(max_bytes));
    case FdRead::error: break;
  }
  return tl::unexpected("read error: " + std::string(std::strerror(err)));
}

tl::expected<void, std::string> probe_named_file(const std::string& path) {
  auto fd = open_named(path, static_cast<std::size_t>(-1));
  if (!fd) return tl::unexpected(fd.error());
  ::close(*fd);
  return {};
}

}  // namespace perfgap::sys
