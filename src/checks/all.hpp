// Every layer's registration function, one per folder: checks/<folder>/register.cpp registers
// the checks of report layer layer::<folder> (checks/util.hpp), from the folder's files.
// checks/all.cpp calls them in report::kLayers order.
#pragma once

#include "core/check.hpp"

namespace perfgap::checks {

void register_virtualization(core::Registry& r);    // virt.hypervisor, smmu.cmdqv, iommu.dma_mode, mem.page_size
void register_cpu_power(core::Registry& r);         // cpu.*, kernel.edac, kernel.soft_lockup, kernel.hung_task, kernel.panic
void register_placement(core::Registry& r);         // numa.*, placement.*
void register_runtime_topology(core::Registry& r);  // container.*, nccl.topo_file
void register_network(core::Registry& r);           // nccl.env.*, nccl.gdr, nccl.ib.qps, net.*
void register_gpu(core::Registry& r);               // gpu.* but gpu.pcie
void register_pcie(core::Registry& r);              // pcie.link, gpu.pcie, pcie.aer

}  // namespace perfgap::checks
