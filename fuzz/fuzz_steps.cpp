// parse_steps and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/steps.hpp"

PERFGAP_FUZZ_TARGET(steps) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_steps(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  for (const auto& s : r->records) FUZZ_CHECK(s.value > 0 && s.line >= 1 && s.line <= lines);
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 0 && d.line <= lines);
  if (auto s = perfgap::analyzers::step_stats(*r, std::nullopt)) (void)perfgap::analyzers::analyze_steps(*s, "f", {});
  return 0;
}
