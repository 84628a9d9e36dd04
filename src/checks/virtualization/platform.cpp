// virtualization layer, platform part: SMMU command-queue virtualization on Grace, the
// IOMMU mode of GPU/NIC DMA, the kernel's base page size.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "facts/platform.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {


void add_all(Finding& out, const std::vector<std::pair<std::string, std::string>>& ev) {
  for (const auto& [src, obs] : ev) out.add(src, obs);
}

std::string join(const std::vector<std::string>& items, std::string_view sep = ", ", std::size_t max = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? std::string(sep) : "") + items[i];
  if (items.size() > max) out += fmt::format("{}and {} more", sep, items.size() - max);
  return out;
}

// ---- smmu.cmdqv --------------------------------------------------------------------------
constexpr std::string_view kCmdqvFix =
    "Both halves are needed. Host: run a kernel with the tegra241-cmdqv driver of arm-smmu-v3 "
    "(CONFIG_TEGRA241_CMDQV=y; NVIDIA's and current distribution arm64 kernels have it) and leave "
    "the arm_smmu_v3 parameters bypass_vcmdq/disable_cmdqv unset. Hypervisor: give the guest an "
    "accelerated vSMMU with the cmdqv IOMMU property, e.g. QEMU `-object iommufd,id=iommufd0 "
    "-device arm-smmuv3,primary-bus=pcie.0,accel=on,cmdqv=on` with the GPU/NIC assigned through "
    "iommufd (`-device vfio-pci,host=...,iommufd=iommufd0`); libvirt: `<iommu model='smmuv3'><driver "
    "... accel='on' cmdqv='on'/></iommu>` (property names vary with the QEMU/libvirt version). The "
    "guest kernel needs the tegra241-cmdqv driver too: it then shows an NVDA200C ACPI device.";
constexpr std::string_view kCmdqvImpact =
    "Without CMDQV every guest IOMMU map/unmap traps to the host and serializes on one SMMU command "
    "queue: MoE training 12-14% slower than bare metal in the public GB200 NVL72 case "
    "(arm_smmu_cmdq_issue_cmdlist at 24% of CPU cycles); dense models within 3%, so it goes unnoticed.";

bool param_set(const std::string& v) { return v == "Y" || v == "y" || v == "1"; }

std::vector<Finding> smmu_cmdqv(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "smmu.cmdqv";
  const auto& g = facts::grace(f);
  if (!g) return {core::finding(id, layer::virtualization, Status::skip, "cannot tell whether this is an NVIDIA Grace node: " + g.error())};
  if (!g->grace) {
    auto out = core::finding(id, layer::virtualization, Status::skip, "not an NVIDIA Grace node (" + g->how + "): CMDQV is a Grace SMMUv3 feature");
    add_all(out, g->evidence);
    return {out};
  }
  const auto& s = facts::smmu(f);
  const auto& hyp = f.hypervisor();
  if (s.instances.empty()) {
    std::string why = !s.iommu_class_error.empty() ? "SMMUv3 instances not readable: " + s.iommu_class_error
                      : hyp && hyp->virtualized
                          ? "Grace guest without a vSMMU (no SMMUv3 in /sys/class/iommu): guest DMA mappings do not go through an emulated SMMU"
                          : "no SMMUv3 instance in /sys/class/iommu (SMMU disabled or not described by the firmware)";
    auto out = core::finding(id, layer::virtualization, Status::skip, why);
    add_all(out, g->evidence);
    out.add("/sys/class/iommu", s.other_iommus.empty() ? "no SMMUv3 entries" : join(s.other_iommus));
    return {out};
  }
  if (!hyp) {
    auto out = core::finding(id, layer::virtualization, Status::skip, "Grace with SMMUv3, but whether it is virtualized is unknown: " + hyp.error());
    add_all(out, g->evidence);
    return {out};
  }
  const bool virt = hyp->virtualized;

  auto out = core::finding(id, layer::virtualization, Status::pass, "");
  add_all(out, g->evidence);
  if (virt) out.add("virt.hypervisor", "virtualized: " + hyp->name);
  else out.add("virt.hypervisor", "bare metal");
  out.add("/sys/class/iommu", fmt::format("{} SMMUv3: {}", s.instances.size(), join(s.instances, ", ", 4)));

  std::vector<std::string> problems;
  // The CMDQV device.
  if (!s.cmdqv_devices.empty()) {
    out.add("/sys/bus/acpi/devices/" + s.cmdqv_devices.front(), fmt::format("present ({} NVDA200C device(s))", s.cmdqv_devices.size()));
  } else {
    std::string obs = s.cmdqv_disabled.empty() ? "absent" : "present but disabled (_STA 0): " + join(s.cmdqv_disabled);
    out.add("/sys/bus/acpi/devices/NVDA200C:*", obs, "present");
    problems.push_back(virt ? "the hypervisor does not expose the CMDQV to the guest (no NVDA200C ACPI device)"
                            : "the firmware describes no usable CMDQV (no NVDA200C ACPI device)");
  }
  // The kernel's driver.
  const auto& cfg = facts::kernel_config(f);
  std::optional<bool> built;
  if (cfg) {
    auto v = cfg->get("TEGRA241_CMDQV");
    built = v && (*v == "y" || *v == "m");
    out.add(cfg->source, !v ? "CONFIG_TEGRA241_CMDQV absent" : *v == "n" ? "# CONFIG_TEGRA241_CMDQV is not set" : "CONFIG_TEGRA241_CMDQV=" + *v,
            "CONFIG_TEGRA241_CMDQV=y");
    if (!*built) problems.push_back(fmt::format("the {} kernel lacks the tegra241-cmdqv driver (CONFIG_TEGRA241_CMDQV {} in {})",
                                                virt ? "guest" : "host", !v ? "absent" : *v == "n" ? "not set" : "=" + *v,
                                                cfg->source));
  } else {
    out.add("kernel config", "not readable: " + cfg.error());
  }
  for (const auto& [name, value] : s.params) {
    out.add("/sys/module/arm_smmu_v3/parameters/" + name, value, "N");
    if (param_set(value)) problems.push_back("arm_smmu_v3." + name + "=" + value + " turns the CMDQV off");
  }
  // The kernel log.
  const auto& log = facts::kernel_log(f);
  if (log) {
    std::vector<std::string> fallback, cmdqv_lines;
    bool bad_line = false;
    for (const auto& m : log->messages) {
      if (m.find("Falling back to standard SMMU CMDQ") != std::string::npos) {
        fallback.push_back(m);
        continue;
      }
      auto lm = sys::lower(m);
      if (lm.find("tegra241_cmdqv") == std::string::npos && lm.find("tegra241-cmdqv") == std::string::npos &&
          lm.find("cmdqv") == std::string::npos && lm.find("vcmdq") == std::string::npos)
        continue;
      cmdqv_lines.push_back(m);
      for (auto w : {"disabled", "unsupported", "fail", "error", "unable", "cannot", "not "})
        if (lm.find(w) != std::string::npos) bad_line = true;
    }
    std::size_t shown = 0;
    for (const auto& m : fallback)
      if (shown++ < 2) out.add(log->source, m);
    for (const auto& m : cmdqv_lines)
      if (shown++ < 4) out.add(log->source, m);
    if (fallback.empty() && cmdqv_lines.empty()) out.add(log->source, "no tegra241_cmdqv or CMDQ fallback lines");
    if (!fallback.empty())
      problems.push_back(fmt::format("the kernel log says 'Falling back to standard SMMU CMDQ' ({} time(s))", fallback.size()));
    else if (bad_line)
      problems.push_back("the kernel log reports a CMDQV problem");
  } else {
    out.add("kernel log", "not read: " + log.error());
  }
  out.metric("smmuv3_instances", static_cast<double>(s.instances.size()));
  out.metric("cmdqv_devices", static_cast<double>(s.cmdqv_devices.size()));

  if (!problems.empty()) {
    out.status = virt ? Status::fail : Status::warn;
    out.title = (virt ? "virtualized Grace without SMMU command-queue virtualization (CMDQV): "
                      : "Grace host kernel does not use the SMMU CMDQV: ") + join(problems, "; ", 6);
    out.fix = std::string(kCmdqvFix);
    out.impact = virt ? std::string(kCmdqvImpact)
                      : "On the host the CMDQV spreads SMMU invalidations over several queues (up to 20% less invalidation time in "
                        "multi-threaded DMA unmap); a host kernel without the driver also cannot give VMs on this node a CMDQV. " +
                            std::string(kCmdqvImpact);
    return {out};
  }
  if (!built) {
    out.status = Status::skip;
    out.title = fmt::format("{}Grace with the CMDQV device, but whether the kernel has the tegra241-cmdqv driver is unknown: {}",
                            virt ? "virtualized " : "", cfg.error());
    return {out};
  }
  out.title = virt ? "CMDQV exposed to the guest (NVDA200C) and the guest kernel has the tegra241-cmdqv driver"
                   : "Grace host with the CMDQV device and the tegra241-cmdqv driver";
  return {out};
}

// ---- iommu.dma_mode ----------------------------------------------------------------------
std::vector<Finding> dma_mode(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "iommu.dma_mode";
  const auto& pci = f.pci();
  if (!pci) return {core::finding(id, layer::virtualization, Status::skip, "PCI devices not readable: " + pci.error())};
  std::set<std::string> rdma;
  if (const auto& ib = facts::infiniband(f))
    for (const auto& d : *ib)
      if (!d.bdf.empty()) rdma.insert(d.bdf);
  std::map<std::string, std::string> devices;  // bdf -> "GPU"/"NIC"
  for (const auto& d : *pci) {
    if (d.is_gpu()) devices[d.bdf] = "GPU";
    else if (facts::is_nvidia_nic(d) || rdma.count(d.bdf)) devices[d.bdf] = "NIC";
  }
  // GPUs the driver lists though their PCI vendor/class files were not readable (as gpu.inventory counts them).
  for (const auto& g : facts::driver_gpus(f).gpus)
    if (!g.bdf.empty()) devices.emplace(g.bdf, "GPU");
  if (devices.empty()) return {core::finding(id, layer::virtualization, Status::skip, "no GPU or RDMA/NVIDIA NIC on PCI: nothing whose DMA mode matters")};
  const auto& groups = facts::iommu_groups(f);
  if (!groups) return {core::finding(id, layer::virtualization, Status::skip, "IOMMU groups not readable: " + groups.error())};

  std::map<std::string, const facts::IommuGroup*> group_of;
  for (const auto& g : *groups)
    for (const auto& d : g.devices) group_of[d] = &g;

  std::vector<std::string> translated, identity, unknown, assigned, no_group, other;
  std::set<std::string> translated_types;
  auto out = core::finding(id, layer::virtualization, Status::pass, "");
  std::vector<report::Evidence> bad_ev, good_ev;
  for (const auto& [bdf, kind] : devices) {
    std::string label = bdf + " " + kind;
    auto drv = facts::pci_driver(f, bdf);
    if (drv == "vfio-pci") {
      assigned.push_back(label);
      continue;
    }
    auto it = group_of.find(bdf);
    if (it == group_of.end()) {
      no_group.push_back(label);
      continue;
    }
    const auto& g = *it->second;
    std::string path = "/sys/kernel/iommu_groups/" + g.id + "/type";
    if (g.type.empty()) {
      unknown.push_back(label);
      bad_ev.push_back({path, "not readable: " + g.type_error + " (" + label + ")", std::nullopt});
    } else if (g.type == "DMA" || g.type == "DMA-FQ") {
      translated.push_back(label);
      translated_types.insert(g.type);
      bad_ev.push_back({path, g.type + " (" + label + ")", std::string("identity")});
    } else if (g.type == "identity") {
      identity.push_back(label);
      good_ev.push_back({path, g.type + " (" + label + ")", std::nullopt});
    } else {
      other.push_back(label);
      good_ev.push_back({path, g.type + " (" + label + ")", std::nullopt});
    }
  }
  // The kernel command line's IOMMU settings, as evidence.
  std::string cmd_ev;
  if (const auto& cmd = f.cmdline()) {
    for (auto name : {"iommu", "iommu.passthrough", "iommu.strict", "intel_iommu", "amd_iommu", "arm-smmu-v3.disable_bypass"})
      if (auto v = cmd->value(name)) cmd_ev += (cmd_ev.empty() ? "" : " ") + std::string(name) + "=" + *v;
    out.add("/proc/cmdline", cmd_ev.empty() ? "no IOMMU options (the kernel's default domain type applies)" : cmd_ev,
            "iommu.passthrough=1 or iommu=pt");
  } else {
    out.add("/proc/cmdline", "not readable: " + cmd.error());
  }
  const std::size_t max_ev = 16;
  for (std::size_t i = 0; i < bad_ev.size() && i < max_ev; ++i) out.evidence.push_back(bad_ev[i]);
  for (std::size_t i = 0; i < good_ev.size() && i < max_ev; ++i) out.evidence.push_back(good_ev[i]);
  if (!assigned.empty()) out.add("/sys/bus/pci/devices/*/driver", "vfio-pci (assigned to VMs, not judged here): " + join(assigned));
  if (!no_group.empty()) out.add("/sys/kernel/iommu_groups/*/devices", "in no IOMMU group (DMA not translated): " + join(no_group));
  out.metric("translated_devices", static_cast<double>(translated.size()));
  out.metric("identity_devices", static_cast<double>(identity.size()));

  if (!translated.empty()) {
    std::string types;
    for (const auto& t : translated_types) types += (types.empty() ? "" : "/") + t;
    out.status = Status::warn;
    out.title = fmt::format("{} GPU/NIC function(s) in translated IOMMU mode ({}) rather than identity: {}",
                            translated.size(), types, join(translated));
    if (cmd_ev.find("passthrough=1") != std::string::npos || cmd_ev.find("iommu=pt") != std::string::npos)
      out.title += " (although the command line asks for passthrough)";
    out.fix = "Boot with passthrough as the default domain: iommu.passthrough=1 (arm64) or iommu=pt (x86, with "
              "intel_iommu=on/amd_iommu=on kept if VFIO is needed) in GRUB_CMDLINE_LINUX, regenerate the boot config and "
              "reboot; or per group: unbind the device's driver, `echo identity > /sys/kernel/iommu_groups/N/type`, rebind. "
              "In a VM with a vIOMMU the guest kernel's command line is the one to change.";
    out.impact = "Every DMA map/unmap of GPU and NIC buffers walks IOMMU page tables and needs IOTLB invalidations (DMA-FQ "
                 "batches them): lower RDMA/GPUDirect throughput and CPU time in map/unmap; in a VM with a vSMMU each "
                 "invalidation traps to the host (the CMDQV case: MoE 12-14% slower).";
    return {out};
  }
  if (!unknown.empty()) {
    out.status = Status::skip;
    out.title = "IOMMU group type not readable for " + join(unknown);
    return {out};
  }
  if (!identity.empty() || !other.empty()) {
    out.title = fmt::format("GPU/NIC IOMMU groups are not translated: {} identity{}", identity.size(),
                            other.empty() ? "" : fmt::format(", {} other ({})", other.size(), join(other)));
    if (!no_group.empty()) out.title += fmt::format(", {} in no group", no_group.size());
    return {out};
  }
  if (!no_group.empty()) {
    out.title = fmt::format("no IOMMU translates GPU/NIC DMA: {} device(s) in no IOMMU group", no_group.size());
    return {out};
  }
  out.status = Status::skip;
  out.title = "every GPU/NIC is assigned to VMs (vfio-pci): the guests' IOMMU settings decide";
  return {out};
}

// ---- mem.page_size -----------------------------------------------------------------------
std::vector<Finding> page_size(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "mem.page_size";
  const auto& g = facts::grace(f);
  if (!g) return {core::finding(id, layer::virtualization, Status::skip, "cannot tell whether this is an NVIDIA Grace node: " + g.error())};
  if (!g->grace) {
    auto out = core::finding(id, layer::virtualization, Status::skip, "not an NVIDIA Grace node (" + g->how + "): the 64 KiB page recommendation is Grace's");
    add_all(out, g->evidence);
    return {out};
  }
  const auto& ps = facts::page_size(f);
  if (!ps) {
    auto out = core::finding(id, layer::virtualization, Status::skip, "Grace node, but the kernel's base page size is unknown: " + ps.error());
    add_all(out, g->evidence);
    return {out};
  }
  auto out = core::finding(id, layer::virtualization, Status::pass, "");
  add_all(out, g->evidence);
  out.metric("page_size_kb", static_cast<double>(ps->kb));
  const auto& kernel = f.identity().kernel;
  if (ps->kb == 4) {
    out.status = Status::warn;
    out.title = "Grace node runs a 4 KiB-page kernel: the platform's recommended kernel uses 64 KiB pages";
    out.add(ps->source, "4 kB", "64 kB");
    if (!kernel.empty()) out.add("/proc/sys/kernel/osrelease", kernel, "a 64k kernel flavour");
    out.fix = "Boot the 64 KiB-page kernel flavour (Ubuntu: linux-nvidia-64k / linux-image-*-64k; RHEL: kernel-64k), "
              "rebuild or reinstall the NVIDIA driver for it, and make it the default boot entry.";
    out.impact = "16x smaller TLB reach: more TLB misses and page-table walks on Grace's large CPU and coherent GPU memory, "
                 "and more page-fault and IOMMU mapping work per byte.";
    return {out};
  }
  out.title = fmt::format("Grace node with {} KiB base pages", ps->kb);
  out.add(ps->source, fmt::format("{} kB", ps->kb));
  return {out};
}

}  // namespace

void add_virtualization_platform(core::Registry& r) {
  r.add({.id = "smmu.cmdqv",
         .layer = layer::virtualization,
         .summary = "on Grace, the SMMU's command-queue virtualization (CMDQV) is exposed and used",
         .rule = "On NVIDIA Grace (soc0 id jep106:036b:0241, or Neoverse V2 with NVIDIA GPUs in a guest) with an SMMUv3: `fail` when virtualized and the CMDQV ACPI device NVDA200C is not exposed, the kernel lacks CONFIG_TEGRA241_CMDQV, arm_smmu_v3 disable_cmdqv/bypass_vcmdq is set, or the kernel log says 'Falling back to standard SMMU CMDQ'; on bare metal the same signals are a `warn`. `skip` elsewhere (not Grace, no SMMUv3, or the kernel config unreadable with no other signal). The kernel log is --dmesg FILE, the tree's .perfgap/dmesg.txt, or /dev/kmsg read without blocking.",
         .fix = "Host kernel with the tegra241-cmdqv driver (CONFIG_TEGRA241_CMDQV=y) and the hypervisor's cmdqv IOMMU property (QEMU arm-smmuv3 accel=on,cmdqv=on with iommufd; libvirt <iommu model='smmuv3'> driver cmdqv='on').",
         .reads = reads::of({reads::grace(), reads::smmu(), reads::kernel_config(), reads::kernel_log(), reads::hypervisor()}),
         .params = {},
         .run = smmu_cmdqv});
  r.add({.id = "iommu.dma_mode",
         .layer = layer::virtualization,
         .summary = "GPU and NIC IOMMU groups use identity (passthrough), not translated DMA",
         .rule = "`warn` when the IOMMU group of a GPU or NIC (NVIDIA/Mellanox, or any RDMA device) has type DMA or DMA-FQ rather than identity, listing the devices; /proc/cmdline's iommu=, iommu.passthrough=, intel_iommu=, amd_iommu= are evidence. Devices bound to vfio-pci (assigned to VMs) are not judged. `pass` when all are identity or in no group; `skip` without PCI, GPUs/NICs, or readable groups.",
         .fix = "iommu.passthrough=1 (arm64) or iommu=pt (x86) on the kernel command line, or `echo identity > /sys/kernel/iommu_groups/N/type` with the driver unbound.",
         .reads = reads::of({reads::pci(), reads::pci_driver(), reads::driver_gpus(), reads::iommu_groups(), reads::cmdline(), reads::infiniband()}),
         .params = {},
         .run = dma_mode});
  r.add({.id = "mem.page_size",
         .layer = layer::virtualization,
         .summary = "Grace nodes run the 64 KiB-page kernel",
         .rule = "On NVIDIA Grace: `warn` for 4 KiB base pages (64 KiB is the platform's recommended kernel), `pass` otherwise. Live: the page size of this kernel; --root: KernelPageSize in /proc/self/smaps. `skip` elsewhere or when unknown.",
         .fix = "Boot the 64k kernel flavour (linux-nvidia-64k, kernel-64k) with a matching NVIDIA driver.",
         .reads = reads::of({reads::grace(), reads::page_size(), reads::identity()}),
         .params = {},
         .run = page_size});
}

}  // namespace perfgap::checks
