// While a StopSignals lives, SIGINT, SIGTERM and SIGHUP only set one flag (the first signal
// wins): sys::run_command watches it (CommandOptions::stop) and stops its child's group, loops
// look at it between steps, and the holder cleans up (temporary files, a step half done) before
// it ends. System calls restart (SA_RESTART): the flag, not EINTR, says stop. The handlers in
// place before are restored when it goes. The one guard of analyze's nsys export, slurm's pair
// search, sweep's benchmarks and an unpacked snapshot; nested guards share the flag (an inner
// one does not clear what the outer one caught).
#pragma once

#include <csignal>

#include <signal.h>  // NOLINT(modernize-deprecated-headers): struct sigaction is POSIX, not in <csignal>

namespace perfgap::sys {

class StopSignals {
 public:
  StopSignals();
  ~StopSignals();
  StopSignals(const StopSignals&) = delete;
  StopSignals& operator=(const StopSignals&) = delete;

  // The flag for CommandOptions::stop; 0 until a signal came, then its number.
  static volatile std::sig_atomic_t* flag();
  static int pending() { return *flag(); }
  // After the cleanup: the signal that came (if any) takes its normal course (the process ends
  // as it would have, exit 128+N).
  static void raise_pending();

 private:
  static constexpr int kSignals[3] = {SIGINT, SIGTERM, SIGHUP};
  struct sigaction saved_[3] = {};
  static int depth_;
};

}  // namespace perfgap::sys
