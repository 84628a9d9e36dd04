#include <gtest/gtest.h>

#include <optional>

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

// Without the hardware's core C-state counters (AMD, VMs: no CPU%c1, CPU%c6), the kernel's own
// idle-state residency says what it can: idle cores never entering a deep state fail; entering
// one is said and skipped. acpi_idle's C2/C3 are the deep states where no C6 is listed.
TEST(AnalyzersTurbostat, DeepIdleFromTheKernelsIdleStatesWithoutHardwareColumns) {
  auto deep = *parsers::parse_turbostat("CPU Busy% POLL% C1% C2% C3%\n0 1.0 0.1 0.3 5.5 93.0\n1 2.0 0.1 0.5 6.0 91.0\n2 80.0 0 1 1 1\n");
  auto f = analyzers::analyze_turbostat(deep, "t", {})[1];
  // Asked for is not reached (a BIOS may demote every request): said, not passed.
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("the kernel asks for deep idle states (C2%+C3% 97.8% of idle time"), std::string::npos) << f.title;
  auto metric = [&](const char* name) {
    for (const auto& [k, v] : f.metrics)
      if (k == name) return v;
    ADD_FAILURE() << "no metric " << name;
    return -1.0;
  };
  EXPECT_NEAR(metric("deep_pct"), 97.75, 0.01);
  EXPECT_EQ(metric("idle_cpus"), 2);
  auto held = *parsers::parse_turbostat("CPU Busy% POLL% C1% C2% C3%\n0 1.0 0.1 98.0 0.0 0.0\n");
  auto h = analyzers::analyze_turbostat(held, "t", {})[1];
  EXPECT_EQ(h.status, report::Status::fail) << h.title;
  EXPECT_NE(h.fix.find("/dev/cpu_dma_latency"), std::string::npos) << h.fix;
  // intel_idle's names: C3 is not deep where C6 is listed.
  auto intel = *parsers::parse_turbostat("CPU Busy% C1% C1E% C3% C6%\n0 1.0 30.0 30.0 39.0 0.0\n");
  auto i = analyzers::analyze_turbostat(intel, "t", {})[1];
  EXPECT_EQ(i.status, report::Status::fail) << i.title;  // C1+C1E 60%, C6 0%
  EXPECT_NE(i.title.find("C6% 0.00%"), std::string::npos) << i.title;
}

// Sibling threads end their rows before the core-level columns (CPU%c6 ...): they are idle
// CPUs all the same, and take their core's value from the core's first thread.
TEST(AnalyzersTurbostat, SiblingRowsWithoutCoreColumnsCount) {
  auto t = parsers::parse_turbostat(
      "Core\tCPU\tBusy%\tBzy_MHz\tCPU%c1\tCPU%c6\tCoreTmp\n"
      "0\t0\t99.0\t3000\t0.5\t0.00\t50\n"
      "0\t4\t0.5\t2900\t99.0\n"
      "1\t1\t0.3\t2900\t99.0\t0.20\t40\n"
      "1\t5\t0.3\t2900\t99.2\n"
      "2\t2\t0.3\t2900\t99.1\t0.30\t40\n"
      "2\t6\t0.3\t2900\t99.3\n"
      "3\t3\t0.3\t2900\t99.4\t0.10\t40\n"
      "3\t7\t0.3\t2900\t99.0\n");
  ASSERT_TRUE(t) << t.error().describe();
  EXPECT_TRUE(t->damaged.empty());
  EXPECT_EQ(t->cpu_rows[1].block, 1);
  auto f = analyzers::analyze_turbostat(*t, "t", {});
  ASSERT_EQ(f[1].id, "turbostat.deep_idle");
  EXPECT_EQ(f[1].status, report::Status::fail);
  double idle = -1, deep = -1;
  for (const auto& [k, v] : f[1].metrics) {
    if (k == "idle_cpus") idle = v;
    if (k == "deep_pct") deep = v;
  }
  EXPECT_EQ(idle, 7);  // CPUs 1-7, not only the 3 first threads that print CPU%c6
  // CPUs 1, 2, 3 and their siblings 5, 6, 7; CPU 4's core-mate (CPU 0) is busy: left out.
  EXPECT_NEAR(deep, (0.2 + 0.3 + 0.1) * 2 / 6, 1e-9);
  // Rows of a later interval take the value of their own interval.
  auto two = parsers::parse_turbostat(
      "Core CPU Busy% CPU%c1 CPU%c6\n0 0 1.0 5.0 90.0\n0 2 1.0 5.0\n"
      "Core CPU Busy% CPU%c1 CPU%c6\n0 0 1.0 95.0 0.0\n0 2 1.0 95.0\n");
  ASSERT_TRUE(two);
  auto g = analyzers::analyze_turbostat(*two, "t", {});
  for (const auto& [k, v] : g[1].metrics)
    if (k == "deep_pct") {
      EXPECT_DOUBLE_EQ(v, 45.0);
    }
}

// Idle cores never reaching C6: who holds them out follows what the kernel lists. No C6 state
// listed: the BIOS or a max_cstate cap hides it. C6 listed (count and % columns) and never
// entered: the OS never asks (PM QoS, the state disabled). Entered, yet no core residency: the
// hardware demotes it (BIOS limit).
TEST(AnalyzersTurbostat, DeepIdleFixFollowsWhatTheKernelLists) {
  auto fix = [](const char* text) {
    auto t = parsers::parse_turbostat(text);
    EXPECT_TRUE(t) << t.error().describe();
    auto f = analyzers::analyze_turbostat(*t, "t", {})[1];
    EXPECT_EQ(f.status, report::Status::fail) << f.title;
    return f.fix;
  };
  const auto hidden = fix("CPU Busy% C1 C1E C1% C1E% CPU%c1 CPU%c6\n0 0.1 2 90 1.0 98.0 99.0 0.00\n1 0.1 2 90 1.0 98.0 99.0 0.00\n");
  EXPECT_NE(hidden.find("BIOS"), std::string::npos) << hidden;
  const auto unused = fix("CPU Busy% C1 C1E C6 C1% C1E% C6% CPU%c1 CPU%c6\n0 0.1 2 90 0 1.0 98.0 0.00 99.0 0.00\n1 0.1 2 90 0 1.0 98.0 0.00 99.0 0.00\n");
  EXPECT_NE(unused.find("/dev/cpu_dma_latency"), std::string::npos) << unused;
  EXPECT_EQ(unused.find("BIOS"), std::string::npos) << unused;
  // "C6-SKX" prints as C6%; client parts list C7s, C8, C10: all deep.
  const auto client = fix("CPU Busy% C1 C7s C10 C1% C7s% C10% CPU%c1 CPU%c7\n0 0.1 2 0 0 99.0 0.00 0.00 99.0 0.00\n");
  EXPECT_NE(client.find("/dev/cpu_dma_latency"), std::string::npos) << client;
  const auto demoted = fix("CPU Busy% C1 C6 C1% C6% CPU%c1 CPU%c6\n0 0.1 2 90 1.0 98.0 99.0 0.00\n");
  EXPECT_NE(demoted.find("BIOS"), std::string::npos) << demoted;
}

// Both findings say how many rows were busy (Busy% >= 50): a capture with none was taken while
// nothing ran, and explain prices nothing from it; unknown (no metric) without a Busy% column.
TEST(AnalyzersTurbostat, BusyRowsAreSaidOnBothFindings) {
  auto metric = [](const report::Finding& f) -> std::optional<double> {
    for (const auto& [k, v] : f.metrics)
      if (k == "busy_rows") return v;
    return std::nullopt;
  };
  auto busy = analyzers::analyze_turbostat(*parsers::parse_turbostat(kBusy), "t", {});
  EXPECT_EQ(metric(busy[0]), 2.0);
  EXPECT_EQ(metric(busy[1]), 2.0);
  auto idle = analyzers::analyze_turbostat(
      *parsers::parse_turbostat("Core\tCPU\tBusy%\tBzy_MHz\tCPU%c1\tCPU%c6\n0\t0\t1.00\t1200\t99.00\t0.00\n1\t1\t2.00\t1200\t98.00\t0.00\n"), "t", {});
  EXPECT_EQ(idle[0].status, report::Status::skip);
  EXPECT_EQ(metric(idle[0]), 0.0) << "no busy cores: 0, not absent";
  EXPECT_EQ(idle[1].status, report::Status::fail);
  EXPECT_EQ(metric(idle[1]), 0.0);
  auto no_busy_column = parsers::parse_turbostat("CPU Bzy_MHz CPU%c1 CPU%c6\n0 1200 5.0 90.0\n");
  ASSERT_TRUE(no_busy_column) << no_busy_column.error().describe();
  for (const auto& f : analyzers::analyze_turbostat(*no_busy_column, "t", {})) EXPECT_FALSE(metric(f)) << f.id;
}
