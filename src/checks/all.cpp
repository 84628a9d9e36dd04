#include "checks/all.hpp"

namespace perfgap::core {

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    checks::register_virtualization(r);
    checks::register_platform(r);
    checks::register_cpu_power(r);
    checks::register_placement(r);
    checks::register_runtime_topology(r);
    checks::register_nccl(r);
    checks::register_pcie_gpu(r);
    checks::register_gpu_nvml(r);
    checks::register_network_ports(r);
    checks::register_network_counters(r);
    checks::register_kernel_events(r);
    return r;
  }();
  return registry;
}

}  // namespace perfgap::core
