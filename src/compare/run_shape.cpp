#include "compare/run_shape.hpp"

#include <fmt/format.h>

#include <charconv>
#include <cmath>
#include <vector>

#include "parsers/nccl_tests.hpp"

namespace perfgap::compare {

void RunShape::read_metric(std::string_view name, double value) {
  if (!std::isfinite(value) || value <= 0) return;
  if (name == "ranks") {
    ranks = std::llround(value);
  } else if (name == "nodes") {
    nodes = std::llround(value);
  } else if (name.starts_with("busbw_gbps.") && name.find('.', 11) == std::string_view::npos) {
    // busbw_gbps.SIZE (not its .spread): the sizes the run measured.
    std::uint64_t bytes = 0;
    const auto digits = name.substr(11);
    if (std::from_chars(digits.data(), digits.data() + digits.size(), bytes).ec == std::errc() && bytes > largest) largest = bytes;
  }
}

void RunShape::read_evidence(std::string_view source, std::string_view observed) {
  if (source == parsers::kCollectiveMeasuredEvidence && collective.empty()) collective = std::string(collective_measured(observed));
  else if (source == parsers::kNcclTestsGpusEvidence && gpus.empty()) gpus = std::string(observed);
}

std::string RunShape::words() const {
  std::vector<std::string> parts;
  parts.push_back(ranks > 0 ? fmt::format("{} rank{}", ranks, ranks == 1 ? "" : "s") : "ranks not said");
  if (nodes > 0) parts.back() += fmt::format(" on {} node{}", nodes, nodes == 1 ? "" : "s");
  if (!gpus.empty()) parts.push_back(gpus);
  if (largest > 0) parts.push_back("to " + parsers::format_size(largest));
  return fmt::format("{}", fmt::join(parts, ", "));
}

std::string_view collective_measured(std::string_view observed) { return observed.substr(0, observed.find(' ')); }

RunShape run_shape(const ReportFinding& busbw) {
  RunShape sh;
  for (const auto& [name, v] : busbw.metrics) sh.read_metric(name, v);
  for (const auto& [source, observed] : busbw.evidence) sh.read_evidence(source, observed);
  return sh;
}

}  // namespace perfgap::compare
