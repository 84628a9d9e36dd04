// cpu.cstate.deep_idle: idle cores can reach a deep C-state (cpuidle states, PM QoS, the kernel
// command line).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

constexpr std::int32_t kPmQosDefault = 2000000000;  // PM_QOS_DEFAULT_VALUE: no request

std::string state_path(int cpu, int index, std::string_view attr) {
  return fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle/state{}/{}", cpu, index, attr);
}

// The kernel command line's and intel_idle's caps on idle states, as evidence; `poll` is set
// on idle=poll.
std::vector<report::Evidence> deep_idle_cmdline_caps(const facts::Avail<parsers::KernelCmdline>& cmd, const facts::CpuIdle& idle,
                                                     bool& poll) {
  std::vector<report::Evidence> caps;
  if (cmd) {
    if (auto v = cmd->value("idle")) {
      if (*v == "poll") poll = true;
      if (*v == "poll" || *v == "halt") caps.push_back({"/proc/cmdline", "idle=" + *v, std::string("absent")});
      else if (*v == "nomwait") caps.push_back({"/proc/cmdline", "idle=nomwait (intel_idle not used; ACPI C-states only)", std::nullopt});
    }
    for (auto name : {"intel_idle.max_cstate", "processor.max_cstate"}) {
      if (auto v = cmd->value(name)) {
        auto n = sys::to_int<int>(*v);
        if (n && *n <= 1) caps.push_back({"/proc/cmdline", std::string(name) + "=" + *v, std::string("absent")});
      }
    }
  }
  if (idle.intel_max_cstate && *idle.intel_max_cstate <= 1)
    caps.push_back({"/sys/module/intel_idle/parameters/max_cstate", std::to_string(*idle.intel_max_cstate), std::string(">= 2")});
  return caps;
}

// Per CPU: deep states exposed, and deep states enabled.
struct DeepIdleScan {
  parsers::CpuSet exposed, enabled, all_disabled;
  std::optional<facts::IdleState> deepest_seen;
  std::optional<std::pair<int, facts::IdleState>> unknown_latency;
  int example_cpu = -1;
};

DeepIdleScan deep_idle_scan(const facts::CpuIdle& idle, double deep_us) {
  DeepIdleScan r;
  auto& [exposed, enabled, all_disabled, deepest_seen, unknown_latency, example_cpu] = r;
  for (const auto& [cpu, states] : idle.per_cpu) {
    bool any_deep = false, any_enabled = false;
    for (const auto& s : states) {
      if (!s.latency_us) {
        if (!unknown_latency) unknown_latency.emplace(cpu, s);
        continue;
      }
      if (!deepest_seen || *s.latency_us > *deepest_seen->latency_us) deepest_seen = s;
      if (static_cast<double>(*s.latency_us) < deep_us) continue;
      any_deep = true;
      if (!s.disabled.value_or(false)) any_enabled = true;
    }
    if (any_deep) exposed.insert(cpu);
    if (any_enabled) enabled.insert(cpu);
    if (any_deep && !any_enabled) {
      all_disabled.insert(cpu);
      if (example_cpu < 0) example_cpu = cpu;
    }
  }
  return r;
}

// A CPU's idle states with their exit latencies, for evidence.
std::string deep_idle_state_list(const facts::CpuIdle& idle, int cpu) {
  std::string s;
  auto it = idle.per_cpu.find(cpu);
  if (it == idle.per_cpu.end()) return s;
  for (const auto& st : it->second)
    s += fmt::format("{}{} ({} us{})", s.empty() ? "" : ", ", st.name,
                     st.latency_us ? std::to_string(*st.latency_us) : "?",
                     st.disabled.value_or(false) ? ", disabled" : "");
  return s;
}

// CPUs whose every deep state is disabled: a problem, with one such CPU's states as evidence.
void deep_idle_all_disabled(const facts::CpuIdle& idle, double deep_us, const parsers::CpuSet& all_disabled, int example_cpu, Finding& out,
                            std::vector<std::string>& problems) {
  if (all_disabled.empty()) return;
  problems.push_back(fmt::format("every deep idle state is disabled on {} of {} CPUs", all_disabled.count(), idle.per_cpu.size()));
  auto it = idle.per_cpu.find(example_cpu);
  for (const auto& s : it->second)
    if (s.latency_us && static_cast<double>(*s.latency_us) >= deep_us)
      out.add(state_path(example_cpu, s.index, "disable"), fmt::format("1 ({}, {} us)", s.name, *s.latency_us), "0");
  out.add("/sys/devices/system/cpu/cpu*/cpuidle (CPUs with all deep states disabled)", cpus_text(all_disabled));
  out.fix = "Re-enable the states (`cpupower idle-set -E`, or echo 0 > /sys/devices/system/cpu/cpu*/cpuidle/stateN/disable) and remove whatever disabled them (a tuned profile, a cpupower service, a job prolog).";
}

// The shallowest enabled deep state is what a PM QoS request must let through: a request below
// it is a problem, and /dev/cpu_dma_latency is evidence either way.
void deep_idle_pm_qos(const facts::CpuIdle& idle, double deep_us, Finding& out, std::vector<std::string>& problems) {
  std::optional<std::uint64_t> min_deep;
  std::string min_deep_name;
  for (const auto& [cpu, states] : idle.per_cpu)
    for (const auto& s : states)
      if (s.latency_us && static_cast<double>(*s.latency_us) >= deep_us && !s.disabled.value_or(false) &&
          (!min_deep || *s.latency_us < *min_deep)) {
        min_deep = *s.latency_us;
        min_deep_name = s.name;
      }
  if (idle.pm_qos_us && min_deep && *idle.pm_qos_us >= 0 && static_cast<std::uint64_t>(*idle.pm_qos_us) < *min_deep) {
    problems.push_back(fmt::format("a PM QoS request limits exit latency to {} us, below {}'s {} us", *idle.pm_qos_us, min_deep_name, *min_deep));
    out.add("/dev/cpu_dma_latency", fmt::format("{} us", *idle.pm_qos_us), fmt::format(">= {} us (no request: {})", *min_deep, kPmQosDefault));
    if (idle.tuned_profile) out.add("/etc/tuned/active_profile", *idle.tuned_profile);
    auto qos_fix = "Find the holder of /dev/cpu_dma_latency (`fuser -v /dev/cpu_dma_latency`; tuned's latency-performance and network-latency profiles set force_latency) and release or relax it, e.g. `tuned-adm profile throughput-performance`.";
    out.fix = out.fix.empty() ? qos_fix : out.fix + " " + qos_fix;
  } else if (idle.pm_qos_us) {
    out.add("/dev/cpu_dma_latency", *idle.pm_qos_us == kPmQosDefault ? std::string("no request") : fmt::format("{} us", *idle.pm_qos_us));
  } else {
    out.add("/dev/cpu_dma_latency", "unknown: " + idle.pm_qos_reason);
  }
}

// ---- cpu.cstate.deep_idle ----------------------------------------------------------------
// The pass title: the deepest enabled state and where. Each CPU's own deepest is named where
// they differ by core type (big.LITTLE): the deepest of all is not "enabled on" the others.
std::string deep_idle_reachable_title(const facts::CpuIdle& idle, const parsers::CpuSet& enabled, std::size_t online) {
  std::map<std::string, parsers::CpuSet> by_state;
  for (const auto& [cpu, states] : idle.per_cpu) {
    const facts::IdleState* own = nullptr;
    for (const auto& st : states)
      if (!st.disabled.value_or(false) && st.latency_us && (!own || *st.latency_us > *own->latency_us)) own = &st;
    if (own && enabled.contains(cpu)) by_state[fmt::format("{} ({} us)", own->name, *own->latency_us)].insert(cpu);
  }
  if (by_state.size() > 1) {
    std::string each;
    for (const auto& [state, cpus] : by_state)
      each += fmt::format("{}{} on CPU{} {}", each.empty() ? "" : ", ", state, cpus.count() == 1 ? "" : "s", cpus_text(cpus));
    return fmt::format("deep idle reachable on {} of {} online CPUs, each its own core type's deepest: {}", enabled.count(), online, each);
  }
  auto deepest = facts::deepest_enabled_state(idle);
  return fmt::format("deep idle reachable: {} ({} us) enabled on {} of {} online CPUs", deepest ? deepest->name : "?",
                     deepest && deepest->latency_us ? *deepest->latency_us : 0, enabled.count(), online);
}

std::vector<Finding> deep_idle(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "cpu.cstate.deep_idle";
  const double deep_us = th.get("deep_latency_us");
  if (auto skip = topology_skip(f, id, layer::cpu_power)) return {*skip};
  const auto& idle = f.cpuidle();
  const auto& cmd = f.cmdline();
  const auto& hyp = f.hypervisor();
  const bool virt = hyp && hyp->virtualized;
  const bool bare = hyp && !hyp->virtualized;
  const std::string impact = "~4% training throughput: busy cores lose turbo headroom when idle siblings cannot sleep (3.0 GHz instead of 3.8 GHz in the public case)";
  const std::string cmdline_fix = "Remove the idle cap (intel_idle.max_cstate=, processor.max_cstate=, idle=) from the kernel command line (GRUB_CMDLINE_LINUX in /etc/default/grub), regenerate the boot config and reboot.";
  const std::string bios_fix = "Allow deep C-states in the BIOS/BMC (C6 / 'Package C-State' not limited to C0/C1; on some vendors the 'Max Performance' profile also caps C-states: use a custom profile with C6 enabled and performance frequency).";

  // Command-line signals, kept as evidence whatever the outcome.
  bool poll = false;
  const std::vector<report::Evidence> caps = deep_idle_cmdline_caps(cmd, idle, poll);

  auto with_caps = [&](Finding out) {
    for (auto& e : caps) out.evidence.push_back(e);
    return out;
  };

  if (poll) {
    auto out = with_caps(core::finding(id, layer::cpu_power, Status::fail, "idle=poll on the kernel command line: idle CPUs busy-poll and never enter a C-state"));
    out.fix = cmdline_fix;
    out.impact = impact;
    return {out};
  }

  const bool no_driver = idle.driver.empty() || idle.driver == "none";
  std::size_t cpus_with_states = 0;
  for (const auto& [cpu, states] : idle.per_cpu) cpus_with_states += states.empty() ? 0 : 1;
  if (no_driver || cpus_with_states == 0) {
    std::string why = no_driver ? (idle.driver.empty() ? idle.driver_reason : "cpuidle driver 'none'")
                      : !idle.unread_reason.empty() ? idle.unread_reason
                                                    : "no cpuidle states under /sys/devices/system/cpu/cpu*/cpuidle";
    std::string title =
        virt ? "virtualized (" + hyp->name + ") and the VM exposes no cpuidle states: the host's C-state settings decide (" + why + ")"
        : no_driver ? "no cpuidle driver, so idle states cannot be seen from here (" + why + ")"
                    : "cpuidle driver " + idle.driver + " is loaded, but no online CPU's idle states are readable (" + why + ")";
    auto out = with_caps(core::finding(id, layer::cpu_power, Status::skip, title));
    out.add("/sys/devices/system/cpu/cpuidle/current_driver", idle.driver.empty() ? idle.driver_reason : idle.driver);
    return {out};
  }

  // Per CPU: deep states exposed, and deep states enabled.
  auto [exposed, enabled, all_disabled, deepest_seen, unknown_latency, example_cpu] = deep_idle_scan(idle, deep_us);

  auto state_list = [&](int cpu) { return deep_idle_state_list(idle, cpu); };
  const int first_cpu = idle.per_cpu.begin()->first;

  if (exposed.empty() && unknown_latency) {
    // An unreadable latency could be the deep state: no verdict on missing data.
    auto out = with_caps(core::finding(id, layer::cpu_power, Status::skip,
        fmt::format("exit latency of {} unreadable, so whether a deep state exists is unknown", unknown_latency->second.name)));
    out.add(state_path(unknown_latency->first, unknown_latency->second.index, "latency"), "empty or not a number", "microseconds");
    return {out};
  }
  if (exposed.empty() && caps.empty() && !bare && !virt) {
    // Shallow states only, on a node that is not known to be bare metal: a BIOS limit on
    // bare metal, the host's business in a VM; say so instead of blaming the BIOS.
    auto out = with_caps(core::finding(id, layer::cpu_power, Status::warn,
        fmt::format("only shallow idle states are exposed (deepest: {}, {} us), and whether this is bare metal is unknown: on bare metal a BIOS limit, in a VM the host's settings",
                    deepest_seen ? deepest_seen->name : "none", deepest_seen && deepest_seen->latency_us ? *deepest_seen->latency_us : 0)));
    out.add("virt.hypervisor", hyp.error());
    out.add(fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", first_cpu), state_list(first_cpu),
            fmt::format("a state with latency >= {} us (C6)", deep_us));
    out.add("/sys/devices/system/cpu/cpuidle/current_driver", idle.driver);
    out.fix = bios_fix;
    out.impact = impact;
    out.metric("deepest_latency_us", deepest_seen && deepest_seen->latency_us ? static_cast<double>(*deepest_seen->latency_us) : 0);
    return {out};
  }
  if (exposed.empty()) {
    if (virt) {
      auto out = with_caps(core::finding(id, layer::cpu_power, Status::skip,
          "virtualized (" + hyp->name + "): the guest's idle states are shallow by design; the host's C-state settings decide"));
      out.add(fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", first_cpu), state_list(first_cpu));
      return {out};
    }
    bool capped = !caps.empty();
    auto out = with_caps(core::finding(id, layer::cpu_power, Status::fail,
        capped ? fmt::format("idle cores cannot reach a deep C-state: capped on the kernel command line (deepest: {})",
                             deepest_seen ? deepest_seen->name : "none")
               : fmt::format("idle cores cannot reach a deep C-state: only shallow states are exposed (deepest: {}, {} us), a BIOS limit",
                             deepest_seen ? deepest_seen->name : "none",
                             deepest_seen && deepest_seen->latency_us ? *deepest_seen->latency_us : 0)));
    out.add(fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", first_cpu), state_list(first_cpu),
            fmt::format("a state with latency >= {} us (C6)", deep_us));
    out.add("/sys/devices/system/cpu/cpuidle/current_driver", idle.driver);
    out.fix = capped ? cmdline_fix : bios_fix;
    out.impact = impact;
    out.metric("deepest_latency_us", deepest_seen && deepest_seen->latency_us ? static_cast<double>(*deepest_seen->latency_us) : 0);
    return {out};
  }

  std::vector<Finding> result;
  Finding out = with_caps(core::finding(id, layer::cpu_power, Status::pass, ""));
  std::vector<std::string> problems;
  deep_idle_all_disabled(idle, deep_us, all_disabled, example_cpu, out, problems);
  deep_idle_pm_qos(idle, deep_us, out, problems);
  auto deepest = facts::deepest_enabled_state(idle);
  // Every online CPU is judged: CPUs whose states have no deep one, and CPUs not read at all.
  parsers::CpuSet lacking;
  for (const auto& [cpu, states] : idle.per_cpu)
    if (!exposed.contains(cpu)) lacking.insert(cpu);
  const std::size_t online = idle.per_cpu.size() + idle.unread.count();
  if (!problems.empty()) {
    out.status = Status::fail;
    out.title = "idle cores cannot reach a deep C-state: " + problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) out.title += "; " + problems[i];
    out.impact = impact;
  } else if (!lacking.empty()) {
    out.status = Status::warn;
    int example = lacking.members().front();
    out.title = fmt::format("{} of {} online CPUs have no deep idle state (CPUs {}: only {}), while {} ({} us) is enabled on the others",
                            lacking.count(), online, cpus_text(lacking), state_list(example),
                            deepest ? deepest->name : "?", deepest && deepest->latency_us ? *deepest->latency_us : 0);
    out.evidence.insert(out.evidence.begin(),
        {fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", example), state_list(example),
         fmt::format("a state with latency >= {} us", deep_us)});
    out.evidence.insert(out.evidence.begin() + 1,
        {fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", first_cpu == example ? enabled.members().front() : first_cpu),
         state_list(first_cpu == example ? enabled.members().front() : first_cpu), std::nullopt});
    out.fix = bios_fix;
    out.impact = "busy cores next to those CPUs lose turbo headroom when they idle";
  } else {
    out.title = deep_idle_reachable_title(idle, enabled, online);
    out.evidence.insert(out.evidence.begin(),
        {fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle", first_cpu), state_list(first_cpu), std::nullopt});
  }
  if (!idle.unread.empty()) {
    if (out.status == Status::pass) {
      out.status = Status::warn;
      out.title = fmt::format("deep idle reachable on {} CPUs, but {} of {} online CPUs could not be read ({})", enabled.count(),
                              idle.unread.count(), online, cpus_text(idle.unread));
    }
    out.add("/sys/devices/system/cpu/cpu*/cpuidle (not readable)", cpus_text(idle.unread) + ": " + idle.unread_reason);
    out.metric("cpus_unread", static_cast<double>(idle.unread.count()));
  }
  out.add("/sys/devices/system/cpu/cpuidle/current_driver", idle.driver);
  if (deepest && deepest->latency_us) out.metric("deepest_latency_us", static_cast<double>(*deepest->latency_us));
  out.metric("cpus_without_deep_idle", static_cast<double>(idle.per_cpu.size() - enabled.count()));
  result.push_back(std::move(out));
  return result;
}

}  // namespace

void add_cpu_power_cstates(core::Registry& r) {
  r.add({.id = "cpu.cstate.deep_idle",
         .layer = layer::cpu_power,
         .summary = "idle cores can reach a deep C-state (turbo headroom for busy cores)",
         .rule = "`fail` when idle cores cannot reach a deep idle state (exit latency >= deep_latency_us, 50 us: Intel C6, AMD ACPI C2): `idle=poll`, capped on the command line, every deep state disabled on some CPU, only shallow states exposed on bare metal (BIOS limit), or a PM QoS request (/dev/cpu_dma_latency) below the deep state's latency. `warn` when only shallow states are exposed on a node not known to be bare metal (virt.hypervisor skipped), when some online CPUs have no deep state while others do (they are named), or when some online CPUs' cpuidle directories are unreadable. `skip` in a VM that exposes no deep state (the host decides), without a cpuidle driver, and when the driver is loaded but no CPU's states are readable. `pass` names the deepest reachable state (each core type's own, with its CPUs, where they differ: big.LITTLE) and counts every online CPU.",
         .fix = "Allow C6 in the BIOS, remove intel_idle.max_cstate=/processor.max_cstate=/idle= from the kernel command line, re-enable disabled states, release a low PM QoS request (tuned latency-performance).",
         .reads = reads::of({reads::cpuidle(), reads::cmdline(), reads::hypervisor()}),
         .params = {{"deep_latency_us", 50, "exit latency (us) from which an idle state counts as deep"}},
         .run = deep_idle});
}

}  // namespace perfgap::checks
