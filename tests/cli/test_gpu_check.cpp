// perfgap check's gpu.* checks with the real perfgap-gpu against the fake libnvidia-ml.so.1
// (tests/support/fake_nvml.cpp): statuses end to end, that a GPU out of persistence mode gets
// no NVML call beyond its identity and mode without --nvml, snapshot then check --root giving
// the same findings, counter growth between the two stored documents, and the skips when the
// helper is missing, the driver library is absent or the tree did not capture it.
#include <dlfcn.h>
#include <unistd.h>

#include <filesystem>
#include <map>
#include <set>
#include <sstream>
#include <string>
#include <vector>

#include <gtest/gtest.h>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

#if defined(PERFGAP_GPU_HELPER) && defined(PERFGAP_FAKE_NVML_DIR)

namespace {
namespace gpu_check_test {

namespace fs = std::filesystem;
using perfgap::fixture::read_file;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

const std::string kGpu0 = "0000:18:00.0", kGpu1 = "0000:19:00.0";
const std::vector<std::string> kRules = {"gpu.persistence", "gpu.clocks", "gpu.ecc", "gpu.pcie", "gpu.nvlink", "gpu.fabric", "gpu.mig"};

// GPU g with every rule passing (the fake's keys; unset facts are NOT_SUPPORTED).
std::string healthy(int g, const std::string& replay = "0") {
  std::string s;
  for (const std::string& line : std::vector<std::string>{"persistence 1", "pstate 0", "util 90", "sm 1980", "app_sm 1980", "default_app_sm 1980", "max_sm 1980", "clock_events 0x0",
        "enforced_mw 700000", "default_mw 700000", "ecc 1", "vol_corr 0", "vol_unc 0", "remap_corr 0", "remap_unc 0",
        "remap_pending 0", "remap_failure 0", "pcie_gen 5", "pcie_gen_max 5", "pcie_width 16", "pcie_width_max 16",
        "replay " + replay, "nvlink 0 up", "nvlink 1 up", "fabric_state 3", "fabric_status 0", "clique 7", "health_mask 0xaa",
        "health_summary 1", "mig 0"})
    s += std::to_string(g) + " " + line + "\n";
  return s;
}

struct Node {
  TempDir dir;
  std::string script;
  std::vector<std::pair<std::string, std::string>> env(const std::string& lib = std::string(PERFGAP_FAKE_NVML_DIR) + "/current",
                                                       const std::string& helper = PERFGAP_GPU_HELPER) const {
    return {{"PERFGAP_GPU_HELPER", helper},
            {"LD_LIBRARY_PATH", lib},
            {"FAKE_NVML_SCRIPT", write_in(dir, "script.txt", script)},
            {"FAKE_NVML_CALLS", dir.file("calls.txt")}};
  }
};

struct Verdict {
  std::string status, title;
  std::vector<std::string> evidence;
};
// (id, subject) -> verdict of the gpu.* findings but gpu.inventory (that one reads /sys).
std::map<std::pair<std::string, std::string>, Verdict> gpu_findings(const perfgap::fixture::RunResult& r) {
  std::map<std::pair<std::string, std::string>, Verdict> out;
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
  nlohmann::json report;
  try {
    report = nlohmann::json::parse(r.out);
  } catch (const std::exception& e) {
    ADD_FAILURE() << e.what() << "\n" << r.out;
    return out;
  }
  for (const auto& f : report.at("findings")) {
    const auto id = f.at("id").get<std::string>();
    if (id.rfind("gpu.", 0) != 0 || id == "gpu.inventory") continue;
    Verdict v{f.at("status").get<std::string>(), f.at("title").get<std::string>(), {}};
    for (const auto& e : f.value("evidence", nlohmann::json::array())) v.evidence.push_back(e.value("observed", std::string()));
    out[{id, f.value("subject", std::string())}] = v;
  }
  return out;
}

// The verdict of (id, subject); an empty one (no status) when there is none.
Verdict at(const std::map<std::pair<std::string, std::string>, Verdict>& v, const std::string& id, const std::string& subject) {
  auto it = v.find({id, subject});
  return it == v.end() ? Verdict{} : it->second;
}

perfgap::fixture::RunResult check(const std::vector<std::pair<std::string, std::string>>& env, std::vector<std::string> extra = {}) {
  std::vector<std::string> args = {"check", "--only", "gpu.*", "--format", "json"};
  args.insert(args.end(), extra.begin(), extra.end());
  return run_binary(PERFGAP_BINARY, args, env);
}

// The NVML calls the fake logged for GPU `gpu` ("-1": calls for no GPU).
std::multiset<std::string> calls_for(const Node& n, const std::string& gpu) {
  std::multiset<std::string> out;
  std::istringstream log(read_file(n.dir.file("calls.txt")));
  for (std::string call, g; log >> call >> g;)
    if (g == gpu) out.insert(call);
  return out;
}

// A real driver library on this machine would answer instead of the fake's absence.
bool real_nvml_present() {
  void* h = ::dlopen("libnvidia-ml.so.1", RTLD_LAZY | RTLD_LOCAL);
  if (h) ::dlclose(h);
  return h != nullptr;
}

TEST(GpuCheck, PersistentGpuPassesAndAnotherIsLeftAloneWithoutNvml) {
  Node n;
  n.script = "gpus 2\n" + healthy(0) + healthy(1) + "1 persistence 0\n";
  auto v = gpu_findings(check(n.env()));
  for (const auto& id : kRules) {
    ASSERT_TRUE(v.count({id, kGpu0})) << id;
    EXPECT_EQ(at(v, id, kGpu0).status, "pass") << id << ": " << at(v, id, kGpu0).title;
  }
  EXPECT_EQ((at(v, "gpu.persistence", kGpu1).status), "warn");
  for (const auto& id : kRules) {
    if (id == "gpu.persistence") continue;
    const auto& f = at(v, id, kGpu1);
    EXPECT_EQ(f.status, "skip") << id;
    EXPECT_NE(f.title.find("not queried, persistence mode off"), std::string::npos) << f.title;
    EXPECT_NE(f.title.find("--nvml"), std::string::npos) << f.title;
  }
  // Two runs of the helper (two initialisations), and for GPU 1 nothing beyond identity and mode.
  EXPECT_EQ(calls_for(n, "-1").count("nvmlInit_v2"), 2u);
  std::set<std::string> gpu1;
  for (const auto& c : calls_for(n, "1")) gpu1.insert(c);
  EXPECT_EQ(gpu1, (std::set<std::string>{"nvmlDeviceGetHandleByIndex_v2", "nvmlDeviceGetName", "nvmlDeviceGetUUID",
                                         "nvmlDeviceGetPciInfo_v3", "nvmlDeviceGetPersistenceMode"}));
  EXPECT_TRUE(calls_for(n, "0").count("nvmlDeviceGetTotalEccErrors"));

  // --nvml passes through: GPU 1 is queried and judged (still warned for its mode).
  fs::remove(n.dir.file("calls.txt"));
  auto forced = gpu_findings(check(n.env(), {"--nvml"}));
  EXPECT_EQ((at(forced, "gpu.persistence", kGpu1).status), "warn");
  for (const auto& id : kRules)
    if (id != "gpu.persistence") {
      EXPECT_EQ((at(forced, id, kGpu1).status), "pass") << id << ": " << at(forced, id, kGpu1).title;
    }
  EXPECT_TRUE(calls_for(n, "1").count("nvmlDeviceGetTotalEccErrors"));
}

TEST(GpuCheck, RulesFailAndWarnThroughTheCheck) {
  Node n;
  // HW slowdown (bit 0x8), a volatile uncorrectable error, a narrow link, one NVLink down.
  n.script = "gpus 2\n" + healthy(0) + healthy(1) +
             "1 clock_events 0x8\n1 vol_unc 2\n1 pcie_width 8\n1 nvlink 1 down\n1 fabric_state 2\n";
  auto v = gpu_findings(check(n.env()));
  EXPECT_EQ((at(v, "gpu.clocks", kGpu1).status), "fail") << at(v, "gpu.clocks", kGpu1).title;
  EXPECT_EQ((at(v, "gpu.ecc", kGpu1).status), "fail");
  EXPECT_EQ((at(v, "gpu.pcie", kGpu1).status), "warn");
  EXPECT_EQ((at(v, "gpu.nvlink", kGpu1).status), "fail");
  EXPECT_EQ((at(v, "gpu.fabric", kGpu1).status), "fail");
  EXPECT_EQ((at(v, "gpu.clocks", kGpu0).status), "pass");
  EXPECT_EQ(check(n.env()).status, 1);  // a fail is a failing report
}

TEST(GpuCheck, SnapshotThenReplayGivesTheLiveFindings) {
  Node n;
  n.script = "gpus 2\n" + healthy(0) + healthy(1) + "1 persistence 0\n0 ecc 0\n";
  auto live = gpu_findings(check(n.env()));
  const std::string snap = n.dir.file("snap");
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", snap}, n.env());
  ASSERT_EQ(s.status, 0) << s.err;
  ASSERT_TRUE(fs::exists(snap + "/.perfgap/nvml-1.json"));
  ASSERT_TRUE(fs::exists(snap + "/.perfgap/nvml-2.json"));
  // Replayed anywhere: no helper needed, none run.
  fs::remove(n.dir.file("calls.txt"));
  auto replay = gpu_findings(check({{"PERFGAP_GPU_HELPER", "/nonexistent/perfgap-gpu"}}, {"--root", snap}));
  EXPECT_FALSE(fs::exists(n.dir.file("calls.txt")));
  ASSERT_EQ(live.size(), replay.size());
  // Seven rules for two GPUs, gpu.nvml, and the five kernel-log gpu.* findings (xid, fallen off
  // the bus, NVLink Xids, NVSwitch SXids, driver errors).
  ASSERT_EQ(live.size(), 20u);
  for (const auto& [key, f] : live) {
    ASSERT_TRUE(replay.count(key)) << key.first << " " << key.second;
    EXPECT_EQ(replay[key].status, f.status) << key.first << " " << key.second;
    EXPECT_EQ(replay[key].title, f.title) << key.first << " " << key.second;
  }
}

TEST(GpuCheck, ReplayedDocumentsJudgeCounterGrowth) {
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  const std::string snap = n.dir.file("snap");
  ASSERT_EQ(run_binary(PERFGAP_BINARY, {"snapshot", snap}, n.env()).status, 0);
  // The second document as the helper prints it after 5 replays and NVLink CRC errors.
  n.script = "gpus 1\n" + healthy(0, "5") + "0 nvlink 1 up 0 0 3 1\n";
  auto later = run_binary(PERFGAP_GPU_HELPER, {}, n.env());
  ASSERT_EQ(later.status, 0) << later.err;
  ASSERT_TRUE(perfgap::fixture::write_file(snap + "/.perfgap/nvml-2.json", later.out));
  auto v = gpu_findings(check({}, {"--root", snap}));
  EXPECT_EQ((at(v, "gpu.pcie", kGpu0).status), "warn");
  EXPECT_NE(at(v, "gpu.pcie", kGpu0).title.find("replay counter grew by 5"), std::string::npos) << at(v, "gpu.pcie", kGpu0).title;
  EXPECT_EQ((at(v, "gpu.nvlink", kGpu0).status), "warn");
  EXPECT_NE(at(v, "gpu.nvlink", kGpu0).title.find("link 1 +4"), std::string::npos) << at(v, "gpu.nvlink", kGpu0).title;

  // One document only: growth is not judged, and the evidence says why.
  fs::remove(snap + "/.perfgap/nvml-2.json");
  auto one = gpu_findings(check({}, {"--root", snap}));
  EXPECT_EQ((at(one, "gpu.pcie", kGpu0).status), "pass");
  bool said = false;
  for (const auto& e : at(one, "gpu.pcie", kGpu0).evidence) said = said || e.find("one sample in the tree") != std::string::npos;
  EXPECT_TRUE(said);
}

TEST(GpuCheck, ShortBudgetTakesOneSample) {
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  const std::string cfg = write_in(n.dir, "config.yaml", "check_timeout_s: 3\n");
  auto v = gpu_findings(check(n.env(), {"--config", cfg}));
  EXPECT_EQ((at(v, "gpu.nvlink", kGpu0).status), "pass");
  EXPECT_NE(at(v, "gpu.nvlink", kGpu0).title.find("one capture"), std::string::npos) << at(v, "gpu.nvlink", kGpu0).title;
  EXPECT_EQ(calls_for(n, "-1").count("nvmlInit_v2"), 1u);
}

TEST(GpuCheck, SkipsSayWhyThereAreNoNvmlFacts) {
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  auto title = [](const perfgap::fixture::RunResult& r) {
    auto v = gpu_findings(r);
    return v.count({"gpu.clocks", ""}) ? at(v, "gpu.clocks", "").status + ": " + at(v, "gpu.clocks", "").title : std::string("none");
  };
  // No override and no helper beside perfgap (the build keeps it in src/gpu_helper/): the copy
  // embedded in perfgap runs, and says what it found (the fallbacks: FactsGpuHelperChoice).
  if (!real_nvml_present()) {
    auto embedded = title(check({{"PERFGAP_GPU_HELPER", ""}, {"LD_LIBRARY_PATH", ""}}));
    EXPECT_NE(embedded.find("skip: no NVIDIA driver library (libnvidia-ml.so.1)"), std::string::npos) << embedded;
  }
  auto wrong = title(check({{"PERFGAP_GPU_HELPER", "/nonexistent/perfgap-gpu"}}));
  EXPECT_NE(wrong.find("skip: PERFGAP_GPU_HELPER=/nonexistent/perfgap-gpu: not present"), std::string::npos) << wrong;
  if (!real_nvml_present()) {
    TempDir empty;
    auto no_lib = title(check(n.env(empty.path())));
    EXPECT_NE(no_lib.find("skip: no NVIDIA driver library (libnvidia-ml.so.1)"), std::string::npos) << no_lib;
  }
  n.script = "fail nvmlInit_v2 12\n";
  auto no_init = title(check(n.env()));
  EXPECT_NE(no_init.find("skip: NVML did not initialise"), std::string::npos) << no_init;
  // A driver that does not answer: cut at the deadline the budget leaves (3 s: one run of 1 s).
  n.script = "gpus 1\n" + healthy(0) + "hang nvmlDeviceGetClockInfo 30\n";
  const std::string cfg = write_in(n.dir, "config.yaml", "check_timeout_s: 3\n");
  auto hung = title(check(n.env(), {"--config", cfg}));
  EXPECT_NE(hung.find("skip: NVML did not answer within 1 s"), std::string::npos) << hung;

  // A snapshot where the helper could not run records why, and the replay says it.
  const std::string snap = n.dir.file("snap");
  ASSERT_EQ(run_binary(PERFGAP_BINARY, {"snapshot", snap}, {{"PERFGAP_GPU_HELPER", "/nonexistent/perfgap-gpu"}}).status, 0);
  EXPECT_FALSE(fs::exists(snap + "/.perfgap/nvml-1.json"));
  auto replay = title(check({}, {"--root", snap}));
  EXPECT_NE(replay.find("skip: when the snapshot was taken: PERFGAP_GPU_HELPER=/nonexistent/perfgap-gpu: not present"),
            std::string::npos)
      << replay;
  // A tree from elsewhere without the documents: not captured.
  fs::remove(snap + "/.perfgap/nvml-why.txt");
  auto bare = title(check({}, {"--root", snap}));
  EXPECT_NE(bare.find("skip: not captured"), std::string::npos) << bare;
}

// What the README promises: perfgap copied alone anywhere carries the helper, started from
// memory (the evidence says which copy ran).
TEST(GpuCheck, PerfgapCopiedAloneRunsItsEmbeddedHelper) {
  TempDir bin;
  fs::copy_file(PERFGAP_BINARY, bin.file("perfgap"));
  fs::permissions(bin.file("perfgap"), fs::perms::owner_all);
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  auto env = n.env();
  env[0].second = "";
  auto r = run_binary(bin.file("perfgap"), {"check", "--only", "gpu.*", "--format", "json"}, env);
  auto v = gpu_findings(r);
  EXPECT_EQ((at(v, "gpu.ecc", kGpu0).status), "pass") << r.out;
  auto report = nlohmann::json::parse(r.out);
  bool said = false;
  for (const auto& f : report.at("findings"))
    if (f.at("id") == "gpu.nvml") {
      EXPECT_EQ(f.at("status"), "pass") << f.dump();
      for (const auto& e : f.value("evidence", nlohmann::json::array()))
        said = said || e.value("source", std::string()).find("embedded in perfgap, run from memory") != std::string::npos;
    }
  EXPECT_TRUE(said) << r.out;
}

// NVIDIA GPUs on PCI whose NVML facts could not be read: not a bare OK in any format.
TEST(GpuCheck, UncheckedGpusAreAWarningInEveryFormat) {
  TempDir root;
  ASSERT_TRUE(perfgap::fixture::unpack_tree(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/cases/base/x86-2node.tree", root.path()));
  auto json = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--only", "gpu.nvml", "--format", "json"});
  auto report = nlohmann::json::parse(json.out);
  ASSERT_EQ(report.at("findings").size(), 1u) << json.out;
  const auto& f = report.at("findings")[0];
  EXPECT_EQ(f.at("status"), "warn");
  EXPECT_NE(f.at("title").get<std::string>().find("GPU health not checked on 2 NVIDIA GPUs: 0000:18:00.0, 0000:af:00.0: not captured"), std::string::npos) << f.dump();
  EXPECT_EQ(report.at("summary").at("warn"), 1);
  auto text = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--only", "gpu.nvml"});
  EXPECT_NE(text.out.find("GPU health not checked"), std::string::npos) << text.out;
  EXPECT_EQ(text.out.find(" OK"), std::string::npos) << text.out;
  auto junit = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--only", "gpu.nvml", "--format", "junit"});
  EXPECT_NE(junit.out.find("GPU health not checked"), std::string::npos) << junit.out;
  auto prom = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--only", "gpu.nvml", "--format", "prometheus"});
  EXPECT_NE(prom.out.find("id=\"gpu.nvml\",layer=\"gpu\",subject=\"\",status=\"warn\"} 1"), std::string::npos) << prom.out;
}

// The job images users run carry glibc 2.28 (RHEL 8) to 2.41 (Debian 13): the helper built
// on Debian 12 starts in Debian 11 (glibc 2.31) and 13 minbase roots, with the fake NVML
// library, and prints its document. Needs root and tools/release-check.sh's chroots.
TEST(GpuCheck, HelperStartsInDebian11And13Roots) {
  const char* dir = std::getenv("PERFGAP_CHROOT_DIR");
  const std::string chroots = dir && *dir ? dir : "/var/tmp/perfgap-chroots";
  const char* req = std::getenv("PERFGAP_REAL_CONTAINER_TESTS");
  const bool required = req && std::string(req) == "required";
  for (const std::string suite : {"bullseye", "trixie"}) {
    const std::string root = chroots + "/" + suite;
    if (::geteuid() != 0 || !fs::exists(root + "/bin/sh")) {
      if (required) ADD_FAILURE() << "PERFGAP_REAL_CONTAINER_TESTS=required but no root or no " << root;
      else GTEST_SKIP() << "needs root and " << root << " (tools/release-check.sh chroots)";
      return;
    }
    const std::string inside = "/tmp/pg-gpu-helper-test";
    fs::remove_all(root + inside);
    fs::create_directories(root + inside);
    fs::copy_file(PERFGAP_GPU_HELPER, root + inside + "/perfgap-gpu");
    fs::copy_file(std::string(PERFGAP_FAKE_NVML_DIR) + "/current/libnvidia-ml.so.1", root + inside + "/libnvidia-ml.so.1");
    ASSERT_TRUE(perfgap::fixture::write_file(root + inside + "/script.txt", "gpus 1\n" + healthy(0)));
    auto r = run_binary("/usr/sbin/chroot", {root, inside + "/perfgap-gpu"},
                        {{"LD_LIBRARY_PATH", inside}, {"FAKE_NVML_SCRIPT", inside + "/script.txt"}});
    fs::remove_all(root + inside);
    EXPECT_EQ(r.status, 0) << suite << ": " << r.err;
    EXPECT_NE(r.out.find("\"pci_bus_id\":\"00000000:18:00.0\""), std::string::npos) << suite << ": " << r.out;
  }
}

// vm.memfd_noexec (Linux 6.3+, per PID namespace, so set in a new one): at 1 the embedded
// copy still runs (perfgap asks for MFD_EXEC); at 2 executable memfds are refused, and perfgap
// runs the copy installed beside it, saying why; with none there, gpu.nvml says why it has nothing.
TEST(GpuCheck, MemfdNoexecFallsBackToTheInstalledHelper) {
  if (::geteuid() != 0 || !fs::exists("/proc/sys/vm/memfd_noexec") || ::access("/usr/bin/unshare", X_OK) != 0)
    GTEST_SKIP() << "needs root, unshare and a kernel with vm.memfd_noexec (6.3+)";
  TempDir bin;
  fs::copy_file(PERFGAP_BINARY, bin.file("perfgap"));
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  auto env = n.env();
  env[0].second = "";
  auto run_with = [&](int noexec) {
    const std::string cmd = "echo " + std::to_string(noexec) + " > /proc/sys/vm/memfd_noexec && exec " + bin.file("perfgap") +
                            " check --only gpu.nvml --format json";
    auto r = run_binary("/usr/bin/unshare", {"--pid", "--fork", "--mount-proc", "sh", "-c", cmd}, env);
    nlohmann::json rep;
    try {
      rep = nlohmann::json::parse(r.out);
    } catch (const std::exception&) {
      ADD_FAILURE() << r.out << r.err;
      return nlohmann::json::object();
    }
    return rep.at("findings").at(0);
  };
  auto one = run_with(1);
  EXPECT_EQ(one.value("status", ""), "pass") << one.dump();
  EXPECT_NE(one.dump().find("embedded in perfgap, run from memory"), std::string::npos) << one.dump();
  // No copy beside it: no NVML facts, and why (a warning on a node with NVIDIA GPUs on PCI,
  // a skip with the reason in its evidence on this machine without).
  auto none = run_with(2);
  EXPECT_NE(none.value("status", ""), "pass") << none.dump();
  EXPECT_NE(none.dump().find("cannot run from memory: memfd_create(MFD_EXEC) refused"), std::string::npos) << none.dump();
  fs::copy_file(PERFGAP_GPU_HELPER, bin.file("perfgap-gpu"));
  auto beside = run_with(2);
  EXPECT_EQ(beside.value("status", ""), "pass") << beside.dump();
  EXPECT_NE(beside.dump().find("beside perfgap, " + bin.file("perfgap-gpu")), std::string::npos) << beside.dump();
  EXPECT_NE(beside.dump().find("cannot run from memory"), std::string::npos) << beside.dump();
}

TEST(GpuCheck, HelperFoundBesidePerfgap) {
  TempDir bin;
  fs::copy_file(PERFGAP_BINARY, bin.file("perfgap"));
  fs::copy_file(PERFGAP_GPU_HELPER, bin.file("perfgap-gpu"));
  Node n;
  n.script = "gpus 1\n" + healthy(0);
  auto env = n.env();
  env[0].second = "";  // no override: the copy beside the binary is found
  auto r = run_binary(bin.file("perfgap"), {"check", "--only", "gpu.ecc", "--format", "json"}, env);
  auto v = gpu_findings(r);
  EXPECT_EQ((at(v, "gpu.ecc", kGpu0).status), "pass") << r.out;
}

}  // namespace gpu_check_test
}  // namespace

#endif
