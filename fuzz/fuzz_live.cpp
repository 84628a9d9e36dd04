// The /proc texts perfgap profile reads (schedstat, a status file's involuntary switches,
// /proc/vmstat): never crash; errors carry a message, and line numbers stay inside the input.
#include <algorithm>
#include <string>

#include "fuzz_common.hpp"
#include "parsers/live.hpp"

PERFGAP_FUZZ_TARGET(live) {
  const auto text = perfgap::fuzz::as_text(data, size);
  const int lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  if (auto s = perfgap::parsers::parse_schedstat(text); !s) FUZZ_CHECK(!s.error().message.empty());
  if (auto n = perfgap::parsers::parse_nonvoluntary_switches(text); !n) FUZZ_CHECK(!n.error().message.empty());
  auto v = perfgap::parsers::parse_vmstat(text);
  if (!v) {
    FUZZ_CHECK(!v.error().message.empty());
    FUZZ_CHECK(v.error().line >= 0 && v.error().line <= lines);
  } else {
    FUZZ_CHECK(!v->empty());
    for (const auto& [k, val] : *v) FUZZ_CHECK(!k.empty() && k.find_first_of(" \t\n") == std::string::npos);
  }
  return 0;
}
