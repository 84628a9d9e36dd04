// parse_perf_data, the profile it gives and its analyzer: never crash or hang; a byte offset
// named in an error lies inside the input; shares stay within 0-100%. The first byte chooses
// a kallsyms for the leaves (none, one that names the generator's seeds, one with zero addresses).
#include <cmath>
#include <string>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/perf_data.hpp"

PERFGAP_FUZZ_TARGET(perf_data) {
  if (size < 1) return 0;
  const int choice = data[0] % 3;
  auto bytes = perfgap::fuzz::as_text(data + 1, size - 1);
  perfgap::parsers::PerfDataOptions o;
  o.max_inflate_ratio = 16;  // keeps a bomb's work small; the limit still holds past 64 MiB
  auto d = perfgap::parsers::parse_perf_data(bytes, o);
  if (!d) {
    FUZZ_CHECK(!d.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(d->unmatched_samples <= d->samples);
  static const auto names = perfgap::parsers::parse_kallsyms(
      "ffffffff81000000 T _text\nffffffff81001000 T arm_smmu_cmdq_issue_cmdlist\nffffffff81002000 T do_syscall_64\n"
      "ffffffff81003000 t native_queued_spin_lock_slowpath\nffffffff81004000 T schedule\nffffffff81005000 T __demo_end\n");
  static const auto zeros = perfgap::parsers::parse_kallsyms("0000000000000000 T _text\n0000000000000000 T schedule\n");
  const perfgap::parsers::Kallsyms* ks = choice == 1 ? &*names : choice == 2 ? &*zeros : nullptr;
  auto p = perfgap::parsers::perf_data_profile(*d, ks, "fuzz");
  double sum = 0;
  for (const auto& s : p.symbols) {
    FUZZ_CHECK(s.self_pct >= 0 && !std::isnan(s.self_pct));
    sum += s.self_pct;
  }
  FUZZ_CHECK(p.symbols.empty() || d->total_weight == 0 || sum <= 100.0001 + 1e-6 * sum);
  (void)perfgap::analyzers::analyze_perf(p, "f");
  return 0;
}
