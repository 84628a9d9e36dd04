// expand_hostlist: never throws, never returns more than kMaxHostlistNames names, and no
// name it returns holds a bracket or a comma; compress_hostlist of those names expands back
// to the same set.
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "fuzz_common.hpp"
#include "parsers/hostlist.hpp"

PERFGAP_FUZZ_TARGET(slurm_hostlist) {
  if (size > 4096) return 0;
  auto r = perfgap::parsers::expand_hostlist(perfgap::fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  FUZZ_CHECK(r->size() <= perfgap::parsers::kMaxHostlistNames);
  for (const auto& name : *r) {
    FUZZ_CHECK(!name.empty());
    FUZZ_CHECK(name.find_first_of("[],") == std::string::npos);
  }
  if (r->size() > 2000) return 0;
  std::vector<std::string_view> views(r->begin(), r->end());
  auto back = perfgap::parsers::expand_hostlist(perfgap::parsers::compress_hostlist(views));
  FUZZ_CHECK(back.has_value());
  std::set<std::string> want(r->begin(), r->end()), got(back->begin(), back->end());
  FUZZ_CHECK(want == got);
  return 0;
}
