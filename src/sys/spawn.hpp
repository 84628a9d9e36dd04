// Starting a command the way perfgap runs every external program (scontrol, srun, a swept
// benchmark): never through a shell, stdin from /dev/null, in a process group of its own so
// that a deadline or Ctrl-C can stop it and everything it started with one kill(-pid, ...),
// with default signal dispositions and an empty signal mask whatever perfgap's are.
#pragma once

#include <sys/types.h>

#include <string>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::sys {

// argv[0] is looked up in PATH when it has no '/'. `env` is the child's whole environment
// ("NAME=value" strings). stdout_fd/stderr_fd: descriptors the child gets as 1 and 2; -1 keeps
// perfgap's own. The error names argv[0] and why.
tl::expected<pid_t, std::string> spawn_in_own_group(const std::vector<std::string>& argv,
                                                    const std::vector<std::string>& env, int stdout_fd,
                                                    int stderr_fd);

// The argv as one line for logs, reports and --dry-run, quoted the way a POSIX shell reads it
// back (words other than plain ones in single quotes).
std::string quote_command(const std::vector<std::string>& argv);

}  // namespace perfgap::sys
