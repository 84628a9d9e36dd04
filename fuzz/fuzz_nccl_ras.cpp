// parse_nccl_ras and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_ras.hpp"

PERFGAP_FUZZ_TARGET(nccl_ras) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_nccl_ras(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  FUZZ_CHECK(r->job_summary || r->comms_section);
  for (const auto& p : r->dead) FUZZ_CHECK(p.line >= 1 && p.line <= lines);
  for (const auto& p : r->missing) FUZZ_CHECK(p.line >= 1 && p.line <= lines);
  for (const auto& is : r->issues) {
    FUZZ_CHECK(is.line >= 1 && is.line <= lines);
    for (const auto& p : is.ranks) FUZZ_CHECK(p.rank >= 0 && p.line >= is.line);
  }
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 1 && d.line <= lines);
  (void)perfgap::analyzers::analyze_nccl_ras(*r, "f");
  return 0;
}
