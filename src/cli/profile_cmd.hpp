// perfgap profile, and the window `check --profile-seconds N` runs beside its checks.
#pragma once

#include <optional>
#include <string_view>
#include <vector>

#include "report/model.hpp"

namespace perfgap::cli {

// The node checks that judge the profile's window rather than their own (check --profile-seconds N:
// these findings replace check's, taken over its shorter window).
inline constexpr std::string_view kProfileWindowChecks[] = {"net.ib.counters"};

// One live profile window of `seconds` (1-60) over `pids` (empty: detect training processes as
// check does): the perf.* and live.* findings, and those of kProfileWindowChecks. Throws UsageError for a bad request.
std::vector<report::Finding> profile_findings(int seconds, const std::vector<int>& pids, std::optional<double> rated_mhz);

// "--root trees cannot be profiled", the one refusal profile and check --profile share.
inline constexpr const char* kProfileRootRefusal = "profile measures the live system; --root trees cannot be profiled";

}  // namespace perfgap::cli
