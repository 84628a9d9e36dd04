// parse_proc_stat: never crashes; accepted output has at least one cpu line, every line has
// at least the four oldest columns, and steal() is consistent with has_steal().
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(proc_stat) {
  auto r = perfgap::parsers::parse_proc_stat(perfgap::fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(!r->cpus.empty() || r->all.has_value());
  auto check = [](const perfgap::parsers::CpuTimes& t) {
    FUZZ_CHECK(t.fields.size() >= 4);
    FUZZ_CHECK(t.has_steal() == (t.fields.size() >= 8));
    if (!t.has_steal()) FUZZ_CHECK(t.steal() == 0);
    (void)t.total();
  };
  for (const auto& c : r->cpus) {
    FUZZ_CHECK(c.cpu >= 0);
    check(c);
  }
  if (r->all) {
    FUZZ_CHECK(r->all->cpu == -1);
    check(*r->all);
  }
  return 0;
}
