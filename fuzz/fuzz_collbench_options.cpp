// perfgap-collbench's command line (one argument per line): never crashes; an accepted one
// gives a size range that is ordered, bounded in length, and inside -b..-e, and every row it
// would print formats; a refused one says why in one line.
#include <string>
#include <string_view>
#include <vector>

#include "collbench/collectives.hpp"
#include "collbench/nccl_tests_format.hpp"
#include "collbench/options.hpp"
#include "fuzz_common.hpp"

PERFGAP_FUZZ_TARGET(collbench_options) {
  using namespace perfgap::collbench;
  auto text = perfgap::fuzz::as_text(data, size);
  std::vector<std::string_view> args;
  for (std::size_t pos = 0; pos <= text.size();) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) nl = text.size();
    args.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  auto parsed = parse_options(args);
  if (!parsed) {
    FUZZ_CHECK(!parsed.error().empty());
    FUZZ_CHECK(parsed.error().find('\n') == std::string::npos);
    return 0;
  }
  const Options& o = *parsed;
  if (o.help || o.version) return 0;
  FUZZ_CHECK(o.min_bytes <= o.max_bytes);
  FUZZ_CHECK(o.iters >= 1 && o.warmup >= 0 && (o.check == 0 || o.check == 1));
  auto sizes = size_steps(o);
  FUZZ_CHECK(!sizes.empty() && sizes.size() <= kMaxSizes);
  for (std::size_t i = 0; i < sizes.size(); ++i) {
    FUZZ_CHECK(sizes[i] >= o.min_bytes && sizes[i] <= o.max_bytes);
    if (i) FUZZ_CHECK(sizes[i] > sizes[i - 1]);
  }
  for (int ranks : {1, 3, 1000}) {
    TableWriter table(o.collective, ranks);
    for (auto s : {sizes.front(), sizes.back()}) {
      Shape sh = shape(o.collective, s, ranks);
      FUZZ_CHECK(sh.bytes() <= s);
      auto row = table.row(sh, Timing{1e-6, 0}, Timing{0, std::nullopt});
      FUZZ_CHECK(!row.empty() && row.back() == '\n');
    }
    FUZZ_CHECK(table.wrong() == 0);
  }
  return 0;
}
