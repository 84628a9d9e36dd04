// Robust statistics for fleet.outliers: median, MAD and the modified z-score of Iglewicz and
// Hoaglin (1993), M = 0.6745 (x - median) / MAD, with |M| > 3.5 the usual outlier cut.
#pragma once

#include <cstddef>
#include <optional>
#include <string_view>
#include <vector>

namespace perfgap::fleet {

// Median of the values (the mean of the middle two for an even count); nullopt when empty.
std::optional<double> median(std::vector<double> values);
// Median absolute deviation from `center`.
std::optional<double> mad(const std::vector<double>& values, double center);

struct OutlierRule {
  double z_threshold = 3.5;       // |modified z| above this is an outlier
  double relative_floor = 0.10;   // and it must differ from the median by > 10% of |median|
  std::size_t min_nodes = 5;      // fewer nodes carrying a metric: not judged
};

struct Spread {
  double median = 0;
  double mad = 0;
};
std::optional<Spread> spread(const std::vector<double>& values);

// The least difference from the median that counts, whatever the spread, for a metric of
// this name, from its unit: 1 (one percentage point) for a percentage ("..._pct",
// "..._percent"), 0.01 for a share or ratio ("..._share", "..._ratio", "..._fraction"); 0
// (any difference) otherwise, counts among them.
double absolute_floor(std::string_view metric);

// Whether `x` is an outlier of a fleet with this spread: further from the median than the
// floor (the larger of the relative floor times |median| and `absolute_floor`; when both are
// 0, any difference), and with MAD > 0 |M| above the threshold. MAD = 0 (more than half the
// nodes share one value, so M is undefined): the floor alone decides, so a steal of 0.006%
// against a median of 0 is no outlier.
bool is_outlier(double x, const Spread& s, const OutlierRule& rule, double absolute_floor = 0);
// M for x; nullopt when MAD is 0.
std::optional<double> modified_z(double x, const Spread& s);

}  // namespace perfgap::fleet
