// parse_gpu_probe_json (perfgap-gpu --probe's document) and the probe judges over it: never
// crash; rates are finite and not negative; a parse error's line is inside the input; the
// judges give one finding per GPU (or one skip) with a known status.
#include <cmath>

#include "fuzz_common.hpp"
#include "parsers/gpu_probe_json.hpp"
#include "probe/probe.hpp"

PERFGAP_FUZZ_TARGET(gpu_probe_json) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto doc = perfgap::parsers::parse_gpu_probe_json(text);
  if (!doc) {
    int lines = 1;
    for (char c : text) lines += c == '\n' ? 1 : 0;
    FUZZ_CHECK(doc.error().line >= 0 && doc.error().line <= lines);
    return 0;
  }
  for (const auto& g : doc->gpus)
    for (const auto& c : g.copies) {
      if (c.h2d_gbps) FUZZ_CHECK(std::isfinite(*c.h2d_gbps) && *c.h2d_gbps >= 0);
      if (c.d2h_gbps) FUZZ_CHECK(std::isfinite(*c.d2h_gbps) && *c.d2h_gbps >= 0);
    }
  perfgap::facts::PciLink link;
  link.speed_gts = 32.0;
  link.width = 16;
  auto m = perfgap::probe::join_gpu_probe(*doc, {}, [&](const std::string&) { return link; });
  auto h2d = perfgap::probe::judge_h2d(m, 0.8, 0.05);
  auto launch = perfgap::probe::judge_launch(m);
  const std::size_t want = m.no_run_why.empty() ? m.gpus.size() : 1;
  FUZZ_CHECK(h2d.size() == want && launch.size() == want);
  for (const auto* v : {&h2d, &launch})
    for (const auto& f : *v) FUZZ_CHECK(!f.title.empty());
  return 0;
}
