// CPU topology, cpuidle, cpufreq and hypervisor facts.
#include <cctype>
#include <cstring>

#include "facts/facts.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {
namespace {

constexpr const char* kCpuDir = "/sys/devices/system/cpu";

std::optional<std::uint64_t> read_u64(const sys::Sysroot& root, const std::string& path) {
  auto v = root.read_value(path);
  if (!v) return std::nullopt;
  return sys::to_int<std::uint64_t>(*v);
}

std::optional<int> read_int(const sys::Sysroot& root, const std::string& path) {
  auto v = root.read_value(path);
  if (!v) return std::nullopt;
  return sys::to_int<int>(*v);
}

std::optional<std::string> read_str(const sys::Sysroot& root, const std::string& path) {
  auto v = root.read_value(path);
  if (!v) return std::nullopt;
  return *v;
}

std::string cpu_dir(int cpu) { return std::string(kCpuDir) + "/cpu" + std::to_string(cpu); }

}  // namespace

Avail<Topology> read_topology(const sys::Sysroot& root) {
  Topology t;
  t.online_source = std::string(kCpuDir) + "/online";
  auto online = root.read(t.online_source);
  if (!online) return missing(describe(online.error()));
  auto set = parsers::parse_cpulist(*online);
  if (!set) return missing(t.online_source + ": " + set.error().describe());
  if (set->empty()) return missing(t.online_source + ": no online CPU listed");
  t.online = *set;
  auto nodes = root.list("/sys/devices/system/node");
  if (nodes) {
    for (const auto& name : *nodes) {
      if (name.size() < 5 || name.compare(0, 4, "node") != 0) continue;
      auto n = sys::to_int<int>(std::string_view(name).substr(4));
      if (!n) continue;
      auto path = "/sys/devices/system/node/" + name + "/cpulist";
      auto text = root.read(path);
      if (!text) {
        t.nodes_error = describe(text.error());
        break;
      }
      auto cpus = parsers::parse_cpulist(*text);
      if (!cpus) {
        t.nodes_error = path + ": " + cpus.error().describe();
        break;
      }
      t.node_cpus[*n] = *cpus;
    }
  }
  // A bad node list spoils NUMA placement only; the CPU checks still have the online list.
  if (!t.nodes_error.empty()) t.node_cpus.clear();
  else if (t.node_cpus.empty()) t.node_cpus[0] = t.online;  // a kernel without NUMA: one node
  return t;
}

CpuIdle read_cpuidle(const sys::Sysroot& root, const CpuSet& online) {
  CpuIdle idle;
  auto drv = root.read_value(std::string(kCpuDir) + "/cpuidle/current_driver");
  if (drv) idle.driver = *drv;
  else idle.driver_reason = describe(drv.error());
  for (int cpu : online.members()) {
    auto dir = cpu_dir(cpu) + "/cpuidle";
    auto entries = root.list(dir);
    if (!entries) continue;
    std::vector<IdleState> states;
    for (const auto& e : *entries) {
      if (e.size() < 6 || e.compare(0, 5, "state") != 0) continue;
      auto idx = sys::to_int<int>(std::string_view(e).substr(5));
      if (!idx) continue;
      IdleState s;
      s.index = *idx;
      auto base = dir + "/" + e;
      s.name = read_str(root, base + "/name").value_or("state" + std::to_string(*idx));
      s.latency_us = read_u64(root, base + "/latency");
      if (auto d = read_int(root, base + "/disable")) s.disabled = *d != 0;
      states.push_back(std::move(s));
    }
    std::sort(states.begin(), states.end(), [](auto& a, auto& b) { return a.index < b.index; });
    idle.per_cpu.emplace(cpu, std::move(states));
  }
  idle.intel_max_cstate = read_int(root, "/sys/module/intel_idle/parameters/max_cstate");
  // /dev/cpu_dma_latency: live, reading opens a default (no constraint) request of our own
  // for the duration of the read and returns the aggregate; in a tree it holds the 4 bytes.
  auto qos = root.read("/dev/cpu_dma_latency", 64);
  if (!qos) {
    idle.pm_qos_reason = describe(qos.error());
  } else if (qos->size() == 4) {
    std::int32_t v;
    std::memcpy(&v, qos->data(), 4);
    idle.pm_qos_us = v;
  } else if (qos->empty()) {
    idle.pm_qos_reason = "/dev/cpu_dma_latency: empty (value not captured)";
  } else if (auto n = sys::to_int<std::int32_t>(*qos)) {
    idle.pm_qos_us = *n;  // some captures store it as text
  } else {
    idle.pm_qos_reason = "/dev/cpu_dma_latency: " + std::to_string(qos->size()) + " bytes, expected 4";
  }
  idle.tuned_profile = read_str(root, "/etc/tuned/active_profile");
  if (idle.tuned_profile && idle.tuned_profile->empty()) idle.tuned_profile.reset();
  return idle;
}

CpuFreq read_cpufreq(const sys::Sysroot& root, const CpuSet& online) {
  CpuFreq f;
  const std::string pstate = std::string(kCpuDir) + "/intel_pstate";
  f.no_turbo = read_int(root, pstate + "/no_turbo");
  f.max_perf_pct = read_int(root, pstate + "/max_perf_pct");
  f.pstate_status = read_str(root, pstate + "/status");
  f.boost = read_int(root, std::string(kCpuDir) + "/cpufreq/boost");
  // Per-policy boost files exist on newer kernels' boost-capable drivers; if the first CPU
  // has none, no CPU has, which saves one failed open per CPU on large nodes.
  bool policy_boost = false;
  if (!online.empty())
    policy_boost = root.exists(cpu_dir(online.members().front()) + "/cpufreq/boost");
  for (int cpu : online.members()) {
    CpuFreqCpu c;
    c.cpu = cpu;
    c.dir = cpu_dir(cpu) + "/cpufreq";
    c.driver = read_str(root, c.dir + "/scaling_driver");
    c.governor = read_str(root, c.dir + "/scaling_governor");
    if (!c.driver && !c.governor) continue;  // no cpufreq for this CPU
    c.epp = read_str(root, c.dir + "/energy_performance_preference");
    c.scaling_max_khz = read_u64(root, c.dir + "/scaling_max_freq");
    c.cpuinfo_max_khz = read_u64(root, c.dir + "/cpuinfo_max_freq");
    if (policy_boost) c.policy_boost = read_int(root, c.dir + "/boost");
    f.cpus.push_back(std::move(c));
  }
  return f;
}

Avail<Hypervisor> read_hypervisor(Facts& f) {
  const auto& root = f.root();
  Hypervisor h;
  auto vendor = root.read_value("/sys/class/dmi/id/sys_vendor");
  auto product = root.read_value("/sys/class/dmi/id/product_name");
  auto xen = root.read_value("/sys/hypervisor/type");
  std::string dmi_name;
  if (vendor || product) {
    std::string v = vendor ? *vendor : "", p = product ? *product : "";
    if (vendor) h.evidence.emplace_back("/sys/class/dmi/id/sys_vendor", v);
    if (product) h.evidence.emplace_back("/sys/class/dmi/id/product_name", p);
    auto lv = sys::lower(v), lp = sys::lower(p);
    auto has = [&](std::string_view s) {
      return lv.find(s) != std::string::npos || lp.find(s) != std::string::npos;
    };
    if (has("qemu") || lp.find("standard pc (") != std::string::npos) dmi_name = "QEMU/KVM";
    else if (lp == "kvm" || has("kvm")) dmi_name = "KVM";
    else if (has("vmware")) dmi_name = "VMware";
    else if (has("virtualbox") || has("innotek")) dmi_name = "VirtualBox";
    else if (lv.find("microsoft") != std::string::npos && lp.find("virtual machine") != std::string::npos) dmi_name = "Hyper-V";
    else if (has("xen") || has("hvm domu")) dmi_name = "Xen";
    else if (has("google compute engine")) dmi_name = "Google Compute Engine";
    else if (has("openstack")) dmi_name = "OpenStack (KVM)";
    else if (has("cloud hypervisor")) dmi_name = "Cloud Hypervisor";
    else if (has("bochs") || has("bhyve") || has("parallels") || has("nutanix") || has("ovirt") || has("rhev"))
      dmi_name = p.empty() ? v : p;
    else if (lv == "amazon ec2" && lp.find(".metal") == std::string::npos) dmi_name = "Amazon EC2 (Nitro)";
  }
  if (xen) h.evidence.emplace_back("/sys/hypervisor/type", *xen);
  bool dt_hyp = root.exists("/sys/firmware/devicetree/base/hypervisor") ||
                root.exists("/proc/device-tree/hypervisor");
  if (dt_hyp) h.evidence.emplace_back("/sys/firmware/devicetree/base/hypervisor", "present");

  const auto& info = f.cpuinfo();
  if (info && info->arch_hint == "x86_64") {
    h.evidence.insert(h.evidence.begin(), {"/proc/cpuinfo", info->hypervisor_flag ? "flags: hypervisor" : "flags: no 'hypervisor'"});
    // GPU passthrough guests often hide the CPU flag (KVM "hidden" state, so that old
    // NVIDIA drivers load); the firmware identity still names the hypervisor.
    h.virtualized = info->hypervisor_flag || !dmi_name.empty() || xen.has_value();
    if (h.virtualized) {
      h.name = !dmi_name.empty() ? dmi_name : xen ? "Xen" : "unnamed hypervisor, CPU flag only";
      if (!info->hypervisor_flag) h.name += ", CPU flag hidden";
    } else {
      h.name = "bare metal";
    }
    return h;
  }
  // arm64 (and anything without the x86 flag): DMI or the devicetree decide.
  if (!dmi_name.empty() || dt_hyp || xen) {
    h.virtualized = true;
    h.name = !dmi_name.empty() ? dmi_name : xen ? "Xen" : "unnamed hypervisor, devicetree only";
    return h;
  }
  if (vendor || product) {
    h.virtualized = false;
    h.name = "bare metal";
    return h;
  }
  std::string why = "cannot tell: ";
  why += info ? "no DMI identity or devicetree hypervisor node readable on " + info->arch_hint
              : info.error();
  return missing(why);
}

}  // namespace perfgap::facts

namespace perfgap::facts {

std::optional<IdleState> deepest_enabled_state(const CpuIdle& idle) {
  std::optional<IdleState> best;
  for (const auto& [cpu, states] : idle.per_cpu)
    for (const auto& s : states) {
      if (s.disabled.value_or(false) || !s.latency_us) continue;
      if (!best || *s.latency_us > *best->latency_us) best = s;
    }
  return best;
}

std::string governor_summary(const CpuFreq& freq) {
  std::string g;
  for (const auto& c : freq.cpus) {
    if (!c.governor) continue;
    if (g.empty()) g = *c.governor;
    else if (g != *c.governor) return "mixed";
  }
  return g;
}

std::optional<bool> turbo_enabled(const CpuFreq& freq) {
  if (freq.no_turbo) return *freq.no_turbo == 0;
  if (freq.boost) return *freq.boost != 0;
  std::optional<bool> any;
  for (const auto& c : freq.cpus)
    if (c.policy_boost) any = any.value_or(false) || *c.policy_boost != 0;
  return any;
}

}  // namespace perfgap::facts
