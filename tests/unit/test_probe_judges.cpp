// The probes' judges on recorded numbers (every status of probe.cpu_busy_mhz, probe.memory_bw,
// probe.h2d, probe.launch_latency), the link-rate arithmetic, the helper document's parser
// and the catalogue. The live measurements run in tests/cli/test_probe.cpp.
#include <gtest/gtest.h>

#include <set>
#include <string>

#include "probe/probe.hpp"

namespace {
namespace probe_judges_test {

using perfgap::probe::CpuMeasurement;
using perfgap::probe::GpuMeasurement;
using perfgap::probe::GpuProbe;
using perfgap::probe::MemoryMeasurement;
using perfgap::probe::MemoryPair;
using perfgap::report::Finding;
using perfgap::report::Status;

double metric(const Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.metrics)
    if (n == name) return v;
  ADD_FAILURE() << "no metric " << name << " in " << f.id << ": " << f.title;
  return -1;
}
bool has_metric(const Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.metrics)
    if (n == name) return true;
  return false;
}
bool evidence_has(const Finding& f, const std::string& text) {
  for (const auto& e : f.evidence)
    if (e.observed.find(text) != std::string::npos || e.source.find(text) != std::string::npos) return true;
  return false;
}

CpuMeasurement busy(std::initializer_list<double> mhz, std::optional<double> rated) {
  CpuMeasurement m;
  int cpu = 0;
  for (double v : mhz) m.cpus.push_back(cpu), m.busy.push_back({cpu++, v});
  m.source = "perf msr/aperf/ (per thread)";
  m.seconds = 1.35;
  m.rated_mhz = rated;
  if (rated) m.rated_from = "--rated-mhz";
  m.max_freq_mhz = 3800;
  return m;
}

TEST(ProbeJudges, CpuPassFailAndSkips) {
  // A 2-socket Sapphire Rapids recorded under the all-core load: 3.0 GHz rated all-core.
  auto pass = perfgap::probe::judge_cpu(busy({2990, 3010, 2980, 3000}, 3000), 0.9);
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_EQ(pass[0].status, Status::pass) << pass[0].title;
  EXPECT_NEAR(metric(pass[0], "busy_mhz"), 2995, 0.01);
  EXPECT_NEAR(metric(pass[0], "ratio"), 2995.0 / 3000, 1e-9);
  EXPECT_EQ(metric(pass[0], "cpus_below"), 0);
  // The same node with C-states off: the busy cores lost their turbo headroom.
  auto fail = perfgap::probe::judge_cpu(busy({2200, 2250, 2990, 2210}, 3000), 0.9);
  EXPECT_EQ(fail[0].status, Status::fail);
  EXPECT_NE(fail[0].title.find("80% of the rated 3000 MHz"), std::string::npos) << fail[0].title;
  EXPECT_EQ(metric(fail[0], "cpus_below"), 3);
  EXPECT_TRUE(evidence_has(fail[0], "cpu0"));
  EXPECT_FALSE(evidence_has(fail[0], "cpu2"));
  EXPECT_FALSE(fail[0].fix.empty());
  // Exactly at the bar passes; just under fails.
  EXPECT_EQ(perfgap::probe::judge_cpu(busy({2700}, 3000), 0.9)[0].status, Status::pass);
  EXPECT_EQ(perfgap::probe::judge_cpu(busy({2699}, 3000), 0.9)[0].status, Status::fail);
  // No rated figure: measured, not judged (cpuinfo_max_freq is not the all-core rating).
  auto unrated = perfgap::probe::judge_cpu(busy({3000, 3100}, std::nullopt), 0.9);
  EXPECT_EQ(unrated[0].status, Status::skip);
  EXPECT_NE(unrated[0].title.find("--rated-mhz"), std::string::npos);
  EXPECT_NE(unrated[0].title.find("3800 MHz is the 1-core maximum"), std::string::npos) << unrated[0].title;
  EXPECT_NEAR(metric(unrated[0], "busy_mhz"), 3050, 0.01);
  // No source (a VM without a PMU): skip naming why.
  CpuMeasurement none;
  none.cpus = {0, 1};
  none.no_source_why = "perf cycles:u (per thread): perf_event_open: No such file or directory";
  auto skip = perfgap::probe::judge_cpu(none, 0.9);
  EXPECT_EQ(skip[0].status, Status::skip);
  EXPECT_NE(skip[0].title.find("No such file"), std::string::npos);
}

MemoryPair pair(int c, int m, std::optional<double> gbps, std::string error = {}) {
  MemoryPair p;
  p.cpu_node = c;
  p.mem_node = m;
  p.gbps = gbps;
  p.error = std::move(error);
  p.threads = 56;
  p.bytes_per_array = 1u << 30;
  return p;
}

TEST(ProbeJudges, MemoryMatrixOnRecordedNumbers) {
  // Two sockets, healthy: local about 245 GB/s, remote about 120 GB/s.
  MemoryMeasurement two;
  two.pairs = {pair(0, 0, 245.1), pair(0, 1, 121.0), pair(1, 0, 119.5), pair(1, 1, 240.3)};
  auto ok = perfgap::probe::judge_memory(two, 0.8);
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].status, Status::pass) << ok[0].title;
  EXPECT_NEAR(metric(ok[0], "gbps_cpu1_mem0"), 119.5, 1e-9);
  EXPECT_NEAR(metric(ok[0], "best_local_gbps"), 245.1, 1e-9);
  ASSERT_EQ(ok[0].table.size(), 3u);  // header + a row per CPU node
  EXPECT_EQ(ok[0].table[2][2], "240.3");
  // Socket 1 with a missing DIMM channel: its local bandwidth drops to 70%.
  MemoryMeasurement slow = two;
  slow.pairs[3].gbps = 171.0;
  auto warn = perfgap::probe::judge_memory(slow, 0.8);
  EXPECT_EQ(warn[0].status, Status::warn);
  EXPECT_NE(warn[0].title.find("node 1 reaches 171.0 GB/s"), std::string::npos) << warn[0].title;
  // Remote pairs below 80% of local are expected (they are remote): no warning for them.
  MemoryMeasurement far = two;
  far.pairs[1].gbps = 40;
  EXPECT_EQ(perfgap::probe::judge_memory(far, 0.8)[0].status, Status::pass);
  // A pair the kernel refused: warn, naming it; all refused: skip.
  MemoryMeasurement refused = two;
  refused.pairs[1] = pair(0, 1, std::nullopt, "mbind: Invalid argument");
  auto partial = perfgap::probe::judge_memory(refused, 0.8);
  EXPECT_EQ(partial[0].status, Status::warn);
  EXPECT_TRUE(evidence_has(partial[0], "mbind: Invalid argument"));
  MemoryMeasurement nothing;
  nothing.pairs = {pair(0, 0, std::nullopt, "mmap: Cannot allocate memory")};
  EXPECT_EQ(perfgap::probe::judge_memory(nothing, 0.8)[0].status, Status::skip);
  MemoryMeasurement not_run;
  not_run.no_run_why = "no NUMA nodes listed";
  EXPECT_EQ(perfgap::probe::judge_memory(not_run, 0.8)[0].status, Status::skip);
  // One node (this VM): one local pair, pass.
  MemoryMeasurement one;
  one.pairs = {pair(0, 0, 18.2)};
  EXPECT_EQ(perfgap::probe::judge_memory(one, 0.8)[0].status, Status::pass);
}

TEST(ProbeJudges, MemoryStarvedPairsAreNeverAPass) {
  // The figure a loaded 2-vCPU VM gave: 0.017 GB/s, every pair "within 80% of the best".
  MemoryMeasurement busy;
  busy.pairs = {pair(0, 0, 0.017)};
  auto one = perfgap::probe::judge_memory(busy, 0.8);
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(one[0].status, Status::skip) << one[0].title;
  EXPECT_NE(one[0].title.find("starved"), std::string::npos) << one[0].title;
  // Threads that had their CPUs 20% of the time: a plausible figure, still not the memory's.
  MemoryMeasurement shared;
  shared.pairs = {pair(0, 0, 14.0)};
  shared.pairs[0].cpu_share = 0.2;
  shared.pairs[0].min_passes = 3;
  auto s = perfgap::probe::judge_memory(shared, 0.8);
  EXPECT_EQ(s[0].status, Status::skip) << s[0].title;
  EXPECT_TRUE(evidence_has(s[0], "ran 20% of the time"));
  // Under one pass over the slice the arrays were never streamed whole.
  MemoryMeasurement short_run;
  short_run.pairs = {pair(0, 0, 20.0)};
  short_run.pairs[0].cpu_share = 0.95;
  short_run.pairs[0].min_passes = 0.4;
  EXPECT_EQ(perfgap::probe::judge_memory(short_run, 0.8)[0].status, Status::skip);
  // One starved local pair beside a good one: warn (naming it), never pass, and the starved
  // figure is not compared with the best.
  MemoryMeasurement two;
  two.pairs = {pair(0, 0, 245.1), pair(1, 1, 240.3)};
  for (auto& p : two.pairs) p.cpu_share = 0.97, p.min_passes = 5;
  two.pairs[1].cpu_share = 0.3;
  auto w = perfgap::probe::judge_memory(two, 0.8);
  EXPECT_EQ(w[0].status, Status::warn) << w[0].title;
  EXPECT_NE(w[0].title.find("1 starved"), std::string::npos) << w[0].title;
  // The same pair with its CPUs: pass.
  two.pairs[1].cpu_share = 0.97;
  EXPECT_EQ(perfgap::probe::judge_memory(two, 0.8)[0].status, Status::pass);
}

TEST(ProbeJudges, PcieExpectedRate) {
  // Gen5 x16 carries about 55 GB/s of payload per direction, Gen4 x16 about 27.
  EXPECT_NEAR(*perfgap::probe::pcie_expected_gbps(32.0, 16), 54.8, 0.1);
  EXPECT_NEAR(*perfgap::probe::pcie_expected_gbps(16.0, 16), 27.4, 0.1);
  EXPECT_NEAR(*perfgap::probe::pcie_expected_gbps(5.0, 16), 6.96, 0.01);  // Gen2: 8b/10b
  EXPECT_FALSE(perfgap::probe::pcie_expected_gbps(std::nullopt, 16));
  EXPECT_FALSE(perfgap::probe::pcie_expected_gbps(32.0, 0));
}

perfgap::parsers::GpuProbeCopy copy(int node, double h2d, double d2h) {
  perfgap::parsers::GpuProbeCopy c;
  c.node = node;
  c.h2d_gbps = h2d;
  c.d2h_gbps = d2h;
  return c;
}

GpuMeasurement h200(std::optional<int> local, std::vector<perfgap::parsers::GpuProbeCopy> copies, std::optional<double> expected = 54.8) {
  GpuMeasurement m;
  GpuProbe g;
  g.dev.index = 0;
  g.dev.name = "NVIDIA H200";
  g.dev.bus_id = "00000000:18:00.0";
  g.dev.copies = std::move(copies);
  g.dev.launch_p50_us = 6.1;
  g.dev.launch_p99_us = 9.8;
  g.dev.launches = 2000;
  g.bdf = "0000:18:00.0";
  g.numa_node = local;
  g.expected_gbps = expected;
  g.link_text = "32.0 GT/s PCIe x16";
  m.gpus.push_back(std::move(g));
  return m;
}

TEST(ProbeJudges, H2dEveryStatus) {
  auto pass = perfgap::probe::judge_h2d(h200(0, {copy(0, 53.1, 52.4), copy(1, 50.2, 49.9)}), 0.8, 0.05);
  ASSERT_EQ(pass.size(), 1u);
  EXPECT_EQ(pass[0].status, Status::pass) << pass[0].title;
  EXPECT_EQ(pass[0].subject, "0000:18:00.0");
  EXPECT_NEAR(metric(pass[0], "h2d_gbps_node1"), 50.2, 1e-9);
  EXPECT_NEAR(metric(pass[0], "expected_gbps"), 54.8, 1e-9);
  // The link trained at Gen4 or a bad riser: the local node reaches 60% of the rate.
  auto slow = perfgap::probe::judge_h2d(h200(0, {copy(0, 33.0, 52.0), copy(1, 32.0, 49.9)}), 0.8, 0.05);
  EXPECT_EQ(slow[0].status, Status::warn);
  EXPECT_NE(slow[0].title.find("H2D from the local node 33.0 GB/s"), std::string::npos) << slow[0].title;
  // D2H alone low also warns.
  EXPECT_EQ(perfgap::probe::judge_h2d(h200(0, {copy(0, 53.0, 30.0)}), 0.8, 0.05)[0].status, Status::warn);
  // The remote node is faster than the local one (a wrong numa_node, or a misrouted root port).
  auto remote = perfgap::probe::judge_h2d(h200(0, {copy(0, 46.0, 45.0), copy(1, 53.0, 52.0)}), 0.8, 0.05);
  EXPECT_EQ(remote[0].status, Status::warn);
  EXPECT_NE(remote[0].title.find("node 1 (remote) copies faster"), std::string::npos) << remote[0].title;
  // Within the tolerance: noise, not a finding.
  EXPECT_EQ(perfgap::probe::judge_h2d(h200(0, {copy(0, 52.0, 51.0), copy(1, 53.0, 52.0)}), 0.8, 0.05)[0].status, Status::pass);
  // Local node unknown (numa_node -1) on a one-node machine: that node is local.
  EXPECT_EQ(perfgap::probe::judge_h2d(h200(std::nullopt, {copy(0, 53.0, 52.0)}), 0.8, 0.05)[0].status, Status::pass);
  // Unknown with two nodes: the fastest is judged against the link, and the evidence says so.
  auto unknown = perfgap::probe::judge_h2d(h200(std::nullopt, {copy(0, 30.0, 29.0), copy(1, 31.0, 30.0)}), 0.8, 0.05);
  EXPECT_EQ(unknown[0].status, Status::warn);
  EXPECT_TRUE(evidence_has(unknown[0], "local NUMA node is unknown"));
  // No link figures: measured, pass on the rest, saying the rate is unknown.
  auto no_link = perfgap::probe::judge_h2d(h200(0, {copy(0, 20.0, 20.0)}, std::nullopt), 0.8, 0.05);
  EXPECT_EQ(no_link[0].status, Status::pass);
  EXPECT_NE(no_link[0].title.find("expected rate is unknown"), std::string::npos);
  // Nothing measured on any node, a GPU that could not be probed, the probe not run: skip.
  auto broken = h200(0, {});
  broken.gpus[0].dev.copies.push_back({0, std::nullopt, std::nullopt, "cuMemHostRegister_v2: CUDA_ERROR_FAKE (999)"});
  auto b = perfgap::probe::judge_h2d(broken, 0.8, 0.05);
  EXPECT_EQ(b[0].status, Status::skip);
  EXPECT_TRUE(evidence_has(b[0], "cuMemHostRegister_v2"));
  auto no_ctx = h200(0, {});
  no_ctx.gpus[0].dev.error = "cuCtxCreate_v2: CUDA_ERROR_OUT_OF_MEMORY (2)";
  EXPECT_EQ(perfgap::probe::judge_h2d(no_ctx, 0.8, 0.05)[0].status, Status::skip);
  GpuMeasurement none;
  none.no_run_why = "no CUDA driver library (libcuda.so.1)";
  auto s = perfgap::probe::judge_h2d(none, 0.8, 0.05);
  ASSERT_EQ(s.size(), 1u);
  EXPECT_EQ(s[0].status, Status::skip);
  EXPECT_NE(s[0].title.find("libcuda.so.1"), std::string::npos);
}

TEST(ProbeJudges, LaunchLatencyMetrics) {
  auto ok = perfgap::probe::judge_launch(h200(0, {copy(0, 53, 52)}));
  ASSERT_EQ(ok.size(), 1u);
  EXPECT_EQ(ok[0].status, Status::pass);
  EXPECT_NEAR(metric(ok[0], "launch_p50_us"), 6.1, 1e-9);
  EXPECT_NEAR(metric(ok[0], "launch_p99_us"), 9.8, 1e-9);
  auto missing = h200(0, {});
  missing.gpus[0].dev.launch_p50_us.reset();
  EXPECT_EQ(perfgap::probe::judge_launch(missing)[0].status, Status::skip);
  EXPECT_FALSE(has_metric(perfgap::probe::judge_launch(missing)[0], "launch_p50_us"));
  GpuMeasurement none;
  none.no_run_why = "the CUDA driver did not initialise";
  EXPECT_EQ(perfgap::probe::judge_launch(none)[0].status, Status::skip);
}

TEST(ProbeJudges, HelperDocumentParsedAndJoined) {
  const std::string doc = R"J({"schema":1,"kind":"probe","driver_version":"12.4","gpus":[
    {"index":0,"name":"NVIDIA H200","pci_bus_id":"00000000:18:00.0","copies":[{"node":0,"bytes":67108864,"h2d_gbps":52.5,"d2h_gbps":50.1},
      {"node":1,"error":"mbind to node 1: Invalid argument"}],"launch":{"count":2000,"p50_us":8.0,"p99_us":9.5}},
    {"index":1,"pci_bus_id":"0000:2A:00.0","error":"cuCtxCreate_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"}]})J";
  auto p = perfgap::parsers::parse_gpu_probe_json(doc);
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->gpus.size(), 2u);
  EXPECT_EQ(p->driver_version, "12.4");
  EXPECT_EQ(p->gpus[0].copies.size(), 2u);
  EXPECT_EQ(p->gpus[0].copies[1].error, "mbind to node 1: Invalid argument");
  EXPECT_EQ(p->gpus[0].launches, 2000);
  perfgap::facts::PciDevice dev;
  dev.bdf = "0000:18:00.0";
  dev.numa_node = 1;
  perfgap::facts::PciLink link;
  link.speed_gts = 32.0;
  link.speed_text = "32.0 GT/s PCIe";
  link.width = 16;
  auto m = perfgap::probe::join_gpu_probe(*p, {dev}, [&](const std::string& bdf) {
    return bdf == "0000:18:00.0" ? link : perfgap::facts::PciLink{};
  });
  ASSERT_EQ(m.gpus.size(), 2u);
  EXPECT_EQ(m.gpus[0].bdf, "0000:18:00.0");
  EXPECT_EQ(m.gpus[0].numa_node, 1);
  EXPECT_NEAR(*m.gpus[0].expected_gbps, 54.8, 0.1);
  EXPECT_EQ(m.gpus[1].bdf, "0000:2a:00.0");
  EXPECT_FALSE(m.gpus[1].expected_gbps);
  // Not this document, or a field of the wrong kind: an error naming it.
  EXPECT_FALSE(perfgap::parsers::parse_gpu_probe_json(R"({"schema":1,"gpus":[]})"));
  auto bad = perfgap::parsers::parse_gpu_probe_json(R"({"schema":1,"kind":"probe","gpus":[{"copies":[{"node":0,"h2d_gbps":"fast"}]}]})");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().message.find("gpus[0].copies[0].h2d_gbps"), std::string::npos) << bad.error().message;
  EXPECT_FALSE(perfgap::parsers::parse_gpu_probe_json(R"({"schema":1,"kind":"probe","gpus":[{"copies":[{"node":0,"h2d_gbps":-1}]}]})"));
  auto notjson = perfgap::parsers::parse_gpu_probe_json("{\n\"schema\":");
  ASSERT_FALSE(notjson);
  EXPECT_EQ(notjson.error().line, 2);
}

TEST(ProbeJudges, CatalogueHasTheSpecIdsWithDocs) {
  std::set<std::string> ids;
  for (const auto& c : perfgap::probe::probe_catalogue()) {
    ids.insert(std::string(c.id));
    EXPECT_FALSE(c.rule.empty()) << c.id;
    EXPECT_FALSE(c.fix.empty()) << c.id;
    EXPECT_FALSE(c.reads.empty()) << c.id;
    // Never run by `check`: not in the check registry, and no run function.
    EXPECT_EQ(perfgap::core::builtin_registry().find(c.id), nullptr) << c.id;
    EXPECT_FALSE(c.run) << c.id;
  }
  EXPECT_EQ(ids, (std::set<std::string>{"probe.cpu_busy_mhz", "probe.memory_bw", "probe.h2d", "probe.launch_latency"}));
  EXPECT_EQ(perfgap::probe::probe_param("probe.cpu_busy_mhz", "fail_ratio"), 0.9);
  EXPECT_EQ(perfgap::probe::probe_param("probe.memory_bw", "warn_local_ratio"), 0.8);
  EXPECT_THROW(perfgap::probe::probe_param("probe.h2d", "nope"), std::out_of_range);
}

}  // namespace probe_judges_test
}  // namespace
