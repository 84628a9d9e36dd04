#include "checks/live/live.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <numeric>
#include <set>
#include <stdexcept>

#include "analyzers/analyzers.hpp"
#include "checks/util.hpp"

namespace perfgap::checks::live {
namespace {

using profile::LiveWindow;
using report::Finding;
using report::Status;

Finding live_finding(std::string_view id, std::string_view layer, Status s, std::string title) {
  return core::finding(id, layer, s, std::move(title));
}

std::string live_cpu_list(const std::vector<int>& cpus) {
  parsers::CpuSet s;
  for (int c : cpus) s.insert(c);
  return cpus_text(s);
}

}  // namespace

const std::vector<core::CheckInfo>& catalogue() {
  static const std::vector<core::CheckInfo> entries = {
      {.id = "live.busy_mhz",
       .layer = layer::cpu_power,
       .summary = "busy CPUs run near their rated maximum over the profile window (perfgap profile)",
       .rule = "`perfgap profile` / `check --profile-seconds N` only. Busy CPUs (at least `busy_pct` busy in the window, from /proc/stat) "
               "average below `ratio` of the rated maximum: `fail`, as `turbostat.busy_mhz`. Busy MHz per CPU from APERF/MPERF "
               "(the msr PMU's aperf, mperf and tsc events: TSC rate x APERF/MPERF), else hardware cycles over the CPU's busy "
               "time, else the mean of scaling_cur_freq sampled each second; the evidence names the source. The rated maximum "
               "is `--rated-mhz`, else the highest cpuinfo_max_freq of the busy CPUs (the single-core turbo, which an all-core "
               "load need not reach: give --rated-mhz for that many active cores). `skip` when no CPU was busy, no source "
               "could be read or no rated maximum is known.",
       .fix = "check the power profile (BIOS performance mode, governor performance, turbo enabled, EPP performance), "
              "thermal and power limits (turbostat's PkgWatt / throttling counters)",
       .reads = {"/proc/stat", "/sys/bus/event_source/devices/msr/type", "/sys/bus/event_source/devices/msr/events/*",
                 "/sys/devices/system/cpu/cpu*/cpufreq/scaling_cur_freq", "/sys/devices/system/cpu/cpu*/cpufreq/cpuinfo_max_freq"},
       .params = {{"busy_pct", 50, "a CPU at least this busy (percent of the window) counts as busy"},
                  {"ratio", 0.9, "fail below this fraction of the rated maximum"}},
       .run = {}},
      {.id = "live.idle_residency",
       .layer = layer::cpu_power,
       .summary = "idle CPUs reach a deep idle state over the profile window (perfgap profile)",
       .rule = "`perfgap profile` / `check --profile-seconds N` only. Idle CPUs (below `idle_pct` busy) that on average spend below "
               "`deep_min_pct` of the window in their deepest enabled idle state while one deeper than the others exists, and "
               "above `shallow_max_pct` in the shallower ones: `fail`, as `turbostat.deep_idle` (idle siblings in C1 hold the "
               "package out of its deep states and cap the busy cores' turbo). From the deltas of "
               "cpuidle/state*/time and usage. `skip` without cpuidle, without idle CPUs, or with one idle state only.",
       .fix = "let idle CPUs reach deep C-states: no idle=poll / intel_idle.max_cstate=1 / processor.max_cstate on the kernel "
              "command line, no process holding /dev/cpu_dma_latency at 0, a tuned profile without force_latency",
       .reads = {"/proc/stat", "/sys/devices/system/cpu/cpu*/cpuidle/state*/{name,latency,disable,time,usage}"},
       .params = {{"idle_pct", 10, "a CPU below this busy share (percent of the window) counts as idle"},
                  {"deep_min_pct", 1, "fail when the deepest state holds less than this percent of the window"},
                  {"shallow_max_pct", 50, "... and the shallower states more than this"}},
       .run = {}},
      {.id = "live.sched_stalls",
       .layer = layer::placement,
       .summary = "training threads get their CPUs over the profile window (perfgap profile)",
       .rule = "`perfgap profile` / `check --profile-seconds N` only; per training process (`--pid`, else detected as `check` does). "
               "`warn` when a training thread waits on a run queue (schedstat's run-queue delay) more than `wait_pct` of the "
               "window, or when its threads were switched out involuntarily and a non-training thread was busy (at least "
               "`busy_share` of one CPU) where they run (the last CPU of a preempted thread, or any CPU of a process pinned to "
               "fewer than all online CPUs), naming those threads. Evidence and metrics also give the process's remote-memory "
               "share from numa_maps at the window's start and end, the node's NUMA hinting faults and steal over the window. "
               "`skip` without a training process or when its schedstat cannot be read.",
       .fix = "give the training threads CPUs of their own: isolate housekeeping (irqbalance banned CPUs, systemd "
              "CPUAffinity), move the named threads off the job's CPUs, pin data loaders to their rank's NUMA node",
       .reads = {"/proc/stat", "/proc/vmstat", "/proc/*/task/*/stat", "/proc/*/task/*/schedstat", "/proc/*/task/*/status",
                 "/proc/*/numa_maps"},
       .params = {{"wait_pct", 5, "warn when a training thread waits for a CPU more than this percent of the window"},
                  {"busy_share", 0.2, "a non-training thread busy at least this fraction of one CPU competes"}},
       .run = {}},
  };
  return entries;
}

core::Thresholds defaults(std::string_view id) {
  for (const auto& c : catalogue()) {
    if (c.id != id) continue;
    std::map<std::string, double, std::less<>> v;
    for (const auto& p : c.params) v.emplace(std::string(p.name), p.default_value);
    return core::Thresholds(std::move(v));
  }
  throw std::out_of_range(std::string("no live check ") + std::string(id));
}

std::optional<double> cpu_busy_mhz(const profile::Frequency& f, int cpu, double busy_pct, double seconds) {
  auto it = f.cpus.find(cpu);
  if (it == f.cpus.end() || seconds <= 0) return std::nullopt;
  const auto& c = it->second;
  if (f.source == "aperf_mperf") {
    if (c.mperf == 0 || c.tsc == 0) return std::nullopt;
    return static_cast<double>(c.tsc) / seconds / 1e6 * static_cast<double>(c.aperf) / static_cast<double>(c.mperf);
  }
  if (f.source == "cycles") {
    double busy_s = busy_pct / 100.0 * seconds;
    if (busy_s <= 0 || c.cycles == 0) return std::nullopt;
    return static_cast<double>(c.cycles) / busy_s / 1e6;
  }
  if (f.source == "scaling_cur_freq") {
    if (c.cur_khz.empty()) return std::nullopt;
    double sum = std::accumulate(c.cur_khz.begin(), c.cur_khz.end(), 0.0);
    return sum / static_cast<double>(c.cur_khz.size()) / 1000.0;
  }
  return std::nullopt;
}

std::optional<double> remote_pct(const parsers::NumaMaps& m) {
  std::uint64_t total = 0, top = 0;
  for (const auto& [node, bytes] : m.bytes_per_node) {
    total += bytes;
    top = std::max(top, bytes);
  }
  if (total == 0) return std::nullopt;
  return 100.0 * static_cast<double>(total - top) / static_cast<double>(total);
}

std::vector<Finding> judge_busy_mhz(const LiveWindow& w, const core::Thresholds& th) {
  constexpr std::string_view id = "live.busy_mhz";
  const double busy_min = th.get("busy_pct"), ratio = th.get("ratio");
  if (!w.stat_error.empty() || w.busy_pct.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, "CPU busy shares not measured: " + (w.stat_error.empty() ? std::string("/proc/stat read no CPUs") : w.stat_error))};
  std::vector<int> busy;
  for (const auto& [cpu, pct] : w.busy_pct)
    if (pct >= busy_min) busy.push_back(cpu);
  if (busy.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, fmt::format("no CPU was at least {:.0f}% busy over the {:.1f} s window: nothing to judge", busy_min, w.seconds))
                .metric("busy_cpus", 0)};
  if (w.freq.source.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, "busy frequency not measured: " + w.freq.unavailable).metric("busy_cpus", static_cast<double>(busy.size()))};
  double sum = 0;
  std::vector<int> measured, unmeasured;
  double lo = 0, hi = 0;
  for (int cpu : busy) {
    auto mhz = cpu_busy_mhz(w.freq, cpu, w.busy_pct.at(cpu), w.seconds);
    if (!mhz) {
      unmeasured.push_back(cpu);
      continue;
    }
    lo = measured.empty() ? *mhz : std::min(lo, *mhz);
    hi = measured.empty() ? *mhz : std::max(hi, *mhz);
    measured.push_back(cpu);
    sum += *mhz;
  }
  if (measured.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, fmt::format("the {} counters of the {} busy CPUs say nothing (zero deltas)", w.freq.source, busy.size()))};
  const double avg = sum / static_cast<double>(measured.size());
  Finding f = live_finding(id, layer::cpu_power, Status::pass, "");
  f.add("busy CPUs", fmt::format("{} ({} of {} CPUs at least {:.0f}% busy)", live_cpu_list(busy), busy.size(), w.busy_pct.size(), busy_min));
  f.add("source: " + w.freq.source, fmt::format("{:.0f} MHz average, {:.0f}-{:.0f} MHz{}", avg, lo, hi, w.freq.detail.empty() ? "" : " (" + w.freq.detail + ")"));
  if (!unmeasured.empty()) f.add("not measured", fmt::format("{} busy CPUs without counters ({})", unmeasured.size(), live_cpu_list(unmeasured)));
  f.metric("busy_mhz", avg).metric("busy_cpus", static_cast<double>(busy.size()));
  if (!w.rated_mhz) {
    f.status = Status::skip;
    f.title = fmt::format("busy CPUs average {:.0f} MHz ({}), but no rated maximum: {} (pass --rated-mhz)", avg, w.freq.source,
                          w.rated_source.empty() ? "cpuinfo_max_freq not readable" : w.rated_source);
    return {f};
  }
  const double rated = *w.rated_mhz;
  f.metric("rated_mhz", rated);
  f.add("rated maximum", fmt::format("{:.0f} MHz ({})", rated, w.rated_source), fmt::format(">= {:.0f} MHz ({:.0f}% of it)", ratio * rated, 100 * ratio));
  const double share = rated > 0 ? avg / rated : 0;
  f.table = {{"busy CPUs", "avg MHz", "rated MHz", "% of rated", "source"},
             {std::to_string(busy.size()), fmt::format("{:.0f}", avg), fmt::format("{:.0f}", rated), fmt::format("{:.1f}%", 100 * share), w.freq.source}};
  f.title = fmt::format("busy CPUs run at {:.0f} MHz, {:.0f}% of the rated {:.0f} MHz ({})", avg, 100 * share, rated, w.freq.source);
  if (share < ratio) {
    f.status = Status::fail;
    f.fix = std::string(catalogue()[0].fix);
    f.impact = "every CPU-bound step of the input pipeline and the kernel launch path runs that much slower";
  }
  return {f};
}

std::vector<Finding> judge_idle_residency(const LiveWindow& w, const core::Thresholds& th) {
  constexpr std::string_view id = "live.idle_residency";
  const double idle_max = th.get("idle_pct"), deep_min = th.get("deep_min_pct"), shallow_max = th.get("shallow_max_pct");
  if (!w.stat_error.empty() || w.busy_pct.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, "CPU busy shares not measured: " + (w.stat_error.empty() ? std::string("/proc/stat read no CPUs") : w.stat_error))};
  if (w.idle.empty())
    return {live_finding(id, layer::cpu_power, Status::skip, "no cpuidle counters: " + (w.idle_error.empty() ? std::string("no CPU has cpuidle states") : w.idle_error))};
  const double window_us = w.seconds * 1e6;
  std::vector<int> idle_cpus, single_state;
  double deep_sum = 0, shallow_sum = 0;
  std::string deep_name;
  for (const auto& [cpu, pct] : w.busy_pct) {
    if (pct >= idle_max) continue;
    auto it = w.idle.find(cpu);
    if (it == w.idle.end()) continue;
    // The deepest enabled state by exit latency (index order where latencies are unknown).
    const profile::IdleStateDelta* deep = nullptr;
    int enabled = 0;
    for (const auto& s : it->second) {
      if (s.disabled) continue;
      ++enabled;
      if (!deep || s.latency_us.value_or(0) > deep->latency_us.value_or(0) ||
          (s.latency_us.value_or(0) == deep->latency_us.value_or(0) && s.index > deep->index))
        deep = &s;
    }
    if (enabled < 2 || !deep) {
      single_state.push_back(cpu);
      continue;
    }
    double shallow = 0;
    for (const auto& s : it->second)
      if (&s != deep) shallow += static_cast<double>(s.time_us);
    idle_cpus.push_back(cpu);
    deep_sum += 100.0 * static_cast<double>(deep->time_us) / window_us;
    shallow_sum += 100.0 * shallow / window_us;
    if (deep_name.empty()) deep_name = deep->name;
    else if (deep_name != deep->name) deep_name = "the deepest state";
  }
  if (idle_cpus.empty()) {
    if (!single_state.empty())
      return {live_finding(id, layer::cpu_power, Status::skip, fmt::format("idle CPUs have a single enabled idle state ({}): nothing deeper to reach", live_cpu_list(single_state)))};
    return {live_finding(id, layer::cpu_power, Status::skip, fmt::format("no CPU was below {:.0f}% busy over the {:.1f} s window: nothing to judge", idle_max, w.seconds))};
  }
  const double n = static_cast<double>(idle_cpus.size());
  const double deep = deep_sum / n, shallow = shallow_sum / n;
  Finding f = live_finding(id, layer::cpu_power, Status::pass, "");
  f.metric("idle_cpus", n).metric("deep_pct", deep).metric("shallow_pct", shallow);
  f.add("idle CPUs", fmt::format("{} ({} below {:.0f}% busy)", live_cpu_list(idle_cpus), idle_cpus.size(), idle_max));
  f.add("cpuidle/state*/time deltas", fmt::format("{:.1f}% of the window in {}, {:.1f}% in shallower states (average per idle CPU)", deep, deep_name, shallow),
        fmt::format(">= {:.0f}% in the deepest state, or <= {:.0f}% in shallower ones", deep_min, shallow_max));
  f.table = {{"idle CPUs", "deepest state", "% in it", "% shallower"},
             {std::to_string(idle_cpus.size()), deep_name, fmt::format("{:.1f}%", deep), fmt::format("{:.1f}%", shallow)}};
  if (deep < deep_min && shallow > shallow_max) {
    f.status = Status::fail;
    f.title = fmt::format("idle CPUs stay in shallow states: {:.1f}% of the window shallower, {:.2f}% in {}", shallow, deep, deep_name);
    f.fix = std::string(catalogue()[1].fix);
    f.impact = "idle cores held in shallow states keep the package from deep idle and lower the busy cores' turbo headroom";
  } else {
    f.title = fmt::format("idle CPUs reach {}: {:.1f}% of the window in it, {:.1f}% shallower", deep_name, deep, shallow);
  }
  return {f};
}

std::vector<Finding> judge_sched_stalls(const LiveWindow& w, const core::Thresholds& th) {
  constexpr std::string_view id = "live.sched_stalls";
  const double wait_max = th.get("wait_pct"), busy_share = th.get("busy_share");
  if (w.training.empty())
    return {live_finding(id, layer::placement, Status::skip,
                         "no training process found" + (w.training_note.empty() ? std::string(" (pass --pid)") : ": " + w.training_note))};
  std::set<int> training_pids;
  for (const auto& t : w.training) training_pids.insert(t.pid);
  std::vector<Finding> out;
  const double window_ns = w.seconds * 1e9;
  for (const auto& t : w.training) {
    Finding f = live_finding(id, layer::placement, Status::pass, "");
    f.subject = fmt::format("pid:{}", t.pid);
    if (!t.sched_error.empty() || t.threads.empty()) {
      f.status = Status::skip;
      f.title = fmt::format("{} (pid {}): scheduling not measured: {}", t.comm, t.pid, t.sched_error.empty() ? "no thread alive over the whole window" : t.sched_error);
      out.push_back(std::move(f));
      continue;
    }
    const profile::ThreadSched* worst = nullptr;
    std::uint64_t nonvol = 0;
    std::set<int> cpus, preempted_cpus;
    // Where a preempted thread last ran, and a pinned process's CPUs: a busy thread there competes.
    for (const auto& th_ : t.threads) {
      if (!worst || th_.wait_ns > worst->wait_ns) worst = &th_;
      nonvol += th_.nonvoluntary;
      if (th_.last_cpu >= 0) {
        cpus.insert(th_.last_cpu);
        if (th_.nonvoluntary > 0) preempted_cpus.insert(th_.last_cpu);
      }
    }
    if (nonvol > 0) preempted_cpus.insert(t.pinned_cpus.begin(), t.pinned_cpus.end());
    const double worst_pct = window_ns > 0 ? 100.0 * static_cast<double>(worst->wait_ns) / window_ns : 0;
    std::vector<const profile::BusyThread*> rivals;
    for (const auto& b : w.busy_threads)
      if (!training_pids.count(b.pid) && b.cpu_share >= busy_share && preempted_cpus.count(b.cpu)) rivals.push_back(&b);
    std::stable_sort(rivals.begin(), rivals.end(), [](const auto* a, const auto* b) { return a->cpu_share > b->cpu_share; });
    f.metric("threads", static_cast<double>(t.threads.size()))
        .metric("max_wait_pct", worst_pct)
        .metric("nonvoluntary_switches", static_cast<double>(nonvol))
        .metric("competing_threads", static_cast<double>(rivals.size()));
    f.add(fmt::format("/proc/{}/task/*/schedstat", t.pid),
          fmt::format("{} threads; longest run-queue wait {} (tid {}) {:.1f} ms, {:.2f}% of the window", t.threads.size(), worst->comm, worst->tid,
                      static_cast<double>(worst->wait_ns) / 1e6, worst_pct),
          fmt::format("<= {:.0f}% of the window", wait_max));
    f.add(fmt::format("/proc/{}/task/*/status", t.pid), fmt::format("{} involuntary switches over the window", nonvol));
    std::string names;
    for (std::size_t i = 0; i < rivals.size() && i < 8; ++i)
      names += fmt::format("{}{} (pid {}, tid {}) {:.0f}% of cpu{}", i ? ", " : "", rivals[i]->comm, rivals[i]->pid, rivals[i]->tid, 100 * rivals[i]->cpu_share, rivals[i]->cpu);
    if (rivals.size() > 8) names += fmt::format(", {} more", rivals.size() - 8);
    if (!names.empty()) f.add("busy non-training threads on its CPUs", names);
    if (auto s = t.numa_start ? remote_pct(*t.numa_start) : std::nullopt) f.metric("remote_pct_start", *s);
    if (auto e = t.numa_end ? remote_pct(*t.numa_end) : std::nullopt) {
      f.metric("remote_pct_end", *e);
      auto s = t.numa_start ? remote_pct(*t.numa_start) : std::nullopt;
      f.add(fmt::format("/proc/{}/numa_maps", t.pid), s ? fmt::format("{:.1f}% of its memory off its main node at the start, {:.1f}% at the end", *s, *e)
                                                        : fmt::format("{:.1f}% of its memory off its main node at the end", *e));
    } else if (!t.numa_error.empty()) {
      f.add(fmt::format("/proc/{}/numa_maps", t.pid), "not read: " + t.numa_error);
    }
    if (w.numa_hint_faults) {
      f.metric("numa_hint_faults", static_cast<double>(*w.numa_hint_faults));
      f.add("/proc/vmstat numa_hint_faults", fmt::format("{} over the window (whole node)", *w.numa_hint_faults));
    }
    if (w.steal_pct) {
      f.metric("steal_pct", *w.steal_pct);
      f.add("/proc/stat steal", fmt::format("{:.2f}% of CPU time over the window (whole node)", *w.steal_pct));
    }
    const bool waits = worst_pct > wait_max;
    if (waits || !rivals.empty()) {
      f.status = Status::warn;
      std::string why = waits ? fmt::format("{} (tid {}) waited {:.1f}% of the window for a CPU", worst->comm, worst->tid, worst_pct) : "";
      if (!rivals.empty())
        why += fmt::format("{}switched out on CPUs where {} other busy thread{} ran ({}{})", why.empty() ? "" : "; ", rivals.size(), rivals.size() == 1 ? "" : "s",
                           rivals.front()->comm, rivals.size() > 1 ? ", ..." : "");
      f.title = fmt::format("{} (pid {}): {}", t.comm, t.pid, why);
      f.fix = std::string(catalogue()[2].fix);
      f.impact = "a training thread that waits for its CPU stalls the step (data-loader and launch threads feed the GPUs)";
    } else {
      f.title = fmt::format("{} (pid {}): {} threads waited at most {:.2f}% of the window for a CPU, no busy rival on their CPUs", t.comm, t.pid, t.threads.size(), worst_pct);
    }
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<Finding> judge_kernel_frames(const LiveWindow& w) {
  if (!w.perf) {
    std::vector<Finding> out;
    for (const char* id : {"perf.smmu_cmdq", "perf.hot_kernel", "perf.summary"}) {
      Finding f = live_finding(id, layer::virtualization, Status::skip, "kernel sampling did not run: " + w.perf_unavailable);
      f.subject = "live";
      out.push_back(std::move(f));
    }
    return out;
  }
  auto out = analyzers::analyze_perf(*w.perf, "live");
  for (auto& f : out)
    if (f.id == "perf.summary") {
      if (!w.perf_event.empty()) f.add("live", "sampled with " + w.perf_event);
      f.metric("self_cpu_pct", w.seconds > 0 ? 100.0 * w.self_cpu_s / w.seconds : 0);
      // Each training process's own split: a data loader living in syscalls shows here even
      // when the node's other work dominates the node-wide kernel_pct.
      for (const auto& [pid, n] : w.training_samples) {
        if (n.total == 0) continue;
        const double k = 100.0 * static_cast<double>(n.kernel) / static_cast<double>(n.total);
        f.metric(fmt::format("kernel_pct.pid:{}", pid), k);
        f.metric(fmt::format("samples.pid:{}", pid), static_cast<double>(n.total));
        f.add(fmt::format("pid:{}", pid), fmt::format("{} of its {} samples in the kernel ({:.1f}%)", n.kernel, n.total, k));
      }
      f.add("perfgap", fmt::format("its own CPU time {:.3f} s over the {:.2f} s window ({:.2f}% of one CPU), {:.3f} s before and after it "
                                   "(process detection, kallsyms, decoding)",
                                   w.self_cpu_s, w.seconds, w.seconds > 0 ? 100.0 * w.self_cpu_s / w.seconds : 0, w.setup_cpu_s));
    }
  return out;
}

std::vector<Finding> judge_dtlb(const LiveWindow& w) {
  const auto& t = w.tlb;
  if (!t.stat) {
    using Missing = profile::TlbCounts::Missing;
    std::string title;
    if (t.missing == Missing::no_pmu)
      title = fmt::format("no dTLB counts: this guest exposes no PMU counters for dTLB events ({}); {}", t.why, analyzers::kNoPmuAdvice);
    else if (t.missing == Missing::no_event)
      title = fmt::format("no dTLB counts: the PMU here counts instructions but offers no dTLB read-miss event ({}): perf has no generic dTLB "
                          "event for this CPU model, or the hypervisor's vPMU exposes fewer events than the host's (KVM/QEMU -cpu host "
                          "passes the host's model)",
                          t.why);
    else if (t.missing == Missing::never_ran)
      title = fmt::format("no dTLB counts: the counters opened but never ran, so the guest exposes no working PMU counters for dTLB events "
                          "(or other users hold every counter); {}",
                          analyzers::kNoPmuAdvice);
    else
      title = "no dTLB counts: " + (t.why.empty() ? std::string("the window did not count them") : t.why);
    Finding f = live_finding("perf_stat.dtlb", layer::virtualization, Status::skip, std::move(title));
    f.subject = "live";
    if (t.missing == Missing::never_ran) f.add("live", t.why);
    return {f};
  }
  analyzers::PerfStatOptions o;
  o.no_reference = "perfgap compare this report with a profile of the same workload on bare metal or a known-good node: compare.tlb_parity";
  std::vector<Finding> out;
  for (auto& f : analyzers::analyze_perf_stat(*t.stat, "live", o))
    if (f.id == "perf_stat.dtlb") {
      f.add("live", t.how);
      out.push_back(std::move(f));
    }
  return out;
}

std::vector<Finding> judge_window(const LiveWindow& w) {
  std::vector<Finding> out = judge_kernel_frames(w);
  for (auto& f : judge_dtlb(w)) out.push_back(std::move(f));
  for (auto& f : judge_busy_mhz(w, defaults("live.busy_mhz"))) out.push_back(std::move(f));
  for (auto& f : judge_idle_residency(w, defaults("live.idle_residency"))) out.push_back(std::move(f));
  for (auto& f : judge_sched_stalls(w, defaults("live.sched_stalls"))) out.push_back(std::move(f));
  return out;
}

}  // namespace perfgap::checks::live
