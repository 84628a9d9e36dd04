// The one way perfgap runs another program (scontrol, srun, nsys export, perfgap-gpu, a swept
// benchmark): never through a shell, in a process group of its own (sys::spawn_in_own_group),
// with a deadline after which the whole group is stopped, and a stop flag a signal handler of
// the caller can set. A command that exits while something it started still holds its output
// open does not hang the caller: the holders get `exit_drain`, then the group is killed.
#pragma once

#include <sys/types.h>

#include <chrono>
#include <csignal>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgap::sys {

struct CommandResult {
  bool started = false;     // false: could not be executed (error says why)
  bool timed_out = false;   // stopped at the deadline
  bool stopped = false;     // stopped because *CommandOptions::stop was set
  int status = -1;          // exit status, or 128+signal; -1 when it was never reaped
  std::optional<int> exit_code;  // it exited (with this status)
  std::optional<int> signal;     // it was killed by this signal (ours or its own crash)
  std::string out, err;     // captured when capture_output and no on_output, else empty
  std::string error;
  double duration_s = 0;    // from the start to its exit (or to the end of the wait)
};

struct CommandOptions {
  // Zero: no deadline (a sweep's benchmark without --timeout).
  std::chrono::milliseconds timeout{10000};
  // Set (or, with an empty value, remove) these variables in the child's environment.
  std::vector<std::pair<std::string, std::string>> env;
  // The child's whole environment ("NAME=value"), instead of ours with `env` applied.
  std::optional<std::vector<std::string>> environment;
  bool capture_output = true;  // false: stdout goes to our stderr, stderr to our stderr
  bool merge_stderr = false;   // stderr into the same stream as stdout (a benchmark's log)
  // When set, the captured output goes here as it arrives (stdout, or both when merged)
  // instead of into CommandResult::out.
  std::function<void(std::string_view)> on_output;
  // On timeout or stop: SIGTERM to the group first (srun cancels its step on it), SIGKILL
  // after this; zero: SIGKILL at once.
  std::chrono::milliseconds term_grace{0};
  // After the command exits, how long what it left behind may keep its output open.
  std::chrono::milliseconds exit_drain{1000};
  // Set (by a signal handler of the caller) while the command runs: its group is stopped as at
  // the deadline, within about 100 ms.
  const volatile std::sig_atomic_t* stop = nullptr;
};

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options);

// This process's children now, as /proc lists them (their parent is us): with the subreaper
// flag, what a finished benchmark left behind (sweep stops them).
std::vector<pid_t> own_children();

}  // namespace perfgap::sys
