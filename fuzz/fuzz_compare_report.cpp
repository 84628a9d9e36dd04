// The one report reader (report::Reader), compare's view of it and the comparison: never
// crash; what the reader accepts has ids and statuses, compare and check --baseline accept
// or refuse it with the reader's words, and a report compare accepts compares with itself
// (nothing regressed, nothing new) and with a copy whose statuses all moved.
#include <cmath>

#include "compare/compare.hpp"
#include "core/baseline.hpp"
#include "fuzz_common.hpp"
#include "report/reader.hpp"
#include "report/render.hpp"

PERFGAP_FUZZ_TARGET(compare_report) {
  static perfgap::report::Reader reader;
  auto text = perfgap::fuzz::as_text(data, size);
  auto one = reader.read(text);
  std::string one_error = one ? std::string() : one.error();
  if (one) {
    for (const auto& f : one->findings) {
      FUZZ_CHECK(!f.id.empty());
      for (const auto& m : f.metrics) FUZZ_CHECK(std::isfinite(m.value));  // 1e400 is refused, null left out
    }
    FUZZ_CHECK(one->has_node || !one->node);
  } else {
    FUZZ_CHECK(!one_error.empty() && one_error.find('\n') == std::string::npos);
  }
  auto baseline = perfgap::core::read_baseline(text, "b.json");
  if (!one) FUZZ_CHECK(!baseline && baseline.error() == "b.json: " + one_error);
  auto r = perfgap::compare::read_report(text);
  FUZZ_CHECK(r.has_value() == one.has_value());
  if (!r) {
    FUZZ_CHECK(r.error() == one_error);
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
