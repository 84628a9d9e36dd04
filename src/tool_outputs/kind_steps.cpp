// analyze steps: training step logs against a reference (a step log, milliseconds per iteration,
// or a throughput such as 12samples/s).
#include <fmt/format.h>

#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"
#include "parsers/tool_text.hpp"

namespace perfgap::tool_outputs::detail {

tl::expected<Result, std::string> run_steps(const Analyzer& an, const Request& r) {
  std::optional<std::size_t> warmup;
  if (r.warmup) warmup = static_cast<std::size_t>(*r.warmup);
  analyzers::StepsOptions o;
  o.warmup = warmup;
  // --reference means one thing on every command: a step log, or milliseconds per iteration; for
  // analyze steps also a throughput figure with its unit.
  std::optional<double> reference_ms = r.reference_ms;
  if (!r.reference.empty()) {
    auto ms = milliseconds_argument("--reference", r.reference);
    if (!ms) return tl::unexpected(ms.error());
    if (*ms) reference_ms = *ms;
  }
  // A throughput given as a figure (`12samples/s`, `3400 tokens/s`), in the step logs' spellings.
  if (auto tp = !reference_ms && !r.reference.empty() ? parsers::throughput_figure(r.reference) : std::nullopt) {
    if (!(tp->first > 0)) return tl::unexpected(fmt::format("--reference {}: a throughput must be positive", r.reference));
    o.reference = tp->first;
    o.reference_throughput = true;
    o.reference_unit = tp->second;
    o.reference_source = "--reference";
  } else if (reference_ms) {
    o.reference_ms(*reference_ms);
    o.reference_source = r.reference_ms ? "--reference-ms" : "--reference";
  } else if (!r.reference.empty()) {
    auto log = parse_input<parsers::StepsParser>(r.reference);
    if (!log) return tl::unexpected("--reference " + r.reference + ": " + log.error());
    auto s = analyzers::step_stats(*log, warmup);
    if (!s) return tl::unexpected("--reference " + r.reference + ": no records left after the warm-up");
    o.reference_log(*s, r.reference);
  }
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto log = parse_input<parsers::StepsParser>(file);
    if (!log) return log.error();
    auto stats = analyzers::step_stats(*log, warmup);
    if (!stats) return fmt::format("{} record(s), none left after dropping {} warm-up record(s)", log->records.size(), warmup.value_or(0));
    c.append(analyzers::analyze_steps(*stats, file, o));
    c.append(analyzers::damaged_lines("steps.gap", "workload", file, log->damaged));
    return std::nullopt;
  });
}

}  // namespace perfgap::tool_outputs::detail
