// parse_nccl_inspector and its analyzer, over its three forms (JSON lines, pretty-printed JSON,
// Prometheus text; seeds of each in corpus/nccl_inspector): never crash; line numbers stay
// inside the input; aggregates have at least one record each; the input fed in two pieces split
// at a line end reads the same (the multi-line readers carry their state across feeds).
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_inspector.hpp"

PERFGAP_FUZZ_TARGET(nccl_inspector) {
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
  FUZZ_CHECK(r->form == "JSON lines" || r->form == "pretty-printed JSON" || r->form == "Prometheus text");
  if (auto cut = text.find('\n', text.size() / 2); cut != std::string_view::npos) {
    perfgap::parsers::NcclInspectorParser p;
    p.feed(text.substr(0, cut + 1));
    p.feed(text.substr(cut + 1));
    auto two = p.finish();
    FUZZ_CHECK(two && two->coll_records == r->coll_records && two->p2p_records == r->p2p_records && two->colls.size() == r->colls.size() &&
               two->damaged.size() == r->damaged.size() && two->form == r->form);
  }
  perfgap::analyzers::NcclInspectorOptions o;
  o.nic_gbps_total = 3200;
  o.nic_basis = "fuzz";
  o.min_bytes = 0;
  (void)perfgap::analyzers::analyze_nccl_inspector({{"a", &*r}, {"b", &*r}}, o);
  return 0;
}
