// `perf stat` output as users keep it: the default text (any locale's thousands separators,
// "<not supported>"/"<not counted>" rows, multiplexing "(66.67%)", -r's "( +- 1.23% )", -a,
// -A per-CPU, --per-socket/-die/-core/-node and --per-thread rows, -I interval rows), -x CSV
// (any one-character separator) and -j JSON lines. The formats are those of the kernel's
// tools/perf/util/stat-display.c. Rows of one event (CPUs, sockets, intervals, a hybrid CPU's
// PMUs) are summed: the TLB ratios are ratios of sums, whatever the aggregation.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct PerfStatEvent {
  std::string name;  // without PMU wrapper and modifiers: "cpu_core/dTLB-loads/:u" -> "dTLB-loads"
  std::string unit;  // "msec", "" for plain counts
  double value = 0;  // summed over its counted rows (perf's scaled values)
  int counted = 0;   // rows with a value
  int not_supported = 0, not_counted = 0;
  double min_running_pct = 100;     // the least share of the time it was on a counter (< 100: scaled)
  std::optional<double> noise_pct;  // -r: the largest "+- x%" of its rows
  int line = 0;                     // first row
};

struct PerfStat {
  std::string format;         // "text", "csv", "json" (of the first row)
  std::string aggregation;    // "", "cpu", "socket", "die", "core", "node", "thread"
  bool intervals = false;     // -I rows
  std::optional<int> runs;    // -r N: "(N runs)"
  std::vector<PerfStatEvent> events;  // in the order first seen
  int rows = 0;
  std::vector<ParseError> damaged;
  const PerfStatEvent* find(std::string_view name) const;
};

// The most distinct events kept (a model bounded by what repeats); rows of more are damaged.
inline constexpr std::size_t kMaxPerfStatEvents = 4096;

// Error when no counter row is found (the line of the first damaged row, when there is one).
Parsed<PerfStat> parse_perf_stat(std::string_view text);
using PerfStatParser = LineParser<PerfStat>;
extern template class LineParser<PerfStat>;

// A perf event name without its PMU wrapper, "[pmu]" tag and modifiers ("cpu_atom/iTLB-loads/u",
// "dTLB-loads:uk" -> the generic name).
std::string perf_stat_event_name(std::string_view raw);

}  // namespace perfgap::parsers
