// Running one benchmark: no shell, its own process group, stdout+stderr captured to a file
// (bounded: the head and the tail are kept), a deadline after which the group gets SIGTERM
// then SIGKILL, and SIGINT/SIGTERM to perfgap stopping it the same way.
#pragma once

#include <string>
#include <vector>

#include "sweep/sweep.hpp"
#include "sys/stop_signals.hpp"

namespace perfgap::sweep {

struct RunLimits {
  double timeout_s = 0;                  // 0: no limit
  double grace_s = 3;                    // SIGTERM -> SIGKILL
  std::size_t head_bytes = 16u << 20;    // output kept from the start
  std::size_t tail_bytes = 16u << 20;    // and from the end (the result table is there)
};

// Runs argv (argv[0] looked up in PATH when it has no '/') with exactly `env`, output to
// `log_path`, through sys::run_command. `kept` receives the output as written to the file (for parsing).
ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log_path,
                          const RunLimits& limits, std::string& kept);

// sys::StopSignals for the sweep: SIGINT/SIGTERM/SIGHUP make a running run_process stop its
// benchmark and later runs not start; while the guard lives perfgap is also a child subreaper,
// so what a benchmark leaves behind outside its process group comes back to it (stop_orphans).
// The previous handlers come back when the guard goes.
class InterruptGuard {
 public:
  InterruptGuard();
  ~InterruptGuard();
  InterruptGuard(const InterruptGuard&) = delete;
  InterruptGuard& operator=(const InterruptGuard&) = delete;

 private:
  sys::StopSignals signals_;
};
// The signal that interrupted the sweep, or 0.
int interrupt_signal();
// Stops (SIGTERM, SIGKILL after `grace_s`) and reaps every child of this process: run after
// each benchmark, when the only children left are what escaped its process group.
void stop_orphans(double grace_s);

// `LAUNCHER --version` (a few seconds at most); "" when it cannot be run.
std::string launcher_version(const std::string& launcher);

}  // namespace perfgap::sweep
