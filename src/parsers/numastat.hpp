// numastat outputs: `numastat -p PID` / `-p NAME` (per-process tables, one per process or
// one row per process), `-c` compact variants, `-m` (system meminfo per node), plain
// `numastat` (numa_hit/.../other_node per node), and a node's raw sysfs `numastat` file
// ("other_node 123" lines).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct NumastatProcess {
  std::string pid;          // "98621"; "" when the table does not say
  std::string name;         // "bash"
  std::vector<double> per_node;  // MB per node (the "Total" row, or the sum of the rows)
  std::vector<int> nodes;   // node numbers of the columns
  int line = 0;
  std::vector<double> huge;  // the "Huge" row's MB per node (numastat -p PID); empty: no such row
};

struct NumastatCounters {
  std::vector<int> nodes;
  std::map<std::string, std::vector<double>, std::less<>> rows;  // numa_hit -> per node
  int line = 0;
};

struct Numastat {
  enum class Layout { process, counters, meminfo } layout = Layout::process;
  std::vector<NumastatProcess> processes;  // in the order read (repeated runs repeat a pid)
  std::optional<NumastatCounters> counters;
  std::vector<ParseError> damaged;
};

Parsed<Numastat> parse_numastat(std::string_view text);
// numastat prints a few lines per node and process: its text is kept whole, within a limit,
// and parsed at the end (the feed interface of parsers/line_feed.hpp).
inline constexpr std::size_t kMaxNumastatBytes = 64u << 20;
class NumastatParser {
 public:
  void feed(std::string_view lines) { text_.append(lines); }
  Parsed<Numastat> finish() { return parse_numastat(text_); }

 private:
  std::string text_;
};

}  // namespace perfgap::parsers
