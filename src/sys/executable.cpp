#include "sys/executable.hpp"

#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstdlib>
#include <cstring>
#include <string_view>

namespace perfgap::sys {

std::optional<std::string> own_executable_dir() {
  char buf[4096];
  const ssize_t n = ::readlink("/proc/self/exe", buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  std::string path(buf, static_cast<std::size_t>(n));
  const auto slash = path.rfind('/');
  if (slash == std::string::npos) return std::nullopt;
  return slash == 0 ? std::string("/") : path.substr(0, slash);
}

std::string executable_problem(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return errno == ENOENT ? "not present" : std::strerror(errno);
  if (!S_ISREG(st.st_mode)) return "not a regular file";
  if (::access(path.c_str(), X_OK) != 0) return "not executable";
  return "";
}

std::string find_executable(const std::string& name) {
  if (name.empty()) return {};
  if (name.find('/') != std::string::npos) return executable_problem(name).empty() ? name : std::string();
  const char* path = std::getenv("PATH");
  std::string_view dirs = path ? path : "/usr/local/bin:/usr/bin:/bin";
  while (true) {
    const auto colon = dirs.find(':');
    const std::string_view dir = dirs.substr(0, colon);
    std::string candidate = (dir.empty() ? std::string(".") : std::string(dir)) + "/" + name;
    if (executable_problem(candidate).empty()) return candidate;
    if (colon == std::string_view::npos) return {};
    dirs.remove_prefix(colon + 1);
  }
}

}  // namespace perfgap::sys

namespace perfgap::sys {
namespace {

// MFD_EXEC (Linux 6.3): asks for an executable memfd where vm.memfd_noexec=1 makes them
// non-executable by default. Older kernels refuse the unknown flag (EINVAL): asked again
// without it, where every memfd is executable.
#ifndef MFD_EXEC
constexpr unsigned kMfdExec = 0x0010U;
#else
constexpr unsigned kMfdExec = MFD_EXEC;
#endif

std::string errno_text(const char* what) { return std::string(what) + ": " + std::strerror(errno); }

}  // namespace

tl::expected<MemoryExecutable, std::string> memory_executable(const char* name, const unsigned char* image, std::size_t size) {
  if (image == nullptr || size == 0) return tl::unexpected(std::string("no image"));
  const unsigned base = MFD_CLOEXEC | MFD_ALLOW_SEALING;
  int fd = static_cast<int>(::syscall(SYS_memfd_create, name, base | kMfdExec));
  if (fd < 0 && errno == EINVAL) fd = static_cast<int>(::syscall(SYS_memfd_create, name, base));
  if (fd < 0) {
    if (errno == EACCES || errno == EPERM)
      return tl::unexpected(errno_text("memfd_create(MFD_EXEC) refused (vm.memfd_noexec=2 or a security policy)"));
    return tl::unexpected(errno_text("memfd_create"));
  }
  auto fail = [&](const char* what) {
    auto why = errno_text(what);
    ::close(fd);
    return tl::unexpected(why);
  };
  for (std::size_t done = 0; done < size;) {
    const ssize_t n = ::write(fd, image + done, size - done);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return fail("write to memfd");
    done += static_cast<std::size_t>(n);
  }
  // Sealed: nothing (this process included) can change the image once it is in place.
  if (::fcntl(fd, F_ADD_SEALS, F_SEAL_SHRINK | F_SEAL_GROW | F_SEAL_WRITE | F_SEAL_SEAL) != 0) return fail("sealing the memfd");
  MemoryExecutable m{"/proc/self/fd/" + std::to_string(fd), fd};
  // exec goes through /proc (posix_spawn takes a path): without /proc there is no way in.
  if (auto why = executable_problem(m.path); !why.empty()) {
    ::close(fd);
    return tl::unexpected(m.path + ": " + why + " (is /proc mounted?)");
  }
  return m;
}

}  // namespace perfgap::sys
