// parse_nccl_inspector and its analyzer: never crash; line numbers stay inside the input;
// aggregates have at least one record each.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_inspector.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_nccl_inspector(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  for (const auto& c : r->colls) {
    FUZZ_CHECK(c.count >= 1 && c.bw_count <= c.count);
    FUZZ_CHECK(c.rank >= 0 && c.rank < c.n_ranks);
    FUZZ_CHECK(c.first_line >= 1 && c.first_line <= lines);
  }
  for (const auto& d : r->damaged) FUZZ_CHECK(d.line >= 1 && d.line <= lines);
  perfgap::analyzers::NcclInspectorOptions o;
  o.nic_gbps_total = 3200;
  o.nic_basis = "fuzz";
  o.min_bytes = 0;
  (void)perfgap::analyzers::analyze_nccl_inspector({{"a", &*r}, {"b", &*r}}, o);
  return 0;
}
