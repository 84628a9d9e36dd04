// analyze nvidia-smi: -q -x and topo -m captures -> the gpu.* rules.
#include "analyze/inputs.hpp"
#include "analyze/kinds.hpp"
#include "analyzers/analyzers.hpp"

namespace perfgap::analyze::detail {

// Read together: a GPU in two -q -x captures has the growth of its counters judged.
tl::expected<Result, std::string> run_nvidia_smi(const Analyzer& an, const Request& r) {
  std::vector<parsers::NvidiaSmi> captures;
  std::vector<std::string> sources;
  auto read = each_input(an, r, [&](const std::string& file, Collected&) -> std::optional<std::string> {
    auto capture = parse_input<parsers::NvidiaSmiParser>(file, parsers::kMaxNvidiaSmiBytes);
    if (!capture) return capture.error();
    captures.push_back(std::move(*capture));
    sources.push_back(file);
    return std::nullopt;
  });
  if (!read) return read;
  std::vector<analyzers::NvidiaSmiInput> in;
  for (std::size_t i = 0; i < captures.size(); ++i) in.push_back({sources[i], &captures[i]});
  for (auto& f : analyzers::analyze_nvidia_smi(in)) read->findings.push_back(std::move(f));
  return read;
}

}  // namespace perfgap::analyze::detail
