// Where perfgap's own executable lies and whether a companion program is there: how perfgap
// finds the helpers installed beside it (perfgap-gpu, docs/GPU.md).
#pragma once

#include <cstddef>
#include <optional>
#include <string>

#include <tl/expected.hpp>

namespace perfgap::sys {

// The directory of the running executable (/proc/self/exe resolved); nullopt when unreadable.
std::optional<std::string> own_executable_dir();

// "" when `path` is a regular file this process may execute, else why not ("not present",
// "not executable", "a directory").
std::string executable_problem(const std::string& path);

// The one executable search: `name` as posix_spawnp would run it. A name with a '/' is taken
// as it is; else each directory of PATH in turn (an empty entry is the current directory;
// no PATH: /usr/local/bin:/usr/bin:/bin). "" when none is a regular executable file.
std::string find_executable(const std::string& name);

}  // namespace perfgap::sys

namespace perfgap::sys {

// A program image held in memory: a sealed memfd named `name` (what /proc/PID/exe shows),
// executable through `path` ("/proc/self/fd/N", valid for the life of this process; the
// descriptor is close-on-exec, so no child inherits it). How perfgap carries perfgap-gpu
// inside its own file (docs/GPU.md).
struct MemoryExecutable {
  std::string path;
  int fd = -1;
};
// Or why it cannot be made: no memfd_create, a kernel that refuses executable memfds
// (vm.memfd_noexec=2), no /proc. Whether the kernel then lets it be executed (SELinux,
// other exec policies) only the exec says: callers keep a fallback.
tl::expected<MemoryExecutable, std::string> memory_executable(const char* name, const unsigned char* image, std::size_t size);

}  // namespace perfgap::sys
