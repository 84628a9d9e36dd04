#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "parsers/turbostat.hpp"

using namespace perfgap;

namespace {
const char* kBusy =
    "38 * 100.0 = 3800.0 MHz max turbo 4 active cores\n"
    "36 * 100.0 = 3600.0 MHz max turbo 8 active cores\n"
    "Core\tCPU\tAvg_MHz\tBusy%\tBzy_MHz\tTSC_MHz\tCPU%c1\tCPU%c6\n"
    "-\t-\t2000\t60.00\t3000\t2600\t30.00\t0.00\n"
    "0\t0\t2900\t99.00\t3000\t2600\t1.00\t0.00\n"
    "1\t1\t2900\t99.00\t3000\t2600\t1.00\t0.00\n"
    "2\t2\t10\t1.00\t1000\t2600\t99.00\t0.00\n";
}

TEST(ParsersTurbostat, ColumnsRowsAndTurboLines) {
  auto t = parsers::parse_turbostat(kBusy);
  ASSERT_TRUE(t) << t.error().describe();
  EXPECT_EQ(t->cpu_rows.size(), 3u);
  EXPECT_EQ(t->summary_rows.size(), 1u);
  EXPECT_EQ(t->max_turbo_mhz.at(4), 3800.0);
  EXPECT_EQ(*t->cpu_rows[0].get("Bzy_MHz"), 3000.0);
  EXPECT_EQ(t->cpu_rows[2].line, 7);
}

TEST(ParsersTurbostat, SpaceAlignedShortRowsAndRepeatedBlocks) {
  auto t = parsers::parse_turbostat(
      "turbostat: cpu3 jitter 26083 8533\n"
      "Core CPU Busy% Bzy_MHz PkgWatt\n- - 5.0 2000 50\n0 0 5.0 2000 50\n0 4 5.0 2000\n"
      "Core CPU Busy% Bzy_MHz PkgWatt\n- - 5.0 2000 50\n0 0 5.0 2000 50\n0 4 5.0 2000\n");
  ASSERT_TRUE(t);
  EXPECT_EQ(t->blocks, 2);
  EXPECT_EQ(t->cpu_rows.size(), 4u);
  EXPECT_TRUE(t->damaged.empty());
}

TEST(ParsersTurbostat, NotTurbostat) {
  EXPECT_FALSE(parsers::parse_turbostat(""));
  EXPECT_FALSE(parsers::parse_turbostat("    24.10%  python   [kernel.kallsyms]  [k] x\n"));
  EXPECT_FALSE(parsers::parse_turbostat("Core CPU Busy% Bzy_MHz\n"));  // header only
}

TEST(AnalyzersTurbostat, BusyMhzStatuses) {
  auto t = *parsers::parse_turbostat(kBusy);
  auto f = analyzers::analyze_turbostat(t, "t", {});
  // 2 busy CPUs -> "max turbo 4 active cores" = 3800; 3000 < 0.9 * 3800.
  EXPECT_EQ(f[0].status, report::Status::fail);
  f = analyzers::analyze_turbostat(t, "t", {3200.0});
  EXPECT_EQ(f[0].status, report::Status::pass);
  t.max_turbo_mhz.clear();
  f = analyzers::analyze_turbostat(t, "t", {});
  EXPECT_EQ(f[0].status, report::Status::skip);  // TSC_MHz is not a rated maximum
}

TEST(AnalyzersTurbostat, DeepIdleStatuses) {
  auto t = *parsers::parse_turbostat(kBusy);
  auto f = analyzers::analyze_turbostat(t, "t", {});
  EXPECT_EQ(f[1].id, "turbostat.deep_idle");
  EXPECT_EQ(f[1].status, report::Status::fail);  // idle CPU 2: c1 99%, c6 0%
  auto ok = *parsers::parse_turbostat("CPU Busy% CPU%c1 CPU%c6\n0 1.0 5.0 90.0\n");
  EXPECT_EQ(analyzers::analyze_turbostat(ok, "t", {})[1].status, report::Status::pass);
  auto none = *parsers::parse_turbostat("CPU Busy% C1%\n0 1.0 5.0\n");
  EXPECT_EQ(analyzers::analyze_turbostat(none, "t", {})[1].status, report::Status::skip);
}
