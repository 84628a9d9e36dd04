#include "tool_outputs/gap.hpp"

#include <fmt/format.h>

#include "tool_outputs/inputs.hpp"
#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"

namespace perfgap::tool_outputs {
namespace {

struct GapSide {
  analyzers::StepStats stats;
  bool is_file = false;
  std::vector<parsers::ParseError> damaged;
};

// A positive number of milliseconds ("1090", "1090ms"), a throughput as analyze steps reads
// one ("12samples/s", "3400 tokens/s": parsers::throughput_figure), or a step log.
tl::expected<GapSide, std::string> load_side(const char* opt, const std::string& arg, std::optional<std::size_t> warmup) {
  GapSide s;
  auto ms = milliseconds_argument(opt, arg);
  if (!ms) return tl::unexpected(ms.error());
  if (*ms) {
    s.stats = analyzers::step_figure(**ms);
    return s;
  }
  if (auto tp = parsers::throughput_figure(arg)) {
    if (!(tp->first > 0)) return tl::unexpected(fmt::format("{} {}: a throughput must be positive", opt, arg));
    s.stats = analyzers::step_throughput_figure(tp->first, tp->second);
    return s;
  }
  auto log = parse_input<parsers::StepsParser>(arg);
  if (!log) return tl::unexpected(fmt::format("{} {}: {}", opt, arg, log.error()));
  auto st = analyzers::step_stats(*log, warmup);
  if (!st) return tl::unexpected(fmt::format("{} {}: {} record(s), none left after the warm-up", opt, arg, log->records.size()));
  s.stats = *st;
  s.is_file = true;
  s.damaged = log->damaged;
  return s;
}

}  // namespace

tl::expected<GapScore, std::string> score_gap(const std::string& reference, const std::string& measured, double threshold, std::optional<long> warmup_records) {
  std::optional<std::size_t> warmup;
  if (warmup_records) warmup = static_cast<std::size_t>(*warmup_records);
  auto ref = load_side("--reference", reference, warmup);
  if (!ref) return tl::unexpected(ref.error());
  auto meas = load_side("--measured", measured, warmup);
  if (!meas) return tl::unexpected(meas.error());
  // A throughput log is compared with a throughput of the same unit only.
  if (ref->stats.throughput != meas->stats.throughput || ref->stats.unit != meas->stats.unit) {
    auto what = [](const GapSide& s) { return s.stats.throughput ? "a throughput (" + s.stats.unit + ")" : std::string("a time per iteration (ms)"); };
    // What would do: a reference of the measured run's quantity, spelt as it can be given.
    const std::string would_do = meas->stats.throughput
                                     ? fmt::format("give --reference as a throughput in {} (12{}) or a step log in {}", meas->stats.unit,
                                                   meas->stats.unit, meas->stats.unit)
                                     : "give --reference as milliseconds per iteration (830, 830ms) or a step log of step times";
    return tl::unexpected(fmt::format("--reference {} is {} but --measured {} is {}: {}", reference, what(*ref), measured, what(*meas), would_do));
  }
  analyzers::StepsOptions o;
  o.reference_log(ref->stats, ref->is_file ? reference : "--reference");
  o.threshold = threshold;
  GapScore out;
  out.findings = analyzers::analyze_steps(meas->stats, meas->is_file ? measured : "--measured", o);
  if (meas->is_file)
    for (auto& d : analyzers::damaged_lines("steps.gap", "workload", measured, meas->damaged)) out.findings.push_back(std::move(d));
  if (ref->is_file)
    for (auto& d : analyzers::damaged_lines("steps.gap", "workload", reference, ref->damaged)) out.findings.push_back(std::move(d));
  if (ref->is_file) out.inputs.push_back(reference);
  if (meas->is_file) out.inputs.push_back(measured);
  return out;
}

}  // namespace perfgap::tool_outputs
