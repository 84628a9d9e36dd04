// Every layer's registration function; checks/all.cpp calls them in report order.
#pragma once

#include "core/check.hpp"

namespace perfgap::checks {

void register_virtualization(core::Registry& r);
void register_cpu_power(core::Registry& r);
void register_placement(core::Registry& r);

}  // namespace perfgap::checks
