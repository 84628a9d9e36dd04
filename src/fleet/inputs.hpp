// The fleet's inputs: REPORTS... arguments expanded into files (directories give their
// *.json, quoted globs are expanded by sys/input_expand.hpp), then read in parallel into
// NodeReports.
#pragma once

#include <functional>
#include <string>
#include <string_view>
#include <vector>

#include "fleet/reader.hpp"
#include "sys/input_expand.hpp"

namespace perfgap::fleet {

// An input that gave no node report, and why (a fleet.unreadable finding).
using Unreadable = sys::InputProblem;

// The expander itself lives in sys/ (sys/input_expand.hpp): the file system is read there.
using sys::ExpandedInputs;
// REPORTS...: a directory gives its *.json, a quoted glob its matches.
ExpandedInputs expand_inputs(const std::vector<std::string>& args);
// The same for other inputs: a directory gives its files whose names `accept` takes (`what`
// names them when there is none), a quoted glob its matches (analyze kineto/nsys over a job's ranks).
using sys::expand_inputs;

struct LoadedReports {
  std::vector<NodeReport> nodes;       // in file order
  std::vector<Unreadable> unreadable;  // in file order
};
// Reads and parses every file; `threads` 0: one per core (at most 8), fewer for few files.
LoadedReports load_reports(const std::vector<std::string>& files, const ReadOptions& opts, unsigned threads = 0);

// Reports larger than this are not node reports (a real one is well under 1 MiB).
inline constexpr std::size_t kMaxReportBytes = 64u << 20;

}  // namespace perfgap::fleet
