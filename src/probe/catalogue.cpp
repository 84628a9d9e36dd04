// The probe ids' catalogue entries: the same fields a check's registration carries, so
// tools/docgen renders them into docs/CHECKS.md and the README's table; `perfgap probe` reads
// its thresholds from here. Not in core::builtin_registry(): a plain `check` never runs them.
#include <stdexcept>

#include "facts/reads.hpp"
#include "probe/probe.hpp"

namespace perfgap::probe {
namespace {

std::vector<core::CheckInfo> make_probe_catalogue() {
  namespace reads = facts::reads;
  static const reads::List cpu_extra = {"/sys/bus/event_source/devices/msr/type", "/sys/bus/event_source/devices/msr/events/aperf",
                                        "/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq"};
  static const reads::List mem_extra = {"/sys/devices/system/node/has_memory", "/sys/devices/system/node/node*/meminfo",
                                        "/sys/devices/system/cpu/cpu*/cache/index*/size"};
  std::vector<core::CheckInfo> c;
  c.push_back({.id = "probe.cpu_busy_mhz",
               .layer = "cpu-power",
               .summary = "perfgap probe --cpu: all-core busy MHz under a short load vs the rated turbo for that many active cores",
               .rule = "Active, opt-in (`perfgap probe --cpu`, never `check`). One busy-loop thread pinned to each CPU perfgap may run on "
                       "(sched_getaffinity) for --seconds-per-probe (default 1.5 s); the busy MHz of each CPU is its cycles divided by the "
                       "time the thread ran, counted by perf_event_open per thread: the msr PMU's aperf event (root), else the hardware "
                       "cycles event, else scaling_cur_freq sampled during the load (the source is named in the evidence). Judged "
                       "against the rated turbo for that many active cores, given as --rated-mhz (the processor's all-core turbo from "
                       "its specification). `fail` when the average is below `fail_ratio` of it; the CPUs below it are listed. `skip` "
                       "when no source counts (a VM without a virtual PMU) or no rated figure is given (cpuinfo_max_freq is the 1-core "
                       "maximum and is not used as the all-core rating).",
               .fix = "Allow turbo and deep C-states (BIOS performance profile, cpu.turbo, cpu.cstate.deep_idle), the performance "
                      "governor; look for power capping (RAPL or BMC limits) and cooling.",
               .reads = reads::of({reads::topology(), reads::cpufreq(), cpu_extra}),
               .params = {{"fail_ratio", 0.9, "fail when the all-core busy MHz is below this share of the rated turbo"}},
               .run = {}});
  c.push_back({.id = "probe.memory_bw",
               .layer = "placement",
               .summary = "perfgap probe --memory: STREAM-like triad bandwidth for every (CPU node, memory node) pair",
               .rule = "Active, opt-in (`perfgap probe --memory`). For every (CPU node, memory node) pair: one thread per CPU of the CPU "
                       "node (allowed by sched_getaffinity) pinned with sched_setaffinity, three arrays bound to the memory node with "
                       "mbind(MPOL_BIND) and first-touched by those threads, then a triad a[i] = b[i] + s*c[i] repeated until the "
                       "pair's time cap (--seconds-per-probe, shortened so the whole matrix stays within 30 s, at least 0.2 s); "
                       "GB/s counts 24 bytes per element. Arrays are 4x the last-level cache (at least 64 MiB) and at "
                       "most an eighth of the node's free memory (and 1 GiB). GB/s per pair are metrics (`gbps_cpuC_memM`; "
                       "a starved pair's, not judged, `starved_gbps_cpuC_memM`), the matrix a table. `warn` when a local pair (CPU node = memory node) is below `warn_local_ratio` of the best local pair, "
                       "or some pairs could not be measured (mbind refused: named); `skip` when no local pair could be measured.",
               .fix = "Compare the slow node's DIMM population and speed (dmidecode -t memory), the BIOS memory settings (interleave, "
                      "sub-NUMA clustering) and memory errors (rasdaemon, edac-util).",
               .reads = reads::of({reads::topology(), mem_extra}),
               .params = {{"warn_local_ratio", 0.8, "warn when a local pair's bandwidth is below this share of the best local pair"}},
               .run = {}});
  c.push_back({.id = "probe.h2d",
               .layer = "pcie",
               .summary = "perfgap probe --gpu: host-to-device and device-to-host GB/s per GPU from pinned memory on each NUMA node",
               .rule = "Active, opt-in (`perfgap probe --gpu`, through `perfgap-gpu --probe`: the CUDA driver API by dlopen of "
                       "libcuda.so.1). Per GPU (subject: its PCI address) and per NUMA node with memory: a 64 MiB host buffer bound "
                       "to the node with mbind, page-locked with cuMemHostRegister, copied to and from the GPU (cuMemcpyHtoDAsync/"
                       "DtoHAsync timed with CUDA events, best of the repetitions). The expected rate is the link's payload rate from "
                       "its max_link_speed and max_link_width (GT/s x lanes x encoding x 0.87: Gen5 x16 about 55 GB/s). `warn` when a "
                       "remote node copies more than `fastest_tolerance` faster than the GPU's local node (sysfs numa_node), or the "
                       "local node's H2D or D2H is below `warn_ratio` of the expected rate (the fastest node's when the local node is "
                       "unknown). `skip` when perfgap-gpu or libcuda.so.1 is missing, the driver lists no GPU, or a GPU could not be "
                       "probed (named).",
               .fix = "Check the link (gpu.pcie and the pcie.* checks: trained speed and width, ACS/IOMMU, MaxPayload/MaxReadReq) and "
                      "bind the job's host buffers to the GPU's local node.",
               .reads = reads::of({reads::pci(), reads::pci_link()}),
               .params = {{"warn_ratio", 0.8, "warn when the local node's copy rate is below this share of the link's expected rate"},
                          {"fastest_tolerance", 0.05, "a remote node must be this much faster than the local one to warn"}},
               .run = {}});
  c.push_back({.id = "probe.launch_latency",
               .layer = "gpu",
               .summary = "perfgap probe --gpu: launch latency p50/p99 of an empty kernel per GPU (metrics)",
               .rule = "Active, opt-in (`perfgap probe --gpu`, through `perfgap-gpu --probe`). Per GPU: an empty kernel loaded from "
                       "embedded PTX (cuModuleLoadData) launched 2000 times, each launch synchronised, host wall time per launch; p50 "
                       "and p99 in microseconds are metrics (`launch_p50_us`, `launch_p99_us`). `pass` with the figures; `skip` when "
                       "not measured (named).",
               .fix = "A high p99 points at CPU contention on the launching core or a busy GPU: see placement.shared_cores and run "
                      "the probe on an idle GPU.",
               .reads = reads::of({reads::pci()}),
               .params = {},
               .run = {}});
  return c;
}

}  // namespace

const std::vector<core::CheckInfo>& probe_catalogue() {
  static const std::vector<core::CheckInfo> c = make_probe_catalogue();
  return c;
}

double probe_param(std::string_view id, std::string_view name) {
  for (const auto& c : probe_catalogue())
    if (c.id == id)
      for (const auto& p : c.params)
        if (p.name == name) return p.default_value;
  throw std::out_of_range("probe param not declared: " + std::string(id) + " " + std::string(name));
}

}  // namespace perfgap::probe
