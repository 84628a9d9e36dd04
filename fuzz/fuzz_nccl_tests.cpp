// parse_nccl_tests and its analyzer: never crash; line numbers stay inside the input; the
// model is the reference parse's (every line the general way, every row kept to the end).
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_tests.hpp"

namespace {
bool same_figures(const std::optional<perfgap::parsers::NcclTestsFigures>& a, const std::optional<perfgap::parsers::NcclTestsFigures>& b) {
  if (!a || !b) return !a && !b;
  return a->time_us == b->time_us && a->algbw == b->algbw && a->busbw == b->busbw && a->wrong == b->wrong && a->max_error == b->max_error;
}

// The fast parse and the reference agree on everything the analyzer reads.
void check_reference(const perfgap::parsers::Parsed<perfgap::parsers::NcclTestsRun>& r, std::string_view text) {
  auto ref = perfgap::parsers::parse_nccl_tests_reference(text);
  FUZZ_CHECK(r.has_value() == ref.has_value());
  if (!r) {
    FUZZ_CHECK(r.error().message == ref.error().message && r.error().line == ref.error().line);
    return;
  }
  FUZZ_CHECK(r->rows.size() == ref->rows.size() && r->damaged.size() == ref->damaged.size());
  FUZZ_CHECK(r->results_checked == ref->results_checked && r->elided == ref->elided);
  FUZZ_CHECK(r->stopped_early.size() == ref->stopped_early.size());
  for (std::size_t i = 0; i < r->stopped_early.size(); ++i) {
    const auto &a = r->stopped_early[i], &b = ref->stopped_early[i];
    FUZZ_CHECK(a.reached == b.reached && a.max_bytes == b.max_bytes && a.header_line == b.header_line && a.last_line == b.last_line);
  }
  for (std::size_t i = 0; i < r->rows.size(); ++i) {
    const auto &a = r->rows[i], &b = ref->rows[i];
    FUZZ_CHECK(a.line == b.line && a.size == b.size && a.count == b.count && a.type == b.type && a.redop == b.redop);
    FUZZ_CHECK(same_figures(a.out_of_place, b.out_of_place) && same_figures(a.in_place, b.in_place));
  }
  for (std::size_t i = 0; i < r->damaged.size(); ++i)
    FUZZ_CHECK(r->damaged[i].line == ref->damaged[i].line && r->damaged[i].message == ref->damaged[i].message);
}
}  // namespace

PERFGAP_FUZZ_TARGET(nccl_tests) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_nccl_tests(text);
  check_reference(r, text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  for (const auto& row : r->rows) FUZZ_CHECK(row.out_of_place || row.in_place);
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 0 && d.line <= lines);
  perfgap::analyzers::NcclTestsOptions o;
  o.reference = &*r;
  (void)perfgap::analyzers::analyze_nccl_tests(*r, "f", o);
  return 0;
}
