// analyze turbostat and numastat: the host's CPU frequency and NUMA placement tools.
#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"

namespace perfgap::tool_outputs::detail {

tl::expected<Result, std::string> run_turbostat(const Analyzer& an, const Request& r) {
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto t = parse_input<parsers::TurbostatParser>(file);
    if (!t) return t.error();
    c.append(analyzers::analyze_turbostat(*t, file, {r.rated_mhz}));
    return std::nullopt;
  });
}

tl::expected<Result, std::string> run_numastat(const Analyzer& an, const Request& r) {
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto n = parse_input<parsers::NumastatParser>(file, parsers::kMaxNumastatBytes);
    if (!n) return n.error();
    c.append(analyzers::analyze_numastat(*n, file));
    return std::nullopt;
  });
}

}  // namespace perfgap::tool_outputs::detail
