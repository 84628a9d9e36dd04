// The placement layer's checks: where training processes run and keep their memory.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/placement/, each adding its checks.
void add_placement_numa(core::Registry& r);  // numa.cpp: numa.balancing, numa.remote_memory
void add_placement_cores(core::Registry& r);  // cores.cpp: placement.gpu_affinity, placement.shared_cores

void register_placement(core::Registry& r) {
  add_placement_numa(r);
  add_placement_cores(r);
}

}  // namespace perfgap::checks
