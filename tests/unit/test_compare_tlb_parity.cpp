// compare.tlb_parity: two perf-stat reports' dTLB figures, the before one the reference.
#include <gtest/gtest.h>

#include "compare/tlb_parity.hpp"

using namespace perfgap;

namespace {
compare::ReportView with_dtlb(std::vector<std::pair<std::string, double>> metrics) {
  compare::ReportView v;
  v.kind = "analyze";
  compare::ReportFinding f;
  f.id = "perf_stat.dtlb";
  f.subject = "run.txt";
  f.metrics = std::move(metrics);
  v.findings.push_back(f);
  return v;
}
}  // namespace

TEST(CompareTlbParity, BackToParityOrByHowMuchNot) {
  auto bm = with_dtlb({{"dtlb_load_miss_pct", 0.22}, {"dtlb_mpki", 0.73}});
  auto before = compare::tlb_parity(bm, "bm.json", with_dtlb({{"dtlb_load_miss_pct", 0.61}}), "vm.json", {});
  ASSERT_TRUE(before);
  EXPECT_EQ(before->status, report::Status::fail);
  EXPECT_NE(before->title.find("2.77x, not at parity"), std::string::npos) << before->title;
  auto after = compare::tlb_parity(bm, "bm.json", with_dtlb({{"dtlb_load_miss_pct", 0.24}}), "vm.json", {});
  ASSERT_TRUE(after);
  EXPECT_EQ(after->status, report::Status::pass);
  EXPECT_NE(after->title.find("back to parity"), std::string::npos) << after->title;
  auto between = compare::tlb_parity(bm, "bm.json", with_dtlb({{"dtlb_load_miss_pct", 0.30}}), "vm.json", {});
  EXPECT_EQ(between->status, report::Status::warn);
  // Only misses per 1k instructions on one side: compared on that figure.
  auto mpki = compare::tlb_parity(bm, "bm.json", with_dtlb({{"dtlb_mpki", 0.75}}), "vm.json", {});
  ASSERT_TRUE(mpki);
  EXPECT_EQ(mpki->status, report::Status::pass);
  // Nothing to compare: no finding.
  EXPECT_FALSE(compare::tlb_parity(bm, "bm.json", compare::ReportView{}, "x.json", {}));
}
