// analyze perf-stat: perf stat output (text, -x CSV, -j JSON), its TLB figures against a
// reference run's, with the ratios of the knowledge base (data/kb/reference_ratios.yaml).
#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "core/kb.hpp"

namespace perfgap::tool_outputs::detail {

tl::expected<Result, std::string> run_perf_stat(const Analyzer& an, const Request& r) {
  if (auto ok = reference_is_a_file(an, r, "perf stat output"); !ok) return tl::unexpected(ok.error());
  analyzers::PerfStatOptions o;
  parsers::PerfStat reference;
  if (!r.reference.empty()) {
    auto ref = parse_input<parsers::PerfStatParser>(r.reference);
    if (!ref) return tl::unexpected("--reference " + r.reference + ": " + ref.error());
    reference = std::move(*ref);
    o.reference = &reference;
    o.reference_source = r.reference;
  }
  const auto& kb = core::builtin_kb();
  for (auto [id, ratio] : {std::pair{"perf_stat.dtlb", &o.dtlb}, {"perf_stat.itlb", &o.itlb}})
    if (auto it = kb.ratios.find(id); it != kb.ratios.end()) *ratio = {it->second.pass_within, it->second.fail_beyond};
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto s = parse_input<parsers::PerfStatParser>(file);
    if (!s) return s.error();
    c.append(analyzers::analyze_perf_stat(*s, file, o));
    return std::nullopt;
  });
}

}  // namespace perfgap::tool_outputs::detail
