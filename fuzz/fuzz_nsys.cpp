// Nsight Systems SQLite export reader on any bytes: never crashes, hangs or grows without bound,
// whatever the database holds (views, triggers, generated columns, recursive SQL, corrupt
// pages: all refused or an error); a success holds only activities with end >= start whose GPU
// and name indices are valid, and its analysis never crashes. Seeds (fuzz/corpus/nsys) are
// small exports and the hostile shapes of issue 28, made with page_size 512.
#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/profile.hpp"

PERFGAP_FUZZ_TARGET(nsys) {
  auto p = perfgap::parsers::read_nsys_sqlite(perfgap::fuzz::as_text(data, size));
  if (!p) {
    FUZZ_CHECK(!p.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(!p->acts.empty());
  for (const auto& a : p->acts) {
    FUZZ_CHECK(a.end >= a.start);
    FUZZ_CHECK(a.gpu < p->gpus.size());
    FUZZ_CHECK(a.name < p->names.size());
  }
  for (const auto& r : p->ranges) FUZZ_CHECK(r.name < p->names.size());
  FUZZ_CHECK(perfgap::analyzers::analyze_profile(*p, "fuzz", {}).size() >= 6);
  return 0;
}
