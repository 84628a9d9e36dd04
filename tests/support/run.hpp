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

}  // namespace perfgap::fixture
