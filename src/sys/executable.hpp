// Where perfgap's own executable lies and whether a companion program is there: how perfgap
// finds the helpers installed beside it (perfgap-gpu, docs/GPU.md).
#pragma once

#include <optional>
#include <string>

namespace perfgap::sys {

// The directory of the running executable (/proc/self/exe resolved); nullopt when unreadable.
std::optional<std::string> own_executable_dir();

// "" when `path` is a regular file this process may execute, else why not ("not present",
// "not executable", "a directory").
std::string executable_problem(const std::string& path);

}  // namespace perfgap::sys
