// report_diff: what a golden or replay failure prints, finding by finding.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "report_json.hpp"

using perfgap::fixture::report_diff;

namespace {

nlohmann::json report_of(nlohmann::json findings) {
  return {{"schema", 1}, {"node", {{"kernel", "6.1"}}}, {"findings", std::move(findings)}};
}

}  // namespace

TEST(ReportDiff, EqualReportsGiveNothing) {
  auto r = report_of({{{"id", "a.b"}, {"status", "pass"}, {"title", "ok"}}});
  EXPECT_EQ(report_diff(r, r), "");
}

TEST(ReportDiff, NamesAddedRemovedAndChangedFindingsFieldByField) {
  auto was = report_of({{{"id", "cpu.steal"}, {"status", "pass"}, {"title", "steal 0%"}, {"metrics", {{"steal_pct", 0}}}},
                        {{"id", "numa.remote"}, {"subject", "pid:7"}, {"status", "fail"}, {"title", "18% remote"}},
                        {{"id", "gone.check"}, {"status", "skip"}, {"title", "no data"}}});
  auto now = report_of({{{"id", "cpu.steal"}, {"status", "fail"}, {"title", "steal 9%"}, {"metrics", {{"steal_pct", 9}}}},
                        {{"id", "numa.remote"}, {"subject", "pid:7"}, {"status", "fail"}, {"title", "18% remote"}},
                        {{"id", "new.check"}, {"subject", "gpu0"}, {"status", "warn"}, {"title", "new"}}});
  now["node"]["kernel"] = "6.8";
  const std::string d = report_diff(was, now);
  EXPECT_NE(d.find("+ new.check@gpu0 warn: new\n"), std::string::npos) << d;
  EXPECT_NE(d.find("- gone.check@ skip: no data\n"), std::string::npos) << d;
  EXPECT_NE(d.find("~ cpu.steal@\n  ~ metrics.steal_pct: 0 -> 9\n  ~ status: \"pass\" -> \"fail\"\n  ~ title: \"steal 0%\" -> \"steal 9%\"\n"),
            std::string::npos) << d;
  EXPECT_EQ(d.find("numa.remote"), std::string::npos) << "an unchanged finding is not listed:\n" << d;
  EXPECT_NE(d.find("report fields:\n  ~ node.kernel: \"6.1\" -> \"6.8\"\n"), std::string::npos) << d;
}

TEST(ReportDiff, RepeatedKeysAndReorderingAreTold) {
  auto a = report_of({{{"id", "x"}, {"status", "pass"}}, {{"id", "y"}, {"status", "pass"}}});
  auto b = report_of({{{"id", "y"}, {"status", "pass"}}, {{"id", "x"}, {"status", "pass"}}});
  EXPECT_EQ(report_diff(a, b), "~ findings: the same findings in another order\n");
  auto twice = report_of({{{"id", "x"}, {"status", "pass"}}, {{"id", "x"}, {"status", "warn"}}});
  auto once = report_of({{{"id", "x"}, {"status", "pass"}}});
  EXPECT_EQ(report_diff(once, twice), "+ x@#2 warn: \n");
}
