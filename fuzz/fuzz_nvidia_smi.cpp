// parse_nvidia_smi (the -q -x XML reader, the -q text and nvlink -s readers, the topo -m
// parser; seeds of each in corpus/nvidia_smi) and its analyzer, and the
// reader of perfgap-gpu's JSON (the same facts): never crash; line numbers stay inside the
// input; every topo row has one cell per device column.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nvidia_smi.hpp"
#include "parsers/nvml_json.hpp"

namespace {
void check_topo(const perfgap::parsers::GpuTopology& t, int lines) {
  for (const auto& r : t.rows) {
    FUZZ_CHECK(r.line >= 1 && r.line <= lines);
    FUZZ_CHECK(r.links.size() == t.columns.size());
  }
  for (const auto& d : t.damaged) FUZZ_CHECK(d.line >= 0 && d.line <= lines);
}
}  // namespace

PERFGAP_FUZZ_TARGET(nvidia_smi) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  // Both readers on every input, whatever the content says it is.
  if (auto t = perfgap::parsers::parse_nvidia_smi_topo(text)) check_topo(*t, lines);
  else FUZZ_CHECK(t.error().line >= 0 && t.error().line <= lines);
  if (auto x = perfgap::parsers::parse_nvidia_smi_xml(text); !x) FUZZ_CHECK(x.error().line >= 0 && x.error().line <= lines);
  if (auto q = perfgap::parsers::parse_nvidia_smi_query_text(text)) FUZZ_CHECK(!q->gpus.empty());
  else FUZZ_CHECK(q.error().line >= 0 && q.error().line <= lines);
  if (auto n = perfgap::parsers::parse_nvidia_smi_nvlink(text)) {
    for (const auto& g : n->gpus) FUZZ_CHECK(g.nvlinks.has_value());
  } else {
    FUZZ_CHECK(n.error().line >= 0 && n.error().line <= lines);
  }
  if (auto j = perfgap::parsers::parse_nvml_json(text)) {
    (void)perfgap::analyzers::judge_gpu_snapshots({{"a", &j->snapshot, nullptr, {}}, {"b", &j->snapshot, nullptr, {}}});
  } else {
    FUZZ_CHECK(j.error().line >= 0 && j.error().line <= lines);
  }
  auto r = perfgap::parsers::parse_nvidia_smi(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  FUZZ_CHECK(!r->form.empty());
  if (r->kind == perfgap::parsers::NvidiaSmi::Kind::topo) check_topo(r->topo, lines);
  else FUZZ_CHECK(!r->query.gpus.empty());
  // The same capture twice: the two-snapshot paths (growth) run too.
  (void)perfgap::analyzers::analyze_nvidia_smi({{"a", &*r}, {"b", &*r}});
  return 0;
}
