#include <gtest/gtest.h>

#include <cmath>

#include "fleet/stats.hpp"

namespace perfgap::fleet {
namespace {

TEST(FleetStats, MedianOddEvenEmpty) {
  EXPECT_EQ(median({3, 1, 2}), 2.0);
  EXPECT_EQ(median({4, 1, 3, 2}), 2.5);
  EXPECT_EQ(median({7}), 7.0);
  EXPECT_FALSE(median({}).has_value());
}

TEST(FleetStats, MadOfKnownSample) {
  // 1 1 2 2 4 6 9: median 2, deviations 1 1 0 0 2 4 7 -> MAD 1.
  std::vector<double> v{1, 1, 2, 2, 4, 6, 9};
  auto s = spread(v);
  ASSERT_TRUE(s);
  EXPECT_EQ(s->median, 2.0);
  EXPECT_EQ(s->mad, 1.0);
  EXPECT_NEAR(*modified_z(9, *s), 0.6745 * 7, 1e-12);
}

TEST(FleetStats, ModifiedZFlagsFarValueOnly) {
  OutlierRule rule;
  std::vector<double> v{10.0, 10.2, 9.8, 10.1, 9.9, 10.05, 9.95, 30.0};
  auto s = *spread(v);
  EXPECT_TRUE(is_outlier(30.0, s, rule));
  EXPECT_FALSE(is_outlier(10.2, s, rule));
  EXPECT_FALSE(is_outlier(9.8, s, rule));
}

TEST(FleetStats, MadZeroFallsBackToRelativeFloor) {
  OutlierRule rule;
  std::vector<double> v(20, 16.0);
  v.push_back(8.0);
  auto s = *spread(v);
  EXPECT_EQ(s.mad, 0.0);
  EXPECT_FALSE(modified_z(8.0, s).has_value());
  EXPECT_TRUE(is_outlier(8.0, s, rule));
  EXPECT_FALSE(is_outlier(16.0, s, rule));
  // Float noise below the 10% floor is not an outlier even though MAD is 0.
  EXPECT_FALSE(is_outlier(16.000001, s, rule));
  EXPECT_FALSE(is_outlier(17.5, s, rule));
  EXPECT_TRUE(is_outlier(18.0, s, rule));
}

TEST(FleetStats, MadZeroAtMedianZeroFlagsAnyOtherValue) {
  OutlierRule rule;
  Spread s{0.0, 0.0};
  EXPECT_TRUE(is_outlier(3.0, s, rule));
  EXPECT_FALSE(is_outlier(0.0, s, rule));
}

// Found on field reports: cpu.steal.steal_pct 0.006 against a median of 0 (MAD 0) was an
// outlier. A percentage must differ by more than one point, a share by more than 0.01,
// whatever the spread; a count keeps "any other value".
TEST(FleetStats, AbsoluteFloorByUnitOfTheMetric) {
  EXPECT_EQ(absolute_floor("steal_pct"), 1.0);
  EXPECT_EQ(absolute_floor("xmit_wait_share"), 0.01);
  EXPECT_EQ(absolute_floor("link_width"), 0.0);
  OutlierRule rule;
  Spread zero{0.0, 0.0};
  EXPECT_FALSE(is_outlier(0.006, zero, rule, absolute_floor("steal_pct")));
  EXPECT_FALSE(is_outlier(1.0, zero, rule, absolute_floor("steal_pct")));
  EXPECT_TRUE(is_outlier(1.5, zero, rule, absolute_floor("steal_pct")));
  EXPECT_FALSE(is_outlier(0.004, zero, rule, absolute_floor("xmit_wait_share")));
  EXPECT_TRUE(is_outlier(1.0, zero, rule, absolute_floor("uncorrected")));
  // With MAD > 0 too: a huge z over a negligible difference is no outlier.
  Spread tight{0.001, 0.0001};
  EXPECT_FALSE(is_outlier(0.02, tight, rule, absolute_floor("steal_pct")));
  EXPECT_TRUE(is_outlier(3.0, tight, rule, absolute_floor("steal_pct")));
}

TEST(FleetStats, SmallSpreadNeedsBothZAndFloor) {
  OutlierRule rule;
  // Large |z| but within 10% of the median: not an outlier.
  Spread s{100.0, 0.1};
  EXPECT_FALSE(is_outlier(105.0, s, rule));
  EXPECT_TRUE(is_outlier(120.0, s, rule));
}

}  // namespace
}  // namespace perfgap::fleet
