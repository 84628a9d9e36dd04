// virtualization layer: what runs the node.
#include "checks/all.hpp"
#include "checks/util.hpp"

namespace perfgap::checks {
namespace {

constexpr std::string_view kLayer = "virtualization";

std::vector<Finding> hypervisor(facts::Facts& f, const core::Thresholds&) {
  const auto& h = f.hypervisor();
  if (!h) {
    auto out = core::finding("virt.hypervisor", kLayer, Status::skip, "cannot tell whether this node is virtualized: " + h.error());
    return {out};
  }
  auto out = core::finding("virt.hypervisor", kLayer, Status::pass,
                           h->virtualized ? "virtualized: " + h->name : "bare metal");
  for (const auto& [src, obs] : h->evidence) out.add(src, obs);
  out.metric("virtualized", h->virtualized ? 1 : 0);
  return {out};
}

}  // namespace

void register_virtualization(core::Registry& r) {
  r.add({.id = "virt.hypervisor",
         .layer = kLayer,
         .summary = "names the hypervisor, or bare metal (other checks use it)",
         .rule = "Always `pass` (information) naming the hypervisor or \"bare metal\"; `skip` when neither the CPU flags nor DMI/devicetree identity can be read.",
         .fix = "None: this is information. Virtualized nodes need the host-side checks (CMDQV, vCPU pinning) to be right.",
         .reads = {"/proc/cpuinfo", "/sys/hypervisor/type", "/sys/class/dmi/id/sys_vendor",
                   "/sys/class/dmi/id/product_name", "/sys/firmware/devicetree/base/hypervisor",
                   "/proc/device-tree/hypervisor"},
         .params = {},
         .run = hypervisor});
}

}  // namespace perfgap::checks
