// parse_nccl_log and its analyzer: never crash; line numbers stay inside the input.
#include <algorithm>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/nccl_log.hpp"

PERFGAP_FUZZ_TARGET(nccl_log) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_nccl_log(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 0 && r.error().line <= lines);
    return 0;
  }
  FUZZ_CHECK(r->nccl_lines >= 1 && r->nccl_lines <= lines); for (const auto& c : r->channels) FUZZ_CHECK(c.line >= 1 && c.line <= lines);
  (void)perfgap::analyzers::analyze_nccl_logs({{"f", &*r}}, {});
  return 0;
}
