// parse_cpuinfo: never crashes; an arm implementer+part always yields a model name, and the
// architecture hint is empty or one of the known architecture names.
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(cpuinfo) {
  auto r = perfgap::parsers::parse_cpuinfo(perfgap::fuzz::as_text(data, size));
  if (!r) return 0;
  FUZZ_CHECK(r->processors >= 0);
  FUZZ_CHECK(r->arch_hint.empty() || perfgap::parsers::known_arch(r->arch_hint));
  if (r->implementer && r->part) FUZZ_CHECK(!r->model_name.empty());
  if (r->hypervisor_flag) FUZZ_CHECK(r->arch_hint == "x86_64" || r->arch_hint == "i686");
  return 0;
}
