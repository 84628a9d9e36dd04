// analyze nvidia-smi: -q -x and topo -m captures -> the gpu.* rules.
#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"

namespace perfgap::tool_outputs::detail {

// Read together: a GPU in two -q -x captures has the growth of its counters judged.
tl::expected<Result, std::string> run_nvidia_smi(const Analyzer& an, const Request& r) {
  auto kept = keep_inputs<parsers::NvidiaSmiParser>(an, r, parsers::kMaxNvidiaSmiBytes);
  if (!kept) return tl::unexpected(kept.error());
  std::vector<analyzers::NvidiaSmiInput> in;
  for (std::size_t i = 0; i < kept->models.size(); ++i) in.push_back({kept->sources[i], &kept->models[i]});
  for (auto& f : analyzers::analyze_nvidia_smi(in)) kept->result.findings.push_back(std::move(f));
  return std::move(kept->result);
}

}  // namespace perfgap::tool_outputs::detail
