// Kineto reader: never crashes, overruns or hangs on any bytes (truncated JSON, wrong types,
// absurd times, NaN-free doubles out of range); a success holds only activities with end >=
// start whose GPU and name indices are valid, and the analysis of it never crashes either.
#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/profile.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto p = perfgap::parsers::parse_kineto(perfgap::fuzz::as_text(data, size));
  if (!p) {
    FUZZ_CHECK(!p.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(!p->acts.empty());
  for (const auto& a : p->acts) {
    FUZZ_CHECK(a.end >= a.start);
    FUZZ_CHECK(a.gpu < p->gpus.size());
    FUZZ_CHECK(a.name < p->names.size());
  }
  for (const auto& r : p->ranges) FUZZ_CHECK(r.name < p->names.size() && r.end >= r.start);
  auto findings = perfgap::analyzers::analyze_profile(*p, "fuzz", {});
  FUZZ_CHECK(findings.size() >= 6);
  return 0;
}
