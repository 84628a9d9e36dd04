// numa.balancing and numa.remote_memory: automatic NUMA balancing, and training processes'
// memory on the NUMA nodes of their CPUs.
#include <fmt/format.h>

#include <chrono>
#include <cmath>
#include <map>

#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// ---- numa.balancing ----------------------------------------------------------------------
std::vector<Finding> numa_balancing(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "numa.balancing";
  const std::string path = facts::sysctl_path("kernel.numa_balancing");
  auto raw = sysctl_or_skip(f, "kernel.numa_balancing", id, layer::placement, "automatic NUMA balancing setting");
  if (!raw) return {raw.error()};
  auto n = sys::to_int<int>(*raw);
  if (!n || *n < 0) return {core::finding(id, layer::placement, Status::skip, fmt::format("{}: unexpected value '{}'", path, *raw))};
  if (*n == 0) {
    auto out = core::finding(id, layer::placement, Status::pass, "automatic NUMA balancing is off");
    out.add(path, "0");
    return {out};
  }
  auto out = core::finding(id, layer::placement, Status::warn,
                           *n == 2 ? "automatic NUMA balancing is on (memory tiering mode): pages of pinned processes migrate"
                                   : "automatic NUMA balancing is on: the kernel unmaps and migrates pages of pinned training processes");
  out.add(path, *raw, "0");
  out.fix = "sysctl -w kernel.numa_balancing=0, and persist it (kernel.numa_balancing = 0 in /etc/sysctl.d/); bind ranks and their memory to the GPU's NUMA node instead.";
  out.impact = "NUMA hinting faults and page migration stall training threads at irregular intervals (step-time tail)";
  return {out};
}

// ---- numa.remote_memory ------------------------------------------------------------------
std::vector<Finding> remote_memory(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "numa.remote_memory";
  const double warn_pct = th.get("warn_pct"), fail_pct = th.get("fail_pct");
  const auto budget = std::chrono::milliseconds(static_cast<long>(th.get("max_read_ms")));
  const auto& t = f.training();
  if (t.procs.empty()) return {no_training_skip(id, layer::placement, t)};
  const auto& topo = f.topology();
  if (!topo) return {core::finding(id, layer::placement, Status::skip, "NUMA topology not available: " + topo.error())};
  if (!topo->nodes_error.empty()) return {core::finding(id, layer::placement, Status::skip, "NUMA topology not available: " + topo->nodes_error)};
  std::vector<Finding> out;
  const auto cpu_nodes = topo->nodes_with_cpus();
  for (const auto& p : t.procs) {
    auto fnd = core::finding(id, layer::placement, Status::pass, "");
    fnd.subject = pid_subject(p.pid);
    if (cpu_nodes.count() < 2) {
      fnd.status = Status::pass;
      fnd.title = "one NUMA node with CPUs: no memory is remote";
      fnd.add("/sys/devices/system/node", fmt::format("nodes with CPUs: {}", cpus_text(cpu_nodes)));
      out.push_back(std::move(fnd));
      continue;
    }
    if (!p.allowed) {
      fnd.status = Status::error;
      fnd.title = "cannot tell which CPUs the process may use: " + p.allowed_error;
      out.push_back(std::move(fnd));
      continue;
    }
    parsers::CpuSet local;
    for (const auto& [node, cpus] : topo->node_cpus)
      if (p.allowed && cpus.intersects(*p.allowed)) local.insert(node);
    const auto& nm = f.numa_maps(p.pid, budget);
    if (!nm.maps) {
      fnd.status = Status::error;
      fnd.title = "cannot read the process's memory placement: " + nm.error;
      out.push_back(std::move(fnd));
      continue;
    }
    std::uint64_t total = 0, remote = 0;
    std::map<int, std::uint64_t> by_node;
    for (const auto& [node, bytes] : nm.maps->bytes_per_node) {
      if (!cpu_nodes.contains(node)) continue;  // GPU memory exposed as a CPU-less node
      total += bytes;
      by_node[node] += bytes;
      if (!local.contains(node)) remote += bytes;
    }
    std::string placement;
    for (const auto& [node, bytes] : by_node)
      placement += fmt::format("{}N{}={:.2f} GiB", placement.empty() ? "" : " ", node, static_cast<double>(bytes) / (1u << 30));
    fnd.add(proc_path(p.pid, "status") + " Cpus_allowed_list", fmt::format("{} (local nodes {})", p.allowed_text, cpus_text(local)));
    fnd.add(proc_path(p.pid, "numa_maps"), placement.empty() ? "no resident pages on CPU nodes" : placement);
    if (nm.truncated)
      fnd.add(proc_path(p.pid, "numa_maps"), fmt::format("read stopped after {:.0f} ms (max_read_ms): {} mappings covered, a sample of the process", nm.read_ms, nm.maps->mappings));
    if (total == 0) {
      fnd.status = Status::skip;
      fnd.title = "no resident memory on NUMA nodes with CPUs";
      out.push_back(std::move(fnd));
      continue;
    }
    const double resident_mib = static_cast<double>(total) / (1u << 20);
    if (resident_mib < th.get("min_resident_mib")) {
      // A launcher or a shell that carries rank variables: its few pages cost the job nothing.
      fnd.status = Status::skip;
      fnd.title = fmt::format("{} holds {:.1f} MiB resident, below min_resident_mib ({:.0f} MiB): too small to matter", p.comm,
                              resident_mib, th.get("min_resident_mib"));
      fnd.metric("resident_gib", resident_mib / 1024);
      out.push_back(std::move(fnd));
      continue;
    }
    double share = 100.0 * static_cast<double>(remote) / static_cast<double>(total);
    fnd.metric("remote_pct", share).metric("resident_gib", static_cast<double>(total) / (1u << 30));
    bool unbound = local == cpu_nodes;
    if (share > fail_pct) fnd.status = Status::fail;
    else if (share > warn_pct) fnd.status = Status::warn;
    fnd.title = fmt::format("{}% of resident memory ({}) on NUMA nodes holding none of its allowed CPUs{}", pct(share), p.comm,
                            unbound ? " (allowed on every node, so none is remote by this measure)" : "");
    fnd.evidence.back().expected = fmt::format("<= {}% remote", pct(warn_pct));
    if (fnd.status != Status::pass) {
      fnd.fix = "Bind memory with the CPUs: numactl --cpunodebind=N --membind=N (or --preferred=N), srun --mem-bind=local, and start data loaders after binding; check that the launcher's binding reaches forked workers.";
      fnd.impact = "remote DRAM accesses cost ~1.5-2x latency and cross-socket bandwidth: 18% remote accesses in the public case";
    }
    out.push_back(std::move(fnd));
  }
  return out;
}

}  // namespace

void add_placement_numa(core::Registry& r) {
  r.add({.id = "numa.balancing",
         .layer = layer::placement,
         .summary = "automatic NUMA balancing is off",
         .rule = "`warn` when /proc/sys/kernel/numa_balancing is not 0; `skip` when the kernel has no such setting.",
         .fix = "sysctl kernel.numa_balancing=0, persisted in /etc/sysctl.d/.",
         .reads = reads::numa_balancing(),
         .params = {},
         .run = numa_balancing});
  r.add({.id = "numa.remote_memory",
         .layer = layer::placement,
         .summary = "training processes keep their memory on the NUMA nodes of their CPUs",
         .rule = "Per training process: bytes (pages x kernelpagesize_kB) resident on NUMA nodes holding none of its allowed CPUs, as a share of its bytes on nodes with CPUs (CPU-less GPU-memory nodes never count). `warn` above warn_pct (5%), `fail` above fail_pct (10%); a process with less than min_resident_mib (256 MiB) resident on those nodes is `skip` (too small to matter: a launcher, a shell). numa_maps makes the kernel walk every page, so reading stops after max_read_ms per process and the evidence says the figure is a sample. `skip` without training processes.",
         .fix = "numactl --cpunodebind/--membind per rank, srun --mem-bind=local.",
         .reads = reads::of({reads::training(), reads::topology(), reads::numa_maps()}),
         .params = {{"warn_pct", 5, "remote share (%) above which the check warns"},
                    {"fail_pct", 10, "remote share (%) above which the check fails"},
                    {"max_read_ms", 500, "time budget for reading one process's numa_maps"},
                    {"min_resident_mib", 256, "resident memory (MiB) below which a process is too small to judge"}},
         .run = remote_memory});
}

}  // namespace perfgap::checks
