// parse_nccl_topo: never crashes or recurses without bound (the walk is iterative); an
// accepted file has lower-case bus ids, stated link widths above 0, and every <net> that
// names an enclosing <pci> names one that was recorded.
#include <set>
#include <string>

#include "fuzz_common.hpp"
#include "parsers/nccl_topo.hpp"

PERFGAP_FUZZ_TARGET(nccl_topo) {
  auto t = perfgap::parsers::parse_nccl_topo(perfgap::fuzz::as_text(data, size));
  if (!t) {
    FUZZ_CHECK(!t.error().empty());
    return 0;
  }
  std::set<std::string> ids;
  for (const auto& p : t->pci) {
    for (char c : p.busid) FUZZ_CHECK(!(c >= 'A' && c <= 'Z'));
    if (p.link_width) FUZZ_CHECK(*p.link_width > 0);
    ids.insert(p.busid);
  }
  for (const auto& n : t->nets)
    if (!n.pci_busid.empty()) FUZZ_CHECK(ids.count(n.pci_busid));
  FUZZ_CHECK(t->nccl_rejects.size() <= 5);
  FUZZ_CHECK(t->gpus() + t->nics() <= static_cast<int>(t->pci.size()));
  (void)perfgap::parsers::parse_topo_link_speed(perfgap::fuzz::as_text(data, size));
  return 0;
}
