// The dTLB counters of `perfgap profile`'s window (issue 47): dTLB read accesses and misses
// (PERF_TYPE_HW_CACHE) and instructions, counted on every CPU system-wide (pid -1, as `perf stat
// -a`: the collector measures the node, not a process) and summed into the perf stat facts that
// `analyze perf-stat` judges. Read-only; every counter is closed when this is destroyed.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "profile/perf_events.hpp"
#include "profile/samples.hpp"

namespace perfgap::profile {

// The events counted: perf's generic names (those `perf stat -e` takes), so the live facts read
// as a perf stat run's and one judge serves both.
struct CountedEvent {
  const char* name;
  std::uint32_t type;
  std::uint64_t config;
};
const std::vector<CountedEvent>& tlb_events();

// perf_event_open errnos that mean "no PMU counter for this event here" (a guest without a vPMU,
// a PMU without the generic event): ENOENT, EOPNOTSUPP, ENODEV.
bool no_pmu_errno(int err);

class TlbCounting {
 public:
  // Opens each event on every CPU, disabled. A permission refusal names the missing right
  // (`paranoid` and `caps` as missing_right takes them); a refused dTLB-load-misses leaves nothing
  // open (no figure without it), another refused event is reported as <not supported>.
  TlbCounting(const std::vector<int>& cpus, EventOps ops, const std::string& paranoid, std::optional<std::uint64_t> caps);
  void start() const;  // enables every counter: the window's start
  void stop() const;   // disables them: its end
  // The counts over the window, scaled by time enabled over time running (summed over CPUs
  // first, as perf stat -a does), or why there are none.
  TlbCounts counts() const;

 private:
  struct Event {
    std::string name;
    std::vector<std::pair<int, PerfFd>> fds;  // per CPU
    std::optional<OpenError> refused;
    int refused_cpu = -1;
  };
  EventOps ops_;
  std::vector<Event> events_;
  std::size_t cpus_ = 0;
  TlbCounts failed_;  // missing != none: nothing is counted
};

}  // namespace perfgap::profile
