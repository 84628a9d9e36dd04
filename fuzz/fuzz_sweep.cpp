// perfgap sweep's text inputs: an --env spec (parse_axis) and a benchmark's output as one run
// is judged (nccl-tests table + NCCL's "set by environment" lines): never crash; a parsed
// axis has values, none empty; a run judged ok has busbw, a failed one says why.
#include "fuzz_common.hpp"
#include "sweep/sweep.hpp"

PERFGAP_FUZZ_TARGET(sweep) {
  auto text = perfgap::fuzz::as_text(data, size);
  if (auto a = perfgap::sweep::parse_axis(text)) {
    FUZZ_CHECK(!a->name.empty() && !a->values.empty());
    for (const auto& v : a->values) FUZZ_CHECK(!v.empty());
  }
  perfgap::sweep::Setting s{{{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_ALGO", "unset"}}};
  perfgap::sweep::ProcessResult p;
  p.exit_code = 0;
  auto r = perfgap::sweep::judge_run(p, text, s, 10);
  FUZZ_CHECK(r.ok ? !r.busbw.empty() && r.problem.empty() : !r.problem.empty() && r.busbw.empty());
  return 0;
}
