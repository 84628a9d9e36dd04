// The Slurm flow on real daemons (tools/slurm-test-cluster.sh: munged, slurmctld, slurmd
// n1..n4 on this host): fan-out over the four nodes with one node failing, and the health
// check draining exactly that node, leaving a hand-drained node alone and resuming its own
// drain. tools/test.sh starts the cluster and names its env file in PERFGAP_TEST_SLURM_ENV;
// without it these tests skip.
#include <fcntl.h>
#include <gtest/gtest.h>

#include <cerrno>
#include <algorithm>
#include <chrono>
#include <csignal>
#include <iterator>
#include <cstdio>
#include <cstring>
#include <fstream>
#include <filesystem>
#include <functional>
#include <thread>
#include <sys/file.h>
#include <sys/stat.h>
#include <unistd.h>

#include <map>
#include <nlohmann/json.hpp>

#include "run.hpp"
#include "test_slurm_support.hpp"

namespace {

using namespace perfgap::slurmtest;
using perfgap::fixture::run_binary;
using perfgap::fixture::RunResult;
using perfgap::fixture::TempDir;

const std::vector<std::string> kNodes = {"n1", "n2", "n3", "n4"};

struct NodeView {
  std::string state, reason;
};

class SlurmCluster : public ::testing::Test {
 protected:
  void SetUp() override {
    const char* env_file = std::getenv("PERFGAP_TEST_SLURM_ENV");
    if (!env_file || !*env_file) GTEST_SKIP() << "no test cluster: PERFGAP_TEST_SLURM_ENV unset (tools/test.sh starts one)";
    std::ifstream in(env_file);
    if (!in) GTEST_SKIP() << "no test cluster: cannot read " << env_file;
    for (std::string line; std::getline(in, line);)
      if (auto eq = line.find('='); eq != std::string::npos) env_[line.substr(0, eq)] = line.substr(eq + 1);
    ASSERT_FALSE(env_["SLURM_CONF"].empty()) << env_file << " names no SLURM_CONF";
    ASSERT_FALSE(env_["PERFGAP_SLURM_DIR"].empty()) << env_file << " names no PERFGAP_SLURM_DIR";
    scontrol_ = find_on_path("scontrol");
    salloc_ = find_on_path("salloc");
    ASSERT_FALSE(scontrol_.empty() || salloc_.empty()) << "scontrol/salloc not on PATH";
    // One Slurm test at a time (ctest runs tests in parallel): they share the four nodes.
    lock_fd_ = ::open((env_["PERFGAP_SLURM_DIR"] + "/tests.lock").c_str(), O_RDWR | O_CREAT | O_CLOEXEC, 0644);
    ASSERT_GE(lock_fd_, 0);
    ASSERT_EQ(::flock(lock_fd_, LOCK_EX), 0);
    for (const auto& n : kNodes) ASSERT_EQ(make_node_tree(trees(), n, false), "");
  }
  void TearDown() override {
    if (lock_fd_ < 0) return;
    // Leave the cluster as found: every node back in service.
    for (const auto& n : kNodes)
      if (node(n).state.find("DRAIN") != std::string::npos) scontrol({"update", "nodename=" + n, "state=resume"});
    ::close(lock_fd_);
  }

  std::string trees() const { return dir_.path() + "/trees"; }
  RunResult scontrol(const std::vector<std::string>& args) {
    return run_binary(scontrol_, args, {{"SLURM_CONF", env_["SLURM_CONF"]}});
  }
  NodeView node(const std::string& name) {
    auto r = scontrol({"show", "node", "-o", name});
    NodeView v;
    auto state = r.out.find(" State=");
    if (state != std::string::npos) v.state = r.out.substr(state + 7, r.out.find(' ', state + 7) - state - 7);
    auto reason = r.out.find(" Reason=");
    if (reason != std::string::npos) {
      v.reason = r.out.substr(reason + 8);
      v.reason = v.reason.substr(0, v.reason.rfind(" ["));  // scontrol's [user@time] stamp
    }
    return v;
  }
  std::string health_config(const std::string& extra = "") {
    std::string path = dir_.path() + "/health.yaml";
    write_file(path, "checks: [" + kCheck + "]\n"
                     "time_limit_s: 20\n"
                     "log_file: " + dir_.path() + "/health.log\n"
                     "state_dir: " + dir_.path() + "/state/{node}\n"
                     "check:\n  root: " + trees() + "/{node}\n" + extra);
    return path;
  }
  RunResult health(const std::string& node, const std::string& config) {
    return run_binary(PERFGAP_BINARY, {"health"},
                      {{"PERFGAP_HEALTH_CONFIG", config}, {"SLURMD_NODENAME", node}, {"SLURM_CONF", env_["SLURM_CONF"]}});
  }

  std::map<std::string, std::string> env_;
  std::string scontrol_, salloc_;
  int lock_fd_ = -1;
  TempDir dir_;
};

TEST_F(SlurmCluster, FanoutOverFourNodesNamesTheFailingNode) {
  ASSERT_EQ(make_node_tree(trees(), "n2", true), "");
  const std::string reports = dir_.path() + "/reports", fleet = dir_.path() + "/fleet.json";
  auto r = run_binary(salloc_,
                      {"--nodes=4", "--immediate=30", "--time=5", PERFGAP_BINARY, "fanout", "--report-dir", reports, "--format",
                       "json", "--output", fleet, "--timeout", "120", "--", "--root", trees() + "/{node}", "--only", kCheck},
                      {{"SLURM_CONF", env_["SLURM_CONF"]}});
  EXPECT_EQ(r.status, 1) << r.err;  // the fleet has a failing node
  // Each node ran check on its own tree and wrote its report under its Slurm name.
  for (const auto& n : kNodes) {
    auto text = read_file(reports + "/" + n + ".json");
    ASSERT_FALSE(text.empty()) << "no report from " << n << "\n" << r.err;
    auto rep = nlohmann::json::parse(text);
    EXPECT_EQ(rep["node"]["name"], n);
    EXPECT_EQ(rep["source"]["root"], trees() + "/" + n);
    EXPECT_EQ(rep["summary"]["fail"], n == "n2" ? 1 : 0) << n;
  }
  auto fleet_text = read_file(fleet);
  ASSERT_FALSE(fleet_text.empty()) << r.err;
  auto rep = nlohmann::json::parse(fleet_text);
  EXPECT_EQ(rep["source"]["kind"], "fleet");
  bool named = false;
  for (const auto& f : rep["findings"])
    if (f["id"] == "fleet.node_failures") {
      EXPECT_EQ(f["status"], "fail");
      ASSERT_EQ(f["evidence"].size(), 1u) << f.dump();
      EXPECT_EQ(f["evidence"][0]["source"], "n2");
      named = true;
    }
  EXPECT_TRUE(named) << fleet_text;
}

// Without pyxis, fanout's generic way into a container: each node's check runs through a
// bwrap wrapper under srun (a tmpfs root with a Debian minbase's /usr and /etc, its own PID
// namespace), and every node's report says it ran in bubblewrap. Needs bwrap and the
// release-check chroot ($PERFGAP_CHROOT_DIR/trixie).
TEST_F(SlurmCluster, FanoutRunsTheCheckInsideABwrapContainerOnEveryNode) {
  const std::string bwrap = find_on_path("bwrap");
  const char* dir = std::getenv("PERFGAP_CHROOT_DIR");
  const std::string rootfs = std::string(dir && *dir ? dir : "/var/tmp/perfgap-chroots") + "/trixie";
  const char* req = std::getenv("PERFGAP_REAL_CONTAINER_TESTS");
  if (bwrap.empty() || ::access((rootfs + "/usr/bin/env").c_str(), X_OK) != 0) {
    if (req && std::string(req) == "required") FAIL() << "PERFGAP_REAL_CONTAINER_TESTS=required but no bwrap or no " << rootfs;
    GTEST_SKIP() << "needs bwrap (tools/setup-debian.sh --test) and " << rootfs << " (tools/release-check.sh chroots)";
  }
  const std::string reports = dir_.path() + "/reports", fleet = dir_.path() + "/fleet.json";
  // The image's /usr with this build's libraries bound over its own (the dynamic perfgap
  // needs them; the static release binary would not).
  const std::string libdir = "/usr/lib/x86_64-linux-gnu";
  std::string wrap = bwrap + " --ro-bind " + rootfs + "/usr /usr --ro-bind " + rootfs + "/etc /etc --symlink usr/bin /bin " +
                     "--symlink usr/lib /lib --symlink usr/lib64 /lib64 --ro-bind " + libdir + " " + libdir +
                     " --proc /proc --dev /dev --ro-bind /sys /sys --unshare-pid --die-with-parent --bind " + reports + " " +
                     reports + " --ro-bind " + PERFGAP_BINARY + " " + PERFGAP_BINARY;
  std::filesystem::create_directories(reports);
  auto r = run_binary(salloc_,
                      {"--nodes=4", "--immediate=30", "--time=5", PERFGAP_BINARY, "fanout", "--report-dir", reports, "--format", "json",
                       "--output", fleet, "--timeout", "120", "--container-wrap", wrap, "--", "--only", "container.detect"},
                      {{"SLURM_CONF", env_["SLURM_CONF"]}});
  EXPECT_EQ(r.status, 0) << r.err;
  for (const auto& n : kNodes) {
    auto text = read_file(reports + "/" + n + ".json");
    ASSERT_FALSE(text.empty()) << "no report from " << n << "\n" << r.err;
    auto rep = nlohmann::json::parse(text);
    EXPECT_EQ(rep["node"]["name"], n);
    EXPECT_EQ(rep["node"]["container"], "bubblewrap") << n << ": " << text;
  }
}

TEST_F(SlurmCluster, FanoutNodeWithoutReportIsUnreadable) {
  std::filesystem::remove_all(trees() + "/n4");  // check on n4 cannot run: no report
  const std::string reports = dir_.path() + "/reports", fleet = dir_.path() + "/fleet.json";
  auto r = run_binary(salloc_,
                      {"--nodes=4", "--immediate=30", "--time=5", PERFGAP_BINARY, "fanout", "--report-dir", reports, "--format",
                       "json", "--output", fleet, "--timeout", "120", "--", "--root", trees() + "/{node}", "--only", kCheck},
                      {{"SLURM_CONF", env_["SLURM_CONF"]}});
  EXPECT_NE(r.err.find("3 reports"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("(none from n4)"), std::string::npos) << r.err;
  auto rep = nlohmann::json::parse(read_file(fleet));
  bool unreadable = false;
  for (const auto& f : rep["findings"])
    if (f["id"] == "fleet.unreadable") unreadable = unreadable || f.dump().find("n4.json") != std::string::npos;
  EXPECT_TRUE(unreadable) << rep.dump(1);
}

TEST_F(SlurmCluster, HealthDrainsExactlyTheFailingNodeAndResumesItWhenFixed) {
  ASSERT_EQ(make_node_tree(trees(), "n2", true), "");
  auto config = health_config();
  for (const auto& n : kNodes) {
    auto r = health(n, config);
    EXPECT_EQ(r.status, n == "n2" ? 1 : 0) << n << ": " << r.err;
  }
  for (const auto& n : kNodes) {
    auto v = node(n);
    if (n == "n2") {
      EXPECT_NE(v.state.find("DRAIN"), std::string::npos) << v.state;
      EXPECT_EQ(v.reason, "perfgap: " + kCheck);
    } else {
      EXPECT_EQ(v.state.find("DRAIN"), std::string::npos) << n << " " << v.state;
    }
  }
  // Failing again keeps the drain as it is; fixed, the node is resumed by perfgap.
  EXPECT_EQ(health("n2", config).status, 1);
  EXPECT_EQ(node("n2").reason, "perfgap: " + kCheck);
  ASSERT_EQ(make_node_tree(trees(), "n2", false), "");
  auto r = health("n2", config);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(node("n2").state.find("DRAIN"), std::string::npos) << node("n2").state;
  auto log = read_file(dir_.path() + "/health.log");
  EXPECT_NE(log.find("n2 perfgap-health["), std::string::npos);
  EXPECT_NE(log.find("resumed own drain"), std::string::npos) << log;
}

TEST_F(SlurmCluster, HealthLeavesAHandDrainedNodeAlone) {
  ASSERT_EQ(scontrol({"update", "nodename=n3", "state=drain", "reason=hand"}).status, 0);
  ASSERT_EQ(make_node_tree(trees(), "n3", true), "");
  auto config = health_config();
  EXPECT_EQ(health("n3", config).status, 1);
  EXPECT_EQ(node("n3").reason, "hand");
  ASSERT_EQ(make_node_tree(trees(), "n3", false), "");
  EXPECT_EQ(health("n3", config).status, 0);
  auto v = node("n3");
  EXPECT_NE(v.state.find("DRAIN"), std::string::npos) << v.state;  // not perfgap's drain to lift
  EXPECT_EQ(v.reason, "hand");
}

// A node in a maintenance reservation is being worked on: a failing check never drains it,
// whatever spelling of the MAINT flag this Slurm prints.
TEST_F(SlurmCluster, HealthNeverDrainsANodeInAMaintenanceReservation) {
  auto made = scontrol({"create", "reservation", "reservationname=perfgap_maint", "nodes=n1", "starttime=now",
                        "duration=10", "users=root", "flags=maint"});
  ASSERT_EQ(made.status, 0) << made.err << made.out;
  struct Cleanup {
    std::function<void()> f;
    ~Cleanup() { f(); }
  } cleanup{[&] { scontrol({"delete", "reservation=perfgap_maint"}); }};
  // slurmctld applies a new reservation's flags on its next pass (about 4 s here).
  auto before = node("n1");
  for (int i = 0; i < 150 && before.state.find("MAINT") == std::string::npos; ++i) {
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    before = node("n1");
  }
  ASSERT_NE(before.state.find("MAINT"), std::string::npos) << "Slurm shows no maintenance flag: " << before.state;
  ASSERT_EQ(make_node_tree(trees(), "n1", true), "");
  auto r = health("n1", health_config());
  EXPECT_EQ(r.status, 1) << r.err;  // the check failed ...
  auto after = node("n1");
  EXPECT_EQ(after.state.find("DRAIN"), std::string::npos) << after.state;  // ... and the node was left alone
  auto log = read_file(dir_.path() + "/health.log");
  EXPECT_NE(log.find("left alone"), std::string::npos) << log;
  ASSERT_EQ(make_node_tree(trees(), "n1", false), "");
}

// As slurmd runs it: no SLURM_CONF and no PATH; the config names slurm.conf, scontrol is
// found where Slurm installs it.
TEST_F(SlurmCluster, HealthWorksWithoutSlurmConfInItsEnvironment) {
  ASSERT_EQ(make_node_tree(trees(), "n4", true), "");
  auto config = health_config("slurm_conf: " + env_["SLURM_CONF"] + "\n");
  auto run = [&] {
    return run_binary("/usr/bin/env", {"-i", "SLURMD_NODENAME=n4", "PWD=/", "PERFGAP_HEALTH_CONFIG=" + config, PERFGAP_BINARY, "health"});
  };
  auto r = run();
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(node("n4").reason, "perfgap: " + kCheck) << r.err;
  ASSERT_EQ(make_node_tree(trees(), "n4", false), "");
  r = run();
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(node("n4").state.find("DRAIN"), std::string::npos) << r.err;
}

// ---- fanout --pairs on the real cluster --------------------------------------------------
// (In the anonymous namespace with SlurmCluster, which SlurmPairs derives from: gcc's
// -Wsubobject-linkage.)
// One node made slow by the kernel: its slurmd moved into a cpu cgroup with a small CFS quota
// (cgroup v1 cpu.cfs_quota_us, or v2 cpu.max), so every job step it starts (slurmstepd and the
// benchmark: proctrack/linuxproc and task/none leave them in slurmd's cgroup) gets that share
// of one CPU. The destructor moves every process back and removes the cgroup.
class PairsSlowNode {
 public:
  PairsSlowNode() = default;
  PairsSlowNode(const PairsSlowNode&) = delete;
  PairsSlowNode& operator=(const PairsSlowNode&) = delete;
  ~PairsSlowNode() {
    if (dir_.empty()) return;
    for (int attempt = 0; attempt < 50; ++attempt) {
      std::ifstream procs(dir_ + "/cgroup.procs");
      bool any = false;
      for (std::string pid; std::getline(procs, pid);) {
        any = true;
        std::ofstream(back_ + "/cgroup.procs") << pid << "\n";
      }
      if (!any && ::rmdir(dir_.c_str()) == 0) return;
      std::this_thread::sleep_for(std::chrono::milliseconds(100));
    }
    ADD_FAILURE() << "cannot remove " << dir_;
  }
  // "" when the node is slowed; else why not (the test skips).
  std::string start(const std::string& cluster_dir, const std::string& node, int quota_pct) {
    std::ifstream pids(cluster_dir + "/pids");
    std::string pid;
    for (std::string line; std::getline(pids, line);)
      if (line.size() > 0 && line.ends_with("slurmd -D -N " + node)) pid = line.substr(0, line.find(' '));
    if (pid.empty()) return "no slurmd of " + node + " in " + cluster_dir + "/pids";
    std::ifstream cg("/proc/" + pid + "/cgroup");
    std::string v1, v2;
    for (std::string line; std::getline(cg, line);) {
      auto a = line.find(':'), b = line.find(':', a + 1);
      if (a == std::string::npos || b == std::string::npos) continue;
      std::string ctrls = line.substr(a + 1, b - a - 1), path = line.substr(b + 1);
      if (ctrls == "cpu" || ctrls.starts_with("cpu,") || ctrls.find(",cpu,") != std::string::npos || ctrls.ends_with(",cpu")) v1 = path;
      if (ctrls.empty() && line.starts_with("0::")) v2 = path;
    }
    const std::string name = "/perfgap-slow-" + node + "-" + std::to_string(::getpid());
    std::string quota_file, quota;
    if (!v1.empty() && std::filesystem::exists("/sys/fs/cgroup/cpu/cpu.cfs_quota_us")) {
      back_ = "/sys/fs/cgroup/cpu" + (v1 == "/" ? std::string() : v1);
      quota_file = "cpu.cfs_quota_us";
      quota = std::to_string(quota_pct * 1000);  // of the default 100 ms period
    } else if (!v2.empty() && std::filesystem::exists("/sys/fs/cgroup/cgroup.controllers")) {
      back_ = "/sys/fs/cgroup" + (v2 == "/" ? std::string() : v2);
      std::ofstream(back_ + "/cgroup.subtree_control") << "+cpu\n";
      quota_file = "cpu.max";
      quota = std::to_string(quota_pct * 1000) + " 100000";
    } else {
      return "no cpu cgroup controller (v1 /sys/fs/cgroup/cpu or v2 with cpu) to slow a node with";
    }
    if (::mkdir((back_ + name).c_str(), 0755) != 0) return "cannot create the cgroup " + back_ + name + ": " + std::strerror(errno);
    dir_ = back_ + name;
    if (!std::filesystem::exists(dir_ + "/" + quota_file)) return dir_ + " has no " + quota_file + " (cpu controller not enabled there)";
    if (!(std::ofstream(dir_ + "/" + quota_file) << quota << "\n")) return "cannot write " + dir_ + "/" + quota_file;
    if (!(std::ofstream(dir_ + "/cgroup.procs") << pid << "\n")) return "cannot move slurmd " + pid + " into " + dir_;
    return "";
  }

 private:
  std::string dir_, back_;
};

#ifdef PERFGAP_COLLBENCH
class SlurmPairs : public SlurmCluster {
 protected:
  void SetUp() override {
    SlurmCluster::SetUp();
    if (IsSkipped() || HasFatalFailure()) return;
    auto list = run_binary(find_on_path("srun"), {"--mpi=list"}, {{"SLURM_CONF", env_["SLURM_CONF"]}});
    if ((list.out + list.err).find("pmix") == std::string::npos) GTEST_SKIP() << "srun --mpi=list has no pmix: " << list.out << list.err;
    if (!std::filesystem::exists(std::filesystem::path(PERFGAP_COLLBENCH).parent_path() / "perfgap-collbench-mpi.so"))
      GTEST_SKIP() << "perfgap-collbench was built without its MPI backend";
  }
  // The search over the four nodes with perfgap-collbench's MPI backend; the fanout.pairs finding.
  nlohmann::json search(RunResult& r) {
    const std::string out = dir_.path() + "/pairs.json";
    // Judged relative to the others (below a quarter of the median node's best pair, three
    // times against healthy partners), never against a time. The ranks yield while they wait:
    // four busy-polling ranks on a loaded 2-core host would make every figure noise. A step
    // that hangs at start (Slurm's PMIx between steps of one job on one host, seen here once in
    // a few runs) is stopped after 45 s and its pair run again.
    r = run_binary(salloc_,
                   {"--nodes=4", "--immediate=30", "--time=15", PERFGAP_BINARY, "fanout", "--pairs", "--srun-arg=--mpi=pmix", "--format",
                    "json", "--output", out, "--timeout", "45", "--budget", "600", "--pairs-ratio", "0.25", "--", PERFGAP_COLLBENCH,
                    "all_reduce", "-b", "2M", "-e", "2M", "-n", "6", "-w", "2"},
                   {{"SLURM_CONF", env_["SLURM_CONF"]}, {"OMPI_MCA_mpi_yield_when_idle", "1"}});
    auto text = read_file(out);
    if (text.empty()) return {};
    const auto report = nlohmann::json::parse(text);
    for (const auto& f : report["findings"])
      if (f["id"] == "fanout.pairs") return f;
    return {};
  }
};

TEST_F(SlurmPairs, PairSearchNamesTheNodeSlowedByACpuQuota) {
  PairsSlowNode slow;
  // 3% of one CPU: that node's rank is 10-30x slower, whatever the load of the machine.
  if (auto why = slow.start(env_["PERFGAP_SLURM_DIR"], "n3", 3); !why.empty()) GTEST_SKIP() << why;
  RunResult r;
  auto f = search(r);
  ASSERT_FALSE(f.is_null()) << r.err;
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(f["status"], "fail") << f.dump(1) << r.err;
  EXPECT_EQ(f["metrics"]["slow_nodes"], 1) << f.dump(1) << r.err;
  // n3 is the node named; a slow *link* between two healthy nodes beside it is the shared
  // CPUs' noise on this host (each round runs two pairs at once, beside other tests; a
  // healthy pair measured at 0.45 of its first figure on a loaded 2-core host), never
  // another node: see PairSearchNamesNoNodeWhenNoneIsSlowed. Links are judged in the unit tests.
  const std::string subject = f["subject"];
  EXPECT_EQ(subject.substr(0, subject.find(',')), "n3") << f.dump(1) << r.err;
  if (f["metrics"]["slow_links"].get<double>() > 0) {
    EXPECT_EQ(subject.find("n3+"), std::string::npos) << f.dump(1);
    EXPECT_EQ(subject.find("+n3"), std::string::npos) << f.dump(1);
    std::printf("pair search, n3 slowed: a slow link from the shared CPUs' noise beside it: %s\n", subject.c_str());
  }
  // Every round's pairs are in the evidence; the figures of the run go to the test log.
  EXPECT_GE(f["evidence"].size(), 4u);
  std::printf("pair search, n3 slowed: %g rounds, %g pair runs, %.1f s\n%s", f["metrics"]["rounds"].get<double>(),
              f["metrics"]["pairs_run"].get<double>(), f["metrics"]["wall_s"].get<double>(), r.err.c_str());
}

// The processes whose command line holds `needle` (starts with it: `at_start`), not this test.
std::vector<int> pairs_processes(const std::string& needle, bool at_start = false) {
  std::vector<int> out;
  for (const auto& e : std::filesystem::directory_iterator("/proc")) {
    const std::string name = e.path().filename();
    if (name.find_first_not_of("0123456789") != std::string::npos || std::stoi(name) == ::getpid()) continue;
    std::ifstream in(e.path() / "cmdline");
    std::string cmd((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    std::replace(cmd.begin(), cmd.end(), '\0', ' ');
    if (at_start ? cmd.starts_with(needle) : cmd.find(needle) != std::string::npos) out.push_back(std::stoi(name));
  }
  return out;
}

TEST_F(SlurmPairs, InterruptStopsEveryBenchmarkItStarted) {
  const std::string out = dir_.path() + "/interrupted.json";
  RunResult r;
  // A benchmark that would run for hours: the search is interrupted while two pairs run it.
  std::thread search([&] {
    r = run_binary(salloc_,
                   {"--nodes=4", "--immediate=30", "--time=15", PERFGAP_BINARY, "fanout", "--pairs", "--srun-arg=--mpi=pmix", "--format",
                    "json", "--output", out, "--timeout", "600", "--", PERFGAP_COLLBENCH, "all_reduce", "-b", "2M", "-e", "2M", "-n",
                    "99999999", "-w", "1"},
                   {{"SLURM_CONF", env_["SLURM_CONF"]}, {"OMPI_MCA_mpi_yield_when_idle", "1"}});
  });
  const std::string bench = std::string(PERFGAP_COLLBENCH) + " all_reduce -b 2M -e 2M -n 99999999";
  std::vector<int> perfgap, benches;
  for (int i = 0; i < 600 && (perfgap.empty() || benches.size() < 4); ++i) {  // bounded: 60 s
    std::this_thread::sleep_for(std::chrono::milliseconds(100));
    perfgap = pairs_processes(std::string(PERFGAP_BINARY) + " fanout --pairs --srun-arg=--mpi=pmix --format json --output " + out, true);
    benches = pairs_processes(bench, true);
  }
  ASSERT_EQ(perfgap.size(), 1u);
  EXPECT_GE(benches.size(), 4u) << "two pairs' benchmarks did not start";
  ::kill(perfgap[0], SIGTERM);
  search.join();
  EXPECT_NE(r.status, 0) << r.err;
  EXPECT_NE(r.err.find("interrupted by signal 15: every benchmark stopped"), std::string::npos) << r.err;
  // Every benchmark is gone (srun cancelled its step on SIGTERM); bounded wait, no time judged.
  for (int i = 0; i < 300 && !pairs_processes(bench, true).empty(); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(100));
  EXPECT_TRUE(pairs_processes(bench, true).empty());
  auto text = read_file(out);
  ASSERT_FALSE(text.empty()) << "the report of what was measured is written before the signal ends perfgap";
  EXPECT_NE(text.find("interrupted"), std::string::npos) << text;
}

TEST_F(SlurmPairs, PairSearchNamesNoNodeWhenNoneIsSlowed) {
  RunResult r;
  auto f = search(r);
  ASSERT_FALSE(f.is_null()) << r.err;
  EXPECT_NE(f["status"], "skip") << f.dump(1) << r.err;
  // No node is named. The test cluster's four "nodes" share this host's 2 CPUs and each round
  // runs two pairs at once (beside other tests under ctest -j2), so one pair can measure a few
  // times slower than another for no fault of its own: a slow *link* verdict is that noise here
  // (seen once in CI-like runs: n3+n4 at 14% and 20% of the reference), never a node's, which
  // needs three slow runs against different partners. Links are judged in the unit tests.
  EXPECT_EQ(f["metrics"]["slow_nodes"], 0) << f.dump(1);
  const bool link_noise = f["metrics"]["slow_links"].get<double>() > 0;
  if (!link_noise) {
    EXPECT_NE(f["status"], "fail") << f.dump(1) << r.err;
    EXPECT_EQ(r.status, 0) << r.err;
  } else {
    EXPECT_EQ(r.status, 1) << r.err;
    std::printf("pair search, no node slowed: a slow link from the shared CPUs' noise, no node named\n");
  }
  std::printf("pair search, no node slowed: %g rounds, %g pair runs, %.1f s\n%s", f["metrics"]["rounds"].get<double>(),
              f["metrics"]["pairs_run"].get<double>(), f["metrics"]["wall_s"].get<double>(), r.err.c_str());
}
#endif

}  // namespace
