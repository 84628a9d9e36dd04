#include "tool_outputs/explain.hpp"

#include <fmt/format.h>

#include "tool_outputs/gap.hpp"
#include "analyzers/budget.hpp"
#include "compare/compare.hpp"
#include "core/kb.hpp"

namespace perfgap::tool_outputs {
namespace {

// As analyze does with several inputs: an unusable report is an error finding, the rest are read.
report::Finding unusable_report(const std::string& path, const std::string& why) {
  report::Finding e;
  e.id = "gap.budget";
  e.layer = "workload";
  e.status = report::Status::error;
  e.subject = path;
  e.title = fmt::format("unusable report {}: {}", path, why);
  e.add(path, why);
  e.fix = "pass a perfgap report written with --format json (check, analyze, fleet, compare, gap)";
  return e;
}

}  // namespace

tl::expected<ExplainResult, std::string> explain(const ExplainRequest& a) {
  using tl::unexpected;
  // The knowledge base first: a malformed file is exit 2 before any input is read.
  std::vector<core::KbDir> dirs{{kSystemKbDir, true}};
  for (const auto& d : a.kb_dirs) dirs.push_back({d, false});
  auto kb = core::load_kb(dirs);
  if (!kb) return unexpected("explain: knowledge base " + kb.error());

  auto scored = score_gap(a.reference, a.measured, a.threshold, a.warmup);
  if (!scored) return unexpected(scored.error());
  auto& score = *scored;
  const report::Finding* gap = nullptr;
  for (const auto& f : score.findings)
    if (f.id == "steps.gap" && f.status != report::Status::error) gap = &f;
  std::optional<double> pct;
  if (gap)
    for (const auto& [k, v] : gap->metrics)
      if (k == "percent_of_reference") pct = v;
  // Not scored (another unit, another job, a reference of start-up steps): steps.gap says why.
  if (!pct)
    return unexpected(fmt::format("explain: --measured {} cannot be scored against --reference {}{}", a.measured, a.reference,
                                  gap ? ": " + gap->title : std::string()));

  std::vector<analyzers::BudgetInput> inputs;
  std::vector<report::Finding> unusable;
  for (const auto& path : a.reports) {
    auto view = compare::load_report(path);
    if (!view) {
      unusable.push_back(unusable_report(path, view.error()));
      continue;
    }
    inputs.push_back({path, std::move(*view)});
  }
  if (inputs.empty())
    return unexpected(a.reports.size() == 1 ? unusable.front().title
                                            : fmt::format("explain: none of the {} reports is usable (first: {})", a.reports.size(),
                                                          unusable.front().title));

  analyzers::BudgetOptions o;
  o.measured_pct = *pct;
  o.threshold = a.threshold;
  o.measured_evidence = gap->evidence;
  o.measured_source = gap->subject;
  ExplainResult out;
  out.findings.push_back(analyzers::explain_budget(inputs, *kb, o));
  for (auto& f : score.findings)
    if (f.status == report::Status::error) out.findings.push_back(std::move(f));  // damaged lines of the step logs
  for (auto& e : unusable) out.findings.push_back(std::move(e));
  out.inputs = score.inputs;
  out.inputs.insert(out.inputs.end(), a.reports.begin(), a.reports.end());
  return out;
}

}  // namespace perfgap::tool_outputs
