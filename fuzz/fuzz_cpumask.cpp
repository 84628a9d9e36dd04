// parse_cpumask: never crashes; an accepted mask's set survives the cpulist round trip, and
// the number of set bits matches the hex digits' popcount.
#include <bit>

#include "fuzz_common.hpp"
#include "parsers/cpuset.hpp"
#include "sys/text.hpp"

using perfgap::parsers::parse_cpulist;
using perfgap::parsers::parse_cpumask;

PERFGAP_FUZZ_TARGET(cpumask) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto r = parse_cpumask(text);
  if (!r) return 0;
  auto again = parse_cpulist(r->to_list());
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(*again == *r);
  std::size_t bits = 0;
  for (char c : perfgap::sys::trim_ws(text)) {
    unsigned v = 0;
    if (c >= '0' && c <= '9') v = static_cast<unsigned>(c - '0');
    else if (c >= 'a' && c <= 'f') v = static_cast<unsigned>(c - 'a' + 10);
    else if (c >= 'A' && c <= 'F') v = static_cast<unsigned>(c - 'A' + 10);
    bits += static_cast<std::size_t>(std::popcount(v));
  }
  FUZZ_CHECK(bits == r->count());
  return 0;
}
