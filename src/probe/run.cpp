// One `perfgap probe` run: the asked measurements, then their judges.
#include <algorithm>

#include "facts/facts.hpp"
#include "probe/probe.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::probe {

std::vector<report::Finding> run_probes(const ProbeRequest& rq) {
  facts::Facts f(sys::Sysroot::live(), facts::Options{});
  std::vector<report::Finding> findings;
  auto append = [&](std::vector<report::Finding> v) {
    for (auto& x : v) findings.push_back(std::move(x));
  };
  if (rq.cpu) {
    CpuOptions o;
    o.duration = rq.per_probe;
    o.rated_mhz = rq.rated_mhz;
    append(judge_cpu(measure_cpu(f, o), probe_param("probe.cpu_busy_mhz", "fail_ratio")));
  }
  if (rq.memory) {
    MemoryOptions o;
    o.per_pair = rq.per_probe;
    append(judge_memory(measure_memory(f, o), probe_param("probe.memory_bw", "warn_local_ratio")));
  }
  if (rq.gpu) {
    GpuOptions o;
    // Context creation (about 1.5 s a GPU) dominates; copies and launches take well under
    // a second each. 60 s covers 8 GPUs x 2 nodes; a longer --seconds-per-probe raises it.
    o.budget = std::max<std::chrono::milliseconds>(std::chrono::seconds(60), rq.per_probe * 40);
    auto m = measure_gpu(f, o);
    append(judge_h2d(m, probe_param("probe.h2d", "warn_ratio"), probe_param("probe.h2d", "fastest_tolerance")));
    append(judge_launch(m));
  }
  return findings;
}

}  // namespace perfgap::probe
