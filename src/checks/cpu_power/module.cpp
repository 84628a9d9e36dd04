// cpu-power layer: idle states, turbo, governor, steal.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checks/all.hpp"
#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

constexpr std::int32_t kPmQosDefault = 2000000000;  // PM_QOS_DEFAULT_VALUE: no request

std::string state_path(int cpu, int index, std::string_view attr) {
  return fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle/state{}/{}", cpu, index, attr);
}

// ---- cpu.cstate.deep_idle ----------------------------------------------------------------
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
  std::vector<report::Evidence> caps;
  bool poll = false;
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
  parsers::CpuSet exposed, enabled, all_disabled;
  std::optional<facts::IdleState> deepest_seen;
  std::optional<std::pair<int, facts::IdleState>> unknown_latency;
  int example_cpu = -1;
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

  auto state_list = [&](int cpu) {
    std::string s;
    auto it = idle.per_cpu.find(cpu);
    if (it == idle.per_cpu.end()) return s;
    for (const auto& st : it->second)
      s += fmt::format("{}{} ({} us{})", s.empty() ? "" : ", ", st.name,
                       st.latency_us ? std::to_string(*st.latency_us) : "?",
                       st.disabled.value_or(false) ? ", disabled" : "");
    return s;
  };
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
  if (!all_disabled.empty()) {
    problems.push_back(fmt::format("every deep idle state is disabled on {} of {} CPUs", all_disabled.count(), idle.per_cpu.size()));
    auto it = idle.per_cpu.find(example_cpu);
    for (const auto& s : it->second)
      if (s.latency_us && static_cast<double>(*s.latency_us) >= deep_us)
        out.add(state_path(example_cpu, s.index, "disable"), fmt::format("1 ({}, {} us)", s.name, *s.latency_us), "0");
    out.add("/sys/devices/system/cpu/cpu*/cpuidle (CPUs with all deep states disabled)", cpus_text(all_disabled));
    out.fix = "Re-enable the states (`cpupower idle-set -E`, or echo 0 > /sys/devices/system/cpu/cpu*/cpuidle/stateN/disable) and remove whatever disabled them (a tuned profile, a cpupower service, a job prolog).";
  }
  // The shallowest enabled deep state is what a PM QoS request must let through.
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
    out.title = fmt::format("deep idle reachable: {} ({} us) enabled on {} of {} online CPUs", deepest ? deepest->name : "?",
                            deepest && deepest->latency_us ? *deepest->latency_us : 0, enabled.count(), online);
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

// ---- cpu.turbo ---------------------------------------------------------------------------
std::vector<Finding> turbo(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "cpu.turbo";
  if (auto skip = topology_skip(f, id, layer::cpu_power)) return {*skip};
  const auto& freq = f.cpufreq();
  Finding out = core::finding(id, layer::cpu_power, Status::pass, "");
  std::vector<std::string> problems;
  bool any_signal = false;
  const std::string pstate = "/sys/devices/system/cpu/intel_pstate";
  if (freq.no_turbo) {
    any_signal = true;
    if (*freq.no_turbo != 0) {
      problems.push_back("turbo disabled (intel_pstate no_turbo=1)");
      out.add(pstate + "/no_turbo", std::to_string(*freq.no_turbo), "0");
    } else {
      out.add(pstate + "/no_turbo", "0");
    }
  }
  if (freq.max_perf_pct) {
    any_signal = true;
    if (*freq.max_perf_pct < 100) {
      problems.push_back(fmt::format("intel_pstate max_perf_pct={}", *freq.max_perf_pct));
      out.add(pstate + "/max_perf_pct", std::to_string(*freq.max_perf_pct), "100");
    }
  }
  if (freq.pstate_status) out.add(pstate + "/status", *freq.pstate_status);
  if (freq.boost) {
    any_signal = true;
    if (*freq.boost == 0) {
      problems.push_back("boost disabled (cpufreq/boost=0)");
      out.add("/sys/devices/system/cpu/cpufreq/boost", "0", "1");
    } else {
      out.add("/sys/devices/system/cpu/cpufreq/boost", std::to_string(*freq.boost));
    }
  }
  parsers::CpuSet capped, policy_off, at_max, limits_unread = freq.unread;
  const facts::CpuFreqCpu* example = nullptr;
  const facts::CpuFreqCpu* boost_example = nullptr;
  const facts::CpuFreqCpu* max_example = nullptr;
  for (const auto& c : freq.cpus) {
    if (!c.scaling_max_khz || !c.cpuinfo_max_khz) limits_unread.insert(c.cpu);
    if (c.policy_boost) {
      any_signal = true;
      if (*c.policy_boost == 0) {
        policy_off.insert(c.cpu);
        if (!boost_example) boost_example = &c;
      }
    }
    if (c.scaling_max_khz && c.cpuinfo_max_khz) {
      any_signal = true;
      if (*c.scaling_max_khz < *c.cpuinfo_max_khz) {
        capped.insert(c.cpu);
        if (!example) example = &c;
      } else {
        at_max.insert(c.cpu);
        if (!max_example) max_example = &c;
      }
    }
  }
  if (!policy_off.empty()) {
    problems.push_back(fmt::format("boost disabled on {} CPUs", policy_off.count()));
    out.add(boost_example->dir + "/boost", "0", "1");
    out.add("cpufreq/boost = 0 on CPUs", cpus_text(policy_off));
  }
  if (!capped.empty()) {
    problems.push_back(fmt::format("scaling_max_freq below cpuinfo_max_freq on {} CPUs", capped.count()));
    out.add(example->dir + "/scaling_max_freq", fmt::format("{} kHz", *example->scaling_max_khz),
            fmt::format("{} kHz (cpuinfo_max_freq)", *example->cpuinfo_max_khz));
    out.add("CPUs with scaling_max_freq < cpuinfo_max_freq", cpus_text(capped));
    out.metric("capped_cpus", static_cast<double>(capped.count()));
  }
  if (max_example) {
    out.add(max_example->dir + "/scaling_max_freq", fmt::format("{} kHz (= cpuinfo_max_freq)", *max_example->scaling_max_khz));
    out.add("CPUs with scaling_max_freq = cpuinfo_max_freq", cpus_text(at_max));
  }
  if (!any_signal) {
    const auto& hyp = f.hypervisor();  // only the skip's title needs it
    bool virt = hyp && hyp->virtualized;
    out.status = Status::skip;
    std::string why = "none of intel_pstate/no_turbo, intel_pstate/max_perf_pct, cpufreq/boost, cpu*/cpufreq/{boost,scaling_max_freq,cpuinfo_max_freq} is readable";
    if (!freq.unread_reason.empty()) why += " (" + freq.unread_reason + ")";
    out.title = virt ? "virtualized (" + hyp->name + "): no turbo or frequency limit is visible to the guest; the host decides"
                     : "no turbo control or frequency limit visible: " + why;
    return {out};
  }
  if (!problems.empty()) {
    out.status = Status::fail;
    out.title = "CPU frequency capped: " + problems.front();
    for (std::size_t i = 1; i < problems.size(); ++i) out.title += "; " + problems[i];
    out.fix = "Enable turbo/boost in the BIOS and the OS (echo 0 > /sys/devices/system/cpu/intel_pstate/no_turbo, echo 100 > .../max_perf_pct, echo 1 > /sys/devices/system/cpu/cpufreq/boost), and raise scaling_max_freq to cpuinfo_max_freq (`cpupower frequency-set -u <max>`); find the service or tuned profile that set them.";
    out.impact = "busy cores run below their rated turbo frequency: data loading, kernel launches and NCCL proxy threads slow down (a few percent of step time)";
  } else if (!limits_unread.empty()) {
    // Turbo is on, but the CPUs whose limits were not read could still be capped.
    out.status = Status::warn;
    out.title = at_max.empty()
        ? fmt::format("turbo/boost enabled, but no CPU's frequency limit is readable ({} online CPUs)", freq.online.count())
        : fmt::format("turbo/boost enabled and no cap on {} CPUs, but the limits of {} of {} online CPUs are not readable",
                      at_max.count(), limits_unread.count(), freq.online.count());
    out.add("cpu*/cpufreq/{scaling_max_freq,cpuinfo_max_freq} not readable",
            cpus_text(limits_unread) + (freq.unread_reason.empty() ? "" : ": " + freq.unread_reason));
    out.metric("cpus_unread", static_cast<double>(limits_unread.count()));
  } else {
    out.title = fmt::format("turbo/boost enabled; no frequency cap on {} of {} online CPUs", at_max.count(), freq.online.count());
  }
  return {out};
}

// ---- cpu.governor ------------------------------------------------------------------------
std::vector<Finding> governor(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "cpu.governor";
  if (auto skip = topology_skip(f, id, layer::cpu_power)) return {*skip};
  const auto& freq = f.cpufreq();
  if (freq.cpus.empty()) {
    const auto& hyp = f.hypervisor();  // only the skip's title needs it
    bool virt = hyp && hyp->virtualized;
    return {core::finding(id, layer::cpu_power, Status::skip,
                          virt ? "virtualized (" + hyp->name + "): no cpufreq governor in the guest; the host decides"
                               : "no cpufreq driver: no governor to check (" + (freq.unread_reason.empty() ? std::string("no online CPU has cpufreq") : freq.unread_reason) + ")")};
  }
  // Group CPUs by (driver, governor, EPP) so evidence stays short on 384-CPU nodes.
  std::map<std::tuple<std::string, std::string, std::string>, parsers::CpuSet> groups;
  std::map<std::tuple<std::string, std::string, std::string>, const facts::CpuFreqCpu*> examples;
  parsers::CpuSet bad;
  facts::CpuFreq judged = freq;  // CPUs with neither a governor nor an EPP value join the unread ones
  judged.cpus.clear();
  for (const auto& c : freq.cpus) {
    if (!c.governor && !c.epp) {
      if (judged.unread.empty()) judged.unread_reason = c.dir + "/scaling_governor: empty or not readable";
      judged.unread.insert(c.cpu);
    } else {
      judged.cpus.push_back(c);
    }
  }
  if (judged.cpus.empty())
    return {core::finding(id, layer::cpu_power, Status::skip, "no CPU's governor is readable: " + judged.unread_reason)};
  for (const auto& c : judged.cpus) {
    auto key = std::make_tuple(c.driver.value_or("?"), c.governor.value_or("?"), c.epp.value_or(""));
    groups[key].insert(c.cpu);
    examples.emplace(key, &c);
    bool ok = c.governor == std::optional<std::string>("performance") || c.epp == std::optional<std::string>("performance");
    if (!ok) bad.insert(c.cpu);
  }
  Finding out = core::finding(id, layer::cpu_power, bad.empty() ? Status::pass : Status::warn, "");
  for (const auto& [key, cpus] : groups) {
    const auto& [drv, gov, epp] = key;
    const auto* ex = examples[key];
    out.evidence.push_back({ex->dir + "/scaling_governor", gov,
                            bad.intersects(cpus) ? std::optional<std::string>("performance") : std::nullopt});
    if (!epp.empty()) out.add(ex->dir + "/energy_performance_preference", epp);
    out.evidence.back().source += fmt::format(" (driver {}, CPUs {})", drv, cpus_text(cpus));
  }
  if (bad.empty() && !judged.unread.empty()) {
    out.status = Status::warn;
    out.title = fmt::format("performance governor or EPP on {} CPUs, but {} of {} online CPUs have no readable cpufreq ({})",
                            judged.cpus.size(), judged.unread.count(), judged.online.count(), cpus_text(judged.unread));
    out.add("cpu*/cpufreq/scaling_governor not readable", cpus_text(judged.unread) + ": " + judged.unread_reason);
  } else if (bad.empty()) {
    out.title = fmt::format("performance governor or EPP on all {} online CPUs", judged.cpus.size());
  } else {
    out.title = fmt::format("{} of {} CPUs run neither the performance governor nor EPP 'performance'", bad.count(), judged.cpus.size());
    if (!judged.unread.empty()) {
      out.title += fmt::format(" ({} more online CPUs not readable)", judged.unread.count());
      out.add("cpu*/cpufreq/scaling_governor not readable", cpus_text(judged.unread) + ": " + judged.unread_reason);
    }
    out.fix = "Set the performance governor (`cpupower frequency-set -g performance`), or with intel_pstate/amd-pstate in active mode set EPP: echo performance > /sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference (tuned: throughput-performance).";
    out.impact = "cores ramp frequency up late on bursty work (data loading, kernel launches); typically 1-3% of step time";
  }
  out.metric("cpus_not_performance", static_cast<double>(bad.count()));
  return {out};
}

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

void register_cpu_power(core::Registry& r) {
  r.add({.id = "cpu.cstate.deep_idle",
         .layer = layer::cpu_power,
         .summary = "idle cores can reach a deep C-state (turbo headroom for busy cores)",
         .rule = "`fail` when idle cores cannot reach a deep idle state (exit latency >= deep_latency_us, 50 us: Intel C6, AMD ACPI C2): `idle=poll`, capped on the command line, every deep state disabled on some CPU, only shallow states exposed on bare metal (BIOS limit), or a PM QoS request (/dev/cpu_dma_latency) below the deep state's latency. `warn` when only shallow states are exposed on a node not known to be bare metal (virt.hypervisor skipped), when some online CPUs have no deep state while others do (they are named), or when some online CPUs' cpuidle directories are unreadable. `skip` in a VM that exposes no deep state (the host decides), without a cpuidle driver, and when the driver is loaded but no CPU's states are readable. `pass` names the deepest reachable state and counts every online CPU.",
         .fix = "Allow C6 in the BIOS, remove intel_idle.max_cstate=/processor.max_cstate=/idle= from the kernel command line, re-enable disabled states, release a low PM QoS request (tuned latency-performance).",
         .reads = reads::of({reads::cpuidle(), reads::cmdline(), reads::hypervisor()}),
         .params = {{"deep_latency_us", 50, "exit latency (us) from which an idle state counts as deep"}},
         .run = deep_idle});
  r.add({.id = "cpu.turbo",
         .layer = layer::cpu_power,
         .summary = "turbo/boost is on and no CPU's frequency is capped below its maximum",
         .rule = "`fail` when turbo/boost is off (intel_pstate no_turbo=1, cpufreq/boost=0 globally or per policy), intel_pstate max_perf_pct < 100, or scaling_max_freq is below cpuinfo_max_freq on any CPU. `warn` when turbo is on but some online CPUs' scaling_max_freq/cpuinfo_max_freq are unreadable (they could be capped). `skip` when none of these controls is visible (VM, no cpufreq driver), naming the files.",
         .fix = "Enable turbo in BIOS and OS, set max_perf_pct to 100, raise scaling_max_freq to cpuinfo_max_freq.",
         .reads = reads::of({reads::cpufreq(), reads::hypervisor()}),
         .params = {},
         .run = turbo});
  r.add({.id = "cpu.governor",
         .layer = layer::cpu_power,
         .summary = "CPUs run the performance governor or EPP 'performance'",
         .rule = "`warn` for CPUs whose scaling_governor is not `performance` and whose energy_performance_preference (where present) is not `performance`; evidence groups CPUs by driver, governor and EPP; also `warn` when every readable CPU is fine but some online CPUs have no readable cpufreq (named). `skip` without cpufreq.",
         .fix = "`cpupower frequency-set -g performance`, or EPP 'performance' with intel_pstate/amd-pstate active.",
         .reads = reads::of({reads::cpufreq(), reads::hypervisor()}),
         .params = {},
         .run = governor});
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
