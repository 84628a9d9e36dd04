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

// The executable NAME in a directory of $PATH (/usr/bin:/bin when unset); "" when none has it.
std::string find_on_path(const std::string& name);

// Lines of an output: its newline characters.
int line_count(const std::string& output);

// Whether an error output is exactly one line (what every usage and input error is).
bool one_line(const std::string& err);

}  // namespace perfgap::fixture
