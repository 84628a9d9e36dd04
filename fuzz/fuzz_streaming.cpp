// The streaming parsers fed in blocks of whole lines (as `analyze` reads a file) give the
// findings of the whole text, for any text and any cut. The first byte picks the parser, the
// second seeds where the blocks end; the rest is the text.
#include <string>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "report/render.hpp"

namespace {

using namespace perfgap;

std::string json_of(std::vector<report::Finding> f) {
  report::Report r;
  r.findings = std::move(f);
  return report::render_json(r);
}

// The text in blocks that end at line ends picked by a small generator seeded with `seed`.
std::vector<std::string_view> cut(std::string_view text, unsigned seed) {
  std::vector<std::string_view> out;
  unsigned s = seed * 2654435761u + 1;
  std::size_t start = 0, pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    s = s * 1103515245u + 12345u;
    if ((s >> 16) % 3 == 0 || pos == text.size()) {
      out.push_back(text.substr(start, pos - start));
      start = pos;
    }
  }
  return out;
}

template <class P, class A>
void same(std::string_view text, unsigned seed, A analyze) {
  auto outcome = [&](const std::vector<std::string_view>& parts) {
    P p;
    for (auto b : parts) p.feed(b);
    auto m = p.finish();
    return m ? json_of(analyze(*m)) : "error: " + m.error().describe();
  };
  FUZZ_CHECK(outcome({text}) == outcome(cut(text, seed)));
}

}  // namespace

PERFGAP_FUZZ_TARGET(streaming) {
  if (size < 2) return 0;
  auto text = fuzz::as_text(data + 2, size - 2);
  unsigned seed = data[1];
  switch (data[0] % 8) {
    case 0: same<parsers::PerfParser>(text, seed, [](const parsers::PerfProfile& p) { return analyzers::analyze_perf(p, "f"); }); break;
    case 1: same<parsers::NcclTestsParser>(text, seed, [](const parsers::NcclTestsRun& r) { return analyzers::analyze_nccl_tests(r, "f", {}); }); break;
    case 2: same<parsers::NcclLogParser>(text, seed, [](const parsers::NcclLog& l) { return analyzers::analyze_nccl_logs({{"f", &l}}, {}); }); break;
    case 3:
      same<parsers::StepsParser>(text, seed, [](const parsers::StepLog& l) {
        auto st = analyzers::step_stats(l, std::nullopt);
        analyzers::StepsOptions o;
        o.reference_ms(100);
        return st ? analyzers::analyze_steps(*st, "f", o) : std::vector<report::Finding>{};
      });
      break;
    case 4:
      same<parsers::NcclInspectorParser>(text, seed, [](const parsers::NcclInspector& r) {
        analyzers::NcclInspectorOptions o;
        o.min_bytes = 0;
        return analyzers::analyze_nccl_inspector({{"f", &r}}, o);
      });
      break;
    case 5: same<parsers::NcclRasParser>(text, seed, [](const parsers::NcclRas& r) { return analyzers::analyze_nccl_ras(r, "f"); }); break;
    case 6: {
      // Against itself as the reference too: the judged path runs on what was read.
      same<parsers::PerfStatParser>(text, seed, [](const parsers::PerfStat& s) {
        analyzers::PerfStatOptions o;
        o.reference = &s;
        o.reference_source = "f";
        return analyzers::analyze_perf_stat(s, "f", o);
      });
      break;
    }
    default: same<parsers::TurbostatParser>(text, seed, [](const parsers::Turbostat& t) { return analyzers::analyze_turbostat(t, "f", {}); }); break;
  }
  return 0;
}
