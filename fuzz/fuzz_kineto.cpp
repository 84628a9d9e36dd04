// Kineto reader: never crashes, overruns or hangs on any bytes (truncated JSON, wrong types,
// absurd times, NaN-free doubles out of range); a success holds only activities with end >=
// start whose GPU and name indices are valid, and the analysis of it never crashes either.
// Cut anywhere: the same bytes pulled in blocks of another size (picked from the input's
// length) give the same error, or the same findings.
#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/profile.hpp"
#include "report/render.hpp"

PERFGAP_FUZZ_TARGET(kineto) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto p = perfgap::parsers::parse_kineto(text);
  auto cut = perfgap::parsers::read_kineto(perfgap::parsers::blocks_of(text, 1 + size % 67));
  FUZZ_CHECK(static_cast<bool>(p) == static_cast<bool>(cut));
  if (!p) {
    FUZZ_CHECK(!p.error().message.empty());
    FUZZ_CHECK(p.error().describe() == cut.error().describe());
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
  perfgap::report::Report whole, blocks;
  whole.findings = std::move(findings);
  blocks.findings = perfgap::analyzers::analyze_profile(*cut, "fuzz", {});
  FUZZ_CHECK(perfgap::report::render_json(whole) == perfgap::report::render_json(blocks));
  return 0;
}
