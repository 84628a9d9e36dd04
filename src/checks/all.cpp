#include "checks/all.hpp"

#include <stdexcept>
#include <string>
#include <string_view>

namespace perfgap::core {
namespace {

// The order of the findings in every report, by check id: the runner keeps it, and the reports
// in tests/golden pin it. It is older than the folders by layer: the hardware events of the
// kernel log (gpu.xid ... kernel.panic) come last whatever their layer, and gpu.pcie (layer
// pcie) stands among the gpu layer's NVML checks. builtin_registry() throws, naming the id, for
// a check registered and not placed here, or placed here and not registered.
constexpr std::string_view kReportOrder[] = {
    // virtualization
    "virt.hypervisor", "smmu.cmdqv", "iommu.dma_mode", "mem.page_size",
    // cpu-power
    "cpu.cstate.deep_idle", "cpu.turbo", "cpu.governor", "cpu.steal",
    // placement
    "numa.balancing", "numa.remote_memory", "placement.gpu_affinity", "placement.shared_cores",
    // runtime-topology
    "container.detect", "container.shm", "container.memlock", "container.devices", "container.launcher_config",
    "container.env_drift", "nccl.topo_file",
    // network: NCCL's settings
    "nccl.env.disabled_paths", "nccl.env.forced", "nccl.env.devices", "nccl.gdr", "nccl.ib.qps",
    // pcie and gpu: links, the inventory, NVML
    "pcie.link", "gpu.inventory", "gpu.nvml", "gpu.persistence", "gpu.clocks", "gpu.ecc", "gpu.pcie", "gpu.nvlink",
    "gpu.fabric", "gpu.mig",
    // network: RDMA ports and counters
    "net.ib.ports", "net.ib.counters",
    // the kernel log's hardware events: gpu, pcie, network, cpu-power
    "gpu.xid", "gpu.fallen_off_bus", "gpu.nvlink_xid", "gpu.nvswitch_sxid", "gpu.driver_errors", "pcie.aer", "net.link_flaps",
    "net.nic_health", "cpu.thermal_throttle", "kernel.edac", "kernel.soft_lockup", "kernel.hung_task", "kernel.panic",
};

}  // namespace

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry by_layer;
    checks::register_virtualization(by_layer);
    checks::register_cpu_power(by_layer);
    checks::register_placement(by_layer);
    checks::register_runtime_topology(by_layer);
    checks::register_network(by_layer);
    checks::register_gpu(by_layer);
    checks::register_pcie(by_layer);
    Registry r;
    for (const auto id : kReportOrder) {
      const auto* c = by_layer.find(id);
      if (!c) throw std::logic_error("checks/all.cpp: " + std::string(id) + " is in kReportOrder, but no checks/<layer>/ registers it");
      r.add(*c);
    }
    for (const auto& c : by_layer.all())
      if (!r.find(c.id))
        throw std::logic_error("checks/all.cpp: " + std::string(c.id) + " (layer " + std::string(c.layer) +
                               ") is registered but has no place in kReportOrder");
    return r;
  }();
  return registry;
}

}  // namespace perfgap::core
