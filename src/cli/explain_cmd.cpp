// perfgap explain --reference R --measured M REPORT...: the measured gap (gap's reading of R and
// M) and the fail/warn findings of the reports (compare's report reader), as a budget against
// the knowledge base (gap.budget, analyzers/budget.hpp).
#include <fmt/format.h>

#include <memory>

#include "analyzers/budget.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "analyze/gap.hpp"
#include "compare/compare.hpp"
#include "core/kb.hpp"
#include "sys/named_file.hpp"

namespace perfgap::cli {
namespace {

// As compare's: a fleet report of thousands of nodes is large.
constexpr std::size_t kMaxExplainReportBytes = 256u << 20;
constexpr const char* kSystemKbDir = "/etc/perfgap/kb.d";

struct ExplainArgs {
  std::string reference, measured, format, output;
  std::vector<std::string> reports, kb_dirs;
  double threshold = 0.95;
  std::optional<long> warmup;
  bool verbose = false;
};

int run_explain(const ExplainArgs& a) {
  // The knowledge base first: a malformed file is exit 2 before any input is read.
  std::vector<core::KbDir> dirs{{kSystemKbDir, true}};
  for (const auto& d : a.kb_dirs) dirs.push_back({d, false});
  auto kb = core::load_kb(dirs);
  if (!kb) throw UsageError("explain: knowledge base " + kb.error());

  auto scored = analyze::score_gap(a.reference, a.measured, a.threshold, a.warmup);
  if (!scored) throw UsageError(scored.error());
  auto& score = *scored;
  const report::Finding* gap = nullptr;
  for (const auto& f : score.findings)
    if (f.id == "steps.gap" && f.status != report::Status::error) gap = &f;
  std::optional<double> pct;
  if (gap)
    for (const auto& [k, v] : gap->metrics)
      if (k == "percent_of_reference") pct = v;
  if (!pct) throw UsageError(fmt::format("explain: --measured {} cannot be scored against --reference {}", a.measured, a.reference));

  std::vector<analyzers::BudgetInput> inputs;
  std::vector<report::Finding> unusable;
  for (const auto& path : a.reports) {
    tl::expected<compare::ReportView, std::string> view = tl::unexpected(std::string("not read"));
    if (auto text = sys::read_named_file(path, kMaxExplainReportBytes)) view = compare::read_report(*text);
    else view = tl::unexpected(text.error());
    if (!view) {
      // As analyze does with several inputs: an unusable one is an error finding, the rest are read.
      report::Finding e;
      e.id = "gap.budget";
      e.layer = "workload";
      e.status = report::Status::error;
      e.subject = path;
      e.title = fmt::format("unusable report {}: {}", path, view.error());
      e.add(path, view.error());
      e.fix = "pass a perfgap report written with --format json (check, analyze, fleet, compare, gap)";
      unusable.push_back(std::move(e));
      continue;
    }
    inputs.push_back({path, std::move(*view)});
  }
  if (inputs.empty())
    throw UsageError(a.reports.size() == 1 ? unusable.front().title : fmt::format("explain: none of the {} reports is usable (first: {})",
                                                                                  a.reports.size(), unusable.front().title));

  analyzers::BudgetOptions o;
  o.measured_pct = *pct;
  o.threshold = a.threshold;
  o.measured_evidence = gap->evidence;
  std::vector<report::Finding> findings;
  findings.push_back(analyzers::explain_budget(inputs, *kb, o));
  for (auto& f : score.findings)
    if (f.status == report::Status::error) findings.push_back(std::move(f));  // damaged lines of the step logs
  for (auto& e : unusable) findings.push_back(std::move(e));
  std::vector<std::string> source_inputs = score.inputs;
  source_inputs.insert(source_inputs.end(), a.reports.begin(), a.reports.end());
  return emit_report("explain", source_inputs, std::move(findings), chosen_format(a.format), a.output, a.verbose);
}

}  // namespace

CommandRunner add_explain_command(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  auto* cmd = app.add_subcommand("explain", "The measured gap and the findings of reports as a budget: what each finding is estimated to cost, what is explained, what is not, and what to measure next (gap.budget)");
  cmd->add_option("--reference", a->reference, "Reference: a step log, or milliseconds per iteration (830, 830ms)")->type_name("FILE|MS")->required();
  cmd->add_option("--measured", a->measured, "Measured run: a step log, or milliseconds per iteration")->type_name("FILE|MS")->required();
  cmd->add_option("reports", a->reports, "Reports of check, analyze, fleet, compare (--format json) for the measured run")->required();
  cmd->add_option("--kb", a->kb_dirs, "A directory of knowledge-base files (*.yaml) over the built-in one and /etc/perfgap/kb.d; repeatable, the later wins per id")
      ->allow_extra_args(false);
  cmd->add_option("--threshold", a->threshold, "Pass bar as a fraction of the reference (default 0.95)")->check(CLI::Range(0.01, 10.0));
  cmd->add_option("--warmup", a->warmup, "Records to drop at the start of each step log (default 10%, at least 1)")->check(CLI::NonNegativeNumber);
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::prometheus},
                    "html: one self-contained page with the waterfall; prometheus: percent of reference, explained and unexplained points, points per cause");
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_explain(*a); };
}

}  // namespace perfgap::cli
