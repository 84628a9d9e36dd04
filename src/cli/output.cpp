#include "cli/output.hpp"

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>

namespace perfgap::cli {
namespace {

bool write_all(int fd, const std::string& s) {
  std::size_t off = 0;
  while (off < s.size()) {
    ssize_t n = ::write(fd, s.data() + off, s.size() - off);
    if (n < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    off += static_cast<std::size_t>(n);
  }
  return true;
}

}  // namespace

tl::expected<void, std::string> write_atomically(const std::string& path, const std::string& content) {
  std::string tmp = path + ".tmp.XXXXXX";
  int fd = ::mkstemp(tmp.data());
  if (fd < 0) return tl::unexpected(path + ": cannot create a temporary file beside it: " + std::strerror(errno));
  ::fchmod(fd, 0644);
  if (!write_all(fd, content) || ::fsync(fd) != 0) {
    int err = errno;
    ::close(fd);
    ::unlink(tmp.c_str());
    return tl::unexpected(path + ": write failed: " + std::strerror(err));
  }
  ::close(fd);
  if (::rename(tmp.c_str(), path.c_str()) != 0) {
    int err = errno;
    ::unlink(tmp.c_str());
    return tl::unexpected(path + ": " + std::strerror(err));
  }
  return {};
}

tl::expected<void, std::string> write_stdout(const std::string& content) {
  if (!write_all(STDOUT_FILENO, content)) return tl::unexpected(std::string("stdout: ") + std::strerror(errno));
  return {};
}

bool stdout_is_terminal() { return ::isatty(STDOUT_FILENO) == 1; }

bool color_wanted() {
  const char* no = std::getenv("NO_COLOR");
  if (no != nullptr && *no != '\0') return false;
  const char* term = std::getenv("TERM");
  if (term != nullptr && std::strcmp(term, "dumb") == 0) return false;
  return stdout_is_terminal();
}

}  // namespace perfgap::cli
