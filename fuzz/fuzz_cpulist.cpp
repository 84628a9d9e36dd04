// parse_cpulist: never crashes; an accepted list survives to_list() -> parse_cpulist() and the
// set operations agree with each other. parse_cpu_words (cpufreq's affected_cpus) on the same
// bytes: never crashes, and what it accepts is a list parse_cpulist reads back.
#include <algorithm>

#include "fuzz_common.hpp"
#include "parsers/cpuset.hpp"

using perfgap::parsers::CpuSet;
using perfgap::parsers::parse_cpulist;

PERFGAP_FUZZ_TARGET(cpulist) {
  if (auto words = perfgap::parsers::parse_cpu_words(perfgap::fuzz::as_text(data, size))) {
    auto back = parse_cpulist(words->to_list());
    FUZZ_CHECK(back.has_value() && *back == *words);
  }
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
