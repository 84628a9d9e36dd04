// perf stat output in its layouts (tools/perf/util/stat-display.c): the same counts read from
// text of several locales, CSV and JSON give the same figures; per-CPU, per-socket, interval and
// -r rows; unsupported events; damaged rows with their lines.
#include <gtest/gtest.h>

#include <fstream>
#include <sstream>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "parsers/perf_stat.hpp"

using namespace perfgap;
using perfgap::fixture::log_fixture;

namespace {

std::string perf_stat_slurp(const std::string& rel) {
  std::ifstream in(log_fixture("perf-stat/" + rel), std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

parsers::PerfStat perf_stat_parsed(const std::string& rel) {
  auto s = parsers::parse_perf_stat(perf_stat_slurp(rel));
  EXPECT_TRUE(s) << rel << ": " << (s ? "" : s.error().describe());
  return s ? *s : parsers::PerfStat{};
}

double perf_stat_value(const parsers::PerfStat& s, const char* name) {
  const auto* e = s.find(name);
  return e ? e->value : -1;
}

}  // namespace

TEST(ParsersPerfStat, TextCsvJsonAndLocalesGiveTheSameCounts) {
  const char* events[] = {"cycles", "instructions", "dTLB-loads", "dTLB-load-misses", "iTLB-loads", "iTLB-load-misses", "dTLB-store-misses"};
  auto en = perf_stat_parsed("grace-baremetal.txt");
  EXPECT_EQ(en.format, "text");
  EXPECT_EQ(perf_stat_value(en, "dTLB-loads"), 612004518775.0);
  EXPECT_EQ(perf_stat_value(en, "dTLB-load-misses"), 1346409941.0);
  EXPECT_DOUBLE_EQ(en.find("dTLB-loads")->min_running_pct, 71.44);
  for (const char* other : {"grace-baremetal-de.txt", "grace-baremetal.csv", "grace-baremetal.json", "grace-baremetal-per-cpu.txt",
                            "grace-baremetal-per-socket.txt", "grace-baremetal-interval.txt", "grace-baremetal-interval-per-socket.csv",
                            "grace-baremetal-interval-per-socket.json", "grace-baremetal-r5.txt", "grace-baremetal-r5.csv", "grace-baremetal-r5.json"}) {
    auto s = perf_stat_parsed(other);
    ASSERT_EQ(s.events.size(), 7u) << other;
    for (const char* e : events) EXPECT_EQ(perf_stat_value(s, e), perf_stat_value(en, e)) << other << " " << e;
    EXPECT_DOUBLE_EQ(s.find("dTLB-load-misses")->min_running_pct, 71.43) << other;
  }
  auto vm = perf_stat_parsed("grace-vm-before-cmdqv.txt");
  for (const char* other : {"grace-vm-before-cmdqv-fr.txt", "grace-vm-before-cmdqv-ch.txt", "grace-vm-before-cmdqv-semicolon.csv", "grace-vm-before-cmdqv.json"}) {
    auto s = perf_stat_parsed(other);
    for (const char* e : events) EXPECT_EQ(perf_stat_value(s, e), perf_stat_value(vm, e)) << other << " " << e;
  }
}

TEST(ParsersPerfStat, AggregationIntervalsAndRuns) {
  EXPECT_EQ(perf_stat_parsed("grace-baremetal-per-cpu.txt").aggregation, "cpu");
  EXPECT_EQ(perf_stat_parsed("grace-baremetal-per-socket.txt").aggregation, "socket");
  auto iv = perf_stat_parsed("grace-baremetal-interval.txt");
  EXPECT_TRUE(iv.intervals);
  EXPECT_EQ(iv.find("cycles")->counted, 3);
  auto ivs = perf_stat_parsed("grace-baremetal-interval-per-socket.json");
  EXPECT_TRUE(ivs.intervals);
  EXPECT_EQ(ivs.aggregation, "socket");
  auto r5 = perf_stat_parsed("grace-baremetal-r5.txt");
  EXPECT_EQ(r5.runs, 5);
  EXPECT_DOUBLE_EQ(*r5.find("dTLB-load-misses")->noise_pct, 2.87);
  EXPECT_DOUBLE_EQ(*perf_stat_parsed("grace-baremetal-r5.csv").find("dTLB-load-misses")->noise_pct, 2.87);
  EXPECT_DOUBLE_EQ(*perf_stat_parsed("grace-baremetal-r5.json").find("dTLB-load-misses")->noise_pct, 2.87);
}

TEST(ParsersPerfStat, GuestWithoutPmu) {
  // Captured in a VM without a PMU (perf 6.1): the hardware events are <not supported>.
  for (const char* f : {"guest-no-pmu.txt", "guest-no-pmu.csv", "guest-no-pmu.json"}) {
    auto s = perf_stat_parsed(f);
    ASSERT_NE(s.find("dTLB-loads"), nullptr) << f;
    EXPECT_EQ(s.find("dTLB-loads")->not_supported, 1) << f;
    EXPECT_EQ(s.find("dTLB-loads")->counted, 0) << f;
    EXPECT_EQ(s.find("task-clock")->unit, "msec") << f;
    EXPECT_GT(s.find("page-faults")->value, 0) << f;
    auto findings = analyzers::analyze_perf_stat(s, f, {});
    ASSERT_EQ(findings.size(), 3u);
    EXPECT_EQ(findings[1].id, "perf_stat.dtlb");
    EXPECT_EQ(findings[1].status, report::Status::skip);
    EXPECT_NE(findings[1].title.find("dTLB-load-misses <not supported>"), std::string::npos) << findings[1].title;
    EXPECT_NE(findings[1].title.find("vPMU"), std::string::npos) << findings[1].title;
  }
}

TEST(ParsersPerfStat, LocaleNumbersAndNames) {
  // Decimal comma and 2-decimal values with a unit; Indian grouping; hybrid PMU names.
  auto s = parsers::parse_perf_stat(
      "          1.234,56 msec task-clock                #    0,99 CPUs utilized\n"
      "       12,34,567      dTLB-loads:u\n"
      "           1,234      cpu_core/dTLB-load-misses/\n"
      "             766      cpu_atom/dTLB-load-misses/\n"
      "   <not counted>      iTLB-loads                                   (0,00%)\n");
  ASSERT_TRUE(s) << s.error().describe();
  EXPECT_DOUBLE_EQ(perf_stat_value(*s, "task-clock"), 1234.56);
  EXPECT_EQ(perf_stat_value(*s, "dTLB-loads"), 1234567.0);
  EXPECT_EQ(perf_stat_value(*s, "dTLB-load-misses"), 2000.0);
  EXPECT_EQ(s->find("iTLB-loads")->not_counted, 1);
  EXPECT_EQ(parsers::perf_stat_event_name("dTLB-loads [cpu_core]"), "dTLB-loads");
  EXPECT_EQ(parsers::perf_stat_event_name("sched:sched_switch"), "sched:sched_switch");
  EXPECT_EQ(parsers::perf_stat_event_name("cpu/event=0x08,umask=0x0e/"), "cpu/event=0x08,umask=0x0e/");
  // A German -x, CSV splits "%.2f" values in two: the parts are put back together.
  auto csv = parsers::parse_perf_stat("0,94,msec,task-clock,935955,100,00,0,017,CPUs utilized\n74,,page-faults,935955,100,00,79,064,K/sec\n");
  ASSERT_TRUE(csv);
  EXPECT_DOUBLE_EQ(perf_stat_value(*csv, "task-clock"), 0.94);
  EXPECT_EQ(perf_stat_value(*csv, "page-faults"), 74.0);
  // A German -j line is not JSON ("pcnt-running" : 100,00): read with its commas as points.
  auto js = parsers::parse_perf_stat(R"({"counter-value" : "74,000000", "unit" : "", "event" : "page-faults", "event-runtime" : 9, "pcnt-running" : 66,67, "metric-value" : 0,000000, "metric-unit" : ""})");
  ASSERT_TRUE(js) << js.error().describe();
  EXPECT_EQ(perf_stat_value(*js, "page-faults"), 74.0);
  EXPECT_DOUBLE_EQ(js->find("page-faults")->min_running_pct, 66.67);
}

TEST(ParsersPerfStat, DamagedRowsAndOtherInput) {
  auto s = parsers::parse_perf_stat("\n Performance counter stats for 'system wide':\n\n   1,234,567      dTLB-loads\n   12x4      dTLB-load-misses\n\n  1.0 seconds time elapsed\n");
  ASSERT_TRUE(s);
  ASSERT_EQ(s->damaged.size(), 1u);
  EXPECT_EQ(s->damaged[0].line, 5);
  auto j = parsers::parse_perf_stat("{\"counter-value\" : \"1\", \"event\" : \"x\"}\n{\"counter-value\" : \"2\", \"event\" \n");
  ASSERT_TRUE(j);
  ASSERT_EQ(j->damaged.size(), 1u);
  EXPECT_EQ(j->damaged[0].line, 2);
  // Nothing readable: the first damaged line is the error's.
  auto bad = parsers::parse_perf_stat("# started on Fri\n\n   12x4      dTLB-load-misses\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 3);
  EXPECT_FALSE(parsers::parse_perf_stat("Core CPU Busy% Bzy_MHz\n- - 5.0 2000\n"));
  EXPECT_FALSE(parsers::parse_perf_stat("      30.001234567 seconds time elapsed\n"));
  EXPECT_FALSE(parsers::parse_perf_stat(" 0.001 (+0.0001) ###\n"));
}

// Another tool's output with a few lines that read like counter rows is no perf stat output: a
// Kineto trace's template arguments ("4, true, cutlass::...") as CSV rows, a report's "2 ranks"
// as a text row.
TEST(ParsersPerfStat, OtherToolsOutputIsNotPerfStatOutput) {
  const std::string kineto = R"J({
  "schemaVersion": 1,
  "traceEvents": [
  {
    "ph": "X", "cat": "kernel",
    "name": "void cutlass::Kernel<cutlass_80_tensorop_s1688gemm_128x128_16x4_nn_align4, 4, true, cutlass::gemm::Tile>(Params)",
    "ts": 1700000000123.5, "dur": 12.5
  }
  ]
}
)J";
  auto k = parsers::parse_perf_stat(kineto);
  ASSERT_FALSE(k);
  EXPECT_NE(k.error().message.find("not perf stat output"), std::string::npos) << k.error().message;
  auto ras = parsers::parse_perf_stat("NCCL version 2.30.1+cuda12.9\n\nJob summary\n===========\n\n  Nodes  Processes\n     2 ranks\n  (total)  (per node)\n");
  ASSERT_FALSE(ras);
  EXPECT_NE(ras.error().message.find("not perf stat output"), std::string::npos) << ras.error().message;
  // perf report's old "samples pcnt function DSO" table: "909.00  0.6% _int_malloc" is no count
  // with a unit.
  EXPECT_FALSE(parsers::parse_perf_stat("perf report\n\n             samples  pcnt function                       DSO\n"
                                        "           120249.00 74.6% do_raw_spin_lock               [kernel.kallsyms]\n"
                                        "              909.00  0.6% _int_malloc                    /lib64/libc-2.15.so\n"
                                        "              822.00  0.5% sha1_block_data_order_avx      /opt/data/fc/server3\n"));
  // perf's own layouts keep reading: rows alone (-x, -I) and rows under the header.
  EXPECT_TRUE(parsers::parse_perf_stat("1000,,cycles,935955,100.00,,\n2000,,instructions,935955,100.00,2.00,insn per cycle\n"));
  EXPECT_TRUE(parsers::parse_perf_stat("\n Performance counter stats for 'python train.py':\n\nepoch 1 loss 0.3\nepoch 2 loss 0.2\nepoch 3\n   1,234,567      dTLB-loads\n\n  1.0 seconds time elapsed\n"));
}

