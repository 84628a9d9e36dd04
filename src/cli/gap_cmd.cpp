// perfgap gap --reference R --measured M: the run scored against the reference (tool_outputs::score_gap).
#include <fmt/format.h>

#include <memory>
#include <optional>

#include "tool_outputs/gap.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"

namespace perfgap::cli {
namespace {

struct GapArgs {
  std::string reference;  // a step log or milliseconds per iteration
  std::string measured;
  double threshold = 0.95;
  std::optional<long> warmup;
  std::string format;
  std::string output;
  bool verbose = false;
};

int run_gap(const GapArgs& a) {
  auto score = tool_outputs::score_gap(a.reference, a.measured, a.threshold, a.warmup);
  if (!score) throw UsageError(score.error());
  return emit_report("gap", score->inputs, std::move(score->findings), chosen_format(a.format), a.output, a.verbose);
}

}  // namespace

CommandRunner add_gap_command(CLI::App& app) {
  auto args = std::make_shared<GapArgs>();
  auto& a = *args;
  auto* cmd = app.add_subcommand("gap", "Score a run against the reference: percent of reference (reference_ms / median_ms; for throughput logs measured / reference) and the 95% bar");
  cmd->add_option("--reference", a.reference, "Reference: a step log, milliseconds per iteration (830, 830ms) or a throughput (12samples/s, 3400tokens/s)")->type_name("FILE|MS|N<unit>")->required();
  cmd->add_option("--measured", a.measured, "Measured run: a step log, milliseconds per iteration or a throughput")->type_name("FILE|MS|N<unit>")->required();
  cmd->add_option("--threshold", a.threshold, "Pass bar as a fraction of the reference (default 0.95)")->check(CLI::Range(0.01, 10.0));
  cmd->add_option("--warmup", a.warmup, "Records to drop at the start of each step log (default 10%, at least 1)")->check(CLI::NonNegativeNumber);
  using report::Format;
  add_format_option(cmd, a.format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit: steps.gap and steps.tail as testcases; prometheus: percent_of_reference and the other metrics for graphs");
  cmd->add_option("--output", a.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
  return [args] { return run_gap(*args); };
}

}  // namespace perfgap::cli
