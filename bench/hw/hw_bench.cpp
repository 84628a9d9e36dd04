// Times, in-process, what the hardware checks add to a live `perfgap check`: the RDMA counters
// of every port read twice (the sample window's two ends) and the kernel log read and turned
// into records and events once (facts::kernel_log, as the checks ask for it), over a tree
// perfgap-bench-gen-hw wrote, or with --live over the live system (run.sh puts the tree's files
// at /sys/class/infiniband and /dev/kmsg in a private mount namespace for that).
//   perfgap-bench-hw TREE|--live [REPS]
// Prints the best and median wall and thread-CPU time of REPS runs, in ms.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

#include "facts/facts.hpp"
#include "facts/platform.hpp"
#include "facts/rdma_counters.hpp"
#include "sys/sysroot.hpp"

namespace {
double now(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return static_cast<double>(t.tv_sec) * 1e3 + static_cast<double>(t.tv_nsec) * 1e-6;
}
double median(std::vector<double> v) {
  std::sort(v.begin(), v.end());
  return v.size() % 2 ? v[v.size() / 2] : (v[v.size() / 2 - 1] + v[v.size() / 2]) / 2;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s TREE|--live [REPS]\n", argv[0]);
    return 2;
  }
  const bool live = std::string(argv[1]) == "--live";
  auto root = live ? perfgap::sys::Sysroot::live() : perfgap::sys::Sysroot::at(argv[1]);
  if (!root) {
    std::fprintf(stderr, "%s: not a tree\n", argv[1]);
    return 2;
  }
  const int reps = argc > 2 ? std::atoi(argv[2]) : 21;
  std::vector<double> wall, cpu, counters_cpu, log_cpu;
  std::size_t ports = 0, values = 0, events = 0, records = 0;
  for (int i = 0; i < reps; ++i) {
    const double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    auto a = perfgap::facts::read_rdma_counters(*root);
    auto b = perfgap::facts::read_rdma_counters(*root);
    const double c1 = now(CLOCK_THREAD_CPUTIME_ID);
    perfgap::facts::Facts facts(*root, perfgap::facts::Options{});
    const auto& log = perfgap::facts::kernel_log(facts);
    if (!log) {
      std::fprintf(stderr, "%s: the kernel log was not read: %s\n", argv[1], log.error().c_str());
      return 2;
    }
    wall.push_back(now(CLOCK_MONOTONIC) - w0);
    const double c2 = now(CLOCK_THREAD_CPUTIME_ID);
    cpu.push_back(c2 - c0);
    counters_cpu.push_back(c1 - c0);
    log_cpu.push_back(c2 - c1);
    ports = b.ports.size();
    values = 0;
    for (const auto& p : a.ports) values += p.values.size();
    events = log->events.size();
    records = log->messages.size();
  }
  std::printf("%s path: ports %zu, counters read per sample %zu, kernel log %zu records, events %zu\n", live ? "live" : "tree", ports, values, records, events);
  std::printf("wall ms: min %.2f median %.2f; thread CPU ms: min %.2f median %.2f (%d runs)\n", *std::min_element(wall.begin(), wall.end()),
              median(wall), *std::min_element(cpu.begin(), cpu.end()), median(cpu), reps);
  std::printf("thread CPU ms, median: counters (two samples) %.2f, kernel log (read + parse) %.2f\n", median(counters_cpu), median(log_cpu));
  return median(wall) <= 5.0 ? 0 : 1;
}
