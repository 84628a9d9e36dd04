#include "sys/fd_read.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>

namespace perfgap::sys {

FdRead read_fd_to_end(int fd, std::size_t max_bytes, std::string& out, int& err) {
  char buf[65536];  // /proc/interrupts of a 384-CPU node is ~2 MB: fewer, larger reads
  FdRead result = FdRead::ok;
  bool sized = false;
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
    // A large regular file (a saved kernel log, /proc/kallsyms is not one): its size, taken
    // once, sizes the string, so it is not grown by doubling (each growth touches fresh pages).
    if (!sized && static_cast<std::size_t>(n) == sizeof buf) {
      sized = true;
      struct stat st {};
      if (::fstat(fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
        out.reserve(out.size() + std::min(static_cast<std::size_t>(st.st_size), max_bytes) + 1);
    }
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return result;
}

}  // namespace perfgap::sys
