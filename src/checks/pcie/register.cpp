// The pcie layer's checks: PCIe links of GPUs and NICs, and PCIe errors.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/pcie/, each adding its checks.
void add_pcie_link(core::Registry& r);  // link.cpp: pcie.link
void add_pcie_nvml(core::Registry& r);  // nvml.cpp: gpu.pcie
void add_pcie_aer(core::Registry& r);  // aer.cpp: pcie.aer

void register_pcie(core::Registry& r) {
  add_pcie_link(r);
  add_pcie_nvml(r);
  add_pcie_aer(r);
}

}  // namespace perfgap::checks
