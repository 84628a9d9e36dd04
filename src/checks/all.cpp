#include "checks/all.hpp"

namespace perfgap::core {

const Registry& builtin_registry() {
  static const Registry registry = [] {
    Registry r;
    checks::register_virtualization(r);
    checks::register_cpu_power(r);
    checks::register_placement(r);
    return r;
  }();
  return registry;
}

}  // namespace perfgap::core
