// Helpers shared by checks: evidence wording and facts every layer needs.
#pragma once

#include <string>
#include <vector>

#include "core/check.hpp"

namespace perfgap::checks {

using report::Finding;
using report::Status;

// "12.3" with one decimal.
std::string pct(double v);
// "cpu3, cpu7 and 12 more" style summary of a CPU set, as a kernel list.
std::string cpus_text(const parsers::CpuSet& s);
// The CPUs training processes may use: the union of their Cpus_allowed_list, or all online
// CPUs when none were found. `how` says which.
parsers::CpuSet workload_cpus(facts::Facts& f, std::string* how);
// A skip finding when the online CPU list cannot be read (every per-CPU check needs it).
std::optional<Finding> topology_skip(facts::Facts& f, std::string_view id, std::string_view layer);
// The skip finding for checks that need training processes and found none.
Finding no_training_skip(std::string_view id, std::string_view layer, const facts::Training& t);

}  // namespace perfgap::checks
