// Runs the perfgap binary as a user would, capturing stdout, stderr and the exit status.
#pragma once

#include <string>
#include <utility>
#include <vector>

namespace perfgap::fixture {

struct RunResult {
  int status = -1;  // exit status, or 128+signal
  std::string out, err;
};

RunResult run_binary(const std::string& binary, const std::vector<std::string>& args,
                     const std::vector<std::pair<std::string, std::string>>& extra_env = {});

// A program started in the background (a server a test talks to), its stdout and stderr into
// `log`. stop() (also the destructor, so a failing test stops it too) ends it by its PID:
// SIGTERM, then SIGKILL when it has not exited within `grace_ms`.
class Background {
 public:
  Background(const std::string& binary, const std::vector<std::string>& args, const std::string& log);
  ~Background();
  Background(const Background&) = delete;
  Background& operator=(const Background&) = delete;
  int pid() const { return pid_; }  // 0 when it could not be started
  bool running();                   // not exited yet (reaps it when it has)
  void stop(int grace_ms = 10000);
  const std::string& error() const { return error_; }

 private:
  int pid_ = 0;
  std::string error_;
};

// The executable NAME in a directory of $PATH (/usr/bin:/bin when unset); "" when none has it.
std::string find_on_path(const std::string& name);

// Lines of an output: its newline characters.
int line_count(const std::string& output);

// Whether an error output is exactly one line (what every usage and input error is).
bool one_line(const std::string& err);

}  // namespace perfgap::fixture
