#include "compare/size_range.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <vector>

#include "report/text_style.hpp"

namespace perfgap::compare {
namespace {

// One curve of a finding: size in bytes -> value (NAME_gbps.BYTES, not NAME_gbps.BYTES.spread).
std::map<double, double> size_curve(const ReportFinding& f, std::string_view family) {
  std::map<double, double> out;
  for (const auto& [k, v] : f.metrics) {
    auto m = report::sized_metric(k);
    if (m && m->rest.empty() && m->name == family && std::isfinite(v)) out.try_emplace(m->bytes, v);
  }
  return out;
}

std::string size_range_text(const std::map<double, double>& curve) {
  if (curve.empty()) return "no size";
  if (curve.size() == 1) return report::size_text(curve.begin()->first);
  return fmt::format("{} to {}", report::size_text(curve.begin()->first), report::size_text(curve.rbegin()->first));
}

std::string size_number(double v) { return fmt::format("{:.4g}", v); }

}  // namespace

std::optional<OverSizes> over_common_sizes(std::string_view name, const ReportFinding& before, const ReportFinding& after) {
  // max_busbw_gbps -> the curve busbw_gbps.SIZE; sizes -> each curve of the finding (nccl-tests has one).
  const bool peak = name.substr(0, 4) == "max_", mean = name.substr(0, 4) == "avg_", count = name == "sizes";
  constexpr std::string_view kUnit = "_gbps";
  std::string family;
  if (peak || mean) {
    std::string_view rest = name.substr(4);
    if (rest.size() <= kUnit.size() || rest.substr(rest.size() - kUnit.size()) != kUnit) return std::nullopt;
    family = std::string(rest.substr(0, rest.size() - kUnit.size()));
  } else if (count) {
    for (const auto& [k, v] : after.metrics)
      if (auto m = report::sized_metric(k); m && m->rest.empty()) {
        family = std::string(m->name);
        break;
      }
  }
  if (family.empty()) return std::nullopt;
  const auto was = size_curve(before, family), now = size_curve(after, family);
  if (was.empty() || now.empty()) return std::nullopt;
  bool same = was.size() == now.size();
  for (auto a = was.begin(), b = now.begin(); same && a != was.end(); ++a, ++b) same = a->first == b->first;
  if (same) return std::nullopt;
  const std::string ranges = fmt::format("before {}, after {}", size_range_text(was), size_range_text(now));
  OverSizes o;
  if (count) {
    o.compared = true;
    o.note = fmt::format("the count of sizes each run measured ({}), not a measure of speed", ranges);
    return o;
  }
  if (mean) {
    o.note = fmt::format("not compared: an average over each run's own sizes, and the runs measured different sizes ({})", ranges);
    return o;
  }
  std::map<double, double> common_was, common_now;
  for (const auto& [s, v] : was)
    if (auto it = now.find(s); it != now.end()) common_was.emplace(s, v), common_now.emplace(s, it->second);
  if (common_was.empty()) {
    o.note = fmt::format("not compared: the runs measured no size in common ({})", ranges);
    return o;
  }
  auto top = [](const std::map<double, double>& c) {
    double m = -INFINITY;
    for (const auto& [s, v] : c) m = std::max(m, v);
    return m;
  };
  o.compared = true;
  o.figures = std::pair{top(common_was), top(common_now)};
  o.note = fmt::format("the peak over the {} size{} both runs measured ({}); the reports' own peaks, {} -> {}, are over different sizes ({})",
                       common_was.size(), common_was.size() == 1 ? "" : "s", size_range_text(common_was), size_number(top(was)),
                       size_number(top(now)), ranges);
  return o;
}

}  // namespace perfgap::compare
