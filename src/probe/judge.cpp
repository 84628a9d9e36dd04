// The probes' judges: pure functions from measured numbers to findings (no clock, no files),
// so every status is tested on recorded figures (tests/unit/test_probe_judges.cpp).
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <set>

#include "probe/probe.hpp"

namespace perfgap::probe {
namespace {

using report::Finding;
using report::Status;

Finding probe_finding(std::string_view id, std::string_view layer, Status s, std::string title) {
  return core::finding(id, layer, s, std::move(title));
}

std::string probe_pct(double ratio) { return fmt::format("{:.0f}%", 100 * ratio); }

// CUDA's "00000000:18:00.0" or "0000:18:00.0" as sysfs names the device, lower case.
std::string probe_sysfs_bdf(std::string id) {
  for (auto& c : id) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  auto colon = id.find(':');
  if (colon != std::string::npos && colon > 4) id.erase(0, colon - 4);
  return id;
}

}  // namespace

// ---- probe.cpu_busy_mhz -------------------------------------------------------------------
std::vector<Finding> judge_cpu(const CpuMeasurement& m, double fail_ratio) {
  constexpr std::string_view id = "probe.cpu_busy_mhz";
  if (m.source.empty() || m.busy.empty()) {
    auto f = probe_finding(id, "cpu-power", Status::skip,
                           "no busy-MHz source on this machine: " + (m.no_source_why.empty() ? std::string("none measured") : m.no_source_why));
    f.fix = "run on bare metal or a VM with a virtual PMU (perf cycles), or with the msr PMU's aperf event (root), or a cpufreq driver exposing scaling_cur_freq";
    f.metric("cpus_loaded", static_cast<double>(m.cpus.size()));
    return {f};
  }
  double sum = 0, lo = m.busy.front().mhz;
  for (const auto& b : m.busy) sum += b.mhz, lo = std::min(lo, b.mhz);
  const double avg = sum / static_cast<double>(m.busy.size());
  const std::string load = fmt::format("{} of {} loaded CPUs measured over {:.1f} s ({})", m.busy.size(), m.cpus.size(), m.seconds, m.source);
  if (!m.rated_mhz) {
    auto f = probe_finding(id, "cpu-power", Status::skip,
                           fmt::format("busy CPUs average {:.0f} MHz under an all-core load, but no rated all-core turbo: pass --rated-mhz{}", avg,
                                       m.max_freq_mhz ? fmt::format(" (cpuinfo_max_freq {:.0f} MHz is the 1-core maximum, not the all-core rating)", *m.max_freq_mhz) : ""));
    f.add(m.source, load);
    f.metric("busy_mhz", avg).metric("min_busy_mhz", lo);
    return {f};
  }
  const double rated = *m.rated_mhz;
  const double ratio = avg / rated;
  const double bar = fail_ratio * rated;
  Finding f = probe_finding(id, "cpu-power", ratio < fail_ratio ? Status::fail : Status::pass, "");
  f.add(m.source, fmt::format("{}: average {:.0f} MHz, lowest {:.0f} MHz", load, avg, lo),
        fmt::format(">= {:.0f} MHz ({} of {:.0f} MHz, {})", bar, probe_pct(fail_ratio), rated, m.rated_from));
  std::vector<CpuMhz> slow;
  for (const auto& b : m.busy)
    if (b.mhz < bar) slow.push_back(b);
  std::sort(slow.begin(), slow.end(), [](const CpuMhz& a, const CpuMhz& b) { return a.mhz < b.mhz; });
  for (std::size_t i = 0; i < slow.size() && i < 16; ++i) f.add(fmt::format("cpu{}", slow[i].cpu), fmt::format("{:.0f} MHz busy", slow[i].mhz));
  if (slow.size() > 16) f.add("cpus", fmt::format("... {} more below {:.0f} MHz", slow.size() - 16, bar));
  f.metric("busy_mhz", avg).metric("min_busy_mhz", lo).metric("rated_mhz", rated).metric("ratio", ratio);
  f.metric("cpus_loaded", static_cast<double>(m.cpus.size())).metric("cpus_below", static_cast<double>(slow.size()));
  f.table = {{"CPUs", "avg MHz", "lowest MHz", "rated MHz", "% of rated", "bar"},
             {std::to_string(m.busy.size()), fmt::format("{:.0f}", avg), fmt::format("{:.0f}", lo), fmt::format("{:.0f}", rated), probe_pct(ratio),
              probe_pct(fail_ratio)}};
  if (f.status == Status::fail) {
    f.title = fmt::format("busy CPUs run at {:.0f} MHz under an all-core load, {} of the rated {:.0f} MHz", avg, probe_pct(ratio), rated);
    f.fix = "allow turbo and deep C-states (BIOS power profile \"performance\", cpu.turbo, cpu.cstate.deep_idle), performance governor; check power capping (RAPL/BMC limits) and cooling";
    f.impact = "data loading, kernel launches and NCCL proxy threads run slower than rated";
  } else {
    f.title = fmt::format("busy CPUs run at {:.0f} MHz under an all-core load, {} of the rated {:.0f} MHz", avg, probe_pct(ratio), rated);
  }
  if (m.deadline_hit) f.add("probe", "the load was cut short by its deadline");
  return {f};
}

// ---- probe.memory_bw ----------------------------------------------------------------------
std::string memory_pair_starved(const MemoryPair& p) {
  if (!p.gbps) return "";
  std::vector<std::string> why;
  if (p.cpu_share && *p.cpu_share < kMemoryMinCpuShare)
    why.push_back(fmt::format("its threads ran {:.0f}% of the time (the CPUs were busy with other work)", 100 * *p.cpu_share));
  if (p.min_passes && *p.min_passes < kMemoryMinPasses)
    why.push_back(fmt::format("a thread streamed only {:.2f} of its slice once", *p.min_passes));
  if (*p.gbps < kMemoryImplausibleGbps) why.push_back(fmt::format("{:.3f} GB/s is below any server memory path", *p.gbps));
  std::string out;
  for (const auto& w : why) out += (out.empty() ? "" : "; ") + w;
  return out.empty() ? out : "starved measurement (" + out + "): run the probe again on an idle node";
}

std::vector<Finding> judge_memory(const MemoryMeasurement& m, double warn_local_ratio) {
  constexpr std::string_view id = "probe.memory_bw";
  if (!m.no_run_why.empty()) {
    auto f = probe_finding(id, "placement", Status::skip, "memory bandwidth not measured: " + m.no_run_why);
    return {f};
  }
  const MemoryPair* best = nullptr;
  std::vector<const MemoryPair*> failed;
  std::vector<std::pair<const MemoryPair*, std::string>> starved;  // measured, but not the memory's figure
  std::set<int> cpu_nodes, mem_nodes;
  for (const auto& p : m.pairs) {
    cpu_nodes.insert(p.cpu_node);
    mem_nodes.insert(p.mem_node);
    if (!p.gbps) failed.push_back(&p);
    else if (auto why = memory_pair_starved(p); !why.empty()) starved.emplace_back(&p, std::move(why));
    else if (p.cpu_node == p.mem_node && (!best || *p.gbps > *best->gbps)) best = &p;
  }
  auto is_starved = [&](const MemoryPair& p) {
    return std::any_of(starved.begin(), starved.end(), [&](const auto& s) { return s.first == &p; });
  };
  Finding f = probe_finding(id, "placement", Status::pass, "");
  // The matrix: a row per CPU node, a column per memory node.
  std::vector<std::string> head = {"CPU node \\ memory node"};
  for (int n : mem_nodes) head.push_back(fmt::format("node {} GB/s", n));
  f.table.push_back(head);
  for (int c : cpu_nodes) {
    std::vector<std::string> row = {fmt::format("node {}", c)};
    for (int n : mem_nodes) {
      auto it = std::find_if(m.pairs.begin(), m.pairs.end(), [&](const MemoryPair& p) { return p.cpu_node == c && p.mem_node == n; });
      row.push_back(it == m.pairs.end() ? "-" : it->gbps ? fmt::format("{:.1f}", *it->gbps) : "n/a");
    }
    f.table.push_back(row);
  }
  f.table_always = true;
  // A starved pair's figure is the busy machine's, not the memory's: named apart, so that nothing
  // reading the metrics (compare, expect learn's floors) takes it for the memory's bandwidth.
  for (const auto& p : m.pairs)
    if (p.gbps) f.metric(fmt::format("{}gbps_cpu{}_mem{}", is_starved(p) ? "starved_" : "", p.cpu_node, p.mem_node), *p.gbps);
  for (const auto* p : failed) f.add(fmt::format("cpu node {} -> memory node {}", p->cpu_node, p->mem_node), "not measured: " + p->error);
  for (const auto& [p, why] : starved)
    f.add(fmt::format("cpu node {} -> memory node {}", p->cpu_node, p->mem_node), fmt::format("{:.3f} GB/s triad, not judged: {}", *p->gbps, why));
  if (!best) {
    f.status = Status::skip;
    f.title = !starved.empty() ? fmt::format("no local pair gave a usable figure: {}", starved.front().second)
            : failed.empty()   ? "no local (CPU node = memory node) pair was measured"
                               : fmt::format("no local pair could be measured ({})", failed.front()->error);
    return {f};
  }
  f.metric("best_local_gbps", *best->gbps);
  std::vector<const MemoryPair*> low;
  for (const auto& p : m.pairs) {
    if (!p.gbps || is_starved(p)) continue;
    const double share = *p.gbps / *best->gbps;
    const std::string src = fmt::format("cpu node {} -> memory node {}", p.cpu_node, p.mem_node);
    if (p.cpu_node == p.mem_node) {
      if (share < warn_local_ratio) {
        low.push_back(&p);
        f.add(src, fmt::format("{:.1f} GB/s triad, {} of the best local pair (node {}: {:.1f} GB/s)", *p.gbps, probe_pct(share), best->cpu_node, *best->gbps),
              fmt::format(">= {} of the best local pair", probe_pct(warn_local_ratio)));
      } else {
        f.add(src, fmt::format("{:.1f} GB/s triad ({} threads, {} MiB per array)", *p.gbps, p.threads, p.bytes_per_array >> 20));
      }
    } else {
      f.add(src, fmt::format("{:.1f} GB/s triad (remote: {} of the best local pair)", *p.gbps, probe_pct(share)));
    }
  }
  if (!low.empty()) {
    f.status = Status::warn;
    const auto* worst = *std::min_element(low.begin(), low.end(), [](const MemoryPair* a, const MemoryPair* b) { return *a->gbps < *b->gbps; });
    f.title = fmt::format("{} local NUMA pair(s) below {} of the best: node {} reaches {:.1f} GB/s, node {} {:.1f} GB/s", low.size(),
                          probe_pct(warn_local_ratio), worst->cpu_node, *worst->gbps, best->cpu_node, *best->gbps);
    f.fix = "compare the slow node's DIMM population and speed (dmidecode -t memory), BIOS memory settings (interleave, sub-NUMA clustering) and memory errors (edac-util, rasdaemon)";
    f.impact = "ranks on the slow node's CPUs load data and stage host buffers more slowly";
  } else if (!failed.empty() || !starved.empty()) {
    // A pair without a usable figure is not a healthy pair: no pass over it.
    f.status = Status::warn;
    f.title = fmt::format("{} of {} NUMA pairs could not be measured{}; the best local pair reaches {:.1f} GB/s", failed.size() + starved.size(),
                          m.pairs.size(), starved.empty() ? "" : fmt::format(" ({} starved: the machine was busy)", starved.size()), *best->gbps);
  } else {
    f.title = fmt::format("{} NUMA pair(s) measured; every local pair within {} of the best ({:.1f} GB/s, node {})", m.pairs.size(),
                          probe_pct(warn_local_ratio), *best->gbps, best->cpu_node);
  }
  if (m.deadline_hit) f.add("probe", "some pairs were cut short by their time cap");
  return {f};
}

// ---- probe.h2d ----------------------------------------------------------------------------
std::optional<double> pcie_expected_gbps(std::optional<double> gts, std::optional<int> width) {
  if (!gts || !width || *gts <= 0 || *width <= 0) return std::nullopt;
  // Gen1/2 use 8b/10b, Gen3-5 128b/130b, Gen6 FLIT mode (242 of 256 bytes carry TLPs).
  const double encoding = *gts <= 5.0 ? 0.8 : *gts < 64.0 ? 128.0 / 130.0 : 242.0 / 256.0;
  return *gts * *width * encoding / 8.0 * 0.87;
}

GpuMeasurement join_gpu_probe(const parsers::GpuProbeDoc& doc, const std::vector<facts::PciDevice>& pci,
                              const std::function<facts::PciLink(const std::string&)>& link_of) {
  GpuMeasurement m;
  m.driver_version = doc.driver_version;
  if (!doc.error.empty()) m.no_run_why = doc.error;
  else if (doc.gpus.empty()) m.no_run_why = "the CUDA driver lists no GPU";
  for (const auto& d : doc.gpus) {
    GpuProbe g;
    g.dev = d;
    g.bdf = probe_sysfs_bdf(d.bus_id);
    for (const auto& p : pci)
      if (p.bdf == g.bdf && p.numa_node && *p.numa_node >= 0) g.numa_node = p.numa_node;
    if (!g.bdf.empty()) {
      auto link = link_of(g.bdf);
      g.expected_gbps = pcie_expected_gbps(link.speed_gts, link.width);
      if (g.expected_gbps)
        g.link_text = fmt::format("{} x{} ({}, {})", link.speed_text, *link.width, link.speed_source, link.width_source);
    }
    m.gpus.push_back(std::move(g));
  }
  return m;
}

std::vector<Finding> judge_h2d(const GpuMeasurement& m, double warn_ratio, double fastest_tolerance) {
  constexpr std::string_view id = "probe.h2d";
  if (!m.no_run_why.empty()) return {probe_finding(id, "pcie", Status::skip, "host<->GPU copies not measured: " + m.no_run_why)};
  std::vector<Finding> out;
  for (const auto& g : m.gpus) {
    Finding f = probe_finding(id, "pcie", Status::pass, "");
    f.subject = g.bdf.empty() ? fmt::format("gpu{}", g.dev.index) : g.bdf;
    if (!g.dev.error.empty()) {
      f.status = Status::skip;
      f.title = fmt::format("GPU {} could not be probed: {}", g.dev.index, g.dev.error);
      out.push_back(std::move(f));
      continue;
    }
    // The GPU's local node: sysfs numa_node; on a machine with one node, that node.
    std::optional<int> local = g.numa_node;
    if (!local && g.dev.copies.size() == 1) local = g.dev.copies.front().node;
    const parsers::GpuProbeCopy* local_copy = nullptr;
    const parsers::GpuProbeCopy* fastest = nullptr;
    std::vector<std::string> problems;
    f.table = {{"host node", "H2D GB/s", "D2H GB/s", "expected GB/s"}};
    f.table_always = true;
    for (const auto& c : g.dev.copies) {
      const std::string src = fmt::format("GPU {} <- pinned memory on node {}{}", g.dev.index, c.node, local && c.node == *local ? " (local)" : "");
      if (!c.error.empty() || !c.h2d_gbps) {
        f.add(src, "not measured: " + (c.error.empty() ? std::string("no figure") : c.error));
        f.table.push_back({std::to_string(c.node), "n/a", "n/a", g.expected_gbps ? fmt::format("{:.1f}", *g.expected_gbps) : "?"});
        continue;
      }
      f.metric(fmt::format("h2d_gbps_node{}", c.node), *c.h2d_gbps);
      if (c.d2h_gbps) f.metric(fmt::format("d2h_gbps_node{}", c.node), *c.d2h_gbps);
      f.table.push_back({std::to_string(c.node), fmt::format("{:.1f}", *c.h2d_gbps), c.d2h_gbps ? fmt::format("{:.1f}", *c.d2h_gbps) : "n/a",
                         g.expected_gbps ? fmt::format("{:.1f}", *g.expected_gbps) : "?"});
      f.add(src, fmt::format("H2D {:.1f} GB/s, D2H {}", *c.h2d_gbps, c.d2h_gbps ? fmt::format("{:.1f} GB/s", *c.d2h_gbps) : "n/a"));
      if (local && c.node == *local) local_copy = &c;
      if (!fastest || *c.h2d_gbps > *fastest->h2d_gbps) fastest = &c;
    }
    if (!fastest) {
      f.status = Status::skip;
      f.title = fmt::format("GPU {}: no host node's copy could be measured", g.dev.index);
      out.push_back(std::move(f));
      continue;
    }
    if (g.expected_gbps) f.metric("expected_gbps", *g.expected_gbps);
    const auto* judged = local_copy ? local_copy : fastest;
    if (local_copy && fastest != local_copy && *fastest->h2d_gbps > *local_copy->h2d_gbps * (1 + fastest_tolerance))
      problems.push_back(fmt::format("node {} (remote) copies faster than the GPU's local node {} ({:.1f} vs {:.1f} GB/s H2D)", fastest->node,
                                     local_copy->node, *fastest->h2d_gbps, *local_copy->h2d_gbps));
    if (g.expected_gbps) {
      const double bar = warn_ratio * *g.expected_gbps;
      const std::string which = local_copy ? "local node" : "fastest node";
      f.add("link " + g.link_text, fmt::format("expects about {:.1f} GB/s per direction", *g.expected_gbps),
            fmt::format("{} >= {:.1f} GB/s ({} of it)", which, bar, probe_pct(warn_ratio)));
      if (*judged->h2d_gbps < bar)
        problems.push_back(fmt::format("H2D from the {} {:.1f} GB/s, {} of the link's {:.1f} GB/s", which, *judged->h2d_gbps,
                                       probe_pct(*judged->h2d_gbps / *g.expected_gbps), *g.expected_gbps));
      if (judged->d2h_gbps && *judged->d2h_gbps < bar)
        problems.push_back(fmt::format("D2H to the {} {:.1f} GB/s, {} of the link's {:.1f} GB/s", which, *judged->d2h_gbps,
                                       probe_pct(*judged->d2h_gbps / *g.expected_gbps), *g.expected_gbps));
    }
    if (!problems.empty()) {
      f.status = Status::warn;
      f.title = fmt::format("GPU {}: {}", g.dev.index, problems.front());
      for (std::size_t i = 1; i < problems.size(); ++i) f.add("probe", problems[i]);
      f.fix = "check the link (gpu.pcie, pcie.* checks: trained speed/width, ACS/IOMMU, MaxPayload/MaxReadReq), and bind the job's host buffers to the GPU's local node (numactl --membind, NCCL/torch pinned memory on the local socket)";
      f.impact = "host<->device copies (data loading, optimizer offload, checkpoints) run slower than the link allows";
    } else if (!g.expected_gbps) {
      f.title = fmt::format("GPU {}: H2D {:.1f} GB/s from node {}{}; the link's expected rate is unknown (no max_link_speed/width in sysfs)",
                            g.dev.index, *judged->h2d_gbps, judged->node, local_copy ? " (local)" : "");
    } else {
      f.title = fmt::format("GPU {}: H2D {:.1f} GB/s from {} node {}, {} of the link's {:.1f} GB/s", g.dev.index, *judged->h2d_gbps,
                            local_copy ? "its local" : "the fastest", judged->node, probe_pct(*judged->h2d_gbps / *g.expected_gbps), *g.expected_gbps);
    }
    if (!local) f.add("sysfs numa_node", "the GPU's local NUMA node is unknown: the fastest node is judged");
    out.push_back(std::move(f));
  }
  return out;
}

// ---- probe.launch_latency -----------------------------------------------------------------
std::vector<Finding> judge_launch(const GpuMeasurement& m) {
  constexpr std::string_view id = "probe.launch_latency";
  if (!m.no_run_why.empty()) return {probe_finding(id, "gpu", Status::skip, "kernel launch latency not measured: " + m.no_run_why)};
  std::vector<Finding> out;
  for (const auto& g : m.gpus) {
    Finding f = probe_finding(id, "gpu", Status::pass, "");
    f.subject = g.bdf.empty() ? fmt::format("gpu{}", g.dev.index) : g.bdf;
    if (!g.dev.error.empty() || !g.dev.launch_p50_us || !g.dev.launch_p99_us) {
      f.status = Status::skip;
      f.title = fmt::format("GPU {}: launch latency not measured{}", g.dev.index, g.dev.error.empty() ? "" : ": " + g.dev.error);
      out.push_back(std::move(f));
      continue;
    }
    f.title = fmt::format("GPU {}: empty-kernel launch p50 {:.1f} us, p99 {:.1f} us ({} launches)", g.dev.index, *g.dev.launch_p50_us,
                          *g.dev.launch_p99_us, g.dev.launches);
    f.metric("launch_p50_us", *g.dev.launch_p50_us).metric("launch_p99_us", *g.dev.launch_p99_us).metric("launches", g.dev.launches);
    f.add("cuLaunchKernel", fmt::format("p50 {:.1f} us, p99 {:.1f} us over {} launches, each synchronised", *g.dev.launch_p50_us,
                                        *g.dev.launch_p99_us, g.dev.launches));
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace perfgap::probe
