// The runtime-topology layer's checks: what reaches the job's container.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/runtime_topology/, each adding its checks.
void add_runtime_topology_container(core::Registry& r);  // container.cpp: container.*
void add_runtime_topology_topo_file(core::Registry& r);  // topo_file.cpp: nccl.topo_file

void register_runtime_topology(core::Registry& r) {
  add_runtime_topology_container(r);
  add_runtime_topology_topo_file(r);
}

}  // namespace perfgap::checks
