// Every layer's registration function; checks/all.cpp calls them in report order.
#pragma once

#include "core/check.hpp"

namespace perfgap::checks {

void register_virtualization(core::Registry& r);
void register_platform(core::Registry& r);  // smmu.cmdqv, iommu.dma_mode, mem.page_size
void register_cpu_power(core::Registry& r);
void register_placement(core::Registry& r);
void register_runtime_topology(core::Registry& r);  // container.*, nccl.topo_file
void register_nccl(core::Registry& r);              // nccl.env.*, nccl.gdr, nccl.ib.qps
void register_pcie_gpu(core::Registry& r);
void register_gpu_nvml(core::Registry& r);  // gpu.persistence ... gpu.fabric (perfgap-gpu)
void register_network_ports(core::Registry& r);
void register_network_counters(core::Registry& r);  // net.ib.counters
void register_kernel_events(core::Registry& r);  // gpu.xid ... kernel.hung_task: hardware events in the kernel log

}  // namespace perfgap::checks
