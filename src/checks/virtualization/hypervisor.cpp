// virt.hypervisor: what runs the node (a hypervisor, or bare metal); other checks use it.
#include "checks/util.hpp"

namespace perfgap::checks {
namespace {


std::vector<Finding> hypervisor(facts::Facts& f, const core::Thresholds&) {
  const auto& h = f.hypervisor();
  if (!h) {
    auto out = core::finding("virt.hypervisor", layer::virtualization, Status::skip, h.error());
    return {out};
  }
  auto out = core::finding("virt.hypervisor", layer::virtualization, Status::pass,
                           h->virtualized ? "virtualized: " + h->name : "bare metal");
  for (const auto& [src, obs] : h->evidence) out.add(src, obs);
  out.metric("virtualized", h->virtualized ? 1 : 0);
  return {out};
}

}  // namespace

void add_virtualization_hypervisor(core::Registry& r) {
  r.add({.id = "virt.hypervisor",
         .layer = layer::virtualization,
         .summary = "names the hypervisor, or bare metal (other checks use it)",
         .rule = "`pass` (information) naming the hypervisor from any signal: the x86 `hypervisor` CPU flag, a hypervisor's DMI identity, /sys/hypervisor/type, the devicetree `hypervisor` node, Hyper-V's VMBus, s390 /proc/sysinfo (KVM, z/VM, LPAR), POWER `platform: pSeries`, PCI functions of virtual-only vendors (VirtualBox 0x80ee, VMware 0x15ad, Hyper-V 0x1414, Xen 0x5853, Parallels 0x1ab8, QEMU 0x1b36/0x1234); `pass` \"bare metal\" only when bare metal is shown (a hardware DMI identity, or POWER `platform: PowerNV`) and no signal names a hypervisor. Otherwise `skip` \"no hypervisor signal found, but bare metal is not shown\": the checks that depend on it treat the node as unknown.",
         .fix = "None: this is information. Virtualized nodes need the host-side checks (CMDQV, vCPU pinning) to be right.",
         .reads = reads::hypervisor(),
         .params = {},
         .run = hypervisor});
}

}  // namespace perfgap::checks
