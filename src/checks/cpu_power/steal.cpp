// cpu.steal: the CPU time the hypervisor steals from the workload's CPUs (/proc/stat over the
// sample window).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// ---- cpu.steal ---------------------------------------------------------------------------
// The steal share of one window over the CPUs in question.
struct StealReading {
  bool has_column = false;
  std::uint64_t steal = 0, total = 0;  // ticks
  std::size_t counted = 0;             // CPUs
  double share = 0, margin = 0;        // %
  double worst = 0;
  int worst_cpu = -1;
  parsers::CpuSet hot;
};

StealReading read_steal(const facts::Window& w, const parsers::CpuSet& cpus, double fail_pct) {
  StealReading r;
  std::map<int, const parsers::CpuTimes*> before;
  for (const auto& c : w.first->cpus) before[c.cpu] = &c;
  for (const auto& c : w.second->cpus) {
    if (!cpus.contains(c.cpu)) continue;
    auto it = before.find(c.cpu);
    if (it == before.end()) continue;
    if (!c.has_steal()) continue;
    r.has_column = true;
    std::uint64_t s = w.live ? c.steal() - std::min(c.steal(), it->second->steal()) : c.steal();
    std::uint64_t t = w.live ? c.total() - std::min(c.total(), it->second->total()) : c.total();
    r.steal += s;
    r.total += t;
    ++r.counted;
    if (t >= 50) {  // at least half a second of ticks before a per-CPU figure means anything
      double p = 100.0 * static_cast<double>(s) / static_cast<double>(t);
      if (p > r.worst) { r.worst = p; r.worst_cpu = c.cpu; }
      if (p > fail_pct) r.hot.insert(c.cpu);
    }
  }
  if (r.total == 0) return r;
  r.share = 100.0 * static_cast<double>(r.steal) / static_cast<double>(r.total);
  // /proc/stat counts 10 ms ticks: each CPU's difference is off by up to a tick (uniformly,
  // sd 0.41 tick), so over a short live window the share has a margin of 3 sd of the sum,
  // 1.22 sqrt(CPUs) ticks. Since boot the counts are large enough for none.
  if (w.live) r.margin = 100.0 * 1.22 * std::sqrt(static_cast<double>(r.counted)) / static_cast<double>(r.total);
  return r;
}

std::vector<Finding> steal(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "cpu.steal";
  const double fail_pct = th.get("fail_pct");
  if (auto skip = topology_skip(f, id, layer::cpu_power)) return {*skip};
  const facts::Window* w = &f.window();
  if (!w->first || !w->second) return {core::finding(id, layer::cpu_power, Status::skip, "cannot read CPU times: " + w->stat_error)};
  std::string how;
  auto cpus = workload_cpus(f, &how);
  StealReading r = read_steal(*w, cpus, fail_pct);
  const double first_seconds = w->seconds;
  // Too close to call: the default window goes on, as long as the margin says it must (it
  // shrinks as 1/window), within the window's limit.
  for (int round = 0; round < 3 && r.has_column && r.total > 0; ++round) {
    const Status v = limit_verdict(r.share, r.margin, fail_pct);
    if (v != Status::warn && v != Status::skip) break;
    const auto want = checks::window_to_decide(w->seconds, r.margin, r.share, fail_pct);
    const facts::Window& longer = f.window_extended(want);
    if (&longer == w || !longer.second) break;
    w = &longer;
    r = read_steal(*w, cpus, fail_pct);
  }
  if (!r.has_column) return {core::finding(id, layer::cpu_power, Status::skip, "/proc/stat has no steal column for the CPUs in question")};
  if (r.total == 0) return {core::finding(id, layer::cpu_power, Status::skip, "no CPU time elapsed on the CPUs in question")};
  const double p = r.share, margin = r.margin;
  std::string span = w->live ? fmt::format("over {:.{}f} s", w->seconds, w->seconds < 1 ? 2 : 1) : "since boot";
  Finding out = core::finding(id, layer::cpu_power, Status::pass, "");
  out.add("/proc/stat (steal column)", fmt::format("{}% of CPU time {} on {}", pct(p), span, how),
          fmt::format("<= {}%", pct(fail_pct)));
  out.add("CPUs considered", cpus_text(cpus));
  if (w != &f.window())
    out.add("sample window", fmt::format("{:.2f} s, taken on to {:.2f} s: the tick margin over the first was wider than the distance to the limit",
                                         first_seconds, w->seconds));
  if (r.worst_cpu >= 0) out.add(fmt::format("/proc/stat cpu{}", r.worst_cpu), fmt::format("{}% steal (highest)", pct(r.worst)));
  out.metric("steal_pct", p).metric("max_cpu_steal_pct", r.worst);
  const std::string fix = "Stop host work on the guest's vCPUs: pin vCPUs 1:1 to dedicated host cores, keep host housekeeping (IRQs, vhost, emulator threads) on other cores (libvirt <emulatorpin>/<iothreadpin>, isolcpus on the host), and avoid overcommit.";
  if (w->live) out.metric("steal_margin_pct", margin);
  const Status verdict = limit_verdict(p, margin, fail_pct);
  if (verdict == Status::warn || verdict == Status::skip) {
    // Too close to call at this window: neither a pass nor a fail is shown by the counters.
    out.status = verdict;
    // What --sample-ms would decide it, in 100 ms steps.
    const long needed_ms = std::clamp((checks::window_to_decide(w->seconds, margin, p, fail_pct).count() + 99) / 100 * 100, 100L, 60000L);
    out.title = fmt::format("steal {}% {} is within the counters' +/-{}% tick margin of the {}% limit: sample longer to decide (--sample-ms {})",
                            pct(p), span, pct(margin), pct(fail_pct), needed_ms);
    if (p > fail_pct) {
      out.fix = fix;
      out.impact = "if real, stolen cycles stall data loaders and NCCL proxy threads";
    }
  } else if (verdict == Status::fail) {
    out.status = Status::fail;
    out.title = fmt::format("{}% of CPU time stolen by the hypervisor {} (limit {}%)", pct(p), span, pct(fail_pct));
    out.fix = fix;
    out.impact = "stolen cycles stall data loaders and NCCL proxy threads: 50-100 ms stalls in the public case";
  } else if (!r.hot.empty()) {
    out.status = Status::warn;
    out.title = fmt::format("steal {}% overall, but above {}% on CPUs {}", pct(p), pct(fail_pct), cpus_text(r.hot));
    out.fix = fix;
    out.impact = "threads pinned to those CPUs stall while the host runs its own work there";
  } else {
    out.title = fmt::format("steal {}% {} (limit {}%)", pct(p), span, pct(fail_pct));
  }
  return {out};
}

}  // namespace

void add_cpu_power_steal(core::Registry& r) {
  r.add({.id = "cpu.steal",
         .layer = layer::cpu_power,
         .summary = "the hypervisor steals little CPU time from the workload's CPUs",
         .rule = "Steal share of CPU time on the CPUs the training processes may use (all online CPUs when none is found): live over the sample window, on a captured tree since boot. Live, the share has a margin from /proc/stat's 10 ms tick (1.22 sqrt(CPUs) ticks over the window's ticks). The default window is 100 ms and goes on from the same first sample while the margin is wider than the distance to fail_pct, as long as it must (about 610 ms / sqrt(CPUs) on a steal-free node), up to 1 s (250 ms for `health`); `--sample-ms` or config `sample_ms` fixes it instead. `fail` when the share is above fail_pct (2%) by more than the margin; `warn` when it is above fail_pct within the margin, or when the whole is below it but single CPUs (with at least 0.5 s of ticks) are above; `skip` when it is below fail_pct but within the margin (the window was too short to decide; the title says which --sample-ms would), and without a steal column.",
         .fix = "Pin vCPUs to dedicated host cores and keep host housekeeping off them.",
         .reads = reads::of({reads::window(), reads::topology(), reads::training()}),
         .params = {{"fail_pct", 2, "steal share of CPU time (%) above which the check fails"}},
         .run = steal,
         .sampled = true});
}

}  // namespace perfgap::checks
