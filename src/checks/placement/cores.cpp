// placement.gpu_affinity and placement.shared_cores: each rank may run on CPUs local to its
// GPU, and no other busy threads or device interrupts share the training cores.
#include <fmt/format.h>

#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <map>
#include <set>

#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// ---- placement.gpu_affinity --------------------------------------------------------------
struct RankGpu {
  const facts::Process* proc;
  std::optional<int> rank;
  const facts::Gpu* gpu = nullptr;
  std::string why;  // why no GPU
  std::string how;  // which variables chose it
};

RankGpu gpu_of(const facts::Process& p, const std::vector<facts::Gpu>& gpus) {
  RankGpu r{&p, p.local_rank(), nullptr, "", ""};
  auto cvd = p.env_value("CUDA_VISIBLE_DEVICES");
  std::vector<const facts::Gpu*> list;
  if (cvd) {
    auto resolved = facts::resolve_cuda_visible(*cvd, gpus);
    if (!resolved) {
      r.why = resolved.error();
      return r;
    }
    list = *resolved;
    r.how = "CUDA_VISIBLE_DEVICES=" + *cvd;
  } else {
    for (const auto& g : gpus) list.push_back(&g);
  }
  if (list.empty()) {
    r.why = cvd ? "CUDA_VISIBLE_DEVICES=" + *cvd + " selects no visible GPU" : "no visible GPU";
    return r;
  }
  if (list.size() == 1) {
    r.gpu = list.front();
    return r;
  }
  if (!r.rank) {
    r.why = fmt::format("{} GPUs visible to the process and no local rank variable to choose one", list.size());
    return r;
  }
  if (static_cast<std::size_t>(*r.rank) >= list.size()) {
    r.why = fmt::format("local rank {} but only {} GPUs visible to the process", *r.rank, list.size());
    return r;
  }
  r.gpu = list[static_cast<std::size_t>(*r.rank)];
  r.how += (r.how.empty() ? "" : ", ") + fmt::format("local rank {}", *r.rank);
  return r;
}

std::vector<Finding> gpu_affinity(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "placement.gpu_affinity";
  const auto& t = f.training();
  if (t.procs.empty()) return {no_training_skip(id, layer::placement, t)};
  const auto& gpus = f.visible_gpus();
  if (!gpus) return {core::finding(id, layer::placement, Status::skip, "GPUs not visible: " + gpus.error())};
  if (gpus->empty()) return {core::finding(id, layer::placement, Status::skip, "no NVIDIA GPU on PCI (or none visible in /proc/driver/nvidia/gpus)")};
  const auto& topo = f.topology();
  if (!topo) return {core::finding(id, layer::placement, Status::skip, "NUMA topology not available: " + topo.error())};
  if (!topo->nodes_error.empty()) return {core::finding(id, layer::placement, Status::skip, "NUMA topology not available: " + topo->nodes_error)};
  const auto cpu_nodes = topo->nodes_with_cpus();

  std::vector<RankGpu> ranks;
  for (const auto& p : t.procs)
    if (!p.helper) ranks.push_back(gpu_of(p, *gpus));
  // Bindings laid out in rank order (rank i on the i-th block of CPUs) while GPUs sit
  // elsewhere are the usual cause of a miss; say so when it is visible.
  bool rank_order = false;
  {
    std::vector<std::pair<int, int>> firsts;  // (rank, first allowed CPU)
    for (const auto& r : ranks)
      if (r.rank && r.proc->allowed && !r.proc->allowed->empty())
        firsts.emplace_back(*r.rank, r.proc->allowed->members().front());
    std::sort(firsts.begin(), firsts.end());
    rank_order = firsts.size() >= 2;
    for (std::size_t i = 1; i < firsts.size(); ++i) rank_order = rank_order && firsts[i].second > firsts[i - 1].second;
  }

  std::vector<Finding> out;
  for (const auto& r : ranks) {
    const auto& p = *r.proc;
    auto fnd = core::finding(id, layer::placement, Status::pass, "");
    fnd.subject = pid_subject(p.pid);
    if (!r.gpu) {
      fnd.status = Status::skip;
      fnd.title = "cannot tell which GPU this rank uses: " + r.why;
      out.push_back(std::move(fnd));
      continue;
    }
    fnd.add(proc_path(p.pid, "environ"), fmt::format("GPU {} ({}){}", r.gpu->index, r.gpu->bdf, r.how.empty() ? "" : " from " + r.how));
    if (!r.gpu->pci) {
      fnd.status = Status::skip;
      fnd.title = "GPU " + r.gpu->bdf + " is listed by the driver but /sys/bus/pci/devices/" + r.gpu->bdf + " is unreadable: locality unknown";
      out.push_back(std::move(fnd));
      continue;
    }
    const auto& dev = *r.gpu->pci;
    const std::string dev_dir = "/sys/bus/pci/devices/" + dev.bdf;
    if (!dev.local_cpus) {
      fnd.status = Status::skip;
      fnd.title = "GPU " + dev.bdf + " has no readable local_cpulist";
      out.push_back(std::move(fnd));
      continue;
    }
    if (dev.numa_node.value_or(-1) < 0 && cpu_nodes.count() > 1) {
      fnd.status = Status::skip;
      fnd.title = "firmware reports no NUMA node for GPU " + dev.bdf + " (numa_node=-1): locality unknown";
      fnd.add(dev_dir + "/numa_node", "-1");
      out.push_back(std::move(fnd));
      continue;
    }
    if (!p.allowed) {
      fnd.status = Status::error;
      fnd.title = "cannot tell which CPUs the rank may use: " + p.allowed_error;
      out.push_back(std::move(fnd));
      continue;
    }
    const auto& local = *dev.local_cpus;
    const auto& allowed = *p.allowed;
    fnd.add(dev_dir + "/local_cpulist", dev.local_cpus_text + fmt::format(" (NUMA node {})", dev.numa_node.value_or(-1)));
    fnd.add(proc_path(p.pid, "status") + " Cpus_allowed_list", p.allowed_text, "CPUs within " + dev.local_cpus_text);
    const std::string fix = "Bind each rank to the CPUs of its GPU's NUMA node: Slurm `--gpu-bind=closest --cpu-bind=cores` with Cores= in gres.conf, or `numactl --cpunodebind=<gpu numa_node> --membind=<node>` per rank (torchrun: a per-rank wrapper); `nvidia-smi topo -m` shows each GPU's CPU affinity.";
    if (!allowed.intersects(local)) {
      fnd.status = Status::fail;
      fnd.title = fmt::format("rank{} may run on no CPU local to its GPU {} (allowed {}, GPU-local {}){}",
                              r.rank ? " " + std::to_string(*r.rank) : "", dev.bdf, p.allowed_text, dev.local_cpus_text,
                              rank_order ? "; bindings follow rank order, not GPU locality" : "");
      fnd.fix = fix;
      fnd.impact = "every host-device copy, kernel launch and NCCL proxy step crosses the socket interconnect";
    } else if (cpu_nodes.count() > 1 && topo->online.subset_of(allowed)) {
      fnd.status = Status::warn;
      fnd.title = fmt::format("rank{} is not bound: allowed on every CPU, so its threads and memory drift off GPU {}'s node",
                              r.rank ? " " + std::to_string(*r.rank) : "", dev.bdf);
      fnd.fix = fix;
      fnd.impact = "threads and first-touch memory land on the remote socket part of the time (remote NUMA traffic, jitter)";
    } else if (!allowed.subset_of(local)) {
      fnd.status = Status::warn;
      fnd.title = fmt::format("rank{} is bound partly off its GPU's NUMA node: CPUs {} are not local to GPU {}",
                              r.rank ? " " + std::to_string(*r.rank) : "", cpus_text(allowed.minus(local)), dev.bdf);
      fnd.fix = fix;
      fnd.impact = "some of the rank's threads run on a remote socket";
    } else {
      fnd.title = fmt::format("rank{} bound to CPUs local to GPU {} (NUMA node {})", r.rank ? " " + std::to_string(*r.rank) : "",
                              dev.bdf, dev.numa_node.value_or(-1));
    }
    out.push_back(std::move(fnd));
  }
  return out;
}

// ---- placement.shared_cores --------------------------------------------------------------
bool device_irq(const std::string& description) {
  auto d = sys::lower(description);
  return d.find("mlx5") != std::string::npos || d.find("nvidia") != std::string::npos;
}

std::vector<Finding> shared_cores(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "placement.shared_cores";
  const double busy = th.get("busy_pct") / 100.0;
  const double irq_rate = th.get("irq_per_s");
  const auto& t = f.training();
  if (t.procs.empty()) return {no_training_skip(id, layer::placement, t)};
  // A thread's share counts whole ticks, and over the first window one tick can be more than
  // busy_pct of a CPU: the default window goes on until busy_pct is three ticks (300 ms at 10%).
  const facts::Window* sampled = &f.window();
  if (sampled->live && busy > 0) {
    const double hz = static_cast<double>(::sysconf(_SC_CLK_TCK));
    sampled = &f.window_extended(std::chrono::milliseconds(static_cast<long>(std::ceil(3.0 / (busy * hz) * 1000.0))));
  }
  const auto& w = *sampled;
  if (w.threads.empty()) return {core::finding(id, layer::placement, Status::skip, "cannot see thread activity: " + (w.threads_error.empty() ? std::string("no thread read from /proc/*/task/*/stat") : w.threads_error))};
  const auto& topo = f.topology();
  std::set<int> training_pids;
  for (const auto& p : t.procs) training_pids.insert(p.pid);

  // Training cores: a bound process's allowed CPUs; an unbound one's busy-thread CPUs.
  parsers::CpuSet cores;
  for (const auto& p : t.procs) {
    bool bound = p.allowed && topo && !(topo->online.subset_of(*p.allowed));
    if (bound) cores = cores.unite(*p.allowed);
  }
  for (const auto& th_use : w.threads)
    if (training_pids.count(th_use.pid) && th_use.cpu_share >= busy && th_use.last_cpu >= 0) {
      const facts::Process* owner = nullptr;
      for (const auto& p : t.procs) if (p.pid == th_use.pid) owner = &p;
      bool bound = owner && owner->allowed && topo && !(topo->online.subset_of(*owner->allowed));
      if (!bound) cores.insert(th_use.last_cpu);
    }
  std::string span = w.live ? fmt::format("over {:.{}f} s", w.seconds, w.seconds < 1 ? 2 : 1) : "since thread start";
  auto fnd = core::finding(id, layer::placement, Status::pass, "");
  if (cores.empty()) {
    fnd.status = Status::skip;
    fnd.title = "training processes are unbound and none of their threads was busy " + span + ": no training cores to compare";
    return {fnd};
  }
  fnd.add("training cores", cpus_text(cores) + " (allowed CPUs of bound ranks, last CPUs of busy training threads)");

  // Busy threads of other processes on those cores, grouped by process.
  const int self = f.own_pid();
  std::map<int, std::pair<std::string, parsers::CpuSet>> intruders;
  std::map<int, double> intruder_share;
  for (const auto& u : w.threads) {
    if (training_pids.count(u.pid) || u.pid == self || u.cpu_share < busy || !cores.contains(u.last_cpu)) continue;
    auto& e = intruders[u.pid];
    e.first = u.comm;
    e.second.insert(u.last_cpu);
    intruder_share[u.pid] += u.cpu_share;
  }
  std::size_t shown = 0;
  for (const auto& [pid, e] : intruders) {
    if (++shown > 10) break;
    fnd.add(fmt::format("/proc/{}/task/*/stat", pid),
            fmt::format("{} ({}% of a CPU {}) last ran on CPUs {}", e.first, pct(100 * intruder_share[pid]), span, cpus_text(e.second)),
            "no busy non-training thread on training cores");
  }
  if (intruders.size() > 10) fnd.add("/proc/*/task/*/stat", fmt::format("{} more busy processes on training cores", intruders.size() - 10));

  // NIC and GPU interrupts delivered to those cores.
  int irq_hits = 0;
  if (w.irq_first) {
    const auto& cols = w.irq_first->cpus;
    for (std::size_t r = 0; r < w.irq_first->rows.size(); ++r) {
      const auto& row = w.irq_first->rows[r];
      if (!device_irq(row.description)) continue;
      parsers::CpuSet hit;
      double rate_total = 0;
      if (w.live && w.irq_second) {
        const parsers::InterruptRow* later = nullptr;
        for (const auto& r2 : w.irq_second->rows) if (r2.irq == row.irq) later = &r2;
        if (!later) continue;
        for (std::size_t c = 0; c < cols.size() && c < later->counts.size(); ++c) {
          double rate = static_cast<double>(later->counts[c] - std::min(later->counts[c], row.counts[c])) / w.seconds;
          if (cores.contains(cols[c]) && rate >= irq_rate) { hit.insert(cols[c]); rate_total += rate; }
        }
      } else {
        // A captured tree has since-boot counts only: trust where the IRQ is routed now.
        auto set = facts::irq_affinity(f, row.irq);
        if (!set) continue;
        std::uint64_t total = 0;
        for (auto c : row.counts) total += c;
        if (total == 0) continue;
        hit = set->intersect(cores);
      }
      if (hit.empty()) continue;
      ++irq_hits;
      if (irq_hits <= 10)
        fnd.add("/proc/irq/" + row.irq + "/smp_affinity_list",
                fmt::format("IRQ {} ({}) {} on training CPUs {}", row.irq, row.description,
                            w.live ? fmt::format("{:.0f}/s", rate_total) : std::string("routed"), cpus_text(hit)),
                "NIC/GPU interrupts on housekeeping cores");
    }
  } else if (!w.irq_error.empty()) {
    fnd.add("/proc/interrupts", "not readable: " + w.irq_error);
  }
  if (irq_hits > 10) fnd.add("/proc/interrupts", fmt::format("{} more NIC/GPU IRQs on training cores", irq_hits - 10));

  fnd.metric("training_cores", static_cast<double>(cores.count()))
      .metric("intruding_processes", static_cast<double>(intruders.size()))
      .metric("device_irqs_on_training_cores", irq_hits);
  if (intruders.empty() && irq_hits == 0 && !w.irq_first) {
    fnd.status = Status::skip;
    fnd.title = fmt::format("no busy non-training thread on the {} training cores {}, but NIC/GPU interrupts could not be read: {}",
                            cores.count(), span, w.irq_error);
    return {fnd};
  }
  if (intruders.empty() && irq_hits == 0) {
    fnd.title = fmt::format("no busy non-training thread or NIC/GPU interrupt on the {} training cores {}", cores.count(), span);
    return {fnd};
  }
  fnd.status = Status::warn;
  fnd.title = fmt::format("training cores shared: {} other busy process(es) and {} NIC/GPU interrupt(s) on the {} training cores",
                          intruders.size(), irq_hits, cores.count());
  fnd.fix = "Split the cores: reserve housekeeping cores for system services and interrupts (Slurm CpuSpecList/CoreSpecCount, a systemd CPUAffinity= for system.slice, cgroup cpusets), keep training on the rest, and steer IRQs off them (IRQBALANCE_BANNED_CPULIST=<training cores>, or /proc/irq/N/smp_affinity_list); on VMs keep host housekeeping threads off the vCPUs that run data loaders.";
  fnd.impact = "data-loader and NCCL proxy threads are preempted: 50-100 ms stalls in the public case";
  return {fnd};
}

}  // namespace

void add_placement_cores(core::Registry& r) {
  r.add({.id = "placement.gpu_affinity",
         .layer = layer::placement,
         .summary = "each rank may run on CPUs local to its GPU",
         .rule = "Per rank (training process that is not a data-loader child of another): its GPU from CUDA_VISIBLE_DEVICES (indices or GPU-UUIDs) and the local rank; `fail` when Cpus_allowed_list has no CPU in the GPU's local_cpulist, `warn` when unbound on a multi-node system or bound partly off the GPU's node; the title says when bindings follow rank order. `skip` when the GPU cannot be determined or its NUMA node is unknown.",
         .fix = "Slurm --gpu-bind=closest with Cores= in gres.conf, or numactl per rank.",
         .reads = reads::of({reads::training(), reads::topology(), reads::visible_gpus()}),
         .params = {},
         .run = gpu_affinity});
  r.add({.id = "placement.shared_cores",
         .layer = layer::placement,
         .summary = "no other busy threads or NIC/GPU interrupts on the training cores",
         .rule = "Training cores are the allowed CPUs of bound ranks plus the last CPUs of busy training threads. `warn` when threads of other processes using more than busy_pct of a CPU last ran there, or mlx5/nvidia interrupts land there (live: more than irq_per_s over the window, which goes on from the default 100 ms until busy_pct of a CPU is three 10 ms ticks, 300 ms at 10%, within the window's limit; captured tree: routed there by effective_affinity_list/smp_affinity_list with a nonzero count). `skip` without training processes or thread statistics.",
         .fix = "A cpuset split: housekeeping cores for services and IRQs, the rest for training.",
         .reads = reads::of({reads::training(), reads::topology(), reads::window(),
                             reads::irq_affinity()}),
         .params = {{"busy_pct", 10, "CPU use (% of one CPU) from which a thread counts as busy"},
                    {"irq_per_s", 100, "live: interrupt rate per CPU from which a NIC/GPU IRQ counts"}},
         .run = shared_cores,
         .sampled = true});
}

}  // namespace perfgap::checks
