#include "fleet/stats.hpp"

#include <algorithm>
#include <cmath>

namespace perfgap::fleet {

std::optional<double> median(std::vector<double> v) {
  if (v.empty()) return std::nullopt;
  auto mid = v.begin() + static_cast<std::ptrdiff_t>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  double upper = *mid;
  if (v.size() % 2 == 1) return upper;
  double lower = *std::max_element(v.begin(), mid);
  return lower + (upper - lower) / 2;
}

std::optional<double> mad(const std::vector<double>& values, double center) {
  std::vector<double> dev;
  dev.reserve(values.size());
  for (double x : values) dev.push_back(std::fabs(x - center));
  return median(std::move(dev));
}

std::optional<Spread> spread(const std::vector<double>& values) {
  auto m = median(values);
  if (!m) return std::nullopt;
  return Spread{*m, *mad(values, *m)};
}

std::optional<double> modified_z(double x, const Spread& s) {
  if (!(s.mad > 0)) return std::nullopt;
  return 0.6745 * (x - s.median) / s.mad;
}

double absolute_floor(std::string_view metric) {
  for (std::string_view unit : {"_pct", "_percent"})
    if (metric.ends_with(unit)) return 1.0;
  for (std::string_view unit : {"_share", "_ratio", "_fraction"})
    if (metric.ends_with(unit)) return 0.01;
  return 0;
}

bool is_outlier(double x, const Spread& s, const OutlierRule& rule, double abs_floor) {
  double diff = std::fabs(x - s.median);
  double floor = std::max(rule.relative_floor * std::fabs(s.median), abs_floor);
  if (!(diff > floor)) return false;
  auto z = modified_z(x, s);
  return !z || std::fabs(*z) > rule.z_threshold;
}

}  // namespace perfgap::fleet
