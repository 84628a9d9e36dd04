// What `perfgap gap` computes, shared with explain: steps.gap and steps.tail of a measured run
// against a reference (each a step log or milliseconds per iteration).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::tool_outputs {

struct GapScore {
  std::vector<report::Finding> findings;  // steps.gap, steps.tail, damaged lines of the logs
  std::vector<std::string> inputs;        // the step logs read (source.inputs)
};
// Bad arguments or unusable logs: the error (exit 2).
tl::expected<GapScore, std::string> score_gap(const std::string& reference, const std::string& measured, double threshold, std::optional<long> warmup);

}  // namespace perfgap::tool_outputs
