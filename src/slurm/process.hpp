// Runs a command (never through a shell) with a bounded time: a hung scontrol or srun must
// not hang the health check or the fan-out. The child runs in its own process group, so a
// timeout takes down whatever it started too.
#pragma once

#include <chrono>
#include <csignal>
#include <string>
#include <utility>
#include <vector>

namespace perfgap::slurm {

struct CommandResult {
  bool started = false;     // false: could not be executed (error says why)
  bool timed_out = false;   // killed at the deadline
  bool stopped = false;     // killed because *CommandOptions::stop was set
  int status = -1;          // exit status, or 128+signal
  std::string out, err;     // captured when capture_output, else empty
  std::string error;
};

struct CommandOptions {
  std::chrono::milliseconds timeout{10000};
  // Set (or, with an empty value, remove) these variables in the child's environment.
  std::vector<std::pair<std::string, std::string>> env;
  bool capture_output = true;  // false: stdout goes to our stderr, stderr to our stderr
  // On timeout: SIGTERM to the group first (srun cancels its step on it), SIGKILL after this.
  std::chrono::milliseconds term_grace{0};
  // Set (by a signal handler of the caller) while the command runs: its group is stopped as at
  // the deadline, within about 100 ms.
  const volatile std::sig_atomic_t* stop = nullptr;
};

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options);

}  // namespace perfgap::slurm
