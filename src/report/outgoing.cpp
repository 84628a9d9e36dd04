#include "report/outgoing.hpp"

#include <fmt/format.h>

#include "report/redact.hpp"

namespace perfgap::report {

void prepare_outgoing(Finding& f) {
  redact_finding(f);
  if (f.metrics.size() > kMaxMetricsPerFinding) {
    const std::size_t left_out = f.metrics.size() - kMaxMetricsPerFinding;
    f.metrics.resize(kMaxMetricsPerFinding);
    f.metrics.emplace_back("metrics_left_out", static_cast<double>(left_out));
    f.add("perfgap", fmt::format("{} more metrics left out: a finding shows at most {} (docs/LIMITS.md)", left_out, kMaxMetricsPerFinding));
  }
}

std::vector<Finding> outgoing(const std::vector<Finding>& findings) {
  std::vector<Finding> out = findings;
  for (auto& f : out) prepare_outgoing(f);
  return out;
}

Report outgoing(const Report& r) {
  Report out = r;
  for (auto& f : out.findings) prepare_outgoing(f);
  if (!out.undecided.empty()) out.undecided = redact_text(out.undecided);  // a finding's title, quoted
  return out;
}

}  // namespace perfgap::report
