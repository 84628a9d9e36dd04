// parse_turbostat and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/turbostat.hpp"

PERFGAP_FUZZ_TARGET(turbostat) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_turbostat(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  for (const auto& row : r->cpu_rows) FUZZ_CHECK(row.line >= 1 && row.line <= lines);
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 0 && d.line <= lines);
  (void)perfgap::analyzers::analyze_turbostat(*r, "f", {});
  return 0;
}
