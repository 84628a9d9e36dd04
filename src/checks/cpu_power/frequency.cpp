// cpu.turbo and cpu.governor: turbo/boost and frequency caps, the governor and EPP (cpufreq).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>

#include "checks/util.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// ---- cpu.turbo ---------------------------------------------------------------------------
// Said only of what was read: a node whose cpufreq driver exposes no boost switch (most Arm
// drivers, old kernels) has its limits judged, not a turbo state nobody saw.
std::string boost_state(bool boost_control) {
  return boost_control ? "turbo/boost enabled" : "no turbo/boost switch exposed (intel_pstate/no_turbo, cpufreq/boost)";
}

// The fix for what was found: intel_pstate's files only where intel_pstate is the driver.
std::string turbo_fix(const facts::CpuFreq& freq, bool policy_boost_off, bool capped) {
  std::vector<std::string> steps;
  if ((freq.no_turbo && *freq.no_turbo != 0) || (freq.max_perf_pct && *freq.max_perf_pct < 100))
    steps.push_back("echo 0 > /sys/devices/system/cpu/intel_pstate/no_turbo and echo 100 > /sys/devices/system/cpu/intel_pstate/max_perf_pct");
  if (freq.boost && *freq.boost == 0) steps.push_back("echo 1 > /sys/devices/system/cpu/cpufreq/boost");
  if (policy_boost_off) steps.push_back("echo 1 > /sys/devices/system/cpu/cpu*/cpufreq/boost");
  if (capped) steps.push_back("raise scaling_max_freq to cpuinfo_max_freq (`cpupower frequency-set -u <max>`)");
  std::string fix = "Enable turbo/boost in the BIOS (where it has the setting) and the OS: ";
  for (std::size_t i = 0; i < steps.size(); ++i) fix += (i == 0 ? "" : (i + 1 == steps.size() ? ", and " : ", ")) + steps[i];
  return fix + "; find the service or tuned profile that set them.";
}

// What boost would unlock on the CPUs where it is off, from ACPI CPPC (highest_perf over
// nominal_perf): known only when every such CPU has both levels. On parts whose highest level is
// their nominal one (NVIDIA GB10's performance cores) boost has nothing to give.
struct BoostHeadroom {
  bool known = false;
  double max_pct = 0;
  parsers::CpuSet none, some;  // CPUs with no headroom, with some
};
// Boost off costs less than this share of a core's speed: a warning, not a failure.
constexpr double kMinorHeadroomPct = 5.0;

BoostHeadroom boost_headroom(const facts::CpuFreq& freq) {
  BoostHeadroom h;
  const bool all_off = freq.boost && *freq.boost == 0;
  std::size_t off = 0, read = 0;
  for (const auto& c : freq.cpus) {
    if (!all_off && !(c.policy_boost && *c.policy_boost == 0)) continue;
    ++off;
    if (!c.cppc_highest || !c.cppc_nominal || *c.cppc_nominal == 0) continue;
    ++read;
    const double pct = 100.0 * (static_cast<double>(*c.cppc_highest) / static_cast<double>(*c.cppc_nominal) - 1.0);
    (pct > 0 ? h.some : h.none).insert(c.cpu);
    h.max_pct = std::max(h.max_pct, pct);
  }
  h.known = off > 0 && read == off;
  return h;
}

// The boost problems weighed by what boost would unlock: dropped where nothing, a warning where
// under kMinorHeadroomPct, the figure added to the failure otherwise.
void weigh_boost(const facts::CpuFreq& freq, Finding& out, std::vector<std::string>& problems, std::vector<std::string>& minor) {
  const auto h = boost_headroom(freq);
  if (!h.known) return;
  const auto is_boost = [](const std::string& p) { return p.find("boost disabled") != std::string::npos; };
  std::vector<std::string> boost;
  for (const auto& p : problems)
    if (is_boost(p)) boost.push_back(p);
  std::erase_if(problems, is_boost);
  if (!h.none.empty()) out.add("acpi_cppc highest_perf = nominal_perf (boost unlocks nothing) on CPUs", cpus_text(h.none));
  if (!h.some.empty())
    out.add("acpi_cppc highest_perf above nominal_perf on CPUs", fmt::format("{}: up to {:.1f}% above nominal", cpus_text(h.some), h.max_pct));
  out.metric("boost_headroom_pct", h.max_pct);
  if (h.max_pct <= 0) return;
  const auto with_figure = fmt::format("{}: up to {:.1f}% above nominal (acpi_cppc) on {} CPUs", fmt::join(boost, "; "), h.max_pct, h.some.count());
  (h.max_pct < kMinorHeadroomPct ? minor : problems).insert((h.max_pct < kMinorHeadroomPct ? minor : problems).begin(), with_figure);
}

// Nothing capped where read, but some online CPUs' own limits (scaling_max_freq) are not
// readable (hwloc's and other gathers keep intel_pstate/ but no cpuN/cpufreq). Said, never a
// warning of its own: a limit that was read uncapped (intel_pstate max_perf_pct=100, or other
// CPUs at their maximum) is a pass that names the unread CPUs; with no limit read at all, whether
// a CPU is capped is not known: skip.
void turbo_with_unread_limits(const facts::CpuFreq& freq, const std::string& state, const parsers::CpuSet& at_max,
                              const parsers::CpuSet& unread, Finding& out) {
  out.add("cpu*/cpufreq/{scaling_max_freq,cpuinfo_max_freq} not readable",
          cpus_text(unread) + (freq.unread_reason.empty() ? "" : ": " + freq.unread_reason));
  out.metric("cpus_unread", static_cast<double>(unread.count()));
  const bool pct_read = freq.max_perf_pct.has_value();  // < 100 was a problem before this
  if (pct_read) out.add("/sys/devices/system/cpu/intel_pstate/max_perf_pct", std::to_string(*freq.max_perf_pct) + " (no global cap)");
  const std::string unread_text = unread.count() == freq.online.count()
                                      ? fmt::format("no CPU's own limit (scaling_max_freq) is readable ({} online CPUs)", freq.online.count())
                                      : fmt::format("the own limits (scaling_max_freq) of {} of {} online CPUs are not readable", unread.count(),
                                                    freq.online.count());
  if (!pct_read && at_max.empty()) {
    out.status = Status::skip;
    out.title = fmt::format("{}, but whether a CPU is capped is not known: {}", state, unread_text);
    return;
  }
  std::vector<std::string> seen;
  if (pct_read) seen.push_back(fmt::format("intel_pstate max_perf_pct={}", *freq.max_perf_pct));
  if (!at_max.empty()) seen.push_back(fmt::format("scaling_max_freq = cpuinfo_max_freq on {} CPUs", at_max.count()));
  out.title = fmt::format("{}; no frequency cap seen ({}); {}", state, fmt::join(seen, ", "), unread_text);
}

std::vector<Finding> turbo(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "cpu.turbo";
  if (auto skip = topology_skip(f, id, layer::cpu_power)) return {*skip};
  const auto& freq = f.cpufreq();
  Finding out = core::finding(id, layer::cpu_power, Status::pass, "");
  std::vector<std::string> problems;
  bool any_signal = false;
  bool boost_control = false;  // a turbo/boost switch was read (not only frequency limits)
  const std::string pstate = "/sys/devices/system/cpu/intel_pstate";
  if (freq.no_turbo) {
    any_signal = boost_control = true;
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
    any_signal = boost_control = true;
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
      any_signal = boost_control = true;
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
  std::vector<std::string> minor;
  weigh_boost(freq, out, problems, minor);
  // Boost off and still no problem: CPPC showed it has nothing to unlock.
  const bool boost_off = (freq.boost && *freq.boost == 0) || !policy_off.empty();
  const std::string state = boost_off ? "boost disabled, but it unlocks nothing here (acpi_cppc highest_perf = nominal_perf)" : boost_state(boost_control);
  if (!problems.empty() || !minor.empty()) {
    out.status = problems.empty() ? Status::warn : Status::fail;
    for (const auto* list : {&problems, &minor})
      for (const auto& p : *list) out.title += (out.title.empty() ? "CPU frequency capped: " : "; ") + p;
    out.fix = turbo_fix(freq, !policy_off.empty(), !capped.empty());
    out.impact = problems.empty()
                     ? "boost off holds these cores a few percent below what they could run: small, but free to take back"
                     : "busy cores run below their rated turbo frequency: data loading, kernel launches and NCCL proxy threads slow down (a few percent of step time)";
  } else if (!limits_unread.empty()) {
    turbo_with_unread_limits(freq, state, at_max, limits_unread, out);
  } else {
    out.title = fmt::format("{}; no frequency cap on {} of {} online CPUs", state, at_max.count(), freq.online.count());
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

}  // namespace

void add_cpu_power_frequency(core::Registry& r) {
  r.add({.id = "cpu.turbo",
         .layer = layer::cpu_power,
         .summary = "turbo/boost is on and no CPU's frequency is capped below its maximum",
         .rule = "`fail` when turbo/boost is off (intel_pstate no_turbo=1, cpufreq/boost=0 globally or per policy), intel_pstate max_perf_pct < 100, or scaling_max_freq is below cpuinfo_max_freq on any CPU. Where boost is off and every such CPU has ACPI CPPC levels (cpuN/acpi_cppc highest_perf, nominal_perf), what boost would unlock is weighed: nothing (highest = nominal on all of them) is no problem, under 5% above nominal is `warn`, more stays `fail` with the figure. Online CPUs whose own scaling_max_freq/cpuinfo_max_freq are unreadable (a tree gathered without cpuN/cpufreq) are named, never a warning of their own: where nothing read is capped, `pass` when a limit was read uncapped (intel_pstate max_perf_pct=100, or other CPUs at their maximum), `skip` when no limit is readable at all (whether a CPU is capped is not known); a CPU without a cpufreq directory of its own that another CPU's policy lists in `affected_cpus` is read through that policy. The title says \"turbo/boost enabled\" only where a switch (no_turbo, cpufreq/boost) was read. `skip` when none of these controls is visible (VM, no cpufreq driver), naming the files.",
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
}

}  // namespace perfgap::checks
