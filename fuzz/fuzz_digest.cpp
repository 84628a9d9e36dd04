// whatif --digest's digests read back: never crashes, overruns or hangs on any bytes (cut short,
// counts beyond the bytes, slots and indices out of range, intervals out of order); a digest
// that reads is replayed and analysed as a job of one rank, and that never crashes either.
#include "analyzers/profile_job.hpp"
#include "fuzz_common.hpp"

PERFGAP_FUZZ_TARGET(digest) {
  const std::string bytes(perfgap::fuzz::as_text(data, size));
  perfgap::analyzers::RankReader read = [&](const std::string&) -> tl::expected<perfgap::analyzers::RankRead, std::string> {
    return perfgap::analyzers::RankRead{bytes};
  };
  const std::vector<std::string> files{"rank.pgdigest"};
  perfgap::analyzers::WhatifOptions w;
  w.busbw_gbps = 50;
  auto job = perfgap::analyzers::whatif_profile_job(files, read, {}, w, 1);
  FUZZ_CHECK(job.used.size() + job.unusable.size() == 1);
  if (!job.unusable.empty()) {
    FUZZ_CHECK(!job.unusable[0].second.empty());
    return 0;
  }
  FUZZ_CHECK(!job.findings.empty());
  auto analysed = perfgap::analyzers::analyze_profile_job(files, read, {}, 1);
  FUZZ_CHECK(analysed.used.size() == 1);
  return 0;
}
