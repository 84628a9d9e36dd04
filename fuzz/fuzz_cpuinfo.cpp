// parse_cpuinfo: never crashes; an arm implementer+part always yields a model name, and the
// architecture hint is one of the three documented values (mixed x86/arm text may set any).
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto r = perfgap::parsers::parse_cpuinfo(perfgap::fuzz::as_text(data, size));
  if (!r) return 0;
  FUZZ_CHECK(r->processors >= 0);
  FUZZ_CHECK(r->arch_hint.empty() || r->arch_hint == "x86_64" || r->arch_hint == "aarch64");
  if (r->implementer && r->part) FUZZ_CHECK(!r->model_name.empty());
  if (r->implementer) FUZZ_CHECK(!r->arch_hint.empty());
  return 0;
}
