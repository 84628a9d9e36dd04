// parse_nccl_tests and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_tests.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_nccl_tests(text);
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
