// The virtualization layer's checks: what runs the node and how it virtualizes DMA and pages.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/virtualization/, each adding its checks.
void add_virtualization_hypervisor(core::Registry& r);  // hypervisor.cpp: virt.hypervisor
void add_virtualization_platform(core::Registry& r);  // platform.cpp: smmu.cmdqv, iommu.dma_mode, mem.page_size

void register_virtualization(core::Registry& r) {
  add_virtualization_hypervisor(r);
  add_virtualization_platform(r);
}

}  // namespace perfgap::checks
