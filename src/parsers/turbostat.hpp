// turbostat output: any column layout (versions and --show differ), tab or space separated,
// per-CPU rows, per-core/package summary rows ("-"), repeated interval blocks, rows of
// sibling threads that end before the core-level columns (CPU%c6, CoreTmp: printed on a
// core's first thread only), and the
// debug preamble whose "N * 100.0 = M MHz max turbo K active cores" lines give the rated
// turbo frequency per number of active cores.
#pragma once

#include <map>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct TurbostatRow {
  int line = 0;
  int block = 0;                    // which interval block (header) the row belongs to, from 1
  std::optional<int> cpu;           // nullopt: a summary row ("-") or no CPU column
  std::map<std::string, double, std::less<>> values;  // column name -> value (only numeric cells)
  std::optional<double> get(std::string_view col) const {
    auto it = values.find(col);
    return it == values.end() ? std::nullopt : std::optional<double>(it->second);
  }
};

struct Turbostat {
  std::vector<std::string> columns;          // of the last header seen
  std::vector<TurbostatRow> cpu_rows;        // every interval
  std::vector<TurbostatRow> summary_rows;
  std::map<int, double> max_turbo_mhz;       // active cores -> MHz, from the preamble
  int blocks = 0;                            // header lines seen
  std::vector<ParseError> damaged;           // rows that could not be read
};

// Error when no header with Busy% or Bzy_MHz is found, or it has no rows.
Parsed<Turbostat> parse_turbostat(std::string_view text);
// The same fed a piece at a time (parsers/line_feed.hpp).
using TurbostatParser = LineParser<Turbostat>;
extern template class LineParser<Turbostat>;

}  // namespace perfgap::parsers
