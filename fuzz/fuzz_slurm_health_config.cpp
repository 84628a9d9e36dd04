// parse_health_config: never throws; errors name the file first; an accepted config has a
// time limit in (0, kMaxHealthTimeLimit], absolute paths, and check lists that select_checks
// accepts.
#include <cmath>
#include <string>

#include "core/config.hpp"
#include "fuzz_common.hpp"
#include "slurm/health_config.hpp"

PERFGAP_FUZZ_TARGET(slurm_health_config) {
  const auto& registry = perfgap::core::builtin_registry();
  std::string text(reinterpret_cast<const char*>(data), size);
  auto r = perfgap::slurm::parse_health_config(text, "health.yaml", registry);
  if (!r) {
    FUZZ_CHECK(r.error().rfind("health.yaml", 0) == 0);
    return 0;
  }
  FUZZ_CHECK(r->time_limit_s > 0 && r->time_limit_s <= perfgap::slurm::kMaxHealthTimeLimit && std::isfinite(r->time_limit_s));
  for (const auto* p : {&r->log_file, &r->state_dir, &r->slurm_conf, &r->scontrol, &r->check.root, &r->check.config})
    FUZZ_CHECK(p->empty() || (*p)[0] == '/');
  FUZZ_CHECK(perfgap::core::select_checks(registry, r->checks, r->skip).has_value());
  FUZZ_CHECK(perfgap::core::select_checks(registry, r->drain_on, {}).has_value());
  return 0;
}
