// perfgap probe (docs/PROBE.md): opt-in active measurements of the live machine, never part of
// `check`. Each probe has two halves: a measurement that runs bounded work on the node
// (probe/cpu.cpp, probe/memory.cpp, and perfgap-gpu --probe for the GPUs) and returns the
// numbers below, and a pure judge from those numbers to findings, so every status is tested
// on recorded figures. The probe ids' catalogue entries (rule, fix, reads, params) are in
// probe_catalogue() and rendered into docs/CHECKS.md like the checks'.
#pragma once

#include <chrono>
#include <functional>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "core/check.hpp"
#include "facts/facts.hpp"
#include "facts/nccl.hpp"
#include "parsers/gpu_probe_json.hpp"
#include "report/model.hpp"

namespace perfgap::probe {

// ---- probe.cpu_busy_mhz -------------------------------------------------------------------
struct CpuMhz {
  int cpu = 0;
  double mhz = 0;
};

struct CpuMeasurement {
  std::vector<int> cpus;          // the CPUs loaded (sched_getaffinity)
  std::vector<CpuMhz> busy;       // busy MHz per CPU that the source could measure
  std::string source;             // "perf msr/aperf/", "perf cycles", "scaling_cur_freq"; "" none
  std::string no_source_why;      // why no source worked (each one tried)
  double seconds = 0;             // how long the load ran
  std::optional<double> rated_mhz;  // the rated turbo for this many active cores
  std::string rated_from;           // where that figure came from
  std::optional<double> max_freq_mhz;  // cpuinfo_max_freq (1-core maximum), for the skip title
  bool deadline_hit = false;
};
std::vector<report::Finding> judge_cpu(const CpuMeasurement& m, double fail_ratio);

// ---- probe.memory_bw ----------------------------------------------------------------------
struct MemoryPair {
  int cpu_node = 0, mem_node = 0;
  std::optional<double> gbps;  // triad bandwidth; empty with `error`
  std::string error;           // why the pair could not be measured (mbind refused, ...)
  std::size_t bytes_per_array = 0;
  int threads = 0;
  // How trustworthy the figure is: the CPU time the threads got over their wall time (a busy
  // machine gives them a fraction), and the fewest full passes any thread made over its slice
  // (under one pass the arrays were never streamed whole). Empty when not measured.
  std::optional<double> cpu_share;
  std::optional<double> min_passes;
};
// Below these a pair's figure is not a measurement of the memory (judge_memory: "starved").
inline constexpr double kMemoryMinCpuShare = 0.5;
inline constexpr double kMemoryMinPasses = 1.0;
inline constexpr double kMemoryImplausibleGbps = 1.0;  // no DRAM path of a server is this slow
// Why a measured pair's figure cannot be judged, or "".
std::string memory_pair_starved(const MemoryPair& p);
struct MemoryMeasurement {
  std::vector<MemoryPair> pairs;
  std::string no_run_why;  // the probe could not run at all (no NUMA topology, no free memory)
  bool deadline_hit = false;
};
std::vector<report::Finding> judge_memory(const MemoryMeasurement& m, double warn_local_ratio);

// ---- probe.h2d, probe.launch_latency (perfgap-gpu --probe) --------------------------------
struct GpuProbe {
  parsers::GpuProbeDevice dev;   // what the helper measured
  std::string bdf;               // dev.bus_id in sysfs form ("0000:18:00.0")
  std::optional<int> numa_node;  // the GPU's local node (sysfs numa_node; empty: unknown or -1)
  // Expected payload rate of the link (GB/s per direction) from its PCIe generation and width.
  std::optional<double> expected_gbps;
  std::string link_text;  // "32.0 GT/s x16 (/sys/bus/pci/devices/.../max_link_speed)"
};
struct GpuMeasurement {
  std::vector<GpuProbe> gpus;
  std::string no_run_why;  // no helper, no libcuda, no GPU, ... ("" when it ran)
  std::string driver_version;
};
// Payload GB/s a PCIe link carries per direction: GT/s x lanes x line encoding x the share
// left after TLP/DLLP overhead (0.87 with 256-byte payloads: Gen5 x16 -> about 55 GB/s).
std::optional<double> pcie_expected_gbps(std::optional<double> gts, std::optional<int> width);
// The helper's document joined with the node's PCI facts (judge input).
GpuMeasurement join_gpu_probe(const parsers::GpuProbeDoc& doc, const std::vector<facts::PciDevice>& pci,
                              const std::function<facts::PciLink(const std::string& bdf)>& link_of);
std::vector<report::Finding> judge_h2d(const GpuMeasurement& m, double warn_ratio, double fastest_tolerance);
std::vector<report::Finding> judge_launch(const GpuMeasurement& m);

// ---- the catalogue ------------------------------------------------------------------------
// Same fields as a check's (core::CheckInfo; `run` empty: probes are not run by `check`).
const std::vector<core::CheckInfo>& probe_catalogue();
double probe_param(std::string_view id, std::string_view name);  // the default of a declared param

// ---- measurement (live only; each bounded by its deadline) -------------------------------
struct CpuOptions {
  std::chrono::milliseconds duration{1500};
  std::optional<double> rated_mhz;  // --rated-mhz
};
CpuMeasurement measure_cpu(facts::Facts& f, const CpuOptions& o);

struct MemoryOptions {
  std::chrono::milliseconds per_pair{1500};  // time cap of one (CPU node, memory node) pair
  std::size_t max_bytes_per_array = std::size_t{1} << 30;
};
MemoryMeasurement measure_memory(facts::Facts& f, const MemoryOptions& o);

struct GpuOptions {
  std::chrono::milliseconds budget{60000};  // the helper's --deadline (the whole run)
  std::string helper;                       // perfgap-gpu's path (facts::gpu_helper_path)
};
GpuMeasurement measure_gpu(facts::Facts& f, const GpuOptions& o);

// ---- one `perfgap probe` run (run.cpp) ---------------------------------------------------
struct ProbeRequest {
  bool cpu = false, memory = false, gpu = false;
  std::chrono::milliseconds per_probe{1500};  // each CPU load, each NUMA pair; the GPU budget grows with it
  std::optional<double> rated_mhz;             // --cpu's rated all-core turbo MHz
};
// The asked probes on the live machine, in the order cpu, memory, gpu, each judged against its
// catalogue defaults: their probe.* findings.
std::vector<report::Finding> run_probes(const ProbeRequest& request);

}  // namespace perfgap::probe
