// parse_kb (the knowledge base's YAML reader): never throws; errors name the file first;
// accepted estimates are ranges 0 <= low <= high < 100 with a source; and a budget over the file
// laid on the built-in knowledge base keeps its arithmetic: every figure finite, explained
// within [0, 100], explained + unexplained = the shortfall where the estimates do not exceed it.
#include <cmath>
#include <string>

#include "analyzers/budget.hpp"
#include "core/kb.hpp"
#include "fuzz_common.hpp"

PERFGAP_FUZZ_TARGET(kb) {
  auto r = perfgap::core::parse_kb(perfgap::fuzz::as_text(data, size), "fuzz.yaml");
  if (!r) {
    FUZZ_CHECK(r.error().rfind("fuzz.yaml", 0) == 0);
    return 0;
  }
  perfgap::compare::ReportView view;
  view.kind = "analyze";
  for (const auto& e : r->impact) {
    if (e.kind == perfgap::core::KbImpact::Kind::estimated) {
      FUZZ_CHECK(e.low_pct >= 0 && e.low_pct <= e.high_pct && e.high_pct < 100);
      FUZZ_CHECK(!e.source.kind.empty() && e.source.kind != "none" && !e.source.cite.empty());
    } else {
      FUZZ_CHECK(!e.note.empty());
    }
    perfgap::compare::ReportFinding f;
    f.id = e.id;
    f.status = perfgap::report::Status::fail;
    view.findings.push_back(f);
  }
  for (const auto& m : r->measurements) FUZZ_CHECK(!m.covered_by.empty() && !m.name.empty());
  perfgap::core::Kb kb = perfgap::core::builtin_kb();
  kb.overlay(std::move(*r));
  perfgap::analyzers::BudgetOptions o;
  o.measured_pct = 80;
  auto b = perfgap::analyzers::explain_budget({{"fuzz.json", view}}, kb, o);
  double explained = -1, unexplained = -1;
  for (const auto& [k, v] : b.metrics) {
    FUZZ_CHECK(std::isfinite(v));
    if (k == "explained_pct") explained = v;
    if (k == "unexplained_pct") unexplained = v;
  }
  FUZZ_CHECK(explained >= 0 && explained <= 100);  // 100 only when rounding meets many causes near 100%
  FUZZ_CHECK(unexplained >= 0);
  if (explained <= 20) FUZZ_CHECK(std::fabs(explained + unexplained - 20) < 1e-6);
  return 0;
}
