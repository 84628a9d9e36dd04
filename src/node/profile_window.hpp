// The live profile window of one node, as `perfgap profile` runs it and `check
// --profile-seconds N` runs it beside its checks: the window's perf.* and live.* findings
// (profile/collector, judged by checks/live), the registry's checks that judge the same window,
// and how check merges them into its own findings.
#pragma once

#include <ctime>
#include <optional>
#include <string_view>
#include <vector>

#include "report/model.hpp"

namespace perfgap::node {

// The node checks that judge the profile's window rather than their own (check --profile-seconds N:
// these findings replace check's, taken over its shorter window).
inline constexpr std::string_view kProfileWindowChecks[] = {"net.ib.counters"};

// One live profile window of `seconds` (1 to profile::kMaxSeconds, checked by the caller) over
// `pids` (empty: detect training processes as check does): the perf.* and live.* findings, and
// those of kProfileWindowChecks.
std::vector<report::Finding> profile_findings(int seconds, const std::vector<int>& pids, std::optional<double> rated_mhz);

// `perfgap profile`'s report: the window's findings and the node's description, generated at `started`.
report::Report profile_report(int seconds, const std::vector<int>& pids, std::optional<double> rated_mhz, std::time_t started);

// The profile window's findings join check's: perf.* and live.* are added; a node check the
// profile also judges (kProfileWindowChecks) replaces check's own finding, since the profile's
// window is the longer one, and stays out when check did not select it.
void merge_profile_findings(std::vector<report::Finding>& findings, std::vector<report::Finding> extra);

}  // namespace perfgap::node
