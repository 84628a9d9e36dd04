// parse_perf_stat and its analyzer (against itself as the reference, so the judged path runs):
// never crash; line numbers stay inside the input; counts are finite and not negative.
#include <algorithm>
#include <cmath>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/perf_stat.hpp"

PERFGAP_FUZZ_TARGET(perf_stat) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_perf_stat(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  FUZZ_CHECK(r->events.size() <= perfgap::parsers::kMaxPerfStatEvents);
  for (const auto& e : r->events) {
    FUZZ_CHECK(e.line >= 1 && e.line <= lines);
    FUZZ_CHECK(e.value >= 0 && !std::isnan(e.value));
  }
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 1 && d.line <= lines);
  perfgap::analyzers::PerfStatOptions o;
  o.reference = &*r;
  o.reference_source = "f";
  (void)perfgap::analyzers::analyze_perf_stat(*r, "f", o);
  return 0;
}
