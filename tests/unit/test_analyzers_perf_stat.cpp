// analyze perf-stat's judgements: the TLB figures of the Grace VM case against bare metal
// (before and after CMDQV), the thresholds of the knowledge base, and what skips.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analyzers/analyzers.hpp"
#include "core/kb.hpp"
#include "files.hpp"

using namespace perfgap;
using perfgap::fixture::log_fixture;
using report::Status;

namespace {

parsers::PerfStat perf_stat_load(const std::string& rel) {
  std::ifstream in(log_fixture("perf-stat/" + rel), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  auto s = parsers::parse_perf_stat(ss.str());
  EXPECT_TRUE(s) << rel;
  return s ? *s : parsers::PerfStat{};
}

const report::Finding& perf_stat_by_id(const std::vector<report::Finding>& v, const std::string& id) {
  for (const auto& f : v)
    if (f.id == id) return f;
  static report::Finding none;
  ADD_FAILURE() << "no " << id;
  return none;
}

double perf_stat_metric(const report::Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name) return v;
  return -1;
}

}  // namespace

TEST(AnalyzersPerfStat, GraceVmAgainstBareMetalBeforeAndAfterCmdqv) {
  auto bm = perf_stat_load("grace-baremetal.txt");
  analyzers::PerfStatOptions o;
  o.reference = &bm;
  o.reference_source = "bm.txt";
  auto before = analyzers::analyze_perf_stat(perf_stat_load("grace-vm-before-cmdqv.txt"), "vm.txt", o);
  const auto& d = perf_stat_by_id(before, "perf_stat.dtlb");
  EXPECT_EQ(d.status, Status::fail) << d.title;
  EXPECT_NEAR(perf_stat_metric(d, "dtlb_load_miss_pct"), 0.6100, 1e-3);
  EXPECT_NEAR(perf_stat_metric(d, "reference_dtlb_load_miss_pct"), 0.2200, 1e-3);
  EXPECT_NEAR(perf_stat_metric(d, "times_reference"), 2.77, 0.01);
  EXPECT_NE(d.title.find("0.61%"), std::string::npos) << d.title;
  EXPECT_NE(d.title.find("0.22%"), std::string::npos) << d.title;
  EXPECT_FALSE(d.fix.empty());
  EXPECT_GT(perf_stat_metric(d, "dtlb_mpki"), 0);
  EXPECT_GT(perf_stat_metric(d, "dtlb_store_mpki"), 0);
  auto after = analyzers::analyze_perf_stat(perf_stat_load("grace-vm-after-cmdqv.txt"), "vm.txt", o);
  EXPECT_EQ(perf_stat_by_id(after, "perf_stat.dtlb").status, Status::pass) << perf_stat_by_id(after, "perf_stat.dtlb").title;
  EXPECT_NE(perf_stat_by_id(after, "perf_stat.dtlb").title.find("at parity"), std::string::npos);
  EXPECT_EQ(perf_stat_by_id(after, "perf_stat.itlb").status, Status::pass);
  // The same run in every format against the reference: the same figures.
  for (const char* f : {"grace-vm-before-cmdqv-fr.txt", "grace-vm-before-cmdqv-semicolon.csv", "grace-vm-before-cmdqv.json"})
    EXPECT_DOUBLE_EQ(perf_stat_metric(perf_stat_by_id(analyzers::analyze_perf_stat(perf_stat_load(f), "x", o), "perf_stat.dtlb"), "times_reference"), perf_stat_metric(d, "times_reference")) << f;
}

TEST(AnalyzersPerfStat, WarnBetweenTheKbRatiosAndSkipWithoutReference) {
  const auto& kb = core::builtin_kb();
  ASSERT_TRUE(kb.ratios.count("perf_stat.dtlb"));
  EXPECT_DOUBLE_EQ(kb.ratios.at("perf_stat.dtlb").pass_within, 1.2);
  EXPECT_DOUBLE_EQ(kb.ratios.at("perf_stat.dtlb").fail_beyond, 1.5);
  auto ref = *parsers::parse_perf_stat("1000000 dTLB-loads\n1000 dTLB-load-misses\n");
  auto run = *parsers::parse_perf_stat("1000000 dTLB-loads\n1300 dTLB-load-misses\n");
  analyzers::PerfStatOptions o;
  o.reference = &ref;
  o.reference_source = "ref";
  auto f = perf_stat_by_id(analyzers::analyze_perf_stat(run, "x", o), "perf_stat.dtlb");
  EXPECT_EQ(f.status, Status::warn) << f.title;
  o.dtlb = {1.4, 2.0};
  EXPECT_EQ(perf_stat_by_id(analyzers::analyze_perf_stat(run, "x", o), "perf_stat.dtlb").status, Status::pass);
  auto alone = perf_stat_by_id(analyzers::analyze_perf_stat(run, "x", {}), "perf_stat.dtlb");
  EXPECT_EQ(alone.status, Status::skip);
  EXPECT_NE(alone.title.find("0.13%"), std::string::npos) << alone.title;
  EXPECT_NE(alone.title.find("--reference"), std::string::npos) << alone.title;
  // Only instructions in the reference: misses per 1k instructions are compared when both have them.
  auto ref2 = *parsers::parse_perf_stat("1000000000 instructions\n1000 dTLB-load-misses\n");
  auto run2 = *parsers::parse_perf_stat("1000000000 instructions\n900 dTLB-load-misses\n1000 dTLB-loads\n");
  o.reference = &ref2;
  auto m = perf_stat_by_id(analyzers::analyze_perf_stat(run2, "x", o), "perf_stat.dtlb");
  EXPECT_EQ(m.status, Status::pass) << m.title;
  EXPECT_NE(m.title.find("per 1k instructions"), std::string::npos) << m.title;
  // A reference without any dTLB figure: skip naming what it lacks.
  auto ref3 = *parsers::parse_perf_stat("   <not supported>      dTLB-load-misses\n 12  page-faults\n");
  o.reference = &ref3;
  auto s = perf_stat_by_id(analyzers::analyze_perf_stat(run, "x", o), "perf_stat.dtlb");
  EXPECT_EQ(s.status, Status::skip);
  EXPECT_NE(s.title.find("<not supported>"), std::string::npos) << s.title;
}

TEST(AnalyzersPerfStat, EventsFindingNamesScalingAndUnsupported) {
  auto f = perf_stat_by_id(analyzers::analyze_perf_stat(perf_stat_load("guest-no-pmu.txt"), "g", {}), "perf_stat.events");
  EXPECT_EQ(f.status, Status::pass);
  EXPECT_NE(f.title.find("3 <not supported>"), std::string::npos) << f.title;
  auto g = perf_stat_by_id(analyzers::analyze_perf_stat(perf_stat_load("grace-baremetal.txt"), "b", {}), "perf_stat.events");
  EXPECT_NE(g.title.find("7 scaled (multiplexed)"), std::string::npos) << g.title;
}
