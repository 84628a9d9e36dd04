// perfgap-gpu --probe end to end against the fake libcuda.so.1 (tests/support/fake_cuda.cpp):
// script -> helper -> JSON -> parse_gpu_probe_json -> join -> judges, that every context,
// registration and buffer is released, the exits (no library, cuInit refused, bad --nodes,
// the deadline), and NVML's per-policy violation times through the fake NVML. No GPU needed.
#include <sys/wait.h>

#include <chrono>
#include <cstdio>
#include <map>
#include <sstream>
#include <string>

#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "parsers/nvml_json.hpp"
#include "probe/probe.hpp"
#include "tree.hpp"

#if defined(PERFGAP_GPU_HELPER) && defined(PERFGAP_FAKE_CUDA_DIR)

namespace {
namespace gpu_probe_test {

using perfgap::fixture::TempDir;
using perfgap::report::Status;

struct ProbeRun {
  int rc = -1;
  std::string out, err;
};

ProbeRun run_probe_helper(const TempDir& dir, const std::string& script, const std::string& args = "--probe --nodes 0",
                          const std::string& lib = PERFGAP_FAKE_CUDA_DIR) {
  std::string s = perfgap::fixture::write_in(dir, "cuda-script.txt", script);
  std::string cmd = "env FAKE_CUDA_SCRIPT='" + s + "' FAKE_CUDA_CALLS='" + dir.file("cuda-calls.txt") + "' LD_LIBRARY_PATH='" + lib +
                    "' " PERFGAP_GPU_HELPER " " + args + " 2>'" + dir.file("stderr.txt") + "'";
  ProbeRun r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = perfgap::fixture::read_file(dir.file("stderr.txt"));
  return r;
}

// Calls per name, from the fake's log.
std::map<std::string, int> calls(const TempDir& dir) {
  std::map<std::string, int> n;
  std::istringstream in(perfgap::fixture::read_file(dir.file("cuda-calls.txt")));
  for (std::string call, gpu; in >> call >> gpu;) ++n[call];
  return n;
}

// Joined with PCI facts that put 0000:18:00.0 on node 0 behind a Gen5 x16 link.
perfgap::probe::GpuMeasurement measured(const ProbeRun& r) {
  EXPECT_EQ(r.rc, 0) << r.err;
  auto doc = perfgap::parsers::parse_gpu_probe_json(r.out);
  EXPECT_TRUE(doc) << (doc ? "" : doc.error().describe()) << "\n" << r.out;
  if (!doc) return {};
  perfgap::facts::PciDevice local;
  local.bdf = "0000:18:00.0";
  local.numa_node = 0;
  perfgap::facts::PciLink link;
  link.speed_gts = 32.0;
  link.speed_text = "32.0 GT/s PCIe";
  link.width = 16;
  return perfgap::probe::join_gpu_probe(*doc, {local}, [&](const std::string& bdf) {
    return bdf == "0000:18:00.0" ? link : perfgap::facts::PciLink{};
  });
}

TEST(GpuProbeHelper, ScriptedRatesAndLatencyBecomeFindings) {
  TempDir d;
  auto r = run_probe_helper(d, "gpus 2\n0 bus 00000000:18:00.0\n0 name NVIDIA H200\n0 h2d 0 52.5\n0 d2h 0 50.1\n0 launch_us 20\n"
                               "1 bus 0000:19:00.0\n1 h2d 0 21.0\n1 d2h 0 50\n");
  auto m = measured(r);
  ASSERT_EQ(m.gpus.size(), 2u) << r.out;
  const auto& g0 = m.gpus[0];
  EXPECT_EQ(g0.dev.name, "NVIDIA H200");
  ASSERT_EQ(g0.dev.copies.size(), 1u);
  // The event timings the fake advanced by bytes / rate, read back by the helper.
  EXPECT_NEAR(*g0.dev.copies[0].h2d_gbps, 52.5, 0.1);
  EXPECT_NEAR(*g0.dev.copies[0].d2h_gbps, 50.1, 0.1);
  ASSERT_TRUE(g0.dev.launch_p50_us);
  // Each launch synchronised: the host waited at least the fake's 20 us round trip.
  EXPECT_GE(*g0.dev.launch_p50_us, 20.0);
  EXPECT_GE(*g0.dev.launch_p99_us, *g0.dev.launch_p50_us);
  EXPECT_GT(g0.dev.launches, 100);
  auto h2d = perfgap::probe::judge_h2d(m, 0.8, 0.05);
  ASSERT_EQ(h2d.size(), 2u);
  EXPECT_EQ(h2d[0].status, Status::pass) << h2d[0].title;
  // GPU 1 has no link figures (not in the PCI facts): measured, its rate unknown.
  EXPECT_EQ(h2d[1].subject, "0000:19:00.0");
  EXPECT_NE(h2d[1].title.find("expected rate is unknown"), std::string::npos) << h2d[1].title;
  auto launch = perfgap::probe::judge_launch(m);
  ASSERT_EQ(launch.size(), 2u);
  EXPECT_EQ(launch[0].status, Status::pass);
  // Everything the helper took it gave back.
  auto n = calls(d);
  EXPECT_EQ(n["cuCtxCreate_v2"], 2);
  EXPECT_EQ(n["cuCtxDestroy_v2"], 2);
  EXPECT_EQ(n["cuMemHostRegister_v2"], n["cuMemHostUnregister"]);
  EXPECT_EQ(n["cuMemAlloc_v2"], n["cuMemFree_v2"]);
  EXPECT_EQ(n["cuEventCreate"], n["cuEventDestroy_v2"]);
  EXPECT_EQ(n["cuModuleLoadData"], n["cuModuleUnload"]);
  EXPECT_EQ(n["cuStreamCreate"], n["cuStreamDestroy_v2"]);
}

TEST(GpuProbeHelper, SlowLinkWarns) {
  TempDir d;
  auto m = measured(run_probe_helper(d, "gpus 1\n0 bus 0000:18:00.0\n0 h2d 0 26.0\n0 d2h 0 25.0\n0 launch_us 1\n"));
  auto h2d = perfgap::probe::judge_h2d(m, 0.8, 0.05);
  ASSERT_EQ(h2d.size(), 1u);
  EXPECT_EQ(h2d[0].status, Status::warn) << h2d[0].title;
  EXPECT_NE(h2d[0].title.find("local node 26.0 GB/s"), std::string::npos) << h2d[0].title;
}

TEST(GpuProbeHelper, FailuresPerGpuAndPerNode) {
  TempDir d;
  // GPU 0's context fails; GPU 1's host registration fails; GPU 2's launches fail.
  auto r = run_probe_helper(d, "gpus 3\n0 fail cuCtxCreate_v2 2\n1 fail cuMemHostRegister_v2 999\n2 fail cuLaunchKernel 999\n");
  auto m = measured(r);
  ASSERT_EQ(m.gpus.size(), 3u) << r.out;
  EXPECT_NE(m.gpus[0].dev.error.find("cuCtxCreate_v2: CUDA_ERROR_OUT_OF_MEMORY (2)"), std::string::npos) << r.out;
  ASSERT_EQ(m.gpus[1].dev.copies.size(), 1u);
  EXPECT_NE(m.gpus[1].dev.copies[0].error.find("cuMemHostRegister_v2"), std::string::npos);
  EXPECT_FALSE(m.gpus[2].dev.launch_p50_us);
  auto h2d = perfgap::probe::judge_h2d(m, 0.8, 0.05);
  EXPECT_EQ(h2d[0].status, Status::skip);
  EXPECT_EQ(h2d[1].status, Status::skip);
  EXPECT_EQ(h2d[2].status, Status::pass);
  auto launch = perfgap::probe::judge_launch(m);
  EXPECT_EQ(launch[2].status, Status::skip);
  // The failed registration is not unregistered; everything else is still released.
  auto n = calls(d);
  EXPECT_EQ(n["cuMemHostUnregister"], 1);  // GPU 2's buffer only
  EXPECT_EQ(n["cuCtxDestroy_v2"], 2);      // GPU 0 had none
}

TEST(GpuProbeHelper, Exits) {
  TempDir d;
  // No library: exit 3.
  auto nolib = run_probe_helper(d, "", "--probe", d.file("nowhere"));
  EXPECT_EQ(nolib.rc, 3) << nolib.err;
  EXPECT_NE(nolib.err.find("libcuda.so.1"), std::string::npos);
  EXPECT_TRUE(nolib.out.empty());
  // No GPU: cuInit says so, exit 4 naming the error.
  auto nodev = run_probe_helper(d, "fail cuInit 100\n");
  EXPECT_EQ(nodev.rc, 4);
  EXPECT_NE(nodev.err.find("CUDA_ERROR_NO_DEVICE"), std::string::npos) << nodev.err;
  // Bad node lists and options that do not go together: exit 2.
  for (const char* args : {"--probe --nodes 1-0", "--probe --nodes x", "--probe --nodes 0,", "--nodes 0", "--probe --nvml"})
    EXPECT_EQ(run_probe_helper(d, "", args).rc, 2) << args;
  // A driver that hangs: the deadline ends the run, nothing printed.
  const auto t0 = std::chrono::steady_clock::now();
  auto hang = run_probe_helper(d, "hang cuCtxCreate_v2 30\n", "--probe --deadline 1");
  EXPECT_EQ(hang.rc, 5);
  EXPECT_TRUE(hang.out.empty());
  EXPECT_LT(std::chrono::steady_clock::now() - t0, std::chrono::seconds(10));
}

// ---- NVML violation times (the NVML half of perfgap-gpu, fake libnvidia-ml) ---------------
#ifdef PERFGAP_FAKE_NVML_DIR
std::string nvml_run(const TempDir& dir, const std::string& script) {
  std::string s = perfgap::fixture::write_in(dir, "nvml-script.txt", script);
  std::string cmd = "env FAKE_NVML_SCRIPT='" + s + "' LD_LIBRARY_PATH='" PERFGAP_FAKE_NVML_DIR "/current' " PERFGAP_GPU_HELPER " 2>/dev/null";
  std::string out;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  pclose(p);
  return out;
}

TEST(GpuProbeHelper, NvmlViolationTimesAndTheirGrowth) {
  TempDir d;
  const std::string base = "gpus 1\n0 bus 00000000:18:00.0\n0 persistence 1\n0 clock_events 0x0\n0 sm 1980\n0 max_sm 1980\n";
  auto a = perfgap::parsers::parse_nvml_json(nvml_run(d, base + "0 violation_power 2000000000\n0 violation_thermal 0\n"));
  auto b = perfgap::parsers::parse_nvml_json(nvml_run(d, base + "0 violation_power 2750000000\n0 violation_thermal 0\n"));
  ASSERT_TRUE(a && b);
  const auto& g = a->snapshot.gpus.at(0);
  EXPECT_EQ(g.violation_ns.at("power"), 2000000000u);
  EXPECT_EQ(g.violation_ns.count("sync_boost"), 0u);  // not scripted: not supported, left out
  std::vector<perfgap::analyzers::GpuSnapshotInput> in = {{"run1", &a->snapshot, nullptr, {}}, {"run2", &b->snapshot, nullptr, {}}};
  const perfgap::report::Finding* clocks = nullptr;
  auto findings = perfgap::analyzers::judge_gpu_snapshots(in);
  for (const auto& f : findings)
    if (f.id == "gpu.clocks") clocks = &f;
  ASSERT_NE(clocks, nullptr);
  std::map<std::string, double> metrics(clocks->metrics.begin(), clocks->metrics.end());
  EXPECT_NEAR(metrics.at("violation_s.power"), 2.75, 1e-9);
  EXPECT_NEAR(metrics.at("violation_growth_s.power"), 0.75, 1e-9);
  EXPECT_NEAR(metrics.at("violation_growth_s.thermal"), 0.0, 1e-9);
  bool said = false;
  for (const auto& e : clocks->evidence) said = said || e.observed.find("power +0.750 s") != std::string::npos;
  EXPECT_TRUE(said);
}
#endif

}  // namespace gpu_probe_test
}  // namespace

#endif
