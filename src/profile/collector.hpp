// `perfgap profile`'s measurement: one window on the live system. Opens the per-CPU sampling
// events (hardware cycles where the PMU allows, else cpu-clock) with kernel call chains and the
// frequency counters (msr PMU APERF/MPERF/TSC, else cycles, else scaling_cur_freq) and the dTLB
// counters (profile/tlb_counters: dTLB loads, misses, instructions per CPU), reads the
// counters the judges need at both ends of the window (cpuidle, /proc/stat through
// Facts::window, schedstat of the training threads, numa_maps, vmstat), decodes the samples with
// the perf.data reader and names kernel frames from /proc/kallsyms. A signal it has no right to
// read is recorded as unavailable with the missing right; the others are still measured.
#pragma once

#include <chrono>
#include <optional>
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "profile/samples.hpp"

namespace perfgap::profile {

inline constexpr int kDefaultSampleHz = 99;  // per CPU; off the 100 Hz tick so samples do not alias it
inline constexpr int kDefaultSeconds = 10;
inline constexpr int kMaxSeconds = 60;        // Facts::window's longest window

struct ProfileOptions {
  std::chrono::milliseconds window{kDefaultSeconds * 1000};
  int sample_hz = kDefaultSampleHz;
  std::optional<double> rated_mhz;  // --rated-mhz
};

// `f` must be live and built with Options::sample == o.window (its window is the profile's).
LiveWindow collect(facts::Facts& f, const ProfileOptions& o);

// What a refused perf_event_open means on this node: which right is missing.
// `paranoid`: kernel.perf_event_paranoid as read (or why not); `cap_eff`: CapEff of perfgap.
std::string missing_right(const std::string& errno_text, const std::string& paranoid, std::optional<std::uint64_t> cap_eff);

}  // namespace perfgap::profile
