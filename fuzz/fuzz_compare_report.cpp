// compare's report reader and the comparison: never crash; a report it accepts compares with
// itself (nothing regressed, nothing new) and with a copy whose statuses all moved.
#include "compare/compare.hpp"
#include "fuzz_common.hpp"
#include "report/render.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto r = perfgap::compare::read_report(text);
  if (!r) {
    FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  for (const auto& f : r->findings) FUZZ_CHECK(!f.id.empty());
  auto same = perfgap::compare::compare_reports(*r, "a", *r, "b", {});
  FUZZ_CHECK(!same.empty() && same[0].id == "compare.summary");
  for (const auto& f : same) FUZZ_CHECK(f.id != "compare.regressed" && f.id != "compare.new" && f.id != "compare.metric");
  auto moved = *r;
  for (auto& f : moved.findings) {
    f.status = f.status == perfgap::report::Status::pass ? perfgap::report::Status::fail : perfgap::report::Status::pass;
    for (auto& [k, v] : f.metrics) v = v * 2 + 1;
  }
  auto diff = perfgap::compare::compare_reports(*r, "a", moved, "b", {.tolerance_pct = 0});
  perfgap::report::Report rep;
  rep.findings = std::move(diff);
  (void)perfgap::report::render_json(rep);
  (void)perfgap::report::render_text(rep, {true, false});
  return 0;
}
