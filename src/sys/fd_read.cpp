#include "sys/fd_read.hpp"

#include <unistd.h>

#include <cerrno>

namespace perfgap::sys {

FdRead read_fd_to_end(int fd, std::size_t max_bytes, std::string& out, int& err) {
  char buf[65536];  // /proc/interrupts of a 384-CPU node is ~2 MB: fewer, larger reads
  FdRead result = FdRead::ok;
  for (;;) {
    ssize_t n = ::read(fd, buf, sizeof buf);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno != EAGAIN) {
        err = errno;
        result = FdRead::error;
      }
      break;
    }
    if (n == 0) break;
    if (out.size() + static_cast<std::size_t>(n) > max_bytes) {
      result = FdRead::too_large;
      break;
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return result;
}

}  // namespace perfgap::sys
