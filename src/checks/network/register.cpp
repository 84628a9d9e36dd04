// The network layer's checks: NCCL's settings, RDMA ports and counters, NIC link flaps.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/network/, each adding its checks.
void add_network_nccl(core::Registry& r);  // nccl.cpp: nccl.env.*, nccl.gdr, nccl.ib.qps
void add_network_ports(core::Registry& r);  // ports.cpp: net.ib.ports
void add_network_counters(core::Registry& r);  // counters.cpp: net.ib.counters
void add_network_link_flaps(core::Registry& r);  // link_flaps.cpp: net.link_flaps
void add_network_nic_health(core::Registry& r);  // nic_health.cpp: net.nic_health

void register_network(core::Registry& r) {
  add_network_nccl(r);
  add_network_ports(r);
  add_network_counters(r);
  add_network_link_flaps(r);
  add_network_nic_health(r);
}

}  // namespace perfgap::checks
