// compare's TLB parity (issue 47): two reports with perf_stat.dtlb (analyze perf-stat), the
// before one taken as the reference (bare metal, a known-good run): "back to parity", or by
// how much not, with the knowledge base's ratios (data/kb/reference_ratios.yaml). Kept apart
// from compare.cpp's matching: it reads the figures, not the findings' statuses.
#pragma once

#include <optional>
#include <string>

#include "compare/compare.hpp"
#include "report/model.hpp"

namespace perfgap::compare {

// compare.tlb_parity, or nullopt when either report has no dTLB figure to compare.
std::optional<report::Finding> tlb_parity(const ReportView& before, const std::string& before_name, const ReportView& after,
                                          const std::string& after_name, const Options& o);

}  // namespace perfgap::compare
