// What one `perfgap profile` window measured, as plain data: the collector (profile/collector)
// fills it from the live system, the live.* judges (checks/live) turn it into findings without
// reading anything, and the tests build it by hand from recorded samples.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include "parsers/perf.hpp"
#include "parsers/perf_stat.hpp"
#include "parsers/procfs.hpp"

namespace perfgap::profile {

// Counter deltas of one CPU over the window, from whichever frequency source opened.
struct CpuCounters {
  std::uint64_t aperf = 0, mperf = 0, tsc = 0;  // msr PMU
  std::uint64_t cycles = 0;                      // PERF_COUNT_HW_CPU_CYCLES
  std::vector<std::uint64_t> cur_khz;            // scaling_cur_freq samples
};

struct Frequency {
  std::string source;        // "aperf_mperf", "cycles", "scaling_cur_freq"; "" when none
  std::string unavailable;   // why no source could be read (source empty)
  std::string detail;        // how it was read (for evidence)
  std::map<int, CpuCounters> cpus;
};

// One idle state's counters (cpuidle/stateN/{time,usage}) over the window.
struct IdleStateDelta {
  int index = 0;
  std::string name;
  std::optional<std::uint64_t> latency_us;
  bool disabled = false;
  std::uint64_t time_us = 0, usage = 0;
};

// /proc/<pid>/task/<tid>/schedstat and status deltas of one thread of a training process.
struct ThreadSched {
  int tid = 0;
  std::string comm;
  std::uint64_t run_ns = 0, wait_ns = 0;  // on the CPU, waiting on a run queue
  std::uint64_t nonvoluntary = 0;         // involuntary context switches
  int last_cpu = -1;
};

struct TrainingSample {
  int pid = 0;
  std::string comm;
  std::string how;                           // why it counts as a training process
  std::vector<ThreadSched> threads;          // threads alive at both ends of the window
  std::vector<int> pinned_cpus;              // its Cpus_allowed_list when narrower than the online CPUs
  std::string sched_error;                   // why schedstat could not be read ("" when it was)
  std::optional<parsers::NumaMaps> numa_start, numa_end;
  std::string numa_error;
};

// A thread of another process, busy in the window (share of one CPU).
struct BusyThread {
  int pid = 0, tid = 0;
  std::string comm;
  int cpu = -1;
  double cpu_share = 0;
};

// dTLB read accesses and misses and instructions over the window, counted per CPU system-wide
// (pid -1, as `perf stat -a`) and summed, as the perf stat facts `analyze perf-stat` judges (one
// judge for both); or why they were not counted.
struct TlbCounts {
  // no_pmu: no hardware event opens (a guest without a vPMU); no_event: instructions open, the
  // dTLB read-miss event does not (this PMU, or vPMU, lacks it).
  enum class Missing { none, no_pmu, no_event, never_ran, permission, refused };
  std::optional<parsers::PerfStat> stat;  // events "dTLB-loads", "dTLB-load-misses", "instructions"
  Missing missing = Missing::none;        // when `stat` is empty
  std::string why;                        // the refusal (errno, event, CPU; the missing right)
  std::string how;                        // how it was counted (evidence)
};

struct LiveWindow {
  double seconds = 0;
  int sample_hz = 0;
  // /proc/stat deltas per CPU: share of the window not idle/iowait, and steal.
  std::map<int, double> busy_pct;
  std::optional<double> steal_pct;
  std::string stat_error;
  Frequency freq;
  std::optional<double> rated_mhz;  // --rated-mhz, else cpuinfo_max_freq of the busy CPUs
  std::string rated_source;
  std::map<int, std::vector<IdleStateDelta>> idle;  // per CPU
  std::string idle_error;
  std::vector<TrainingSample> training;
  std::string training_note;                      // why none (detection's problems)
  std::vector<BusyThread> busy_threads;           // non-training, non-perfgap threads
  std::string threads_error;
  std::optional<std::uint64_t> numa_hint_faults;  // /proc/vmstat delta
  // Kernel frames: the decoded samples as perf rows, or why sampling did not run.
  std::optional<parsers::PerfProfile> perf;
  std::string perf_unavailable;
  std::string perf_event;                         // "cycles" or "cpu-clock", and the rate
  struct SampleCount {
    std::uint64_t kernel = 0, total = 0;
  };
  std::map<int, SampleCount> training_samples;    // per training pid: its threads' samples
  TlbCounts tlb;
  double self_cpu_s = 0;                          // perfgap's own user+system time in the window
  double setup_cpu_s = 0;                         // ... before and after it (detection, kallsyms, decoding)
};

}  // namespace perfgap::profile
