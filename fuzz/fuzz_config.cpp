// parse_config: never throws (nothing is caught here: an exception escaping it aborts, which
// libFuzzer records as a crash); accepted configs only name registered checks and declared
// thresholds, with finite non-negative values, and select_checks/thresholds_for work on them.
#include <cmath>
#include <string>

#include "core/check.hpp"
#include "core/config.hpp"
#include "fuzz_common.hpp"

PERFGAP_FUZZ_TARGET(config) {
  const auto& registry = perfgap::core::builtin_registry();
  std::string text(reinterpret_cast<const char*>(data), size);
  auto r = perfgap::core::parse_config(text, "fuzz.yaml", registry);
  if (!r) {
    FUZZ_CHECK(r.error().rfind("fuzz.yaml", 0) == 0);  // errors name the file first
    return 0;
  }
  FUZZ_CHECK(r->source == "fuzz.yaml");
  if (r->check_timeout_s) FUZZ_CHECK(*r->check_timeout_s > 0 && std::isfinite(*r->check_timeout_s));
  for (const auto& [id, values] : r->thresholds) {
    const auto* info = registry.find(id);
    FUZZ_CHECK(info != nullptr);
    auto merged = r->thresholds_for(*info);
    for (const auto& [name, v] : values) {
      FUZZ_CHECK(std::isfinite(v) && v >= 0);
      FUZZ_CHECK(merged.get(name) == v);
    }
  }
  (void)perfgap::core::select_checks(registry, r->only, r->skip);
  return 0;
}
