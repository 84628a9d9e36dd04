// perfgap probe, the real binary: --cpu and --memory live on this machine (short: well under
// 10 s), --gpu through perfgap-gpu against the fake libcuda, and the hostile arguments that
// must be exit 2 with one line before anything runs.
#include <chrono>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace {
namespace probe_cli_test {

using perfgap::fixture::json_report;
using perfgap::fixture::one_line;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

TEST(ProbeCli, CpuAndMemoryRunLive) {
  // No bound on time or bandwidth here: CI machines are shared. The pair cap is the judge's
  // and measure_memory's business (unit tests); a starved run must say so, never pass.
  auto r = run_binary(PERFGAP_BINARY, {"probe", "--cpu", "--memory", "--seconds-per-probe", "0.5", "--format", "json"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  auto j = json_report(PERFGAP_BINARY, {"probe", "--cpu", "--memory", "--seconds-per-probe", "0.3"}, r.status);
  ASSERT_FALSE(j.is_null());
  EXPECT_EQ(j.at("source").value("kind", ""), "probe");
  const auto& cpu = perfgap::fixture::required_finding(j, "probe.cpu_busy_mhz");
  // Without --rated-mhz the CPU probe never judges (skip), whatever the source.
  EXPECT_EQ(cpu.value("status", ""), "skip") << cpu.dump();
  const auto& mem = perfgap::fixture::required_finding(j, "probe.memory_bw");
  // The live matrix has at least node 0's local pair, measured: a pass with a figure, or,
  // when this machine starved the probe, a skip/warn that says so.
  const std::string status = mem.value("status", "");
  if (status == "pass") {
    bool local = false;
    const auto metrics = mem.value("metrics", nlohmann::json::object());
    for (const auto& m : metrics.items())
      if (m.key().rfind("gbps_cpu", 0) == 0 && m.value().get<double>() >= 1.0) local = true;
    EXPECT_TRUE(local) << mem.dump();
  } else {
    EXPECT_TRUE(status == "skip" || status == "warn") << mem.dump();
    EXPECT_NE(mem.dump().find("starved"), std::string::npos) << mem.dump();
  }
  // The text report names both.
  auto text = run_binary(PERFGAP_BINARY, {"probe", "--memory", "--seconds-per-probe", "0.2"});
  EXPECT_EQ(text.status, 0) << text.err;
  EXPECT_NE(text.out.find("probe.memory_bw"), std::string::npos) << text.out;
}

TEST(ProbeCli, RatedMhzJudgesWhenThereIsASource) {
  // A rated figure no CPU reaches: fail if this machine has a source, skip (naming why) if not.
  const std::vector<std::string> args = {"probe", "--cpu", "--rated-mhz", "99999", "--seconds-per-probe", "0.2"};
  auto first = run_binary(PERFGAP_BINARY, args);
  ASSERT_TRUE(first.status == 0 || first.status == 1) << first.err;
  auto j = json_report(PERFGAP_BINARY, args, first.status);
  ASSERT_FALSE(j.is_null());
  const auto& cpu = perfgap::fixture::required_finding(j, "probe.cpu_busy_mhz");
  const std::string status = cpu.value("status", "");
  if (status == "skip") {
    EXPECT_NE(cpu.value("title", "").find("no busy-MHz source"), std::string::npos) << cpu.dump();
  } else {
    EXPECT_EQ(status, "fail") << cpu.dump();
    EXPECT_EQ(cpu.at("metrics").value("rated_mhz", 0.0), 99999.0);
  }
}

TEST(ProbeCli, HostileArgumentsExitTwoWithOneLine) {
  TempDir d;
  const std::vector<std::vector<std::string>> bad = {
      {"probe"},                                               // nothing to measure
      {"probe", "--cpu", "--root", d.path()},                  // probes are live only
      {"probe", "--memory", "--seconds-per-probe", "0"},       // out of range
      {"probe", "--memory", "--seconds-per-probe", "11"},
      {"probe", "--memory", "--seconds-per-probe", "nan"},
      {"probe", "--memory", "--rated-mhz", "3000"},            // --rated-mhz is for --cpu
      {"probe", "--cpu", "--rated-mhz", "-5"},
      {"probe", "--cpu", "--format", "yaml"},
      {"probe", "--cpu", "--bogus"},
      {"probe", "--cpu", "--output", d.file("no/such/dir/out.json")},
  };
  for (const auto& args : bad) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_binary(PERFGAP_BINARY, args);
    std::string line;
    for (const auto& a : args) line += a + " ";
    EXPECT_EQ(r.status, 2) << line << "\n" << r.err << r.out;
    EXPECT_TRUE(one_line(r.err)) << line << "\n" << r.err;
    // Refused before any probe ran.
    EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::milliseconds(1000)) << line;
  }
  auto none = run_binary(PERFGAP_BINARY, {"probe"});
  EXPECT_NE(none.err.find("--cpu, --memory, --gpu"), std::string::npos) << none.err;
  auto root = run_binary(PERFGAP_BINARY, {"probe", "--cpu", "--root", d.path()});
  EXPECT_NE(root.err.find("live machine"), std::string::npos) << root.err;
}

#if defined(PERFGAP_GPU_HELPER) && defined(PERFGAP_FAKE_CUDA_DIR)
TEST(ProbeCli, GpuThroughTheHelperAndTheFakeDriver) {
  TempDir d;
  const std::string script = perfgap::fixture::write_in(d, "cuda.txt", "gpus 1\n0 bus 0000:18:00.0\n0 h2d 0 24.0\n0 d2h 0 23.0\n0 launch_us 15\n");
  const std::vector<std::pair<std::string, std::string>> env = {
      {"PERFGAP_GPU_HELPER", PERFGAP_GPU_HELPER}, {"LD_LIBRARY_PATH", PERFGAP_FAKE_CUDA_DIR}, {"FAKE_CUDA_SCRIPT", script}};
  auto j = json_report(PERFGAP_BINARY, {"probe", "--gpu"}, 0, env);
  ASSERT_FALSE(j.is_null());
  const auto* h2d = perfgap::fixture::finding(j, "probe.h2d", "0000:18:00.0");
  ASSERT_NE(h2d, nullptr) << j.dump(1);
  // No such device in this machine's sysfs: the link's rate is unknown, the copy is measured.
  EXPECT_EQ(h2d->value("status", ""), "pass") << h2d->dump();
  EXPECT_NEAR(h2d->at("metrics").value("h2d_gbps_node0", 0.0), 24.0, 0.1);
  const auto* launch = perfgap::fixture::finding(j, "probe.launch_latency", "0000:18:00.0");
  ASSERT_NE(launch, nullptr);
  EXPECT_EQ(launch->value("status", ""), "pass");
  EXPECT_GE(launch->at("metrics").value("launch_p50_us", 0.0), 15.0);
  // No driver library: both skip, saying so; exit 0.
  auto none = json_report(PERFGAP_BINARY, {"probe", "--gpu"}, 0,
                          {{"PERFGAP_GPU_HELPER", PERFGAP_GPU_HELPER}, {"LD_LIBRARY_PATH", d.file("nowhere")}});
  const auto& s = perfgap::fixture::required_finding(none, "probe.h2d");
  EXPECT_EQ(s.value("status", ""), "skip");
  EXPECT_NE(s.value("title", "").find("libcuda.so.1"), std::string::npos) << s.dump();
  EXPECT_EQ(perfgap::fixture::required_finding(none, "probe.launch_latency").value("status", ""), "skip");
  // cuInit refuses (no GPU): skip naming the driver's error.
  const std::string nodev = perfgap::fixture::write_in(d, "nodev.txt", "fail cuInit 100\n");
  auto nd = json_report(PERFGAP_BINARY, {"probe", "--gpu"}, 0,
                        {{"PERFGAP_GPU_HELPER", PERFGAP_GPU_HELPER}, {"LD_LIBRARY_PATH", PERFGAP_FAKE_CUDA_DIR}, {"FAKE_CUDA_SCRIPT", nodev}});
  EXPECT_NE(perfgap::fixture::required_finding(nd, "probe.h2d").value("title", "").find("CUDA_ERROR_NO_DEVICE"), std::string::npos);
  // A helper that is not there.
  auto missing = json_report(PERFGAP_BINARY, {"probe", "--gpu"}, 0, {{"PERFGAP_GPU_HELPER", d.file("perfgap-gpu")}});
  EXPECT_NE(perfgap::fixture::required_finding(missing, "probe.h2d").value("title", "").find("PERFGAP_GPU_HELPER"), std::string::npos);
}
#endif

}  // namespace probe_cli_test
}  // namespace
