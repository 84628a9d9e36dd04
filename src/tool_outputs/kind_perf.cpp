// analyze perf: perf report/script text or perf.data -> perf.smmu_cmdq, perf.hot_kernel, perf.summary.
#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"

namespace perfgap::tool_outputs::detail {

tl::expected<Result, std::string> run_perf(const Analyzer& an, const Request& r) {
  KernelNames kernel_names;
  if (!r.kallsyms.empty())
    if (auto given = load_given_kallsyms(kernel_names, r.kallsyms); !given) return tl::unexpected(given.error());
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto p = read_perf_input(file, kernel_names);
    if (!p) return p.error();
    c.append(analyzers::analyze_perf(*p, file));
    return std::nullopt;
  });
}

}  // namespace perfgap::tool_outputs::detail
