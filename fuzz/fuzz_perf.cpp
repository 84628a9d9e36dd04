// parse_perf and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/perf.hpp"

PERFGAP_FUZZ_TARGET(perf) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_perf(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  for (const auto& s : r->symbols) FUZZ_CHECK(s.line >= 1 && s.line <= lines && s.self_pct >= 0);
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 0 && d.line <= lines);
  (void)perfgap::analyzers::analyze_perf(*r, "f");
  return 0;
}
