// What real logs showed (issue 11): each defect's fixture in tests/fixtures/logs/, run through
// the real binary. Every fixture reproduced its defect before the fix.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

using perfgap::fixture::json_report;
using perfgap::fixture::log_fixture;
using perfgap::fixture::required_finding;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

namespace {

std::string evidence_text(const nlohmann::json& f) {
  std::string s;
  for (const auto& e : f.value("evidence", nlohmann::json::array())) s += e.value("observed", "") + "\n";
  return s;
}

}  // namespace

// perf report --sort comm,sym: native_queued_spin_lock_slowpath on two rows (python 4%,
// pt_data_worker 3%). Only the last row used to count (3%: pass) and the name was listed twice.
TEST(AnalyzeFieldDefects, PerfRowsOfOneSymbolAreSummed) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", log_fixture("perf/comm-sym-spinlock.txt")}, 0);
  const auto& hot = required_finding(j, "perf.hot_kernel");
  EXPECT_EQ(hot["status"], "warn");
  auto title = hot["title"].get<std::string>();
  EXPECT_NE(title.find("native_queued_spin_lock_slowpath 7.00%"), std::string::npos) << title;
  EXPECT_EQ(title.find("native_queued_spin_lock_slowpath"), title.rfind("native_queued_spin_lock_slowpath")) << "named twice: " << title;
  EXPECT_DOUBLE_EQ(hot["metrics"]["pct.native_queued_spin_lock_slowpath"].get<double>(), 7.0);
  EXPECT_NE(evidence_text(hot).find("4.00% python, 3.00% pt_data_worker"), std::string::npos) << evidence_text(hot);
}

// A two-node job whose NCCL lines carry no host:pid:tid prefix: "Using network Socket" and
// "NET/IB : No device found" used to be ignored (only the version line was read): skip.
TEST(AnalyzeFieldDefects, NcclLogLinesWithoutPrefixAreRead) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log_fixture("nccl-log/bare-lines-socket-2nodes.txt")}, 0);
  const auto& net = required_finding(j, "nccl_log.net");
  EXPECT_EQ(net["status"], "warn");
  EXPECT_NE(net["title"].get<std::string>().find("NCCL uses TCP sockets; NCCL found no RDMA device"), std::string::npos) << net["title"];
  EXPECT_EQ(net["metrics"]["nodes"], 2);
}

// One node (nNodes 1): NCCL probed IB, found none and picked Socket, but nothing crosses the
// network. It used to fail as an RDMA fallback.
TEST(AnalyzeFieldDefects, NcclLogSingleNodeIsNoFallback) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log_fixture("nccl-log/single-node-ib-probe.txt")}, 0);
  const auto& net = required_finding(j, "nccl_log.net");
  EXPECT_EQ(net["status"], "skip");
  EXPECT_NE(net["title"].get<std::string>().find("single node (nNodes 1"), std::string::npos) << net["title"];
}

// Two different bare "NCCL version" lines in one job log: a mismatch. Only the first used to
// be kept (pass).
TEST(AnalyzeFieldDefects, NcclLogTwoBareVersionsAreAMismatch) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log_fixture("nccl-log/two-versions-bare.txt")}, 1);
  const auto& net = required_finding(j, "nccl_log.net");
  EXPECT_EQ(net["status"], "fail");
  auto title = net["title"].get<std::string>();
  EXPECT_NE(title.find("2.21.5"), std::string::npos) << title;
  EXPECT_NE(title.find("2.18.3"), std::string::npos) << title;
  EXPECT_FALSE(net["metrics"].contains("nccl_version"));  // no single version to report
}

// Old layout: `error` 1e-06 / 2e-06 on float sums (max absolute error, rounding) with
// "Out of bounds values : 0 OK", and without that line. Both used to be "wrong results".
TEST(AnalyzeFieldDefects, NcclTestsOldErrorColumnIsNotACount) {
  for (const char* f : {"nccl-tests/old-error-column-rounding.txt", "nccl-tests/old-error-column-no-oob.txt"}) {
    auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture(f)}, 0);
    const auto& bw = required_finding(j, "nccl_tests.busbw");
    EXPECT_EQ(bw["status"], "skip") << f << ": not wrong, and no basis to judge the bandwidth: " << bw["title"];
    EXPECT_EQ(bw["metrics"]["wrong"], 0) << f;
    EXPECT_NE(evidence_text(bw).find("max absolute error, not a count"), std::string::npos) << f << "\n" << evidence_text(bw);
  }
}

// Sibling threads print no CPU%c6 (a core-level column, on the core's first thread only):
// 7 idle CPUs, of which only the 3 first threads used to be counted.
TEST(AnalyzeFieldDefects, TurbostatSiblingRowsCount) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "turbostat", log_fixture("turbostat/siblings-without-core-columns.txt")}, 0);
  const auto& idle = required_finding(j, "turbostat.deep_idle");
  EXPECT_EQ(idle["status"], "pass");
  EXPECT_EQ(idle["metrics"]["idle_cpus"], 7);
  EXPECT_NE(evidence_text(idle).find("3 take their core's CPU%c6 from its first thread, 1 left out"), std::string::npos) << evidence_text(idle);
  EXPECT_EQ(required_finding(j, "turbostat.busy_mhz")["status"], "pass");  // 3281 MHz of the 3300 MHz max turbo
}

// Training logs in today's formats used to be refused (exit 2: no step times).
TEST(AnalyzeFieldDefects, StepsTodaysFormatsAreRead) {
  struct Case {
    const char* file;
    double median_ms;
    int records;
  };
  for (const auto& c : std::vector<Case>{{"steps/nemo2-train-step-timing.log", 12035, 5},
                                         {"steps/lightning-progress-bar.log", 12100, 4},
                                         {"steps/torchtitan.log", 1801.5, 4},  // no warm-up: step 10's 1800 ms is no slower than the rest
                                         {"steps/nanochat.log", 989.73, 5},
                                         {"steps/hf-trainer-dicts.log", 610.5, 5}}) {
    // Against 1000 ms: below 95% (fail, exit 1) when the median exceeds 1000 / 0.95 ms.
    auto j = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture(c.file), "--reference-ms", "1000"}, c.median_ms > 1000 / 0.95 ? 1 : 0);
    const auto& gap = required_finding(j, "steps.gap");
    EXPECT_NEAR(gap["metrics"]["median_ms"].get<double>(), c.median_ms, 0.01) << c.file;
    EXPECT_EQ(gap["metrics"]["records"], c.records) << c.file;
  }
}

// Throughput-only logs: percent of reference is measured / reference (higher is better), and
// the report says it compared throughput.
TEST(AnalyzeFieldDefects, StepsThroughputFlipsTheDirection) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log"), "--reference", log_fixture("steps/samples-per-sec-reference.log")}, 1);
  const auto& gap = required_finding(j, "steps.gap");
  EXPECT_EQ(gap["status"], "fail");
  EXPECT_NEAR(gap["metrics"]["percent_of_reference"].get<double>(), 100 * 9.845 / 11.02, 1e-6);
  EXPECT_NE(gap["title"].get<std::string>().find("throughput"), std::string::npos) << gap["title"];
  EXPECT_NE(evidence_text(gap).find("measured / reference throughput"), std::string::npos);
  // A time reference for a throughput log compares nothing, and says what would.
  auto t = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log"), "--reference-ms", "100"}, 0);
  EXPECT_EQ(required_finding(t, "steps.gap")["status"], "skip");
  EXPECT_NE(required_finding(t, "steps.gap")["title"].get<std::string>().find("give --reference the healthy run's throughput as Nsamples/s"),
            std::string::npos);
  // Field review 3: a throughput figure with its unit is a reference (it was opened as a file:
  // "cannot open"); another unit compares nothing; zero is a usage error.
  for (const std::string figure : {"11.02samples/s", "11.02 samples/s", "11.02samples/sec"}) {
    auto f = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log"), "--reference", figure}, 1);
    EXPECT_NEAR(required_finding(f, "steps.gap")["metrics"]["percent_of_reference"].get<double>(), 100 * 9.845 / 11.02, 1e-6) << figure;
  }
  auto none = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log")}, 0);
  EXPECT_NE(required_finding(none, "steps.gap")["title"].get<std::string>().find("--reference Nsamples/s or a step log of the same throughput"),
            std::string::npos);
  auto other_unit = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log"), "--reference", "3000tokens/s"}, 0);
  EXPECT_EQ(required_finding(other_unit, "steps.gap")["status"], "skip");
  auto zero = run_binary(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/samples-per-sec.log"), "--reference", "0samples/s"});
  EXPECT_EQ(zero.status, 2);
  EXPECT_NE(zero.err.find("a throughput must be positive"), std::string::npos) << zero.err;
  // gap: throughput on both sides works; a time on one side is a usage error naming both.
  auto g = json_report(PERFGAP_BINARY, {"gap", "--reference", log_fixture("steps/samples-per-sec-reference.log"), "--measured", log_fixture("steps/samples-per-sec.log")}, 1);
  EXPECT_NEAR(required_finding(g, "steps.gap")["metrics"]["percent_of_reference"].get<double>(), 100 * 9.845 / 11.02, 1e-6);
  auto bad = run_binary(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", log_fixture("steps/samples-per-sec.log")});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("throughput (samples/s)"), std::string::npos) << bad.err;
  EXPECT_EQ(std::count(bad.err.begin(), bad.err.end(), '\n'), 1);
  // gap with the new time formats.
  auto n = json_report(PERFGAP_BINARY, {"gap", "--reference", "12000", "--measured", log_fixture("steps/nemo2-train-step-timing.log")}, 0);  // 99.7%
  EXPECT_NEAR(required_finding(n, "steps.gap")["metrics"]["median_ms"].get<double>(), 12035, 1e-6);
}

// Megatron's skipped iterations (loss-scale overflow, no optimizer step) are left out once
// real steps follow.
TEST(AnalyzeFieldDefects, StepsSkippedIterationsLeftOut) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/megatron-skipped-iterations.log")}, 0);
  const auto& gap = required_finding(j, "steps.gap");
  EXPECT_EQ(gap["metrics"]["skipped_iterations"], 2);
  EXPECT_NEAR(gap["metrics"]["median_ms"].get<double>(), 2611.5, 1e-9);
}

// A step log whose last line was cut while written (no newline, the value cut to "24" and the
// skipped-iterations field gone) made that line the only real step: PASS at 1,000,000%. The
// cut record is an error naming FILE:LINE; the rest of the file is read.
TEST(AnalyzeFieldDefects, StepsLastLineCutShortIsNotAStep) {
  const auto cut = log_fixture("steps/megatron-last-line-cut.log");
  auto j = json_report(PERFGAP_BINARY, {"gap", "--reference", "240000", "--measured", cut}, 0);
  const auto& gap = required_finding(j, "steps.gap");
  EXPECT_EQ(gap["status"], "pass") << gap.dump(2);
  EXPECT_NEAR(gap["metrics"]["median_ms"].get<double>(), 243344.4, 1e-6);
  EXPECT_EQ(gap["metrics"]["skipped_iterations"], 2);
  bool named = false;
  for (const auto& f : j["findings"])
    if (f["status"] == "error")
      for (const auto& e : f["evidence"])
        named = named || (e["source"].get<std::string>() == cut + ":5" && e["observed"].get<std::string>().starts_with("cut short: "));
  EXPECT_TRUE(named) << j.dump(2);
  json_report(PERFGAP_BINARY, {"analyze", "steps", cut, "--reference", "240000"}, 1);
  // The same log whole but for its final newline: five records, nothing damaged.
  auto w = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/megatron-no-final-newline.log"), "--reference", "240000"}, 0);
  for (const auto& f : w["findings"]) EXPECT_NE(f["status"], "error") << f.dump(2);
  EXPECT_NEAR(required_finding(w, "steps.gap")["metrics"]["median_ms"].get<double>(), (243344.4 + 243301.2) / 2, 1e-6);
}

// An nccl-tests run that stopped early (its header asked for 8 GiB, its rows end at 128 MiB,
// no '# Avg bus bandwidth') passed against a whole reference at the sizes it reached, and
// failed against the NICs at a peak of small sizes. Said, never a pass, the reference's sizes
// it never reached named; a half row at its end is an error naming its line.
TEST(AnalyzeFieldDefects, NcclTestsRunThatStoppedEarlyNeverPasses) {
  const auto whole = log_fixture("nccl-tests/allreduce-2node-8g.txt");
  const auto cut = log_fixture("nccl-tests/allreduce-2node-stopped-at-128m.txt");
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", cut, "--reference", whole}, 0);
  const auto& f = required_finding(j, "nccl_tests.busbw");
  EXPECT_EQ(f["status"], "warn") << f.dump(2);
  const auto title = f["title"].get<std::string>();
  EXPECT_NE(title.find("the run ended at 128 MiB of the 8 GiB its header asked for, no '# Avg bus bandwidth' line: it stopped early or the capture is cut"),
            std::string::npos)
      << title;
  EXPECT_NE(title.find("256 MiB to 8 GiB (6 sizes) never compared"), std::string::npos) << title;
  bool unreached = false;
  for (const auto& e : f["evidence"])
    unreached = unreached || e["observed"].get<std::string>().find("never reached, not compared: 256 MiB, 512 MiB, 1 GiB, 2 GiB, 4 GiB, 8 GiB") != std::string::npos;
  EXPECT_TRUE(unreached) << f.dump(2);
  // Against the NICs: no fail that sends the user to them on a peak of the sizes reached.
  auto n = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", cut, "--nics", "8", "--link-gbps", "400"}, 0);
  EXPECT_EQ(required_finding(n, "nccl_tests.busbw")["status"], "warn");
  // The whole run passes against itself.
  json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", whole, "--reference", whole}, 0);
  // A half row at the end (no in-place figures, no newline): an error at its line, not used.
  const auto half = log_fixture("nccl-tests/allreduce-2node-half-row.txt");
  auto h = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", half, "--reference", whole}, 1);
  bool named = false;
  for (const auto& g : h["findings"])
    if (g["status"] == "error")
      for (const auto& e : g["evidence"]) named = named || e["source"].get<std::string>() == half + ":30";
  EXPECT_TRUE(named) << h.dump(2);
  const auto& hb = required_finding(h, "nccl_tests.busbw");
  EXPECT_EQ(hb["status"], "warn");
  EXPECT_NE(hb["title"].get<std::string>().find("ended at 32 MiB"), std::string::npos) << hb["title"];
  EXPECT_FALSE(hb["metrics"].contains("busbw_gbps.67108864"));
}

// Review 9: nccl-tests run as separate processes without MPI (nccl-tests#182) is exit 2, one line
// naming the file, the line and the rebuild, and no report written; --nodes gives the node count a
// paste does not show, and with --nics/--link-gbps the run is judged across nodes.
TEST(AnalyzeDefects, NcclTestsInterleavedRunsAndNodesGiven) {
  TempDir d;
  auto row = [](unsigned long size, double busbw, double factor) {
    char line[160];
    std::snprintf(line, sizeof line, "%12lu %13lu     float     sum      -1    40.00 %7.2f %7.2f       0    40.00 %7.2f %7.2f       0\n", size, size / 4,
                  busbw / factor, busbw, busbw / factor, busbw);
    return std::string(line);
  };
  std::string mixed, rows, two_ranks;
  for (unsigned long s : {1048576ul, 2097152ul, 1048576ul, 4194304ul, 2097152ul}) mixed += row(s, 10.0, 1.875);
  for (unsigned long s : {1048576ul, 2097152ul, 4194304ul}) rows += row(s, 35.0, 1.875), two_ranks += row(s, 35.0, 1.0);
  const auto bad = write_in(d, "two-runs.txt", mixed), good = write_in(d, "rows.txt", rows);
  const auto out = d.file("report.json");
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", bad, "--format", "json", "--output", out});
  EXPECT_EQ(r.status, 2) << r.out << r.err;
  EXPECT_NE(r.err.find(bad + ": line 5: separate nccl-tests runs interleaved"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("make MPI=1"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_FALSE(std::filesystem::exists(out));
  // No node count shown: --nodes gives it, and the NICs' rate is the basis (35 GB/s of 50: warn).
  auto none = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", good, "--nics", "1", "--link-gbps", "400"}, 0);
  EXPECT_EQ(required_finding(none, "nccl_tests.busbw")["status"], "skip");
  auto given = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", good, "--nodes", "2", "--nics", "1", "--link-gbps", "400"}, 0);
  const auto& g = required_finding(given, "nccl_tests.busbw");
  EXPECT_EQ(g["status"], "warn") << g.dump(2);
  EXPECT_NE(g["title"].get<std::string>().find("16 ranks (by busbw/algbw), 2 nodes (by --nodes)"), std::string::npos) << g["title"];
  // --nodes where the output shows its nodes: the output's count wins, and the finding says so.
  const auto shown = write_in(d, "shown.txt", "#  Rank  0 Group  0 Pid 1 on n01 device  0 [0x01] H100\n#  Rank  1 Group  0 Pid 2 on n01 device  1 [0x01] H100\n" + two_ranks);
  auto w = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", shown, "--nodes", "3"}, 0);
  EXPECT_NE(evidence_text(required_finding(w, "nccl_tests.busbw")).find("--nodes 3: the output shows 1 node: not used"), std::string::npos) << w.dump(2);
  // --nodes is nccl-tests' alone.
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "turbostat", good, "--nodes", "2"}).status, 2);
}
