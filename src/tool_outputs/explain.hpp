// What `perfgap explain` computes: the measured gap (gap's scoring of --reference and
// --measured) and the fail/warn findings of the reports (compare's reader) as a budget against
// the knowledge base (gap.budget, analyzers/budget.hpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::tool_outputs {

inline constexpr const char* kSystemKbDir = "/etc/perfgap/kb.d";

struct ExplainRequest {
  std::string reference, measured;   // step logs or milliseconds per iteration, as gap's
  std::vector<std::string> reports;  // check, analyze, fleet, compare reports (--format json)
  std::vector<std::string> kb_dirs;  // --kb, over the built-in base and kSystemKbDir
  double threshold = 0.95;
  std::optional<long> warmup;
};

struct ExplainResult {
  std::vector<report::Finding> findings;  // gap.budget, the step logs' damaged lines, an error per unusable report
  std::vector<std::string> inputs;        // the step logs, then the reports (source.inputs)
};

// Errors are for exit status 2: a malformed knowledge base, a gap that cannot be scored, no
// usable report.
tl::expected<ExplainResult, std::string> explain(const ExplainRequest& request);

}  // namespace perfgap::tool_outputs
