// The judges of `perfgap profile` (and `check --profile-seconds N`): pure functions from one measured
// window (profile::LiveWindow) to the live.* findings and the perf.* findings of its kernel
// samples. They read nothing: the collector (profile/collector) measured everything.
#pragma once

#include <cstdint>
#include <optional>
#include <vector>

#include "core/check.hpp"
#include "profile/samples.hpp"
#include "report/model.hpp"

namespace perfgap::checks::live {

// The catalogue entries of the live.* ids (rendered into docs/CHECKS.md by perfgap-docgen);
// `run` is empty: they are judged over a profile window, not by `check`'s runner.
const std::vector<core::CheckInfo>& catalogue();
// A live.* id's thresholds: the catalogue's defaults.
core::Thresholds defaults(std::string_view id);

// Busy MHz of one CPU from its counters: aperf_mperf: TSC rate x APERF/MPERF; cycles: cycles
// over the CPU's busy time (its /proc/stat non-idle share of the window); scaling_cur_freq: the
// mean of the samples. nullopt when the counters cannot say (MPERF or busy time 0, no samples).
std::optional<double> cpu_busy_mhz(const profile::Frequency& f, int cpu, double busy_pct, double seconds);
// Share (percent) of the mapped pages on nodes other than the one holding most; nullopt when empty.
std::optional<double> remote_pct(const parsers::NumaMaps& m);

std::vector<report::Finding> judge_busy_mhz(const profile::LiveWindow& w, const core::Thresholds& th);
std::vector<report::Finding> judge_idle_residency(const profile::LiveWindow& w, const core::Thresholds& th);
std::vector<report::Finding> judge_sched_stalls(const profile::LiveWindow& w, const core::Thresholds& th);
// perf.smmu_cmdq, perf.hot_kernel and perf.summary through the analyzer's own rules, or each
// `skip` saying why sampling did not run (the missing perf_event_open right).
std::vector<report::Finding> judge_kernel_frames(const profile::LiveWindow& w);

// perf_stat.dtlb (subject "live") from the window's dTLB counts, judged by analyze perf-stat's own
// rules (no reference: `skip` with the figures); `skip` saying why when they were not counted
// (a guest without a PMU, a refused right, counters that never ran).
std::vector<report::Finding> judge_dtlb(const profile::LiveWindow& w);

// Every finding of a window, in report order, with the catalogue's default thresholds.
std::vector<report::Finding> judge_window(const profile::LiveWindow& w);

}  // namespace perfgap::checks::live
