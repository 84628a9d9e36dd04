// The cpu-power layer's checks: idle states, frequency, steal, and CPU and memory events and crashes in the kernel log.
// checks/all.cpp places each check in the report's order (kReportOrder).
#include "checks/all.hpp"

namespace perfgap::checks {

// The files of checks/cpu_power/, each adding its checks.
void add_cpu_power_cstates(core::Registry& r);  // cstates.cpp: cpu.cstate.deep_idle
void add_cpu_power_frequency(core::Registry& r);  // frequency.cpp: cpu.turbo, cpu.governor
void add_cpu_power_steal(core::Registry& r);  // steal.cpp: cpu.steal
void add_cpu_power_kernel_events(core::Registry& r);  // kernel_events.cpp: cpu.thermal_throttle, kernel.edac, kernel.soft_lockup, kernel.hung_task
void add_cpu_power_kernel_crash(core::Registry& r);  // kernel_crash.cpp: kernel.panic

void register_cpu_power(core::Registry& r) {
  add_cpu_power_cstates(r);
  add_cpu_power_frequency(r);
  add_cpu_power_steal(r);
  add_cpu_power_kernel_events(r);
  add_cpu_power_kernel_crash(r);
}

}  // namespace perfgap::checks
