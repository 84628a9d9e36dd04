// Robust statistics for fleet.outliers: median, MAD and the modified z-score of Iglewicz and
// Hoaglin (1993), M = 0.6745 (x - median) / MAD, with |M| > 3.5 the usual outlier cut.
#pragma once

#include <cstddef>
#include <optional>
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

// Whether `x` is an outlier of a fleet with this spread. With MAD > 0: |M| above the
// threshold and a difference above the relative floor. MAD = 0 (more than half the nodes
// share one value, so M is undefined): any value further from the median than the relative
// floor, or any other value at all when the median is 0.
bool is_outlier(double x, const Spread& s, const OutlierRule& rule);
// M for x; nullopt when MAD is 0.
std::optional<double> modified_z(double x, const Spread& s);

}  // namespace perfgap::fleet
