// compare's figures over a curve of message sizes (nccl-tests' max_busbw_gbps and avg_busbw_gbps
// over busbw_gbps.SIZE) of two runs that measured different sizes: a peak is compared only over
// the sizes both measured, an average not at all, and the count of sizes is no measure of speed
// (docs/ANALYZE.md, "compare"). Kept apart from compare.cpp's matching: it reads the metrics.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <utility>

#include "compare/compare.hpp"

namespace perfgap::compare {

struct OverSizes {
  bool compared = false;  // false: not compared, `note` says why
  // The figures to compare instead of the reports' (a peak over the sizes both measured); none:
  // the reports' own (the count of sizes, compared without a direction).
  std::optional<std::pair<double, double>> figures;
  std::string note;  // for the evidence line: what was compared, or why not
};

// For a metric `max_X_gbps`, `avg_X_gbps` or `sizes` of a finding with a curve `X_gbps.SIZE` in
// both reports, where the two curves cover different sizes: what to compare instead; nullopt
// where the metric is no such figure or both runs measured the same sizes (compared as it is).
std::optional<OverSizes> over_common_sizes(std::string_view name, const ReportFinding& before, const ReportFinding& after);

}  // namespace perfgap::compare
