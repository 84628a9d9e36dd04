// `perfgap health` and `perfgap fanout` without a cluster: configuration errors, the
// decisions as scontrol sees them (a fake scontrol that prints a node state and records the
// update it is asked for), a hung scontrol, slurmd's bare environment, and the srun command
// line fanout builds (pyxis included).
#include <gtest/gtest.h>

#include <chrono>
#include <nlohmann/json.hpp>

#include "run.hpp"
#include "test_slurm_support.hpp"

namespace {

using namespace perfgap::slurmtest;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

class HealthFake : public ::testing::Test {
 protected:
  void SetUp() override {
    ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", false), "");
    // The fake prints the node line the test chose and records every update's arguments and
    // the SLURM_CONF it was given.
    write_script(scontrol, "#!/bin/sh\n"
                           "echo \"SLURM_CONF=$SLURM_CONF\" >> " + dir.path() + "/env\n"
                           "case \"$1\" in\n"
                           "  show) cat " + dir.path() + "/state ;;\n"
                           "  update) shift; echo \"$*\" >> " + dir.path() + "/calls ;;\n"
                           "esac\n");
    node_state("IDLE", "");
  }
  void node_state(const std::string& state, const std::string& reason) {
    write_file(dir.path() + "/state", "NodeName=n7 Arch=x86_64 OS=Linux 6.1 #1 SMP State=" + state +
                                          " Partitions=ci" + (reason.empty() ? "" : " Reason=" + reason + " [root@2026-11-30T05:31:49]") + "\n");
  }
  std::string config(const std::string& extra = "") {
    std::string path = dir.path() + "/health.yaml";
    write_file(path, "checks: [" + kCheck + "]\n"
                     "time_limit_s: 20\n"
                     "log_file: " + dir.path() + "/health.log\n"
                     "state_dir: " + dir.path() + "/state.d\n"
                     "scontrol: " + scontrol + "\n"
                     "slurm_conf: /nonexistent/slurm.conf\n"
                     "check:\n  root: " + dir.path() + "/trees/{node}\n" + extra);
    return path;
  }
  perfgap::fixture::RunResult health(const std::string& cfg) {
    return run_binary(PERFGAP_BINARY, {"health"}, {{"PERFGAP_HEALTH_CONFIG", cfg}, {"SLURMD_NODENAME", "n7"}, {"SLURM_CONF", ""}});
  }
  std::string calls() { return read_file(dir.path() + "/calls"); }
  TempDir dir;
  std::string scontrol = dir.path() + "/bin/scontrol";
};

TEST_F(HealthFake, FailingCheckDrainsTheNodeWithPerfgapReason) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  auto r = health(config());
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(calls(), "nodename=n7 state=drain reason=perfgap: " + kCheck + "\n");
  // One line per run, in the log file and on stderr; the report kept for the operator.
  auto log = read_file(dir.path() + "/health.log");
  EXPECT_EQ(std::count(log.begin(), log.end(), '\n'), 1);
  EXPECT_NE(log.find(" n7 perfgap-health["), std::string::npos) << log;
  EXPECT_NE(log.find("FAIL " + kCheck + "; drained (was IDLE)"), std::string::npos) << log;
  EXPECT_NE(r.err.find("FAIL " + kCheck), std::string::npos);
  auto last = nlohmann::json::parse(read_file(dir.path() + "/state.d/last.json"));
  EXPECT_EQ(last["schema"], "perfgap.report/1");
  // The config's slurm_conf reaches scontrol although the caller had no SLURM_CONF.
  EXPECT_NE(read_file(dir.path() + "/env").find("SLURM_CONF=/nonexistent/slurm.conf"), std::string::npos);
}

TEST_F(HealthFake, SomeoneElsesDrainIsNeverTouched) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  node_state("IDLE+DRAIN", "hand");
  auto r = health(config());
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(calls(), "");
  EXPECT_NE(read_file(dir.path() + "/health.log").find("left alone"), std::string::npos);
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", false), "");
  r = health(config());
  EXPECT_EQ(r.status, 0);
  EXPECT_EQ(calls(), "");
}

TEST_F(HealthFake, OwnDrainIsResumedWhenTheChecksPass) {
  node_state("IDLE+DRAIN", "perfgap: " + kCheck);
  auto r = health(config());
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(calls(), "nodename=n7 state=resume\n");
  EXPECT_NE(r.err.find("resumed own drain"), std::string::npos) << r.err;
}

TEST_F(HealthFake, OnlyTheDrainOnIdsDrain) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  auto cfg = config();
  write_file(cfg, read_file(cfg) + "drain_on: [numa.balancing]\n");
  auto r = health(cfg);
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(calls(), "");
  EXPECT_NE(r.err.find("also failing, not draining: " + kCheck), std::string::npos) << r.err;
}

TEST_F(HealthFake, DryRunSaysWhatItWouldDo) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  auto r = run_binary(PERFGAP_BINARY, {"health", "--dry-run", "--config", config()}, {{"SLURMD_NODENAME", "n7"}});
  EXPECT_EQ(r.status, 1);
  EXPECT_EQ(calls(), "");
  EXPECT_NE(r.err.find("would run: " + scontrol + " update nodename=n7 state=drain 'reason=perfgap: " + kCheck + "'"),
            std::string::npos) << r.err;
}

// slurmd starts HealthCheckProgram with SLURMD_NODENAME and PWD only: no PATH, no SLURM_CONF.
TEST_F(HealthFake, RunsInSlurmdsBareEnvironment) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  auto r = run_binary("/usr/bin/env", {"-i", "SLURMD_NODENAME=n7", "PWD=/", "PERFGAP_HEALTH_CONFIG=" + config(), PERFGAP_BINARY, "health"});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(calls(), "nodename=n7 state=drain reason=perfgap: " + kCheck + "\n");
}

// Slurm runs the program without arguments: the binary knows itself as perfgap-health.
TEST_F(HealthFake, InvokedAsPerfgapHealth) {
  auto link = dir.path() + "/perfgap-health";
  std::filesystem::create_symlink(PERFGAP_BINARY, link);
  auto r = run_binary(link, {}, {{"PERFGAP_HEALTH_CONFIG", config()}, {"SLURMD_NODENAME", "n7"}});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_NE(read_file(dir.path() + "/health.log").find("perfgap-health["), std::string::npos);
}

// The check options' dmesg file holds no kernel log (here lspci output): bad input, as an
// unreadable one is: an error line and exit 2, never a drain, and no run whose log checks skip.
TEST_F(HealthFake, DmesgThatIsNoKernelLogIsAnErrorNotADrain) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  const std::string lspci = dir.path() + "/lspci.txt";
  write_file(lspci, "3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n\tKernel driver in use: nvidia\n");
  auto r = health(config("  dmesg: " + lspci + "\n"));
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_EQ(calls(), "");
  auto log = read_file(dir.path() + "/health.log");
  EXPECT_NE(log.find("error: --dmesg " + lspci + ": not a kernel log: "), std::string::npos) << log;
}

TEST_F(HealthFake, HungScontrolOnPathIsBounded) {
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n7", true), "");
  write_script(dir.path() + "/hung/scontrol", "#!/bin/sh\nsleep 60\n");
  auto cfg = dir.path() + "/hung.yaml";
  write_file(cfg, "checks: [" + kCheck + "]\ntime_limit_s: 2\ncheck:\n  root: " + dir.path() + "/trees/{node}\n");
  const auto start = std::chrono::steady_clock::now();
  auto r = run_binary(PERFGAP_BINARY, {"health"},
                      {{"PERFGAP_HEALTH_CONFIG", cfg}, {"SLURMD_NODENAME", "n7"},
                       {"PATH", dir.path() + "/hung:" + std::string(std::getenv("PATH") ? std::getenv("PATH") : "/usr/bin")}});
  const double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count();
  EXPECT_LT(took, 6.0);
  EXPECT_EQ(r.status, 1) << r.err;  // the checks failed; the drain could not be made
  EXPECT_NE(r.err.find("did not answer within"), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("node left as it is"), std::string::npos) << r.err;
}

TEST(HealthConfigErrors, OneLineNamingFileAndLine) {
  TempDir dir;
  auto cfg = dir.path() + "/health.yaml";
  write_file(cfg, "checks: [" + kCheck + "]\nlog_file: health.log\n");
  auto r = run_binary(PERFGAP_BINARY, {"health"}, {{"PERFGAP_HEALTH_CONFIG", cfg}});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_NE(r.err.find(cfg + ":2: 'log_file' must be an absolute path"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"health"}, {{"PERFGAP_HEALTH_CONFIG", dir.path() + "/missing.yaml"}});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(dir.path() + "/missing.yaml: cannot open"), std::string::npos) << r.err;
}

TEST(Fanout, OutsideAnAllocationIsBadInput) {
  auto r = run_binary(PERFGAP_BINARY, {"fanout"}, {{"SLURM_JOB_ID", ""}});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("SLURM_JOB_ID"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"fanout", "--", "--format", "text"}, {{"SLURM_JOB_ID", "5"}, {"SLURM_JOB_NODELIST", "n1"}});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("fanout sets --format"), std::string::npos) << r.err;
}

// pyxis is not installed here: what can be checked is the srun line fanout hands it.
TEST(Fanout, DryRunShowsThePyxisSrunLine) {
  auto r = run_binary(PERFGAP_BINARY,
                      {"fanout", "--dry-run", "--report-dir", "/shared/r", "--container-image", "nvcr.io#nvidia/pytorch:24.05-py3",
                       "--container-mounts", "/data:/data:ro", "--srun", "/usr/bin/srun", "--", "--root", "/trees/{node}"},
                      {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[01-03]"}});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = std::string("/usr/bin/srun --nodes=3 --ntasks=3 --ntasks-per-node=1 '--nodelist=gpu[01-03]' ") +
                         "--kill-on-bad-exit=0 --job-name=perfgap-fanout '--container-image=nvcr.io#nvidia/pytorch:24.05-py3' " +
                         "--container-mounts=" + PERFGAP_BINARY + ":" + PERFGAP_BINARY + ":ro,/shared/r:/shared/r,/data:/data:ro " +
                         PERFGAP_BINARY + " fanout --node-task --report-dir /shared/r -- --root /trees/{node}\n";
  EXPECT_EQ(r.out, expected);
}

// Without pyxis: the wrapper command's words (quoted as a shell splits them) go between
// srun's options and the node task.
TEST(Fanout, DryRunShowsTheWrapperSrunLine) {
  auto r = run_binary(PERFGAP_BINARY,
                      {"fanout", "--dry-run", "--report-dir", "/shared/r", "--container-wrap",
                       "bwrap --ro-bind '/srv/job root' / --setenv NCCL_TOPO_FILE \"/etc/nccl/topo.xml\" --bind /shared/r /shared/r",
                       "--srun", "/usr/bin/srun", "--", "--only", "container.*"},
                      {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n[1-2]"}});
  ASSERT_EQ(r.status, 0) << r.err;
  std::string expected = std::string("/usr/bin/srun --nodes=2 --ntasks=2 --ntasks-per-node=1 '--nodelist=n[1-2]' ") +
                         "--kill-on-bad-exit=0 --job-name=perfgap-fanout bwrap --ro-bind '/srv/job root' / --setenv NCCL_TOPO_FILE " +
                         "/etc/nccl/topo.xml --bind /shared/r /shared/r " + PERFGAP_BINARY +
                         " fanout --node-task --report-dir /shared/r -- --only 'container.*'\n";
  EXPECT_EQ(r.out, expected);
  // One way into the container at a time; a wrapper that is not a command is refused.
  auto both = run_binary(PERFGAP_BINARY, {"fanout", "--dry-run", "--container-image", "img", "--container-wrap", "bwrap"},
                         {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n1"}});
  EXPECT_EQ(both.status, 2);
  EXPECT_NE(both.err.find("give one"), std::string::npos) << both.err;
  auto open_quote = run_binary(PERFGAP_BINARY, {"fanout", "--dry-run", "--container-wrap", "bwrap --ro-bind '/a /"},
                               {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "n1"}});
  EXPECT_EQ(open_quote.status, 2);
  EXPECT_NE(open_quote.err.find("unterminated single quote"), std::string::npos) << open_quote.err;
}

// What srun starts on each node: check with {node} replaced, its report named after the node.
TEST(Fanout, NodeTaskExpandsNodeAndWritesItsReport) {
  TempDir dir;
  ASSERT_EQ(make_node_tree(dir.path() + "/trees", "n9", true), "");
  auto r = run_binary(PERFGAP_BINARY,
                      {"fanout", "--node-task", "--report-dir", dir.path() + "/reports", "--", "--root", dir.path() + "/trees/{node}",
                       "--only", kCheck},
                      {{"SLURMD_NODENAME", "n9"}});
  EXPECT_EQ(r.status, 1) << r.err;  // check's status: the case fails
  auto rep = nlohmann::json::parse(read_file(dir.path() + "/reports/n9.json"));
  EXPECT_EQ(rep["source"]["root"], dir.path() + "/trees/n9");
  EXPECT_EQ(rep["node"]["hostname"], "n9");
  EXPECT_EQ(rep["summary"]["fail"], 1);
}

}  // namespace

// fanout --pairs without a cluster: the cover rounds' srun lines, and the allocation kept.
TEST(FanoutPairs, DryRunShowsTheCoverRoundsWithinTheAllocation) {
  auto r = run_binary(PERFGAP_BINARY,
                      {"fanout", "--pairs", "--dry-run", "--srun", "/usr/bin/srun", "--srun-arg=--mpi=pmix", "--", "all_reduce_perf", "-b",
                       "1G", "-e", "1G", "-g", "8"},
                      {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[1-4]"}});
  ASSERT_EQ(r.status, 0) << r.err;
  const std::string line = "/usr/bin/srun --nodes=2 --ntasks=2 --ntasks-per-node=1 --nodelist={} --kill-on-bad-exit=1 "
                           "--job-name=perfgap-pairs --mpi=pmix all_reduce_perf -b 1G -e 1G -g 8\n";
  std::string expected;
  for (auto [round, pair] : std::vector<std::pair<int, std::string>>{{1, "gpu1,gpu2"}, {1, "gpu3,gpu4"}, {2, "gpu2,gpu3"}, {2, "gpu4,gpu1"}}) {
    std::string l = line;
    l.replace(l.find("{}"), 2, pair);
    expected += "round " + std::to_string(round) + ": " + l;
  }
  EXPECT_EQ(r.out.substr(0, expected.size()), expected) << r.out;
  // A node outside the allocation, no benchmark, too few nodes: refused, one line, exit 2.
  auto outside = run_binary(PERFGAP_BINARY, {"fanout", "--pairs", "--nodelist", "gpu[3-5]", "--", "all_reduce_perf"},
                            {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[1-4]"}});
  EXPECT_EQ(outside.status, 2);
  EXPECT_NE(outside.err.find("gpu5, which is not in the allocation"), std::string::npos) << outside.err;
  auto none = run_binary(PERFGAP_BINARY, {"fanout", "--pairs"}, {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[1-4]"}});
  EXPECT_EQ(none.status, 2);
  EXPECT_NE(none.err.find("needs the benchmark after --"), std::string::npos) << none.err;
  auto two = run_binary(PERFGAP_BINARY, {"fanout", "--pairs", "--", "all_reduce_perf"}, {{"SLURM_JOB_ID", "42"}, {"SLURM_JOB_NODELIST", "gpu[1-2]"}});
  EXPECT_EQ(two.status, 2);
  EXPECT_NE(two.err.find("at least 3 nodes"), std::string::npos) << two.err;
}
