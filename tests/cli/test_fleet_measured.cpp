// perfgap fleet over measurements (fleet.pace): reports of `analyze nccl-tests` and `analyze
// steps` written by the real binary from nccl-tests and Megatron logs of eight nodes, two of
// them slower; the nodes' check reports (generated) say which setting those two share. A log
// whose node is unknown, a fleet report and a broken file among the inputs are named, not fatal.
#include <gtest/gtest.h>

#include <cstdio>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "fleet_gen.hpp"
#include "run.hpp"

namespace {

using nlohmann::json;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_file;

template <class... A>
std::string measured_printf(const char* format, A... args) {
  char buf[512];
  std::snprintf(buf, sizeof buf, format, args...);
  return buf;
}

// An 8-GPU single-node all_reduce_perf run on `host`, in nccl-tests' text format, peaking at `busbw`
// (`all_gather`: an all_gather_perf run, no reduction, busbw = algbw x 7/8); `ranks` GPUs of `gpu`.
std::string measured_nccl_tests_log(const std::string& host, double busbw, bool rank_lines = true, bool all_gather = false, int ranks = 8,
                                    const std::string& gpu = "NVIDIA H100 80GB HBM3") {
  std::string s = "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 1073741824 step: 4(factor) warmup iters: 5 iters: 20 agg iters: 1 "
                  "validation: 1 graph: 0\n#\n# Using devices\n";
  if (rank_lines)
    for (int r = 0; r < ranks; ++r)
      s += measured_printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] %s\n", r, 51000 + r, host.c_str(), r, 0x18 + r, gpu.c_str());
  s += "#\n#                                                              out-of-place                       in-place          \n"
       "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
       "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n";
  double avg = 0;
  int n = 0;
  for (std::uint64_t size = 1u << 20; size <= (1u << 30); size *= 4) {
    // Bandwidth grows with size up to the peak at 1 GiB.
    // One rank moves nothing between GPUs: nccl-tests prints busbw 0 (algbw x 0).
    const double bw = ranks == 1 ? 0 : busbw * (size == (1u << 30) ? 1.0 : 0.3 + 0.7 * static_cast<double>(size) / (1u << 30));
    const double k = ranks;
    const double algbw = ranks == 1 ? 100 : all_gather ? bw * k / (k - 1) : bw * k / (2 * (k - 1));
    const double time = static_cast<double>(size) / algbw / 1e3;
    s += measured_printf("%12llu %13llu     float  %6s      -1 %8.1f %7.2f %7.2f      0 %8.1f %7.2f %7.2f      0\n",
                         static_cast<unsigned long long>(size), static_cast<unsigned long long>(size / 4), all_gather ? "none" : "sum", time,
                         algbw, bw, time, algbw, bw);
    avg += 2 * bw;
    n += 2;
  }
  s += measured_printf("# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.3f \n#\n", avg / n);
  return s;
}

// A Megatron-LM log of 40 iterations at about `ms` per iteration, of global batch size `batch`.
std::string measured_megatron_log(double ms, int batch = 512) {
  std::string s;
  for (int i = 1; i <= 40; ++i)
    s += measured_printf(
        " iteration %8d/    1000 | consumed samples: %12d | elapsed time per iteration (ms): %.1f | learning rate: 1.000E-05 | "
        "global batch size: %5d | lm loss: 7.0E+00 | loss scale: 65536.0 | number of skipped iterations:   0 | number of nan "
        "iterations:   0 |\n",
        i, batch * i, ms + (i % 3) * 2.0, batch);
  return s;
}

std::vector<json> measured_findings(const json& report, const std::string& id, const std::string& subject = "") {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["id"] == id && (subject.empty() || f["subject"] == subject)) out.push_back(f);
  return out;
}

class FleetMeasured : public ::testing::Test {
 protected:
  void SetUp() override {
    for (int i = 1; i <= 8; ++i) {
      const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
      const bool slow = i == 3 || i == 7;
      // The logs as the nodes wrote them; the reports by the real binary.
      write_file(dir.path() + "/logs/" + node + ".nccl-tests.txt", measured_nccl_tests_log(node, slow ? 120.0 : 180.0 + i));
      write_file(dir.path() + "/logs/" + node + ".log", measured_megatron_log(slow ? 1450.0 : 1000.0 + 3 * i));
      analyze("nccl-tests", dir.path() + "/logs/" + node + ".nccl-tests.txt", dir.path() + "/in/" + node + ".nccl-tests.json");
      analyze("steps", dir.path() + "/logs/" + node + ".log", dir.path() + "/in/" + node + ".steps.json");
      // Their check reports: the two slow nodes are the two without NCCL_IB_QPS_PER_CONNECTION.
      perfgap::fleetgen::NodeSpec spec;
      spec.name = node;
      spec.seed = static_cast<std::uint64_t>(i);
      if (slow) spec.environment["NCCL_IB_QPS_PER_CONNECTION"] = "";
      write_file(dir.path() + "/in/" + node + ".json", perfgap::fleetgen::report_json(spec));
    }
  }
  void analyze(const std::string& kind, const std::string& log, const std::string& out) {
    std::filesystem::create_directories(std::filesystem::path(out).parent_path());
    auto r = run_binary(PERFGAP_BINARY, {"analyze", kind, log, "--format", "json", "--output", out});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << kind << " " << log << ": " << r.err;
  }
  TempDir dir;
};

TEST_F(FleetMeasured, NamesTheSlowNodesByTheLogsHostAndTheSettingTheyShare) {
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rep = json::parse(r.out);
  auto busbw = measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps");
  ASSERT_EQ(busbw.size(), 1u) << r.out;
  EXPECT_EQ(busbw[0]["status"], "warn");
  EXPECT_EQ(busbw[0]["metrics"]["outliers"], 2);
  EXPECT_EQ(busbw[0]["metrics"]["nodes"], 8);
  EXPECT_EQ(busbw[0]["metrics"]["pace"], 120);
  const std::string title = busbw[0]["title"];
  EXPECT_NE(title.find("gpu[0003,0007]"), std::string::npos) << title;
  EXPECT_NE(title.find("NCCL_IB_QPS_PER_CONNECTION unset"), std::string::npos) << title;
  // The node is the host the log's Rank lines show.
  EXPECT_TRUE(busbw[0]["metrics"].contains("node.gpu0003")) << busbw[0];
  // The collective its runs measured (each report's, told by busbw/algbw): explain prices that
  // collective's exposure only with the pace's ratio.
  bool collective = false;
  for (const auto& e : busbw[0]["evidence"]) collective = collective || (e["source"] == "collective measured" && e["observed"] == "AllReduce");
  EXPECT_TRUE(collective) << busbw[0];

  auto steps = measured_findings(rep, "fleet.pace", "steps.gap.median_ms");
  ASSERT_EQ(steps.size(), 1u) << r.out;
  EXPECT_EQ(steps[0]["status"], "warn");
  EXPECT_EQ(steps[0]["metrics"]["outliers"], 2);
  EXPECT_GT(steps[0]["metrics"]["pace"].get<double>(), 1449);
  EXPECT_GT(steps[0]["metrics"]["pace_cost_pct"].get<double>(), 38);  // 1452 ms against a median of about 1018
  EXPECT_LT(steps[0]["metrics"]["pace_cost_pct"].get<double>(), 47);
  EXPECT_TRUE(measured_findings(rep, "fleet.unreadable").empty()) << r.out;

  // The text view says who sets the pace.
  auto text = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("sets the pace"), std::string::npos) << text.out;
  // Its headline counts the node reports and the measurements apart.
  EXPECT_EQ(text.out.rfind("perfgap fleet: WARN  8 nodes from 8 reports, 16 measurement reports\n", 0), 0u) << text.out;
}

// Every node also ran all_gather_perf, which peaks lower than all_reduce_perf on the same node
// (~95 against ~180 GB/s here) and is no slower on gpu0003 and gpu0007. Busbw of two collectives
// are not one scale: each collective's runs are their own pace, named in its subject. (One pace
// over both took each node's median of its two runs, and so its figures were of neither.)
TEST_F(FleetMeasured, EachCollectivesRunsAreTheirOwnPace) {
  for (int i = 1; i <= 8; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    write_file(dir.path() + "/logs/" + node + ".all_gather_perf.txt", measured_nccl_tests_log(node, 95.0 + i, true, true));
    analyze("nccl-tests", dir.path() + "/logs/" + node + ".all_gather_perf.txt", dir.path() + "/in/" + node + ".all_gather.json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rep = json::parse(r.out);
  auto all_reduce = measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps (AllReduce)");
  ASSERT_EQ(all_reduce.size(), 1u) << r.out;
  EXPECT_EQ(all_reduce[0]["status"], "warn");
  EXPECT_EQ(all_reduce[0]["metrics"]["pace"], 120);
  EXPECT_EQ(all_reduce[0]["metrics"]["outliers"], 2);
  EXPECT_NE(all_reduce[0]["title"].get<std::string>().find("peak AllReduce busbw (gpu[0003,0007])"), std::string::npos) << all_reduce[0]["title"];
  auto all_gather = measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps (AllGather)");
  ASSERT_EQ(all_gather.size(), 1u) << r.out;
  EXPECT_EQ(all_gather[0]["status"], "pass") << all_gather[0]["title"];
  EXPECT_EQ(all_gather[0]["metrics"]["nodes"], 8);
  EXPECT_EQ(all_gather[0]["metrics"]["outliers"], 0);
  for (const auto* f : {&all_reduce[0], &all_gather[0]}) {
    std::string coll;
    for (const auto& e : (*f)["evidence"])
      if (e["source"] == "collective measured") coll = e["observed"];
    EXPECT_EQ((*f)["subject"].get<std::string>().find("(" + coll + ")") != std::string::npos, true) << (*f)["subject"] << " " << coll;
  }
}

// Six nodes log samples/s (FSDP's "samples/sec"), two tokens/s (~12,000, a figure of another
// scale, not a faster node). Each unit's runs are their own pace: one pace over both named the
// six samples/s nodes "99.9% below" the median, a verdict of the units, not of the nodes.
TEST_F(FleetMeasured, ThroughputsOfDifferentUnitsAreTheirOwnPace) {
  TempDir units;
  for (int i = 1; i <= 8; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    const bool tokens = i > 6;
    std::string log;
    for (int step = 1; step <= 20; ++step)
      log += tokens ? measured_printf("step %d tokens/s: %d\n", step, 12000 + 10 * i + step % 3)
                    : measured_printf("[rank0] step %d %.2f samples/sec\n", step, 10.0 + 0.05 * i + 0.01 * (step % 3));
    write_file(units.path() + "/logs/" + node + ".log", log);
    analyze("steps", units.path() + "/logs/" + node + ".log", units.path() + "/in/" + node + ".steps.json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", units.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rep = json::parse(r.out);
  auto samples = measured_findings(rep, "fleet.pace", "steps.gap.median_throughput (samples/s)");
  auto tokens = measured_findings(rep, "fleet.pace", "steps.gap.median_throughput (tokens/s)");
  ASSERT_EQ(samples.size(), 1u) << r.out;
  ASSERT_EQ(tokens.size(), 1u) << r.out;
  EXPECT_TRUE(measured_findings(rep, "fleet.pace", "steps.gap.median_throughput").empty()) << r.out;
  EXPECT_EQ(samples[0]["status"], "pass") << samples[0]["title"];
  EXPECT_EQ(samples[0]["metrics"]["nodes"], 6);
  EXPECT_LT(samples[0]["metrics"]["pace_cost_pct"].get<double>(), 3);
  EXPECT_NE(samples[0]["title"].get<std::string>().find("samples/s against the fleet's median"), std::string::npos) << samples[0]["title"];
  EXPECT_EQ(tokens[0]["status"], "skip") << "two nodes are too few to judge";
  EXPECT_EQ(tokens[0]["metrics"]["nodes"], 2);
  std::string said;
  for (const auto& e : samples[0]["evidence"])
    if (e["source"] == "throughput units") said = e["observed"];
  EXPECT_NE(said.find("samples/s in "), std::string::npos) << samples[0];
  EXPECT_NE(said.find("tokens/s in "), std::string::npos) << samples[0];
  EXPECT_NE(said.find("this pace is of the samples/s runs alone"), std::string::npos) << said;
}

// Two more nodes ran nccl-tests on 4 RTX 4090s (~20 GB/s over PCIe), one more on a single GPU
// (busbw 0 by definition). An RTX's peak is not an H100's: each shape of run (ranks, nodes, GPU,
// sizes) is its own pace, so the H100 pace still names the two slow H100 nodes, and the RTX nodes
// are not its outliers (one pace over all named them, 89% below). The 1-rank run sets no pace.
TEST_F(FleetMeasured, RunsOfAnotherShapeAreTheirOwnPaceAndOneRankSetsNone) {
  for (int i = 9; i <= 11; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    write_file(dir.path() + "/logs/" + node + ".nccl-tests.txt",
               measured_nccl_tests_log(node, 20.0 + i, true, false, i == 11 ? 1 : 4, "NVIDIA GeForce RTX 4090"));
    analyze("nccl-tests", dir.path() + "/logs/" + node + ".nccl-tests.txt", dir.path() + "/in/" + node + ".nccl-tests.json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;  // a warn; the 1-rank report is named (fleet.unreadable)
  auto rep = json::parse(r.out);
  auto h100 = measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps [8 ranks on 1 node, NVIDIA H100 80GB HBM3, to 1 GiB]");
  auto rtx = measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps [4 ranks on 1 node, NVIDIA GeForce RTX 4090, to 1 GiB]");
  ASSERT_EQ(h100.size(), 1u) << r.out;
  ASSERT_EQ(rtx.size(), 1u) << r.out;
  EXPECT_EQ(h100[0]["status"], "warn");
  EXPECT_EQ(h100[0]["metrics"]["nodes"], 8);
  EXPECT_EQ(h100[0]["metrics"]["outliers"], 2);
  EXPECT_NE(h100[0]["title"].get<std::string>().find("gpu[0003,0007]"), std::string::npos) << h100[0]["title"];
  EXPECT_EQ(rtx[0]["status"], "skip") << rtx[0]["title"];
  EXPECT_EQ(rtx[0]["metrics"]["nodes"], 2);
  std::string shapes;
  for (const auto& e : h100[0]["evidence"])
    if (e["source"] == "run shapes") shapes = e["observed"];
  EXPECT_NE(shapes.find("this pace is of the runs of 8 ranks on 1 node, NVIDIA H100 80GB HBM3, to 1 GiB alone"), std::string::npos) << shapes;
  const std::string one_rank = dir.path() + "/in/" + perfgap::fleetgen::node_name(11) + ".nccl-tests.json";
  auto bad = measured_findings(rep, "fleet.unreadable", one_rank);
  ASSERT_EQ(bad.size(), 1u) << r.out;
  EXPECT_NE(bad[0]["title"].get<std::string>().find("a 1-rank nccl-tests run"), std::string::npos) << bad[0]["title"];
  EXPECT_NE(bad[0]["fix"].get<std::string>().find("over the node's GPUs"), std::string::npos) << bad[0]["fix"];
  for (const auto& f : measured_findings(rep, "fleet.pace"))
    EXPECT_FALSE(f["metrics"].contains("node." + perfgap::fleetgen::node_name(11))) << f;
  // The headline counts every measurement read, the unusable one said apart.
  auto text = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in"});
  EXPECT_EQ(text.out.rfind("perfgap fleet: ERROR  8 nodes from 8 reports, 19 measurement reports (1 unusable)\n", 0), 0u) << text.out;
}

// Field review 5: step logs of another job (global batch size 64, three nodes at ~3 s per step)
// beside the eight nodes' batch-512 logs were one pace with them, the three named slowest. Each
// batch size is a pace of its own: the batch-512 nodes' outliers are still gpu0003 and gpu0007.
TEST_F(FleetMeasured, StepLogsOfAnotherBatchSizeAreTheirOwnPace) {
  for (int i = 9; i <= 11; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    write_file(dir.path() + "/logs/" + node + ".log", measured_megatron_log(3000.0 + 10 * i, 64));
    analyze("steps", dir.path() + "/logs/" + node + ".log", dir.path() + "/in/" + node + ".steps.json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err << r.out;
  auto rep = json::parse(r.out);
  auto big = measured_findings(rep, "fleet.pace", "steps.gap.median_ms [global batch size 512]");
  auto small = measured_findings(rep, "fleet.pace", "steps.gap.median_ms [global batch size 64]");
  ASSERT_EQ(big.size(), 1u) << r.out;
  ASSERT_EQ(small.size(), 1u) << r.out;
  EXPECT_EQ(big[0]["status"], "warn");
  EXPECT_EQ(big[0]["metrics"]["nodes"], 8);
  EXPECT_EQ(big[0]["metrics"]["outliers"], 2);
  EXPECT_NE(big[0]["title"].get<std::string>().find("gpu[0003,0007]"), std::string::npos) << big[0]["title"];
  EXPECT_EQ(small[0]["status"], "skip") << small[0]["title"];
  EXPECT_EQ(small[0]["metrics"]["nodes"], 3);
  std::string shapes;
  for (const auto& e : big[0]["evidence"])
    if (e["source"] == "job shapes") shapes = e["observed"];
  EXPECT_NE(shapes.find("this pace is of the logs of global batch size 512 alone"), std::string::npos) << shapes;
}

// fleet.measured names a failing measurement as fleet.pace and fleet.node_names do: two jobs'
// input.txt by their directories, not both "input".
TEST_F(FleetMeasured, MeasuredVerdictsNameMeasurementsAsThePaceDoes) {
  TempDir jobs;
  std::filesystem::create_directories(jobs.path() + "/in");
  for (int i = 0; i < 2; ++i) {
    const std::string job = "job" + std::to_string(i + 1);
    write_file(jobs.path() + "/" + job + "/input.txt", measured_megatron_log(i == 0 ? 1000 : 1500));
    auto a = run_binary(PERFGAP_BINARY, {"analyze", "steps", jobs.path() + "/" + job + "/input.txt", "--reference", "1000", "--format", "json",
                                         "--output", jobs.path() + "/in/" + job + ".json"});
    ASSERT_TRUE(a.status == 0 || a.status == 1) << a.err;
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", jobs.path() + "/in", "--format", "json"});
  auto measured = measured_findings(json::parse(r.out), "fleet.measured", "steps.gap");
  ASSERT_EQ(measured.size(), 1u) << r.out;
  EXPECT_NE(measured[0]["title"].get<std::string>().find("measured on job2/input"), std::string::npos) << measured[0]["title"];
}

TEST_F(FleetMeasured, MeasurementsAloneAreCountedNotCalledZeroNodes) {
  for (int i = 1; i <= 8; ++i) std::filesystem::remove(dir.path() + "/in/" + perfgap::fleetgen::node_name(static_cast<std::size_t>(i)) + ".json");
  auto text = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_EQ(text.out.rfind("perfgap fleet: WARN  16 measurement reports\n  no node reports", 0), 0u) << text.out;
  EXPECT_EQ(text.out.find("0 nodes"), std::string::npos) << text.out;
  EXPECT_NE(text.out.find("sets the pace"), std::string::npos) << text.out;
}

// explain counts the slowest node's cost once, as a measured cause (data/kb/causes.yaml slowest_node).
TEST_F(FleetMeasured, ExplainCountsTheSlowestNodeAsOneMeasuredCause) {
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json", "--output", dir.path() + "/fleet.json"});
  ASSERT_EQ(fleet.status, 0) << fleet.err;
  // The job ran at the slowest node's pace against a reference at the fleet's median.
  auto r = run_binary(PERFGAP_BINARY, {"explain", dir.path() + "/fleet.json", "--reference", "1018", "--measured", "1452", "--format", "json"});
  ASSERT_EQ(r.status, 1) << r.err;
  auto budget = measured_findings(json::parse(r.out), "gap.budget").at(0);
  EXPECT_EQ(budget["metrics"]["step.slowest_node.measured"], 1) << budget.dump(1);
  EXPECT_NEAR(budget["metrics"]["step.slowest_node.estimate_pct"].get<double>(), 29.9, 1.0) << "1 - median/pace of throughput";
  int causes = 0;
  for (const auto& [k, v] : budget["metrics"].items()) causes += k.starts_with("step.") && k.ends_with(".measured");
  EXPECT_EQ(causes, 1) << "two fleet.pace findings, one cause";
}

TEST_F(FleetMeasured, WithoutOutliersNoNodeIsNamed) {
  TempDir even;
  for (int i = 1; i <= 6; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    write_file(even.path() + "/" + node + ".log", measured_megatron_log(1000.0 + i));
    analyze("steps", even.path() + "/" + node + ".log", even.path() + "/in/" + node + ".json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", even.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto steps = measured_findings(json::parse(r.out), "fleet.pace", "steps.gap.median_ms");
  ASSERT_EQ(steps.size(), 1u) << r.out;
  EXPECT_EQ(steps[0]["status"], "pass") << steps[0];
  EXPECT_EQ(steps[0]["metrics"]["outliers"], 0);
}

// Equal figures (one nccl-tests run over several nodes gives each the same) name no node as
// the pace: the first by name would be named for nothing.
TEST_F(FleetMeasured, EqualFiguresNameNoPaceSetter) {
  TempDir same;
  for (int i = 1; i <= 3; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    write_file(same.path() + "/" + node + ".log", measured_megatron_log(1000.0));
    analyze("steps", same.path() + "/" + node + ".log", same.path() + "/in/" + node + ".json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", same.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto steps = measured_findings(json::parse(r.out), "fleet.pace", "steps.gap.median_ms");
  ASSERT_EQ(steps.size(), 1u) << r.out;
  const std::string title = steps[0]["title"];
  EXPECT_EQ(title.find("sets the pace"), std::string::npos) << title;
  EXPECT_NE(title.find("no node is above the fleet's median"), std::string::npos) << title;
  EXPECT_EQ(steps[0]["metrics"]["pace_cost_pct"], 0);
  for (const auto& e : steps[0]["evidence"]) EXPECT_EQ(e["observed"].get<std::string>().find("gpu0001"), std::string::npos) << e;
}

TEST_F(FleetMeasured, BadAndForeignReportsAreNamedNotFatal) {
  // A log that shows no host, a fleet report, a cut-off report: each named with why.
  write_file(dir.path() + "/logs/nohost.txt", measured_nccl_tests_log("x", 180, false));
  analyze("nccl-tests", dir.path() + "/logs/nohost.txt", dir.path() + "/in/nohost.json");
  auto fleet_rep = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json", "--output", dir.path() + "/fleet.json"});
  ASSERT_EQ(fleet_rep.status, 0) << fleet_rep.err;
  write_file(dir.path() + "/in/cut.json", "{\"schema\": \"perfgap.report/1\", \"source\": {\"kind\": \"analyze\"");
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", dir.path() + "/fleet.json", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto rep = json::parse(r.out);
  std::map<std::string, std::string> why;
  for (const auto& f : measured_findings(rep, "fleet.unreadable")) why[f["subject"]] = f["title"];
  ASSERT_EQ(why.size(), 3u) << r.out;
  EXPECT_NE(why[dir.path() + "/in/nohost.json"].find("shows no host"), std::string::npos) << why[dir.path() + "/in/nohost.json"];
  EXPECT_NE(why[dir.path() + "/fleet.json"].find("'fleet'"), std::string::npos) << why[dir.path() + "/fleet.json"];
  EXPECT_NE(why[dir.path() + "/in/cut.json"].find("truncated"), std::string::npos) << why[dir.path() + "/in/cut.json"];
  // The measurements are still judged.
  EXPECT_EQ(measured_findings(rep, "fleet.pace", "nccl_tests.busbw.max_busbw_gbps").at(0)["metrics"]["outliers"], 2);
}

// Step logs of four jobs, each its job's input.txt: named alike from their files, they are four
// measurements, not one node's runs: kept apart by their directories and said as fleet.node_names.
TEST_F(FleetMeasured, MeasurementsNamedAlikeAreKeptApartAndSaid) {
  TempDir jobs;
  const double ms[] = {1000, 1010, 1020, 1900};
  for (int i = 0; i < 4; ++i) {
    const std::string job = "job" + std::to_string(i + 1);
    write_file(jobs.path() + "/" + job + "/input.txt", measured_megatron_log(ms[i]));
    analyze("steps", jobs.path() + "/" + job + "/input.txt", jobs.path() + "/in/" + job + ".json");
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", jobs.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto rep = json::parse(r.out);
  auto names = measured_findings(rep, "fleet.node_names", "input");
  ASSERT_EQ(names.size(), 1u) << r.out;
  EXPECT_EQ(names[0]["status"], "warn");
  const std::string title = names[0]["title"];
  EXPECT_NE(title.find("4 measurements of different files are named input"), std::string::npos) << title;
  EXPECT_NE(title.find("kept apart as job1/input, job2/input, job3/input, job4/input"), std::string::npos) << title;
  auto steps = measured_findings(rep, "fleet.pace", "steps.gap.median_ms");
  ASSERT_EQ(steps.size(), 1u) << r.out;
  EXPECT_EQ(steps[0]["metrics"]["nodes"], 4) << "four jobs, not one node's median: " << steps[0];
  auto text = run_binary(PERFGAP_BINARY, {"fleet", jobs.path() + "/in"});
  EXPECT_NE(text.out.find("same name"), std::string::npos) << text.out;
}

// An nccl-tests log without its hosts: the fix says what names them (the '# Rank' lines), not
// to run perfgap check again.
TEST_F(FleetMeasured, AnNcclTestsLogWithoutHostsSaysWhatNamesThem) {
  write_file(dir.path() + "/logs/nohost.txt", measured_nccl_tests_log("x", 180, false));
  analyze("nccl-tests", dir.path() + "/logs/nohost.txt", dir.path() + "/in/nohost.json");
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto bad = measured_findings(json::parse(r.out), "fleet.unreadable", dir.path() + "/in/nohost.json");
  ASSERT_EQ(bad.size(), 1u) << r.out;
  const std::string fix = bad[0]["fix"];
  EXPECT_NE(fix.find("'#  Rank N Group G Pid P on HOST device D' lines"), std::string::npos) << fix;
  EXPECT_EQ(fix.find("perfgap check"), std::string::npos) << fix;
}

}  // namespace

namespace {

// Eight node reports that only warn and one pair's nccl-tests at 23% of the line rate: the
// fleet's verdict and exit status count the measurement's own fail, and its headline names it
// (issue 41 item 6).
// expect learn over the check reports and the nccl-tests reports beside them: the measured
// aspect is a floor from the kind's own spread (the generator's figures: six nodes at 181-188
// GB/s, median 183, MAD 2.5; two at 120), and fleet --expect fails the two slow nodes against it.
TEST_F(FleetMeasured, ExpectLearnsTheKindsFloorAndFleetFailsTheNodesBelowIt) {
  const std::string file = dir.path() + "/expect.yaml";
  // The default 80%: two of eight below any floor the six agree on is 75%: left out, said so.
  auto strict = run_binary(PERFGAP_BINARY, {"expect", "learn", dir.path() + "/in", "--output", file});
  ASSERT_EQ(strict.status, 0) << strict.err;
  auto text = perfgap::fixture::read_file(file);
  EXPECT_NE(text.find("measured: nccl-tests 8 ranks 1 node busbw_gbps 1073741824: 2 of 8 measured nodes below >= 168.2"),
            std::string::npos)
      << text;
  EXPECT_EQ(text.find("\n  measured:"), std::string::npos) << text;

  auto learned = run_binary(PERFGAP_BINARY, {"expect", "learn", dir.path() + "/in", "--agree", "75", "--output", file});
  ASSERT_EQ(learned.status, 0) << learned.err;
  text = perfgap::fixture::read_file(file);
  // 183 - max(5% = 9.15, 4 x 1.4826 x 2.5 = 14.8) = 168.2; the steps reports give no figure and are named.
  EXPECT_NE(text.find("nccl-tests 8 ranks 1 node busbw_gbps 1073741824: \">= 168.2\"  # median 183.0 over 8 of 8 nodes, spread 3.7"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("not: gpu0003 (120.0, below) gpu0007 (120.0, below)"), std::string::npos) << text;
  EXPECT_NE(text.find("nccl-tests 8 ranks 1 node busbw_gbps 1048576: \">= 50.6\""), std::string::npos) << text;
  EXPECT_NE(learned.err.find(".steps.json: not used: an analyze report that names no host"), std::string::npos) << learned.err;

  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--expect", file, "--format", "json"});
  EXPECT_EQ(r.status, 1) << r.err;
  auto rep = json::parse(r.out);
  auto grouped = measured_findings(rep, "fleet.expect");
  ASSERT_EQ(grouped.size(), 1u) << r.out;
  EXPECT_EQ(grouped[0]["status"], "fail");
  EXPECT_EQ(grouped[0]["title"].get<std::string>().substr(0, 18), "2 nodes of 8 diffe") << grouped[0];
  bool named = false;
  for (const auto& e : grouped[0]["evidence"])
    named = named || (e["source"] == "gpu[0003,0007]" &&
                      e["observed"] == "fail: measured: nccl-tests 8 ranks 1 node busbw_gbps 1073741824 120.0 (kind: >= 168.2)");
  EXPECT_TRUE(named) << grouped[0];

}

// Probe reports beside the check reports: this machine's own `perfgap probe --memory` report,
// its node renamed to each fleet node and its memory figures set (the fleet's model: seven nodes
// at 101-108 GB/s, gpu0005 at 60). expect learn holds the kind to a floor from their spread,
// fleet --expect fails the slow node on its own figure, and fleet without --expect names the
// probe reports instead of reading them as node reports.
TEST_F(FleetMeasured, ProbeFiguresGiveTheKindAFloorAndFleetFailsTheNodeBelowIt) {
  auto live = run_binary(PERFGAP_BINARY, {"probe", "--memory", "--seconds-per-probe", "0.2", "--format", "json"});
  ASSERT_TRUE(live.status == 0 || live.status == 1) << live.err;
  const auto probe = json::parse(live.out);
  ASSERT_TRUE(probe["node"].is_object()) << live.out;  // the probe names the machine it measured
  EXPECT_FALSE(probe["node"]["name"].get<std::string>().empty()) << live.out;
  for (int i = 1; i <= 8; ++i) {
    const std::string node = perfgap::fleetgen::node_name(static_cast<std::size_t>(i));
    auto r = probe;
    r["node"]["name"] = node;
    json mem;
    for (const auto& f : r["findings"])
      if (f["id"] == "probe.memory_bw") mem = f;
    ASSERT_FALSE(mem.is_null()) << live.out;
    mem["status"] = "pass";
    mem["metrics"] = {{"gbps_cpu0_mem0", i == 5 ? 60.0 : 100.0 + i}};
    r["findings"] = json::array({mem});
    r["summary"] = {{"pass", 1}, {"warn", 0}, {"fail", 0}, {"skip", 0}, {"error", 0}};
    r.erase("undecided");
    write_file(dir.path() + "/probes/" + node + ".probe.json", r.dump());
  }
  const std::string file = dir.path() + "/expect.yaml";
  auto learned = run_binary(PERFGAP_BINARY, {"expect", "learn", dir.path() + "/in", dir.path() + "/probes", "--output", file});
  ASSERT_EQ(learned.status, 0) << learned.err;
  const auto text = perfgap::fixture::read_file(file);
  // Median 103.5, MAD 2.5: 103.5 - max(5% = 5.2, 4 x 1.4826 x 2.5 = 14.8) = 88.7; 7 of 8 reach it.
  EXPECT_NE(text.find("probe memory cpu 0 mem 0 triad_gbps: \">= 88.7\"  # median 103.5 over 8 of 8 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("not: gpu0005 (60.0, below)"), std::string::npos) << text;

  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", dir.path() + "/probes", "--expect", file, "--format", "json"});
  EXPECT_EQ(r.status, 1) << r.err;
  auto grouped = measured_findings(json::parse(r.out), "fleet.expect");
  ASSERT_EQ(grouped.size(), 1u) << r.out;
  bool named = false;
  for (const auto& e : grouped[0]["evidence"])
    named = named || (e["source"] == "gpu0005" && e["observed"] == "fail: measured: probe memory cpu 0 mem 0 triad_gbps 60.0 (kind: >= 88.7)");
  EXPECT_TRUE(named) << grouped[0];

  auto plain = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", dir.path() + "/probes", "--format", "json"});
  ASSERT_EQ(plain.status, 0) << plain.err << plain.out;
  auto unread = measured_findings(json::parse(plain.out), "fleet.unreadable");
  ASSERT_EQ(unread.size(), 8u) << plain.out;  // one per probe report, each named
  for (const auto& u : unread)
    EXPECT_NE(u.dump().find("a probe report: fleet holds its figures to the floors of an expectation file (--expect)"), std::string::npos) << u;
}

TEST(FleetMeasuredVerdict, AFailingMeasurementFailsTheFleet) {
  TempDir dir;
  for (std::size_t i = 1; i <= 8; ++i) {
    perfgap::fleetgen::NodeSpec spec;
    spec.name = perfgap::fleetgen::node_name(i);
    spec.seed = i;
    write_file(dir.path() + "/in/" + spec.name + ".json", perfgap::fleetgen::report_json(spec));
  }
  // gpu0003 and gpu0004, 8 ranks each, all_reduce_perf peaking at 92 GB/s against 8 x 400 Gb/s.
  std::string log = "# Using devices\n";
  for (int r = 0; r < 16; ++r)
    log += measured_printf("#  Rank %2d Group  0 Pid %6d on %10s device %2d [0x%02x] NVIDIA H100 80GB HBM3\n", r, 51000 + r,
                           r < 8 ? "gpu0003" : "gpu0004", r % 8, 0x18 + r % 8);
  log += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
         "  1073741824     268435456     float     sum      -1  21770.0   49.32   92.48      0  21790.0   49.28   92.40      0\n"
         "# Out of bounds values : 0 OK\n";
  write_file(dir.path() + "/pair.txt", log);
  auto a = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", dir.path() + "/pair.txt", "--nics", "8", "--link-gbps", "400", "--format",
                                       "json", "--output", dir.path() + "/in/pair.nccl-tests.json"});
  ASSERT_EQ(a.status, 1) << a.err;

  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  EXPECT_EQ(r.status, 1) << r.err << r.out;
  auto verdict = measured_findings(json::parse(r.out), "fleet.measured", "nccl_tests.busbw");
  ASSERT_EQ(verdict.size(), 1u) << r.out;
  EXPECT_EQ(verdict[0]["status"], "fail");
  EXPECT_EQ(verdict[0]["title"], "nccl_tests.busbw fails in 1 of 1 measurement report, measured on gpu[0003-0004]");
  EXPECT_NE(verdict[0]["evidence"][0]["observed"].get<std::string>().find("23.1% of the 400.0 GB/s the NICs allow"), std::string::npos)
      << verdict[0];

  auto text = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in"});
  EXPECT_EQ(text.status, 1) << text.err;
  EXPECT_EQ(text.out.rfind("perfgap fleet: FAIL  8 nodes from 8 reports, 1 measurement report", 0), 0u) << text.out;
  EXPECT_NE(text.out.find("measured: nccl_tests.busbw fails in 1 of 1 measurement report, measured on gpu[0003-0004]"), std::string::npos)
      << text.out;
}

}  // namespace
