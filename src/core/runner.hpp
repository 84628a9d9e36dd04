// Runs the selected checks against one Facts store. The checks run in turn on a worker with a
// deadline: a check that throws becomes an `error` finding, one that hangs (a blocked
// kernel read) is abandoned and reported as `error`, and the others still run.
#pragma once

#include <chrono>
#include <memory>
#include <vector>

#include "core/check.hpp"
#include "core/config.hpp"

namespace perfgap::core {

struct RunOptions {
  std::chrono::milliseconds check_timeout{30000};
};

std::vector<report::Finding> run_checks(const std::vector<const CheckInfo*>& checks,
                                        std::shared_ptr<facts::Facts> facts, const Config& config,
                                        const RunOptions& options);

}  // namespace perfgap::core
