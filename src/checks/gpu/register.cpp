// The gpu layer's checks: the GPU inventory, their health through NVML, GPU events in the kernel log.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/gpu/, each adding its checks.
void add_gpu_inventory(core::Registry& r);  // inventory.cpp: gpu.inventory
void add_gpu_nvml(core::Registry& r);  // nvml.cpp: gpu.nvml, gpu.persistence, gpu.clocks, gpu.ecc, gpu.nvlink, gpu.fabric, gpu.mig
void add_gpu_xid(core::Registry& r);  // xid.cpp: gpu.xid, gpu.fallen_off_bus, gpu.nvlink_xid, gpu.nvswitch_sxid
void add_gpu_driver_errors(core::Registry& r);  // driver_errors.cpp: gpu.driver_errors

void register_gpu(core::Registry& r) {
  add_gpu_inventory(r);
  add_gpu_nvml(r);
  add_gpu_xid(r);
  add_gpu_driver_errors(r);
}

}  // namespace perfgap::checks
