// perfgap snapshot, with the real binary: replay equals live on the machine running the tests
// (CI: a VM), round trip through .tar.gz, bad archives, secrets, link cycles, and nothing
// written outside OUT.
#include <gtest/gtest.h>

#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <thread>
#include <filesystem>
#include <fstream>
#include <map>
#include <set>
#include <sstream>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::one_line;
using perfgap::fixture::read_file;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_file;

namespace {

std::vector<std::string> names_in(const fs::path& dir) {
  std::vector<std::string> out;
  for (const auto& e : fs::directory_iterator(dir)) out.push_back(e.path().filename().string());
  std::sort(out.begin(), out.end());
  return out;
}

// (id, subject) -> status, from a JSON report.
std::map<std::pair<std::string, std::string>, std::string> statuses(const std::string& json) {
  std::map<std::pair<std::string, std::string>, std::string> out;
  const auto report = nlohmann::json::parse(json);
  for (const auto& f : report.at("findings"))
    out[{f["id"].get<std::string>(), f.value("subject", std::string())}] = f["status"].get<std::string>();
  return out;
}

// Checks that sample live over a window and fall back to since-boot counters under --root
// (contract, "Sysroot"): their status may differ for a reason that is not the capture.
//   cpu.steal: steal over 1 s live, since boot replayed;
//   placement.shared_cores: thread CPU shares and IRQ rates over 1 s live, since thread start
//   and IRQ routing replayed.
const std::set<std::string> kTimeSampled = {"cpu.steal", "placement.shared_cores"};

// A process that perfgap takes for a training rank (LOCAL_RANK in its environment, a library
// named libnccl in its maps: glibc's empty libdl stub copied under that name and preloaded
// into `sleep`), with a secret in its environment; killed when the test ends.
class FakeRank {
 public:
  explicit FakeRank(const std::string& dir) {
    for (const char* lib : {"/lib/x86_64-linux-gnu/libdl.so.2", "/usr/lib/x86_64-linux-gnu/libdl.so.2",
                            "/lib/aarch64-linux-gnu/libdl.so.2", "/usr/lib/aarch64-linux-gnu/libdl.so.2", "/lib64/libdl.so.2"}) {
      if (!fs::exists(lib)) continue;
      fs::copy_file(lib, dir + "/libnccl.so.2");
      break;
    }
    library_found_ = fs::exists(dir + "/libnccl.so.2");
    if (!library_found_) return;
    std::vector<std::string> env_s = {"LOCAL_RANK=0", "RANK=0", "HF_TOKEN=rank-secret-4711", "LD_PRELOAD=" + dir + "/libnccl.so.2",
                                      "PATH=/usr/bin:/bin"};
    std::vector<char*> envp, argv;
    for (auto& e : env_s) envp.push_back(e.data());
    envp.push_back(nullptr);
    std::string sleep_s = "sleep", secs = "120";
    argv = {sleep_s.data(), secs.data(), nullptr};
    if (::posix_spawnp(&pid_, "sleep", nullptr, nullptr, argv.data(), envp.data()) != 0) pid_ = 0;
    // Until the dynamic loader has mapped the library, the process is not one yet.
    for (int i = 0; pid_ > 0 && i < 100; ++i) {
      std::ifstream maps("/proc/" + std::to_string(pid_) + "/maps");
      std::stringstream ss;
      ss << maps.rdbuf();
      if (ss.str().find("libnccl") != std::string::npos) break;
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ~FakeRank() {
    if (pid_ <= 0) return;
    ::kill(pid_, SIGKILL);
    ::waitpid(pid_, nullptr, 0);
  }
  pid_t pid() const { return pid_; }
  bool library_found() const { return library_found_; }

 private:
  pid_t pid_ = 0;
  bool library_found_ = false;
};

TEST(Snapshot, ReplayOfThisMachineGivesTheLiveFindings) {
  TempDir tmp;
  const std::string snap = tmp.path() + "/snap";
  FakeRank rank(tmp.path());
  if (rank.library_found()) {
    ASSERT_GT(rank.pid(), 0) << "could not start the fake rank";
  }
  auto live = run_binary(PERFGAP_BINARY, {"check", "--format", "json"});
  ASSERT_TRUE(live.status == 0 || live.status == 1) << live.err;
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", snap});
  ASSERT_EQ(s.status, 0) << s.err;
  auto replay = run_binary(PERFGAP_BINARY, {"check", "--root", snap, "--format", "json"});
  ASSERT_TRUE(replay.status == 0 || replay.status == 1) << replay.err;

  auto a = statuses(live.out), b = statuses(replay.out);
  std::set<std::string> seen;
  for (const auto& [key, status] : a) {
    seen.insert(key.first);
    if (kTimeSampled.count(key.first)) continue;
    ASSERT_TRUE(b.count(key)) << key.first << "@" << key.second << " missing from the replay";
    EXPECT_EQ(b.at(key), status) << key.first << "@" << key.second;
  }
  for (const auto& [key, status] : b) {
    if (!kTimeSampled.count(key.first)) {
      EXPECT_TRUE(a.count(key)) << key.first << "@" << key.second << " only in the replay";
    }
  }
  for (const auto& id : kTimeSampled) EXPECT_TRUE(seen.count(id)) << id << " not run";
  EXPECT_GT(a.size(), 20u);
  // The rank's own findings made it through the capture (when this machine could start it).
  if (rank.pid() > 0) {
    const std::string subject = "pid:" + std::to_string(rank.pid());
    ASSERT_TRUE(b.count({"numa.remote_memory", subject})) << live.out;
    const fs::path proc = fs::path(snap) / "proc" / std::to_string(rank.pid());
    for (const char* f : {"environ", "maps", "status", "numa_maps"}) EXPECT_TRUE(fs::exists(proc / f)) << f;
    const std::string env = read_file(proc / "environ");
    EXPECT_NE(env.find(std::string("HF_TOKEN=<redacted>") + '\0'), std::string::npos);
    EXPECT_NE(env.find(std::string("LOCAL_RANK=0") + '\0'), std::string::npos);
    EXPECT_EQ(env.find("rank-secret-4711"), std::string::npos);
  }

  // The report's node is the same node, read from the tree.
  auto ln = nlohmann::json::parse(live.out)["node"], rn = nlohmann::json::parse(replay.out)["node"];
  for (const char* k : {"name", "hostname", "kernel", "arch", "container", "environment", "nccl_conf"}) EXPECT_EQ(rn[k], ln[k]) << k;
  for (const auto& [k, v] : ln["settings"].items()) EXPECT_EQ(rn["settings"][k], v) << "settings." << k;

  auto manifest = nlohmann::json::parse(read_file(fs::path(snap) / ".perfgap/snapshot.json"));
  EXPECT_EQ(manifest["schema"], "perfgap.snapshot/1");
  EXPECT_EQ(manifest["source"]["kind"], "live");
  EXPECT_EQ(manifest["hostname"], ln["hostname"]);
  // Device nodes are empty files; /dev/cpu_dma_latency holds its 4 bytes or nothing.
  if (fs::exists(fs::path(snap) / "dev/kmsg")) {
    EXPECT_EQ(fs::file_size(fs::path(snap) / "dev/kmsg"), 0u);
  }
  if (fs::exists(fs::path(snap) / "dev/cpu_dma_latency")) {
    auto n = fs::file_size(fs::path(snap) / "dev/cpu_dma_latency");
    EXPECT_TRUE(n == 0 || n == 4) << n;
  }
  // The audited environment and limits are real files, not a link to the snapshot's pid.
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(fs::path(snap) / "proc/self/environ")));
  EXPECT_TRUE(fs::is_regular_file(fs::symlink_status(fs::path(snap) / "proc/self/limits")));
  EXPECT_FALSE(fs::is_symlink(fs::symlink_status(fs::path(snap) / "proc/self")));
}

TEST(Snapshot, TarGzReplaysAsTheDirectoryAndLeavesNoTemporaryTree) {
  TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "tmp";
  fs::create_directories(work);
  const std::vector<std::pair<std::string, std::string>> env = {{"TMPDIR", work.string()}};
  const std::string dir = tmp.path() + "/snap", tgz = tmp.path() + "/snap.tar.gz";
  // One capture, both forms: the archive is made from a tree captured from the directory.
  ASSERT_EQ(run_binary(PERFGAP_BINARY, {"snapshot", dir}).status, 0);
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", dir, tgz}, env);
  ASSERT_EQ(s.status, 0) << s.err;
  EXPECT_TRUE(fs::is_empty(work));
  auto from_dir = run_binary(PERFGAP_BINARY, {"check", "--root", dir, "--format", "json"}, env);
  auto from_tgz = run_binary(PERFGAP_BINARY, {"check", "--root", tgz, "--format", "json"}, env);
  ASSERT_TRUE(from_tgz.status == 0 || from_tgz.status == 1) << from_tgz.err;
  EXPECT_EQ(from_tgz.status, from_dir.status);
  auto a = nlohmann::json::parse(from_dir.out), b = nlohmann::json::parse(from_tgz.out);
  EXPECT_EQ(b["findings"], a["findings"]);
  EXPECT_EQ(b["node"], a["node"]);
  EXPECT_EQ(b["source"]["root"], tgz);
  EXPECT_TRUE(fs::is_empty(work)) << "the unpacked tree was not removed: " << ::testing::PrintToString(names_in(work));
}

TEST(Snapshot, BadArchivesAreOneLineErrorsAndLeaveNothing) {
  TempDir tmp;
  const fs::path work = fs::path(tmp.path()) / "tmp";
  fs::create_directories(work);
  const std::vector<std::pair<std::string, std::string>> env = {{"TMPDIR", work.string()}};
  const std::string tgz = tmp.path() + "/good.tar.gz";
  ASSERT_EQ(run_binary(PERFGAP_BINARY, {"snapshot", tgz}).status, 0);
  const std::string good = read_file(tgz);
  ASSERT_GT(good.size(), 1000u);
  write_file(fs::path(tmp.path()) / "cut.tar.gz", good.substr(0, good.size() / 2));
  write_file(fs::path(tmp.path()) / "garbage.tar.gz", std::string(4096, '\x5a'));
  write_file(fs::path(tmp.path()) / "empty.tar.gz", "");
  for (const char* name : {"cut.tar.gz", "garbage.tar.gz", "empty.tar.gz"}) {
    const std::string path = tmp.path() + "/" + name;
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", path, "--format", "json"}, env);
    EXPECT_EQ(r.status, 2) << name << ": " << r.err;
    EXPECT_TRUE(one_line(r.err)) << r.err;
    EXPECT_NE(r.err.find(path), std::string::npos) << r.err;
    EXPECT_EQ(r.out, "") << name;
    EXPECT_TRUE(fs::is_empty(work)) << name << ": " << ::testing::PrintToString(names_in(work));
  }
}

TEST(Snapshot, SecretValuesAreBlankedAndNamesKept) {
  TempDir tmp;
  const std::string snap = tmp.path() + "/snap";
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", snap},
                      {{"WANDB_API_KEY", "wandb-secret-4711"}, {"MY_DB_PASSWORD", "pw-secret-4711"}, {"NCCL_IB_PKEY", "3"}});
  ASSERT_EQ(s.status, 0) << s.err;
  const std::string env = read_file(fs::path(snap) / "proc/self/environ");
  EXPECT_NE(env.find(std::string("WANDB_API_KEY=<redacted>") + '\0'), std::string::npos);
  EXPECT_NE(env.find(std::string("MY_DB_PASSWORD=<redacted>") + '\0'), std::string::npos);
  EXPECT_NE(env.find(std::string("NCCL_IB_PKEY=3") + '\0'), std::string::npos);
  // Nowhere in the snapshot.
  for (const auto& e : fs::recursive_directory_iterator(snap)) {
    if (!fs::is_regular_file(fs::symlink_status(e.path()))) continue;
    EXPECT_EQ(read_file(e.path()).find("secret-4711"), std::string::npos) << e.path();
  }
}

TEST(Snapshot, LinkCyclesInTheSourceAreKeptAndEnd) {
  TempDir tmp;
  const fs::path tree = fs::path(tmp.path()) / "tree";
  write_file(tree / "sys/devices/system/cpu/online", "0-1\n");
  fs::create_directories(tree / "sys/class/net");
  fs::create_symlink("b", tree / "sys/class/net/a");
  fs::create_symlink("a", tree / "sys/class/net/b");
  fs::create_directories(tree / "sys/class/infiniband");
  fs::create_symlink("../infiniband/mlx5_0", tree / "sys/class/infiniband/mlx5_0");
  fs::create_directories(tree / "sys/bus/pci/devices");
  fs::create_symlink("/sys/bus/pci/devices/x", tree / "sys/bus/pci/devices/x");
  const std::string snap = tmp.path() + "/snap.tar.gz";
  auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), snap, "--format", "json"});
  ASSERT_EQ(s.status, 0) << s.err;
  auto manifest = nlohmann::json::parse(s.out);
  std::string skipped = manifest["skipped"].dump();
  EXPECT_NE(skipped.find("/sys/class/infiniband/mlx5_0"), std::string::npos) << skipped;
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", snap, "--only", "net.ib.ports,nccl.env.devices", "--format", "json"});
  EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
}

TEST(Snapshot, WritesNothingOutsideOut) {
  TempDir tmp;
  const fs::path base = fs::path(tmp.path());
  fs::create_directories(base / "tmp");
  fs::create_directories(base / "home");
  const std::vector<std::pair<std::string, std::string>> env = {{"TMPDIR", (base / "tmp").string()}, {"HOME", (base / "home").string()}};
  auto d = run_binary(PERFGAP_BINARY, {"snapshot", (base / "out").string()}, env);
  ASSERT_EQ(d.status, 0) << d.err;
  auto t = run_binary(PERFGAP_BINARY, {"snapshot", (base / "out.tar.gz").string()}, env);
  ASSERT_EQ(t.status, 0) << t.err;
  EXPECT_EQ(names_in(base), (std::vector<std::string>{"home", "out", "out.tar.gz", "tmp"}));
  EXPECT_TRUE(fs::is_empty(base / "tmp"));
  EXPECT_TRUE(fs::is_empty(base / "home"));
  EXPECT_TRUE(fs::exists(base / "out/.perfgap/snapshot.json"));
}

TEST(Snapshot, RefusesANonEmptyDirectoryWithOneLine) {
  TempDir tmp;
  write_file(fs::path(tmp.path()) / "out/keep.txt", "mine\n");
  auto r = run_binary(PERFGAP_BINARY, {"snapshot", tmp.path() + "/out"});
  EXPECT_EQ(r.status, 2);
  EXPECT_TRUE(one_line(r.err)) << r.err;
  EXPECT_NE(r.err.find(tmp.path() + "/out"), std::string::npos) << r.err;
  EXPECT_EQ(names_in(fs::path(tmp.path()) / "out"), std::vector<std::string>{"keep.txt"});
  EXPECT_EQ(names_in(tmp.path()), std::vector<std::string>{"out"});
}

// The golden whole-node trees, captured again with snapshot --root: the same report (titles
// and evidence included) as the trees themselves.
TEST(Snapshot, GoldenTreesReplayUnchanged) {
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm", "ib-hw-events"}) {
    SCOPED_TRACE(name);
    TempDir tmp;
    const std::string tree = tmp.path() + "/tree", snap = tmp.path() + "/snap.tar.gz";
    auto spec = perfgap::fixture::unpack_tree(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/golden/" + name + ".tree", tree);
    ASSERT_TRUE(spec) << spec.error();
    auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree, snap});
    ASSERT_EQ(s.status, 0) << s.err;
    auto a = run_binary(PERFGAP_BINARY, {"check", "--root", tree, "--format", "json"});
    auto b = run_binary(PERFGAP_BINARY, {"check", "--root", snap, "--format", "json"});
    EXPECT_EQ(b.status, a.status);
    auto ja = nlohmann::json::parse(a.out), jb = nlohmann::json::parse(b.out);
    EXPECT_EQ(jb["findings"], ja["findings"]);
    EXPECT_EQ(jb["node"], ja["node"]);
  }
}

}  // namespace
