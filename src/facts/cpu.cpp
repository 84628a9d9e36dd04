// CPU topology, cpuidle, cpufreq and hypervisor facts.
#include <algorithm>
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

// Appended, not `std::string + "literal"`: GCC 12 warns falsely (-Warray-bounds) on the latter.
std::string cpu_dir(int cpu) {
  std::string dir(kCpuDir);
  dir += "/cpu";
  dir += std::to_string(cpu);
  return dir;
}

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
    if (!entries) {
      if (idle.unread.empty()) idle.unread_reason = describe(entries.error());
      idle.unread.insert(cpu);
      continue;
    }
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

namespace {

// A CPU without a cpufreq directory of its own that another CPU's policy lists in
// affected_cpus is governed by that policy: live, cpuN/cpufreq is a link to the policy's
// directory; a capture that kept only the policy owner's copy still says so. Such a CPU takes
// the policy's readings (and its directory, the files actually read).
void cover_by_policies(const sys::Sysroot& root, CpuFreq& f) {
  if (f.unread.empty() || f.cpus.empty()) return;
  const std::size_t owners = f.cpus.size();
  for (std::size_t i = 0; i < owners; ++i) {
    auto text = root.read_value(f.cpus[i].dir + "/affected_cpus");
    if (!text) continue;
    auto covered = parsers::parse_cpu_words(*text);
    if (!covered) continue;
    const CpuSet taken = covered->intersect(f.unread);
    for (int cpu : taken.members()) {
      CpuFreqCpu c = f.cpus[i];
      c.cpu = cpu;
      f.cpus.push_back(std::move(c));
    }
    f.unread = f.unread.minus(taken);
  }
  if (f.unread.empty()) f.unread_reason.clear();
  std::sort(f.cpus.begin(), f.cpus.end(), [](const CpuFreqCpu& a, const CpuFreqCpu& b) { return a.cpu < b.cpu; });
}

}  // namespace

CpuFreq read_cpufreq(const sys::Sysroot& root, const CpuSet& online) {
  CpuFreq f;
  f.online = online;
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
    auto governor = root.read_value(c.dir + "/scaling_governor");
    if (governor && !governor->empty()) c.governor = *governor;
    if (c.driver && c.driver->empty()) c.driver.reset();  // an empty capture says nothing
    if (governor && governor->empty() && !c.driver) {
      if (f.unread.empty()) f.unread_reason = c.dir + "/scaling_governor: empty";
      f.unread.insert(cpu);
      continue;
    }
    if (!c.driver && !c.governor) {  // no cpufreq for this CPU
      if (f.unread.empty()) f.unread_reason = describe(governor.error());
      f.unread.insert(cpu);
      continue;
    }
    c.epp = read_str(root, c.dir + "/energy_performance_preference");
    if (c.epp && c.epp->empty()) c.epp.reset();
    c.scaling_max_khz = read_u64(root, c.dir + "/scaling_max_freq");
    c.cpuinfo_max_khz = read_u64(root, c.dir + "/cpuinfo_max_freq");
    if (policy_boost) c.policy_boost = read_int(root, c.dir + "/boost");
    if ((f.boost && *f.boost == 0) || (c.policy_boost && *c.policy_boost == 0)) {
      c.cppc_highest = read_u64(root, cpu_dir(cpu) + "/acpi_cppc/highest_perf");
      c.cppc_nominal = read_u64(root, cpu_dir(cpu) + "/acpi_cppc/nominal_perf");
    }
    f.cpus.push_back(std::move(c));
  }
  cover_by_policies(root, f);
  return f;
}

namespace {

// PCI vendors whose functions only exist as virtual hardware. virtio (0x1af4) is not among
// them: DPUs (BlueField) present virtio functions to bare-metal hosts too.
const char* virtual_pci_vendor(std::uint32_t vendor) {
  switch (vendor) {
    case 0x80ee: return "VirtualBox";
    case 0x15ad: return "VMware";
    case 0x1414: return "Hyper-V";
    case 0x5853: return "Xen";
    case 0x1ab8: return "Parallels";
    case 0x1b36: return "QEMU";
    case 0x1234: return "QEMU";  // Bochs/QEMU display
    default: return nullptr;
  }
}

// PCI vendor ids from /sys/bus/pci (facts) or, in trees that only kept it, /proc/bus/pci/devices.
std::vector<std::pair<std::string, std::uint32_t>> pci_vendors(Facts& f, std::string& source) {
  std::vector<std::pair<std::string, std::uint32_t>> out;
  const auto& pci = f.pci();
  if (pci && !pci->empty()) {
    source = "/sys/bus/pci/devices/*/vendor";
    for (const auto& d : *pci) out.emplace_back(d.bdf, d.vendor);
    return out;
  }
  auto text = f.root().read("/proc/bus/pci/devices", 1u << 20);
  if (!text) return out;
  source = "/proc/bus/pci/devices";
  return parsers::parse_proc_bus_pci_vendors(*text);
}

}  // namespace

Avail<Hypervisor> read_hypervisor(Facts& f) {
  const auto& root = f.root();
  Hypervisor h;
  // Each signal names a hypervisor; bare metal must be shown positively (a hardware identity
  // with no hypervisor signal at all), never concluded from silence.
  std::vector<std::string> names;   // hypervisors signalled, strongest first
  auto vendor = root.read_value("/sys/class/dmi/id/sys_vendor");
  auto product = root.read_value("/sys/class/dmi/id/product_name");
  auto bios = root.read_value("/sys/class/dmi/id/bios_vendor");
  std::string dmi_name;
  bool dmi_hardware = false;
  if ((vendor && !vendor->empty()) || (product && !product->empty())) {
    std::string v = vendor ? *vendor : "", p = product ? *product : "", b = bios ? *bios : "";
    if (vendor) h.evidence.emplace_back("/sys/class/dmi/id/sys_vendor", v);
    if (product) h.evidence.emplace_back("/sys/class/dmi/id/product_name", p);
    auto lv = sys::lower(v), lp = sys::lower(p), lb = sys::lower(b);
    auto has = [&](std::string_view s) {
      return lv.find(s) != std::string::npos || lp.find(s) != std::string::npos;
    };
    if (has("qemu") || lp.find("standard pc (") != std::string::npos) dmi_name = "QEMU/KVM";
    else if (lp == "kvm" || has("kvm")) dmi_name = "KVM";
    else if (has("vmware")) dmi_name = "VMware";
    else if (has("virtualbox") || has("innotek") || lb.find("innotek") != std::string::npos) dmi_name = "VirtualBox";
    else if (lv.find("microsoft") != std::string::npos && lp.find("virtual machine") != std::string::npos) dmi_name = "Hyper-V";
    else if (has("xen") || has("hvm domu")) dmi_name = "Xen";
    else if (has("google compute engine")) dmi_name = "Google Compute Engine";
    else if (has("openstack")) dmi_name = "OpenStack (KVM)";
    else if (has("cloud hypervisor")) dmi_name = "Cloud Hypervisor";
    else if (has("bochs") || has("bhyve") || has("parallels") || has("nutanix") || has("ovirt") || has("rhev"))
      dmi_name = p.empty() ? v : p;
    else if (lv == "amazon ec2" && lp.find(".metal") == std::string::npos) dmi_name = "Amazon EC2 (Nitro)";
    if (bios && !bios->empty()) h.evidence.emplace_back("/sys/class/dmi/id/bios_vendor", b);
    if (!dmi_name.empty()) names.push_back(dmi_name);
    // Placeholder identities ("To Be Filled By O.E.M.", "System manufacturer") still name
    // hardware firmware: no hypervisor writes them.
    else dmi_hardware = true;
  }
  const auto& info = f.cpuinfo();
  const std::string arch = f.identity().arch;
  const bool x86 = arch == "x86_64" || arch == "i686" || (info && (info->arch_hint == "x86_64" || info->arch_hint == "i686"));
  if (info && x86) {
    h.evidence.insert(h.evidence.begin(), {"/proc/cpuinfo", info->hypervisor_flag ? "flags: hypervisor" : "flags: no 'hypervisor'"});
    if (info->hypervisor_flag && dmi_name.empty()) names.push_back("unnamed hypervisor, CPU flag only");
  }
  if (auto xen = root.read_value("/sys/hypervisor/type"); xen && !xen->empty()) {
    h.evidence.emplace_back("/sys/hypervisor/type", *xen);
    names.push_back(sys::lower(*xen) == "xen" ? "Xen" : *xen);
  }
  for (const char* dt : {"/sys/firmware/devicetree/base/hypervisor", "/proc/device-tree/hypervisor"}) {
    if (root.exists(dt)) {
      h.evidence.emplace_back(dt, "present");
      auto compat = root.read(std::string(dt) + "/compatible", 4096);
      // c_str(): the first string of the NUL-separated "compatible" list, on purpose.
      // NOLINTNEXTLINE(readability-redundant-string-cstr)
      std::string c = compat ? std::string(compat->c_str()) : "";
      names.push_back(c.find("xen") != std::string::npos ? "Xen" : c.find("kvm") != std::string::npos ? "KVM"
                      : "unnamed hypervisor, devicetree node");
      break;
    }
  }
  if (root.exists("/sys/bus/vmbus/devices")) {
    h.evidence.emplace_back("/sys/bus/vmbus/devices", "present (Hyper-V VMBus)");
    names.push_back("Hyper-V");
  }
  // s390: every Linux runs at least in an LPAR; /proc/sysinfo names the layers above it.
  if (auto sysinfo = root.read("/proc/sysinfo", 1u << 20)) {
    auto [control, lpar] = parsers::parse_sysinfo(*sysinfo);
    if (!control.empty()) {
      h.evidence.emplace_back("/proc/sysinfo", "Control Program: " + control);
      names.push_back(sys::lower(control).find("kvm") != std::string::npos ? "KVM" : sys::lower(control).find("z/vm") != std::string::npos ? "z/VM" : control);
    } else if (!lpar.empty()) {
      h.evidence.emplace_back("/proc/sysinfo", "LPAR Name: " + lpar);
      names.push_back("LPAR (PR/SM)");
    }
  }
  if (info && info->power_platform == "pSeries") {
    h.evidence.emplace_back("/proc/cpuinfo", "platform: pSeries" + (info->power_model.empty() ? "" : ", model: " + info->power_model));
    names.push_back(sys::lower(info->power_model).find("qemu") != std::string::npos ? "KVM (pSeries guest)" : "PowerVM LPAR (pSeries)");
  }
  std::string pci_source;
  std::string virtual_pci;
  for (const auto& [dev, vendor_id] : pci_vendors(f, pci_source)) {
    if (const char* name = virtual_pci_vendor(vendor_id)) {
      char buf[96];
      std::snprintf(buf, sizeof buf, "%s: vendor 0x%04x (%s virtual device)", dev.c_str(), vendor_id, name);
      h.evidence.emplace_back(pci_source, buf);
      if (virtual_pci.empty()) virtual_pci = name;
    }
  }
  if (!virtual_pci.empty()) names.push_back(virtual_pci);

  // A signal that names its hypervisor wins over one that only says "virtualized".
  std::stable_partition(names.begin(), names.end(), [](const std::string& n) { return !sys::starts_with(n, "unnamed"); });
  if (!names.empty()) {
    h.virtualized = true;
    h.name = names.front();
    // GPU passthrough guests often hide the CPU flag (KVM "hidden" state, so that old NVIDIA
    // drivers load); the other signals still name the hypervisor.
    if (info && x86 && !info->hypervisor_flag) h.name += ", CPU flag hidden";
    return h;
  }
  const bool power_nv = info && info->power_platform == "PowerNV";
  if (power_nv) h.evidence.emplace_back("/proc/cpuinfo", "platform: PowerNV (bare-metal OPAL firmware)");
  if (dmi_hardware || power_nv) {
    h.virtualized = false;
    h.name = "bare metal";
    return h;
  }
  // Nothing names a hypervisor, and nothing shows hardware either.
  std::string seen;
  if (info && x86) seen = "no 'hypervisor' CPU flag";
  if (!pci_source.empty()) seen += std::string(seen.empty() ? "" : ", ") + "no virtual PCI vendor";
  std::string why = "no hypervisor signal found";
  if (!seen.empty()) why += " (" + seen + ")";
  why += ", but bare metal is not shown either: no DMI identity";
  if (!vendor) why += " (" + describe(vendor.error()) + ")";
  if (arch == "aarch64" || arch == "arm" || arch == "riscv64" || arch == "powerpc") why += " and no devicetree hypervisor node";
  if (!info) why += "; " + info.error();
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
