// parse_cpulist: never crashes; an accepted list survives to_list() -> parse_cpulist() and the
// set operations agree with each other.
#include <algorithm>

#include "fuzz_common.hpp"
#include "parsers/cpuset.hpp"

using perfgap::parsers::CpuSet;
using perfgap::parsers::parse_cpulist;

PERFGAP_FUZZ_TARGET(cpulist) {
  auto r = parse_cpulist(perfgap::fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty());
    return 0;
  }
  const CpuSet& set = *r;
  auto list = set.to_list();
  auto again = parse_cpulist(list);
  FUZZ_CHECK(again.has_value());
  FUZZ_CHECK(*again == set);
  FUZZ_CHECK(again->to_list() == list);
  auto members = set.members();
  FUZZ_CHECK(members.size() == set.count());
  FUZZ_CHECK(std::is_sorted(members.begin(), members.end()));
  FUZZ_CHECK(set.empty() == members.empty());
  FUZZ_CHECK(list.empty() == set.empty());
  for (int m : members) FUZZ_CHECK(set.contains(m));
  FUZZ_CHECK(set.unite(set) == set);
  FUZZ_CHECK(set.intersect(set) == set);
  FUZZ_CHECK(set.minus(set).empty());
  FUZZ_CHECK(set.subset_of(set));
  FUZZ_CHECK(set.intersects(set) == !set.empty());
  FUZZ_CHECK(set.unite(CpuSet{}) == set);
  FUZZ_CHECK(set.intersect(CpuSet{}).empty());
  return 0;
}
