// parse_node_state and decide: never throw; a parsed state has a base word, names the node
// asked for, keeps no "[user@time]" stamp in the reason; decide drains only with a
// "perfgap:" reason and never resumes a drain whose reason is not perfgap's.
#include <string>

#include "fuzz_common.hpp"
#include "slurm/node_state.hpp"

PERFGAP_FUZZ_TARGET(slurm_node_state) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto st = perfgap::slurm::parse_node_state(text, "n1");
  if (!st) return 0;
  FUZZ_CHECK(st->name == "n1");
  FUZZ_CHECK(!st->base.empty());
  for (const auto& id : {std::vector<std::string>{}, std::vector<std::string>{"cpu.governor"}}) {
    auto d = perfgap::slurm::decide(*st, id);
    if (d.action == perfgap::slurm::Action::drain) FUZZ_CHECK(d.reason.rfind("perfgap: ", 0) == 0 && !id.empty());
    if (d.action == perfgap::slurm::Action::resume) FUZZ_CHECK(id.empty() && st->drained_by_perfgap() && st->drained());
    if (st->offline() && !st->drained_by_perfgap()) FUZZ_CHECK(d.action == perfgap::slurm::Action::none);
  }
  return 0;
}
