#include "cli/gap_cmd.hpp"

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "cli/analyze_cmd.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "parsers/tool_text.hpp"

namespace perfgap::cli {
namespace {

struct Side {
  analyzers::StepStats stats;
  bool is_file = false;
  std::vector<parsers::ParseError> damaged;
};

std::optional<double> number_of_ms(std::string_view v) {
  if (v.size() > 2 && v.substr(v.size() - 2) == "ms") v.remove_suffix(2);
  return parsers::tooltext::number(v);
}

// A positive number of milliseconds ("1090", "1090ms"), or a step log.
Side load(const char* opt, const std::string& arg, std::optional<std::size_t> warmup) {
  Side s;
  if (auto ms = milliseconds_argument(opt, arg)) {
    s.stats = analyzers::step_figure(*ms);
    return s;
  }
  auto log = parse_input<parsers::StepsParser>(arg);
  if (!log) throw UsageError(fmt::format("{} {}: {}", opt, arg, log.error()));
  auto st = analyzers::step_stats(*log, warmup);
  if (!st) throw UsageError(fmt::format("{} {}: {} record(s), none left after the warm-up", opt, arg, log->records.size()));
  s.stats = *st;
  s.is_file = true;
  s.damaged = log->damaged;
  return s;
}

}  // namespace

bool looks_like_milliseconds(const std::string& arg) { return number_of_ms(arg).has_value(); }

std::optional<double> milliseconds_argument(const char* opt, const std::string& arg) {
  auto n = number_of_ms(arg);
  if (n && !(*n > 0)) throw UsageError(fmt::format("{} {}: milliseconds per iteration must be positive", opt, arg));
  return n;
}

void add_gap_command(CLI::App& app, GapArgs& a) {
  auto* cmd = app.add_subcommand("gap", "Score a run against the reference: percent of reference (reference_ms / median_ms; for throughput logs measured / reference) and the 95% bar");
  cmd->add_option("--reference", a.reference, "Reference: a step log, or milliseconds per iteration (830, 830ms)")->type_name("FILE|MS")->required();
  cmd->add_option("--measured", a.measured, "Measured run: a step log, or milliseconds per iteration")->type_name("FILE|MS")->required();
  cmd->add_option("--threshold", a.threshold, "Pass bar as a fraction of the reference (default 0.95)")->check(CLI::Range(0.01, 10.0));
  cmd->add_option("--warmup", a.warmup, "Records to drop at the start of each step log (default 10%, at least 1)")->check(CLI::NonNegativeNumber);
  using report::Format;
  add_format_option(cmd, a.format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit: steps.gap and steps.tail as testcases; prometheus: percent_of_reference and the other metrics for graphs");
  cmd->add_option("--output", a.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
}

GapScore score_gap(const std::string& reference, const std::string& measured, double threshold, std::optional<long> warmup_records) {
  std::optional<std::size_t> warmup;
  if (warmup_records) warmup = static_cast<std::size_t>(*warmup_records);
  auto ref = load("--reference", reference, warmup);
  auto meas = load("--measured", measured, warmup);
  // A throughput log is compared with a throughput of the same unit only.
  if (ref.stats.throughput != meas.stats.throughput || ref.stats.unit != meas.stats.unit) {
    auto what = [](const Side& s) { return s.stats.throughput ? "a throughput (" + s.stats.unit + ")" : std::string("a time per iteration (ms)"); };
    throw UsageError(fmt::format("--reference {} is {} but --measured {} is {}: give both of the same quantity", reference, what(ref), measured,
                                 what(meas)));
  }
  analyzers::StepsOptions o;
  o.reference = ref.stats.median;
  o.reference_throughput = ref.stats.throughput;
  o.reference_unit = ref.stats.unit;
  o.reference_source = ref.is_file ? reference : "--reference";
  o.threshold = threshold;
  GapScore out;
  out.findings = analyzers::analyze_steps(meas.stats, meas.is_file ? measured : "--measured", o);
  if (meas.is_file)
    for (auto& d : analyzers::damaged_lines("steps.gap", "workload", measured, meas.damaged)) out.findings.push_back(std::move(d));
  if (ref.is_file)
    for (auto& d : analyzers::damaged_lines("steps.gap", "workload", reference, ref.damaged)) out.findings.push_back(std::move(d));
  if (ref.is_file) out.inputs.push_back(reference);
  if (meas.is_file) out.inputs.push_back(measured);
  return out;
}

int run_gap(const GapArgs& a) {
  auto score = score_gap(a.reference, a.measured, a.threshold, a.warmup);
  return emit_report("gap", score.inputs, std::move(score.findings), chosen_format(a.format), a.output, a.verbose);
}

}  // namespace perfgap::cli
