// perfgap sweep's pure parts: --env parsing and the grid, run order, the benchmark's
// environment (unset included), -x for Open MPI's mpirun, NCCL's "set by environment" check,
// and how one run is judged.
#include <gtest/gtest.h>

#include <algorithm>

#include "sweep/sweep.hpp"

using namespace perfgap::sweep;

namespace {

Setting one(std::string name, std::string value) { return Setting{{{std::move(name), std::move(value)}}}; }

const char* kTable =
    "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
    "     1048576        262144     float     sum      -1    14.56   72.00   72.00      0    14.42   72.72   72.72      0\n"
    "     4194304       1048576     float     sum      -1    23.30  180.00  180.00      0    23.07  181.80  181.80      0\n";

ProcessResult exited(int code) {
  ProcessResult p;
  p.exit_code = code;
  return p;
}

}  // namespace

TEST(SweepGrid, ParsesAxisWithBaselineFirst) {
  auto a = parse_axis("NCCL_IB_QPS_PER_CONNECTION=1,2,4,8");
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->name, "NCCL_IB_QPS_PER_CONNECTION");
  EXPECT_EQ(a->values, (std::vector<std::string>{"1", "2", "4", "8"}));
}

TEST(SweepGrid, EscapedCommaStaysInTheValue) {
  auto a = parse_axis("NCCL_ALGO=Ring\\,Tree,NVLS,unset");
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->values, (std::vector<std::string>{"Ring,Tree", "NVLS", "unset"}));
}

TEST(SweepGrid, RejectsBadSpecs) {
  EXPECT_FALSE(parse_axis("NCCL_ALGO"));
  EXPECT_FALSE(parse_axis("=1,2"));
  EXPECT_FALSE(parse_axis("1BAD=1,2"));
  EXPECT_FALSE(parse_axis("A-B=1,2"));
  EXPECT_FALSE(parse_axis("A=1,,2"));
  EXPECT_FALSE(parse_axis("A="));
  EXPECT_FALSE(parse_axis("A=1,2,1"));
  EXPECT_NE(parse_axis("A=1,,2").error().find("unset"), std::string::npos);
  EXPECT_FALSE(parse_axes({}));
  EXPECT_FALSE(parse_axes({"A=1", "B=2"}));         // one setting: nothing to compare
  EXPECT_FALSE(parse_axes({"A=1,2", "A=3,4"}));     // same name twice
  EXPECT_TRUE(parse_axes({"A=1", "B=2,3"}));
}

TEST(SweepGrid, ExpandsTheGridBaselineFirstFirstAxisSlowest) {
  auto axes = parse_axes({"A=1,2", "B=x,y,unset"});
  ASSERT_TRUE(axes);
  auto g = expand_grid(*axes);
  ASSERT_EQ(g.size(), 6u);
  EXPECT_EQ(g[0].label(), "A=1 B=x");
  EXPECT_EQ(g[1].label(), "A=1 B=y");
  EXPECT_EQ(g[2].label(), "A=1 B=unset");
  EXPECT_EQ(g[3].label(), "A=2 B=x");
  EXPECT_EQ(g[5].label(), "A=2 B=unset");
  EXPECT_EQ(g[0].as_map().at("B"), "x");
}

TEST(SweepGrid, FilePartIsSafe) {
  EXPECT_EQ(one("NCCL_SOCKET_IFNAME", "=eth0").file_part(), "NCCL_SOCKET_IFNAME==eth0");
  EXPECT_EQ(one("X", "a/b c;$(rm)").file_part(), "X=a_b_c___rm_");
  EXPECT_EQ(Setting({{"A", "1"}, {"B", "2"}}).file_part(), "A=1_B=2");
  EXPECT_LE(one("X", std::string(500, 'v')).file_part().size(), 120u);
}

TEST(SweepGrid, RunsAreInterleaved) {
  auto p = plan_runs(3, 2);
  ASSERT_EQ(p.size(), 6u);
  std::vector<std::size_t> order;
  for (const auto& r : p) order.push_back(r.setting);
  EXPECT_EQ(order, (std::vector<std::size_t>{0, 1, 2, 0, 1, 2}));
  EXPECT_EQ(p[0].repeat, 1);
  EXPECT_EQ(p[5].repeat, 2);
}

TEST(SweepEnv, SettingReplacesAddsAndUnsets) {
  std::vector<std::string> base{"PATH=/usr/bin", "NCCL_IB_QPS_PER_CONNECTION=1", "NCCL_ALGO=Ring", "NCCL_ALGOX=keep"};
  auto env = build_environment(base, Setting{{{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_ALGO", "unset"}, {"NCCL_PROTO", "Simple"}}});
  auto has = [&](const std::string& kv) { return std::find(env.begin(), env.end(), kv) != env.end(); };
  EXPECT_TRUE(has("PATH=/usr/bin"));
  EXPECT_TRUE(has("NCCL_IB_QPS_PER_CONNECTION=4"));
  EXPECT_FALSE(has("NCCL_IB_QPS_PER_CONNECTION=1"));
  EXPECT_TRUE(has("NCCL_PROTO=Simple"));
  EXPECT_TRUE(has("NCCL_ALGOX=keep"));  // a longer name with the same prefix is another variable
  EXPECT_TRUE(std::none_of(env.begin(), env.end(), [](const std::string& kv) { return kv.rfind("NCCL_ALGO=", 0) == 0; }));
  EXPECT_EQ(env.size(), 4u);
}

TEST(SweepLauncher, RecognisesOpenMpi) {
  EXPECT_TRUE(is_mpi_launcher_name("/usr/bin/mpirun"));
  EXPECT_TRUE(is_mpi_launcher_name("mpiexec"));
  EXPECT_FALSE(is_mpi_launcher_name("srun"));
  EXPECT_FALSE(is_mpi_launcher_name("all_reduce_perf"));
  EXPECT_EQ(classify_launcher("mpirun", "/usr/bin/orterun", ""), Launcher::open_mpi);
  EXPECT_EQ(classify_launcher("mpirun", "/usr/bin/mpirun.openmpi", ""), Launcher::open_mpi);
  EXPECT_EQ(classify_launcher("mpirun", "/opt/hpcx/ompi/bin/mpirun", "mpirun (Open MPI) 4.1.7\n"), Launcher::open_mpi);
  EXPECT_EQ(classify_launcher("mpiexec", "/usr/bin/mpiexec.hydra", "HYDRA build details:\n    Version: 4.1.2\n"), Launcher::direct);
  EXPECT_EQ(classify_launcher("srun", "/usr/bin/srun", "slurm 23.02.7"), Launcher::direct);
}

TEST(SweepLauncher, OpenMpiGetsDashXForEachSetVariable) {
  std::vector<std::string> cmd{"mpirun", "-np", "2", "./all_gather_perf", "-b", "1M"};
  Setting s{{{"NCCL_IB_QPS_PER_CONNECTION", "4"}, {"NCCL_ALGO", "unset"}, {"NCCL_PROTO", "Simple"}}};
  auto argv = launch_argv(cmd, s, Launcher::open_mpi);
  EXPECT_EQ(argv, (std::vector<std::string>{"mpirun", "-x", "NCCL_IB_QPS_PER_CONNECTION", "-x", "NCCL_PROTO", "-np", "2",
                                             "./all_gather_perf", "-b", "1M"}));
  // Already exported by the user: not twice.
  std::vector<std::string> cmd2{"mpirun", "-x", "NCCL_PROTO", "-np", "2", "./bench"};
  auto argv2 = launch_argv(cmd2, s, Launcher::open_mpi);
  EXPECT_EQ(std::count(argv2.begin(), argv2.end(), "NCCL_PROTO"), 1);
  // Not Open MPI: unchanged.
  EXPECT_EQ(launch_argv(cmd, s, Launcher::direct), cmd);
}

TEST(SweepEnvEcho, MatchingValueIsAccepted) {
  std::string out = "node01:41001:41001 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 4.\n";
  EXPECT_FALSE(env_echo_mismatch(out, one("NCCL_IB_QPS_PER_CONNECTION", "4")));
  EXPECT_FALSE(env_echo_mismatch(out, one("NCCL_IB_QPS_PER_CONNECTION", "0x4")));  // NCCL prints the number it parsed
  EXPECT_FALSE(env_echo_mismatch(out, one("NCCL_ALGO", "Ring")));                    // not echoed: nothing to check
  EXPECT_FALSE(env_echo_mismatch("no NCCL here", one("NCCL_IB_QPS_PER_CONNECTION", "4")));
}

TEST(SweepEnvEcho, OtherValueOrUnsetVariableIsAMismatch) {
  std::string out =
      "node01:41001:41001 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 4.\n"
      "node02:52001:52001 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 1.\n";
  auto m = env_echo_mismatch(out, one("NCCL_IB_QPS_PER_CONNECTION", "4"));
  ASSERT_TRUE(m);
  EXPECT_NE(m->find("line 2"), std::string::npos) << *m;
  EXPECT_NE(m->find("expected 4"), std::string::npos) << *m;
  auto u = env_echo_mismatch(out, one("NCCL_IB_QPS_PER_CONNECTION", "unset"));
  ASSERT_TRUE(u);
  EXPECT_NE(u->find("unsets"), std::string::npos) << *u;
  // A variable whose name merely starts like the swept one does not count.
  EXPECT_FALSE(env_echo_mismatch("h:1:1 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION_X set by environment to 9.\n",
                                 one("NCCL_IB_QPS_PER_CONNECTION", "4")));
}

TEST(SweepJudge, GoodRunGivesOutOfPlaceBusbwPerSize) {
  auto r = judge_run(exited(0), kTable, one("X", "1"), 10);
  ASSERT_TRUE(r.ok) << r.problem;
  ASSERT_EQ(r.busbw.size(), 2u);
  EXPECT_DOUBLE_EQ(r.busbw.at(1048576), 72.00);  // out-of-place, not the in-place 72.72
  EXPECT_DOUBLE_EQ(r.busbw.at(4194304), 180.00);
}

TEST(SweepJudge, FailuresAreNamed) {
  ProcessResult crash;
  crash.signal = 11;
  EXPECT_NE(judge_run(crash, kTable, one("X", "1"), 10).problem.find("SIGSEGV"), std::string::npos);
  ProcessResult hang;
  hang.timed_out = true;
  hang.signal = 15;
  EXPECT_NE(judge_run(hang, "", one("X", "1"), 2).problem.find("timed out after 2 s"), std::string::npos);
  EXPECT_EQ(judge_run(exited(1), kTable, one("X", "1"), 10).problem, "exit status 1");
  EXPECT_EQ(judge_run(exited(0), " \n", one("X", "1"), 10).problem, "no output");
  ProcessResult nostart;
  nostart.spawn_error = "nope: No such file or directory";
  EXPECT_FALSE(judge_run(nostart, "", one("X", "1"), 10).ok);
  auto bad = judge_run(exited(0), "hello\nworld\n", one("X", "1"), 10);
  EXPECT_FALSE(bad.ok);
  EXPECT_NE(bad.problem.find("nccl-tests"), std::string::npos);
  EXPECT_TRUE(bad.busbw.empty());
}

TEST(SweepJudge, WrongResultsFailTheRun) {
  std::string t = kTable;
  t += "    16777216       4194304     float     sum      -1    58.25  288.00  288.00      2    57.67  290.88  290.88      0\n";
  auto r = judge_run(exited(0), t, one("X", "1"), 10);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problem.find("#wrong"), std::string::npos);
}

TEST(SweepJudge, SettingThatDidNotReachTheRanksFailsTheRun) {
  std::string t = std::string("h:1:1 [0] NCCL INFO NCCL_IB_QPS_PER_CONNECTION set by environment to 1.\n") + kTable;
  auto r = judge_run(exited(0), t, one("NCCL_IB_QPS_PER_CONNECTION", "4"), 10);
  EXPECT_FALSE(r.ok);
  EXPECT_NE(r.problem.find("did not reach the ranks"), std::string::npos) << r.problem;
  EXPECT_TRUE(judge_run(exited(0), t, one("NCCL_IB_QPS_PER_CONNECTION", "1"), 10).ok);
}
