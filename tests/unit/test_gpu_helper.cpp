// perfgap-gpu end to end against the fake libnvidia-ml.so.1 (tests/support/fake_nvml.cpp):
// script -> helper -> JSON -> parse_nvml_json -> judge_gpu_snapshots, for every status of
// every gpu rule; that a GPU not in persistence mode gets no query beyond its identity; the
// exits without a library or when NVML does not initialise; an old driver's library. No GPU
// needed: these run everywhere.
#include <dlfcn.h>
#include <sys/wait.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "parsers/nvml_json.hpp"
#include "tree.hpp"

#ifdef PERFGAP_GPU_HELPER

namespace {
// Named: unity builds batch this file with other tests that have helpers of these names.
namespace gpu_helper_test {

using perfgap::fixture::TempDir;
using perfgap::report::Status;

struct Run {
  int rc = -1;
  std::string out, err;
};

struct Fake {
  std::string variant = "current";  // or "old": the library without the newer calls
  std::string args;
  std::string lib_dir;  // overrides the fake's folder
};

Fake args(std::string a) {
  Fake f;
  f.args = std::move(a);
  return f;
}
Fake old_driver() {
  Fake f;
  f.variant = "old";
  return f;
}
Fake library_in(std::string dir) {
  Fake f;
  f.lib_dir = std::move(dir);
  return f;
}

Run run_helper(const TempDir& dir, const std::string& script, const Fake& how = {}) {
  std::string s = perfgap::fixture::write_in(dir, "script.txt", script);
  std::string lib = how.lib_dir.empty() ? std::string(PERFGAP_FAKE_NVML_DIR) + "/" + how.variant : how.lib_dir;
  std::string cmd = "env FAKE_NVML_SCRIPT='" + s + "' FAKE_NVML_CALLS='" + dir.file("calls.txt") + "' LD_LIBRARY_PATH='" + lib +
                    "' " PERFGAP_GPU_HELPER " " + how.args + " 2>'" + dir.file("stderr.txt") + "'";
  Run r;
  FILE* p = popen(cmd.c_str(), "r");
  if (!p) return r;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) r.out.append(buf, n);
  int st = pclose(p);
  r.rc = WIFEXITED(st) ? WEXITSTATUS(st) : 128 + WTERMSIG(st);
  r.err = perfgap::fixture::read_file(dir.file("stderr.txt"));
  return r;
}

// A GPU on which every rule passes: persistent, at its clocks and limits, no ECC error,
// Gen5 x16, four NVLinks up, a completed fabric with a healthy mask.
std::string healthy(int g) {
  std::string p = std::to_string(g) + " ";
  std::string s;
  for (const char* line : {"persistence 1",
                           "pstate 0",
                           "util 90",
                           "sm 1980",
                           "mem 2619",
                           "app_sm 1980",
                           "app_mem 2619",
                           "default_app_sm 1980",
                           "default_app_mem 2619",
                           "max_sm 1980",
                           "max_mem 2619",
                           "clock_events 0x0",
                           "power_mw 512345",
                           "enforced_mw 700000",
                           "default_mw 700000",
                           "max_mw 700000",
                           "temp 51",
                           "slowdown_temp 87",
                           "shutdown_temp 92",
                           "ecc 1",
                           "vol_corr 0",
                           "vol_unc 0",
                           "agg_corr 3",
                           "agg_unc 0",
                           "remap_corr 0",
                           "remap_unc 0",
                           "remap_pending 0",
                           "remap_failure 0",
                           "retired_pending 0",
                           "pcie_gen 5",
                           "pcie_gen_max 5",
                           "pcie_width 16",
                           "pcie_width_max 16",
                           "replay 0",
                           "nvlink 0 up",
                           "nvlink 1 up",
                           "nvlink 2 up",
                           "nvlink 3 up",
                           "fabric_state 3",
                           "fabric_status 0",
                           "clique 7",
                           "health_mask 0xaa",
                           "health_summary 1"})
    s += p + line + "\n";
  return s;
}

perfgap::parsers::NvmlHelperOutput parsed(const Run& r) {
  EXPECT_EQ(r.rc, 0) << r.err;
  auto p = perfgap::parsers::parse_nvml_json(r.out);
  EXPECT_TRUE(p) << (p ? "" : p.error().describe()) << "\n" << r.out;
  return p ? *p : perfgap::parsers::NvmlHelperOutput{};
}

// Each rule's status per GPU subject (the bus id) from one or two runs.
using Verdicts = std::map<std::string, std::map<std::string, perfgap::report::Finding>>;
Verdicts judge(const std::vector<perfgap::parsers::NvmlHelperOutput>& runs) {
  std::vector<perfgap::analyzers::GpuSnapshotInput> in;
  for (std::size_t i = 0; i < runs.size(); ++i) in.push_back({"run" + std::to_string(i + 1), &runs[i].snapshot, nullptr, {}});
  Verdicts v;
  for (auto& f : perfgap::analyzers::judge_gpu_snapshots(in)) v[f.subject][f.id] = f;
  return v;
}

// One healthy GPU with `extra` script lines, judged on one run of the helper.
Verdicts judge_one(const TempDir& d, const std::string& extra) { return judge({parsed(run_helper(d, "gpus 1\n" + healthy(0) + extra))}); }

Status status_of(const Verdicts& v, const std::string& bus, const std::string& id) {
  auto g = v.find(bus);
  if (g == v.end()) {
    ADD_FAILURE() << "no finding for " << bus;
    return Status::error;
  }
  auto f = g->second.find(id);
  if (f == g->second.end()) {
    ADD_FAILURE() << "no " << id << " for " << bus;
    return Status::error;
  }
  return f->second.status;
}

const std::string kGpu0 = "0000:18:00.0", kGpu1 = "0000:19:00.0";

std::string rules_of(const Verdicts& v, const std::string& bus) {
  std::string s;
  for (const auto& [id, f] : v.at(bus)) s += id + ": " + f.title + "\n";
  return s;
}

TEST(GpuHelper, HealthyGpuPassesEveryRule) {
  TempDir d;
  auto out = parsed(run_helper(d, "gpus 1\n" + healthy(0)));
  ASSERT_EQ(out.snapshot.gpus.size(), 1u);
  const auto& g = out.snapshot.gpus[0];
  EXPECT_EQ(out.snapshot.driver_version, "550.54.15");
  EXPECT_EQ(g.name, "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(g.uuid, "GPU-fake-0000");
  EXPECT_EQ(g.performance_state, "P0");
  EXPECT_EQ(g.clocks.max_sm_mhz, 1980);
  EXPECT_DOUBLE_EQ(*g.power.draw_w, 512.345);
  EXPECT_DOUBLE_EQ(*g.power.default_limit_w, 700);
  EXPECT_EQ(g.ecc_aggregate.corrected, 3u);
  EXPECT_EQ(g.clock_events.size(), 9u);
  ASSERT_TRUE(g.nvlinks);
  EXPECT_EQ(g.nvlinks->size(), 4u);
  ASSERT_TRUE(g.fabric);
  EXPECT_EQ(g.fabric->state, "Completed");
  EXPECT_EQ(g.fabric->status, "Success");
  EXPECT_EQ(g.fabric->clique_id, "7");
  EXPECT_EQ(g.fabric->cluster_uuid, "a0a1a2a3-a4a5-a6a7-a8a9-aaabacadaeaf");
  EXPECT_EQ(g.fabric->health_summary, "Healthy");
  EXPECT_EQ(g.fabric->health.at("bandwidth"), "Full");
  auto v = judge({out});
  for (const char* id : {"gpu.persistence", "gpu.clocks", "gpu.ecc", "gpu.pcie", "gpu.nvlink", "gpu.fabric"})
    EXPECT_EQ(status_of(v, kGpu0, id), Status::pass) << id << "\n" << rules_of(v, kGpu0);
}

// The active NVLinks' speed (nvmlDeviceGetFieldValues, NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON) reaches
// gpu.nvlink as link_gbps, which expect learn holds the kind to; a driver that does not say it
// leaves it out (no figure, no guess).
TEST(GpuHelper, NvlinkSpeedReadFromTheDriversFieldValue) {
  TempDir d;
  auto out = parsed(run_helper(d, "gpus 2\n" + healthy(0) + healthy(1) + "0 nvlink_speed_mbps 26562\n"));
  ASSERT_EQ(out.snapshot.gpus.size(), 2u);
  ASSERT_TRUE(out.snapshot.gpus[0].nvlink_speed_gbps);
  EXPECT_DOUBLE_EQ(*out.snapshot.gpus[0].nvlink_speed_gbps, 26.562);
  EXPECT_FALSE(out.snapshot.gpus[1].nvlink_speed_gbps);
  auto v = judge({out});
  const auto& nv = v.at(kGpu0).at("gpu.nvlink");
  EXPECT_EQ(nv.status, Status::pass);
  auto m = std::find_if(nv.metrics.begin(), nv.metrics.end(), [](const auto& kv) { return kv.first == "link_gbps"; });
  ASSERT_NE(m, nv.metrics.end());
  EXPECT_DOUBLE_EQ(m->second, 26.562);
  EXPECT_NE(nv.evidence.at(0).observed.find("4 of 4 links up at 26.562 GB/s per link and direction"), std::string::npos) << nv.evidence.at(0).observed;
  const auto& other = v.at(kGpu1).at("gpu.nvlink");
  EXPECT_TRUE(std::none_of(other.metrics.begin(), other.metrics.end(), [](const auto& kv) { return kv.first == "link_gbps"; }));
}

TEST(GpuHelper, PersistenceOffWarnsAndTheGpuIsNotQueried) {
  TempDir d;
  // GPU 1 has every fact scripted, but its persistence mode is off.
  std::string script = "gpus 2\n" + healthy(0) + healthy(1) + "1 persistence 0\n";
  auto out = parsed(run_helper(d, script));
  ASSERT_EQ(out.snapshot.gpus.size(), 2u);
  EXPECT_EQ(out.skipped.at("GPU-fake-0001"), "persistence mode off");
  EXPECT_FALSE(out.snapshot.gpus[1].clocks.sm_mhz);
  auto v = judge({out});
  EXPECT_EQ(status_of(v, kGpu0, "gpu.persistence"), Status::pass);
  EXPECT_EQ(status_of(v, kGpu1, "gpu.persistence"), Status::warn);
  EXPECT_EQ(status_of(v, kGpu1, "gpu.clocks"), Status::skip);
  EXPECT_EQ(status_of(v, kGpu1, "gpu.ecc"), Status::skip);

  // The calls made for GPU 1: identity and the mode, nothing else.
  std::set<std::string> calls0, calls1;
  std::istringstream log(perfgap::fixture::read_file(d.file("calls.txt")));
  for (std::string call, gpu; log >> call >> gpu;) (gpu == "1" ? calls1 : gpu == "0" ? calls0 : calls0).insert(call);
  EXPECT_EQ(calls1, (std::set<std::string>{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
                                           "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPersistenceMode"}));
  EXPECT_TRUE(calls0.count("nvmlDeviceGetClockInfo"));
  EXPECT_TRUE(calls0.count("nvmlDeviceGetTotalEccErrors"));

  // --nvml asks it anyway.
  std::remove(d.file("calls.txt").c_str());
  auto forced = parsed(run_helper(d, script, args("--nvml")));
  EXPECT_TRUE(forced.forced);
  EXPECT_TRUE(forced.skipped.empty());
  EXPECT_EQ(forced.snapshot.gpus.at(1).clocks.sm_mhz, 1980);
  EXPECT_NE(perfgap::fixture::read_file(d.file("calls.txt")).find("nvmlDeviceGetTotalEccErrors 1"), std::string::npos);
}

TEST(GpuHelper, PersistenceUnknownSkipsTheRuleAndTheQueries) {
  TempDir d;
  std::string script = "gpus 1\n" + healthy(0) + "0 fail nvmlDeviceGetPersistenceMode 3\n";
  auto out = parsed(run_helper(d, script));
  EXPECT_EQ(out.skipped.at("GPU-fake-0000"), "persistence mode unknown");
  auto v = judge({out});
  EXPECT_EQ(status_of(v, kGpu0, "gpu.persistence"), Status::skip);
  EXPECT_EQ(perfgap::fixture::read_file(d.file("calls.txt")).find("nvmlDeviceGetClockInfo"), std::string::npos);
}

TEST(GpuHelper, ClocksFailWarnAndSkip) {
  TempDir d;
  // 0x8 hw_slowdown; 0x80 power brake; 0x4 alone (SW power cap) is no failure.
  auto hw = judge_one(d, "0 clock_events 0x8\n");
  EXPECT_EQ(status_of(hw, kGpu0, "gpu.clocks"), Status::fail);
  EXPECT_NE(hw[kGpu0]["gpu.clocks"].title.find("HW slowdown"), std::string::npos);
  auto brake = judge_one(d, "0 clock_events 0x80\n");
  EXPECT_EQ(status_of(brake, kGpu0, "gpu.clocks"), Status::fail);
  auto capped = judge_one(d, "0 clock_events 0x4\n0 enforced_mw 500000\n");
  EXPECT_EQ(status_of(capped, kGpu0, "gpu.clocks"), Status::warn) << rules_of(capped, kGpu0);
  auto app = judge_one(d, "0 app_sm 1500\n");
  EXPECT_EQ(status_of(app, kGpu0, "gpu.clocks"), Status::warn);
  // No clock event reasons at all (the call not supported): skip, not pass.
  std::string none = healthy(0);
  none.erase(none.find("0 clock_events 0x0\n"), std::string("0 clock_events 0x0\n").size());
  auto skip = judge({parsed(run_helper(d, "gpus 1\n" + none))});
  EXPECT_EQ(status_of(skip, kGpu0, "gpu.clocks"), Status::skip);
}

TEST(GpuHelper, EccFailPassAndSkip) {
  TempDir d;
  auto unc = judge_one(d, "0 vol_unc 2\n");
  EXPECT_EQ(status_of(unc, kGpu0, "gpu.ecc"), Status::fail);
  auto pending = judge_one(d, "0 remap_pending 1\n");
  EXPECT_EQ(status_of(pending, kGpu0, "gpu.ecc"), Status::fail);
  auto failure = judge_one(d, "0 remap_failure 1\n");
  EXPECT_EQ(status_of(failure, kGpu0, "gpu.ecc"), Status::fail);
  auto retire = judge_one(d, "0 retired_pending 1\n");
  EXPECT_EQ(status_of(retire, kGpu0, "gpu.ecc"), Status::fail);
  auto off = judge_one(d, "0 ecc 0\n");
  EXPECT_EQ(status_of(off, kGpu0, "gpu.ecc"), Status::skip);
  // Lifetime (aggregate) uncorrectable errors alone do not fail.
  auto agg = judge_one(d, "0 agg_unc 4\n");
  EXPECT_EQ(status_of(agg, kGpu0, "gpu.ecc"), Status::pass);
}

TEST(GpuHelper, PcieWarnOnReplayGrowthAndNarrowLink) {
  TempDir d;
  auto first = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 replay 10\n"));
  auto second = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 replay 15\n"));
  auto grew = judge({first, second});
  EXPECT_EQ(status_of(grew, kGpu0, "gpu.pcie"), Status::warn);
  EXPECT_NE(grew[kGpu0]["gpu.pcie"].title.find("grew by 5"), std::string::npos);
  auto same = judge({first, first});
  EXPECT_EQ(status_of(same, kGpu0, "gpu.pcie"), Status::pass);
  auto narrow = judge_one(d, "0 pcie_width 8\n");
  EXPECT_EQ(status_of(narrow, kGpu0, "gpu.pcie"), Status::warn);
  // Below its max generation while idle: not judged.
  auto idle = judge_one(d, "0 pcie_gen 1\n0 util 0\n0 pstate 8\n");
  EXPECT_EQ(status_of(idle, kGpu0, "gpu.pcie"), Status::skip);
}

TEST(GpuHelper, NvlinkFailWarnAndSkip) {
  TempDir d;
  auto down = judge({parsed(run_helper(d, "gpus 2\n" + healthy(0) + healthy(1) + "1 nvlink 3 down\n"))});
  EXPECT_EQ(status_of(down, kGpu0, "gpu.nvlink"), Status::pass);
  EXPECT_EQ(status_of(down, kGpu1, "gpu.nvlink"), Status::fail);
  // CRC (flit + data) errors growing between two runs.
  auto a = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 nvlink 2 up 0 0 1 1\n"));
  auto b = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 nvlink 2 up 0 0 4 2\n"));
  EXPECT_EQ(b.snapshot.gpus.at(0).nvlinks->at(2).crc_errors, 6u);
  auto grew = judge({a, b});
  EXPECT_EQ(status_of(grew, kGpu0, "gpu.nvlink"), Status::warn) << rules_of(grew, kGpu0);
  EXPECT_NE(grew[kGpu0]["gpu.nvlink"].title.find("link 2 +4"), std::string::npos);
  // No NVLink (link 0 not supported): no list, skip.
  std::string pcie_only;
  std::istringstream in(healthy(0));
  for (std::string line; std::getline(in, line);)
    if (line.find("nvlink") == std::string::npos) pcie_only += line + "\n";
  auto none = parsed(run_helper(d, "gpus 1\n" + pcie_only));
  EXPECT_FALSE(none.snapshot.gpus.at(0).nvlinks);
  EXPECT_EQ(status_of(judge({none}), kGpu0, "gpu.nvlink"), Status::skip);
}

TEST(GpuHelper, FabricFailPassAndSkip) {
  TempDir d;
  auto probing = judge_one(d, "0 fabric_state 2\n");
  EXPECT_EQ(status_of(probing, kGpu0, "gpu.fabric"), Status::fail);
  EXPECT_NE(probing[kGpu0]["gpu.fabric"].title.find("In Progress"), std::string::npos);
  // Degraded bandwidth (mask field 1) and an unhealthy summary.
  auto degraded = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 health_mask 0xa9\n0 health_summary 2\n"));
  EXPECT_EQ(degraded.snapshot.gpus.at(0).fabric->health.at("bandwidth"), "Degraded");
  EXPECT_EQ(status_of(judge({degraded}), kGpu0, "gpu.fabric"), Status::fail);
  auto status = judge_one(d, "0 fabric_status 15\n");
  EXPECT_EQ(status_of(status, kGpu0, "gpu.fabric"), Status::fail);
  // Not on an NVLink-switch system: state 0 (not supported).
  auto not_fabric = judge_one(d, "0 fabric_state 0\n");
  EXPECT_EQ(status_of(not_fabric, kGpu0, "gpu.fabric"), Status::skip);
  // A driver that accepts only the v2 struct: the mask without a summary.
  auto v2 = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 fabric_version 2\n"));
  EXPECT_FALSE(v2.snapshot.gpus.at(0).fabric->health_summary);
  EXPECT_EQ(v2.snapshot.gpus.at(0).fabric->health.at("route_unhealthy"), "False");
  EXPECT_EQ(status_of(judge({v2}), kGpu0, "gpu.fabric"), Status::pass);
}

TEST(GpuHelper, MigWarnPassAndSkip) {
  TempDir d;
  auto on = judge_one(d, "0 mig 1\n");
  EXPECT_EQ(status_of(on, kGpu0, "gpu.mig"), Status::warn);
  EXPECT_NE(on[kGpu0]["gpu.mig"].title.find("MIG mode enabled"), std::string::npos);
  EXPECT_EQ(status_of(judge_one(d, "0 mig 0\n"), kGpu0, "gpu.mig"), Status::pass);
  // A GPU without MIG: the call is not supported, the rule cannot say.
  EXPECT_EQ(status_of(judge_one(d, ""), kGpu0, "gpu.mig"), Status::skip);
}

TEST(GpuHelper, OldDriverLibraryGivesAbsentFactsNotErrors) {
  TempDir d;
  auto out = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 clock_events 0x40\n", old_driver()));
  for (const char* call :
       {"nvmlDeviceGetCurrentClocksEventReasons", "nvmlDeviceGetRemappedRows", "nvmlDeviceGetGpuFabricInfoV", "nvmlDeviceGetGpuFabricInfo"})
    EXPECT_NE(std::find(out.missing_calls.begin(), out.missing_calls.end(), call), out.missing_calls.end()) << call;
  const auto& g = out.snapshot.gpus.at(0);
  EXPECT_TRUE(g.clock_events.at("hw_thermal_slowdown"));  // from the older ThrottleReasons call
  EXPECT_FALSE(g.remapped_rows);
  EXPECT_FALSE(g.fabric);
  EXPECT_TRUE(out.errors.empty());
  auto v = judge({out});
  EXPECT_EQ(status_of(v, kGpu0, "gpu.clocks"), Status::fail);
  EXPECT_EQ(status_of(v, kGpu0, "gpu.fabric"), Status::skip);
  EXPECT_EQ(status_of(v, kGpu0, "gpu.ecc"), Status::pass);
}

TEST(GpuHelper, FailedCallsAreNamedWithTheirCode) {
  TempDir d;
  auto out = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 fail nvmlDeviceGetPowerUsage 15\n"));
  EXPECT_EQ(out.errors.at("GPU-fake-0000").at("nvmlDeviceGetPowerUsage"), 15);
  EXPECT_FALSE(out.snapshot.gpus.at(0).power.draw_w);
  EXPECT_TRUE(out.snapshot.gpus.at(0).power.enforced_limit_w);
}

TEST(GpuHelper, StringsAreEscaped) {
  TempDir d;
  auto out = parsed(run_helper(d, "gpus 1\n" + healthy(0) + "0 name A\"B\\C\n"));
  EXPECT_EQ(out.snapshot.gpus.at(0).name, "A\"B\\C");
}

TEST(GpuHelper, ExitsWithoutLibraryOrInit) {
  // Where a real NVML is installed the loader finds it past LD_LIBRARY_PATH: nothing to prove.
  if (void* real = dlopen("libnvidia-ml.so.1", RTLD_LAZY)) {
    dlclose(real);
    GTEST_SKIP() << "a real libnvidia-ml.so.1 is installed on this machine";
  }
  TempDir d, empty;
  auto none = run_helper(d, "gpus 1\n", library_in(empty.path()));
  EXPECT_EQ(none.rc, 3);
  EXPECT_TRUE(none.out.empty());
  EXPECT_NE(none.err.find("libnvidia-ml.so.1"), std::string::npos);
  EXPECT_EQ(std::count(none.err.begin(), none.err.end(), '\n'), 1);
}

TEST(GpuHelper, InitFailureAndBadArguments) {
  TempDir d;
  auto init = run_helper(d, "fail nvmlInit_v2 9\n");
  EXPECT_EQ(init.rc, 4);
  EXPECT_TRUE(init.out.empty());
  EXPECT_NE(init.err.find("nvmlInit_v2"), std::string::npos);
  auto bad = run_helper(d, "gpus 1\n", args("--frobnicate"));
  EXPECT_EQ(bad.rc, 2);
  EXPECT_TRUE(bad.out.empty());
}

TEST(GpuHelper, ADriverThatDoesNotAnswerIsCutAtTheDeadline) {
  TempDir d;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_helper(d, "gpus 1\n" + healthy(0) + "hang nvmlDeviceGetClockInfo 30\n", args("--deadline 1"));
  auto took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.rc, 5);
  EXPECT_TRUE(r.out.empty());  // no half document
  EXPECT_NE(r.err.find("deadline"), std::string::npos);
  EXPECT_LT(took, 10);
  for (const char* bad : {"--deadline 0", "--deadline x", "--deadline 601", "--deadline"})
    EXPECT_EQ(run_helper(d, "gpus 1\n", args(bad)).rc, 2) << bad;
}

TEST(GpuHelper, LinksAgainstLibcOnly) {
  // What the dynamic section asks the loader for: libc (and libdl on glibc before 2.34).
  FILE* p = popen("readelf -d " PERFGAP_GPU_HELPER " 2>/dev/null", "r");
  ASSERT_TRUE(p);
  std::string out;
  char buf[4096];
  for (std::size_t n; (n = fread(buf, 1, sizeof buf, p)) > 0;) out.append(buf, n);
  int st = pclose(p);
  if (!WIFEXITED(st) || WEXITSTATUS(st) != 0 || out.find("Dynamic section") == std::string::npos) {
    // readelf (binutils) absent or unable to read it: nothing to judge.
    GTEST_SKIP() << "readelf -d could not read " << PERFGAP_GPU_HELPER;
  }
  std::vector<std::string> needed;
  std::istringstream in(out);
  for (std::string line; std::getline(in, line);)
    if (auto a = line.find("(NEEDED)"); a != std::string::npos) {
      auto l = line.find('['), r = line.find(']');
      if (l != std::string::npos && r > l) needed.push_back(line.substr(l + 1, r - l - 1));
    }
  EXPECT_FALSE(needed.empty());
  for (const auto& lib : needed)
    EXPECT_TRUE(lib.starts_with("libc.so") || lib.starts_with("libdl.so") || lib.starts_with("ld-linux")) << lib;
}

}  // namespace gpu_helper_test
}  // namespace

#endif  // PERFGAP_GPU_HELPER

namespace {

TEST(ParsersNvmlJson, RejectsWhatIsNotTheHelpersDocument) {
  using perfgap::parsers::parse_nvml_json;
  auto syntax = parse_nvml_json("{\"schema\":1,\n\"gpus\":[\n{\"name\":}]}");
  ASSERT_FALSE(syntax);
  EXPECT_EQ(syntax.error().line, 3);
  EXPECT_FALSE(parse_nvml_json("[1,2]"));
  // Found by fuzz_nvidia_smi: a number past a double's range is an error, not an exception.
  EXPECT_FALSE(parse_nvml_json(R"({"schema":1,"gpus":[{"uuid":"GPU-1","temp_c":8e999}]})"));
  auto schema = parse_nvml_json(R"({"schema":2,"gpus":[]})");
  ASSERT_FALSE(schema);
  EXPECT_NE(schema.error().message.find("schema 1"), std::string::npos);
  auto type = parse_nvml_json(R"({"schema":1,"gpus":[{"uuid":"GPU-1","clocks":{"sm_mhz":"fast"}}]})");
  ASSERT_FALSE(type);
  EXPECT_NE(type.error().message.find("gpus[0].clocks.sm_mhz"), std::string::npos);
  EXPECT_FALSE(parse_nvml_json(R"({"schema":1})"));
  EXPECT_FALSE(parse_nvml_json(R"({"schema":1,"gpus":[{"uuid":"GPU-1","ecc":{"volatile":{"uncorrected":-1}}}]})"));
}

TEST(ParsersNvmlJson, AbsentFactsStayAbsent) {
  auto p =
      perfgap::parsers::parse_nvml_json(R"({"schema":1,"driver_version":"535.1","gpus":[{"uuid":"GPU-1","pci_bus_id":"00000000:01:00.0",
    "persistence":true,"clocks":{},"power":{"draw_w":100.5},"ecc":{"volatile":{},"aggregate":{}},"pcie":{},
    "fabric":{"state":3,"status":0,"clique_id":2,"cluster_uuid":"00","health_mask":770}},{"index":1,"skipped":"no handle"}]})");
  ASSERT_TRUE(p) << p.error().describe();
  ASSERT_EQ(p->snapshot.gpus.size(), 1u);  // the GPU without a handle has nothing to judge
  const auto& g = p->snapshot.gpus[0];
  EXPECT_FALSE(g.clocks.sm_mhz);
  EXPECT_FALSE(g.ecc_volatile.uncorrected);
  EXPECT_FALSE(g.nvlinks);
  EXPECT_TRUE(g.clock_events.empty());
  EXPECT_EQ(g.power.draw_w, 100.5);
  // 770 = 0x302: bandwidth Full, incorrect configuration "chassis serial number".
  EXPECT_EQ(g.fabric->health.at("bandwidth"), "Full");
  EXPECT_EQ(g.fabric->health.at("incorrect_configuration"), "True");
  EXPECT_EQ(g.fabric->health.at("incorrect_configuration_reason"), "chassis serial number");
  EXPECT_EQ(g.fabric->health.count("route_unhealthy"), 0u);
}

}  // namespace
