// The fleet's text view: one line per group of nodes whose per-layer statuses are identical
// (hostlist + count), the failing nodes with their failing ids, then the fleet findings.
// Sized for an 80-120 column terminal at 1,000+ nodes; -v shows every group, node and line.
#pragma once

#include <cstddef>
#include <string>
#include <vector>

#include "fleet/aggregate.hpp"

namespace perfgap::fleet {

// A width no line reaches: output that is not a terminal keeps whole lines.
inline constexpr std::size_t kUnlimitedWidth = std::size_t{1} << 20;

struct TextViewOptions {
  bool verbose = false;
  bool color = false;
  std::size_t width = 100;  // columns; lines are cut to it unless verbose (kUnlimitedWidth: never)
};

// What the fleet read beside its node reports, for the headline's counts.
struct InputCounts {
  std::size_t unreadable = 0;    // inputs that gave no report, or a measurement no pace can use
  std::size_t measurements = 0;  // analyze reports read (fleet.measured, fleet.pace, fleet.job_ranks)
  std::size_t unusable = 0;      // of those, the ones no pace can use (counted in `unreadable` too)
};

std::string render_fleet_text(const Fleet& fleet, const InputCounts& inputs, const std::vector<report::Finding>& findings,
                              const TextViewOptions& opts);

}  // namespace perfgap::fleet
