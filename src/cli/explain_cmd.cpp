// perfgap explain --reference R --measured M REPORT...: the measured gap (gap's reading of R and
// M) and the fail/warn findings of the reports (compare's report reader), as a budget against
// the knowledge base (tool_outputs/explain: gap.budget, analyzers/budget.hpp).
#include <fmt/format.h>

#include <memory>

#include "tool_outputs/explain.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"

namespace perfgap::cli {
namespace {

struct ExplainArgs {
  std::string reference, measured, format, output;
  std::vector<std::string> reports, kb_dirs;
  double threshold = 0.95;
  std::optional<long> warmup;
  bool verbose = false;
};

int run_explain(const ExplainArgs& a) {
  auto result = tool_outputs::explain({.reference = a.reference, .measured = a.measured, .reports = a.reports, .kb_dirs = a.kb_dirs,
                                  .threshold = a.threshold, .warmup = a.warmup});
  if (!result) throw UsageError(result.error());
  return emit_report("explain", result->inputs, std::move(result->findings), chosen_format(a.format), a.output, a.verbose);
}

}  // namespace

CommandRunner add_explain_command(CLI::App& app) {
  auto a = std::make_shared<ExplainArgs>();
  auto* cmd = app.add_subcommand("explain", "The measured gap and the findings of reports as a budget: what each finding is estimated to cost, what is explained, what is not, and what to measure next (gap.budget)");
  cmd->add_option("--reference", a->reference, "Reference: a step log, milliseconds per iteration (830, 830ms) or a throughput (12samples/s, 3400tokens/s)")->type_name("FILE|MS|N<unit>")->required();
  cmd->add_option("--measured", a->measured, "Measured run: a step log, milliseconds per iteration or a throughput")->type_name("FILE|MS|N<unit>")->required();
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
