// `perfgap sweep` as a user runs it, against fake benchmarks (tests/fixtures/sweep/bench): a
// recorded nccl-tests table per $FAKE_MODE, or a crash, a hang, no output, a malformed table.
// Checks the report, the exit status, the run directory (logs + manifest), `unset`, -x for
// Open MPI's mpirun, NCCL's "set by environment" check, Ctrl-C, and bad arguments.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::read_file;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using nlohmann::json;

extern char** environ;

namespace {

std::string bench(const char* name) { return (fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/sweep/bench" / name).string(); }
const std::string kFake = bench("fake-nccl-tests.sh");

// perfgap sweep --env MODES --run-dir DIR/run --format json [extra] -- /bin/sh fake-nccl-tests.sh
perfgap::fixture::RunResult sweep(const TempDir& d, const std::string& modes, std::vector<std::string> extra = {},
                                  const std::vector<std::pair<std::string, std::string>>& env = {}) {
  std::vector<std::string> a{"sweep", "--env", "FAKE_MODE=" + modes, "--run-dir", d.path() + "/run", "--format", "json"};
  a.insert(a.end(), extra.begin(), extra.end());
  a.insert(a.end(), {"--", "/bin/sh", kFake});
  return run_binary(PERFGAP_BINARY, a, env);
}

json parse_report(const perfgap::fixture::RunResult& r) {
  auto j = json::parse(r.out);
  auto v = perfgap::fixture::contract_violations(j);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
  return j;
}

}  // namespace

TEST(Sweep, RecommendsTheWinnerAndRecordsBrokenBenchmarks) {
  TempDir d;
  auto t0 = std::chrono::steady_clock::now();
  auto r = sweep(d, "base,fast,crash,hang,empty,malformed", {"--repeat", "2", "--timeout", "1"});
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_EQ(r.status, 1) << r.err;  // some settings' runs all failed
  EXPECT_LT(took, 10.0);            // two hangs of 1 s each, not 60 s each
  auto j = parse_report(r);
  EXPECT_EQ(j["source"]["kind"], "sweep");
  ASSERT_TRUE(j["node"].is_object());
  EXPECT_FALSE(j["node"]["name"].get<std::string>().empty());

  auto* rec = finding(j, "sweep.recommendation");
  ASSERT_TRUE(rec);
  EXPECT_EQ((*rec)["status"], "pass");
  EXPECT_EQ((*rec)["layer"], "sweep");
  EXPECT_NE((*rec)["title"].get<std::string>().find("FAKE_MODE=fast beats the baseline FAKE_MODE=base"), std::string::npos);
  EXPECT_EQ(j["recommendation"]["setting"], json({{"FAKE_MODE", "fast"}}));
  EXPECT_NEAR(j["recommendation"]["gain_pct"].get<double>(), 25.0, 0.1);

  auto* base = finding(j, "sweep.result", "FAKE_MODE=base");
  ASSERT_TRUE(base);
  EXPECT_EQ((*base)["status"], "pass");
  EXPECT_DOUBLE_EQ((*base)["metrics"]["busbw_gbps.1048576.median"].get<double>(), 72.0);
  EXPECT_DOUBLE_EQ((*base)["metrics"]["runs_ok"].get<double>(), 2);
  struct Want {
    const char* mode;
    const char* problem;
  } wants[] = {{"crash", "killed by signal 11 (SIGSEGV)"},
               {"hang", "timed out after 1 s"},
               {"empty", "no output"},
               {"malformed", "no readable nccl-tests table"}};
  for (const auto& w : wants) {
    auto* f = finding(j, "sweep.result", std::string("FAKE_MODE=") + w.mode);
    ASSERT_TRUE(f) << w.mode;
    EXPECT_EQ((*f)["status"], "error") << w.mode;
    ASSERT_EQ((*f)["evidence"].size(), 2u) << w.mode;
    EXPECT_NE((*f)["evidence"][0]["observed"].get<std::string>().find(w.problem), std::string::npos) << (*f)["evidence"][0];
  }

  // The run directory: one log per run, named NNN-<setting>.log, in interleaved order, and
  // a manifest that says how each run ended.
  auto m = json::parse(read_file(d.path() + "/run/manifest.json"));
  EXPECT_EQ(m["schema"], "perfgap.sweep-manifest/1");
  EXPECT_EQ(m["status"], "complete");
  EXPECT_EQ(m["launcher"], "direct");
  EXPECT_EQ(m["baseline"], "FAKE_MODE=base");
  ASSERT_EQ(m["runs"].size(), 12u);
  EXPECT_EQ(m["order"][0], "FAKE_MODE=base");
  EXPECT_EQ(m["order"][6], "FAKE_MODE=base");
  EXPECT_EQ(m["runs"][1]["file"], "002-FAKE_MODE=fast.log");
  EXPECT_EQ(m["runs"][7]["setting"], "FAKE_MODE=fast");
  EXPECT_EQ(m["runs"][7]["repeat"], 2);
  EXPECT_EQ(m["runs"][2]["signal"], 11);
  EXPECT_EQ(m["runs"][3]["timed_out"], true);
  EXPECT_LT(m["runs"][3]["duration_s"].get<double>(), 5.0);
  EXPECT_EQ(m["runs"][4]["outcome"], "failed");
  EXPECT_EQ(m["runs"][0]["outcome"], "ok");
  EXPECT_EQ(m["runs"][0]["exit_code"], 0);
  EXPECT_EQ(m["runs"][0]["env"], json({{"FAKE_MODE", "base"}}));
  for (const auto& run : m["runs"]) EXPECT_TRUE(fs::exists(d.path() + "/run/" + run["file"].get<std::string>())) << run["file"];
  EXPECT_NE(read_file(d.path() + "/run/001-FAKE_MODE=base.log").find("72.00"), std::string::npos);
  EXPECT_EQ(j["source"]["inputs"].size(), 13u);  // the manifest and 12 logs
}

TEST(Sweep, NoSignificantDifferenceKeepsTheBaselineAndUnsetRemovesTheVariable) {
  TempDir d;
  // With FAKE_MODE removed the script prints same.txt (2% below base); were it not removed,
  // it would look for "unset.txt" and print nothing.
  auto r = sweep(d, "same,unset", {"--repeat", "2"});
  EXPECT_EQ(r.status, 0) << r.err << r.out;
  auto j = parse_report(r);
  auto* rec = finding(j, "sweep.recommendation");
  ASSERT_TRUE(rec);
  EXPECT_EQ((*rec)["status"], "warn");
  EXPECT_NE((*rec)["title"].get<std::string>().find("no significant difference: keep the baseline FAKE_MODE=same"), std::string::npos);
  EXPECT_EQ(j["recommendation"]["setting"], json({{"FAKE_MODE", "same"}}));
  EXPECT_EQ(j["recommendation"]["gain_pct"], 0.0);
  EXPECT_EQ((*finding(j, "sweep.result", "FAKE_MODE=unset"))["status"], "pass");
  auto m = json::parse(read_file(d.path() + "/run/manifest.json"));
  EXPECT_TRUE(m["runs"][1]["env"]["FAKE_MODE"].is_null());
}

TEST(Sweep, SingleRepeatSaysNoiseCannotBeJudged) {
  TempDir d;
  auto r = sweep(d, "base,fast", {"--repeat", "1"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto j = parse_report(r);
  auto* rec = finding(j, "sweep.recommendation");
  EXPECT_EQ((*rec)["status"], "warn");
  EXPECT_NE((*rec)["title"].get<std::string>().find("too few runs to judge noise"), std::string::npos) << (*rec)["title"];
}

TEST(Sweep, SettingNcclDidNotSeeIsAFailedRun) {
  TempDir d;
  // The benchmark's NCCL says FAKE_MODE is "base" whatever the setting: only base's runs
  // reached the "ranks".
  auto r = sweep(d, "base,fast", {"--repeat", "2"}, {{"FAKE_ECHO", "base"}});
  EXPECT_EQ(r.status, 1) << r.err;
  auto j = parse_report(r);
  auto* fast = finding(j, "sweep.result", "FAKE_MODE=fast");
  ASSERT_TRUE(fast);
  EXPECT_EQ((*fast)["status"], "error");
  EXPECT_NE((*fast)["title"].get<std::string>().find("did not reach the ranks"), std::string::npos) << (*fast)["title"];
  EXPECT_EQ((*finding(j, "sweep.result", "FAKE_MODE=base"))["status"], "pass");
  EXPECT_EQ((*finding(j, "sweep.recommendation"))["status"], "skip");
}

TEST(Sweep, OpenMpiLauncherGetsDashX) {
  TempDir d;
  // A launcher named mpirun that answers --version as Open MPI does.
  fs::create_directory(d.path() + "/bin");
  auto mpirun = d.path() + "/bin/mpirun";
  fs::copy_file(bench("fake-mpirun.sh"), mpirun);
  fs::permissions(mpirun, fs::perms::owner_all | fs::perms::group_read | fs::perms::others_read);
  auto r = run_binary(PERFGAP_BINARY, {"sweep", "--env", "FAKE_MODE=base,fast", "--env", "OTHER=1,unset", "--repeat", "1", "--run-dir",
                                       d.path() + "/run", "--format", "json", "--", mpirun, "-np", "2", "/bin/sh", kFake});
  EXPECT_EQ(r.status, 0) << r.err << r.out;
  auto m = json::parse(read_file(d.path() + "/run/manifest.json"));
  EXPECT_EQ(m["launcher"], "open-mpi");
  ASSERT_EQ(m["runs"].size(), 4u);
  EXPECT_EQ(m["runs"][0]["argv"], json({mpirun, "-x", "FAKE_MODE", "-x", "OTHER", "-np", "2", "/bin/sh", kFake}));
  // OTHER unset: not exported (Open MPI would complain about a variable it cannot find).
  EXPECT_EQ(m["runs"][1]["argv"], json({mpirun, "-x", "FAKE_MODE", "-np", "2", "/bin/sh", kFake}));
  EXPECT_NE(read_file(d.path() + "/run/001-FAKE_MODE=base_OTHER=1.log").find("# fake mpirun argv: -x FAKE_MODE -x OTHER -np 2"), std::string::npos);
  auto j = parse_report(r);
  EXPECT_EQ((*finding(j, "sweep.result", "FAKE_MODE=fast OTHER=unset"))["status"], "pass");
}

TEST(Sweep, TextReportHasOneTableAndTheRecommendation) {
  TempDir d;
  auto out = d.path() + "/report.txt";
  auto r = run_binary(PERFGAP_BINARY, {"sweep", "--env", "FAKE_MODE=base,fast,crash", "--repeat", "2", "--sizes", "1M,64M", "--run-dir",
                                       d.path() + "/run", "--output", out, "--", "/bin/sh", kFake});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_EQ(r.out, "");  // --output: nothing on stdout
  auto text = read_file(out);
  EXPECT_NE(text.find("perfgap sweep on "), std::string::npos) << text;
  EXPECT_NE(text.find("setting"), std::string::npos);
  EXPECT_NE(text.find("1 MiB"), std::string::npos);
  EXPECT_NE(text.find("64 MiB"), std::string::npos);
  EXPECT_EQ(text.find(" 4 MiB"), std::string::npos) << text;  // only the sizes that matter
  EXPECT_NE(text.find("FAKE_MODE=base (baseline)"), std::string::npos);
  EXPECT_NE(text.find("72.00 [72.00-72.00]"), std::string::npos) << text;
  EXPECT_NE(text.find("+25.0% *"), std::string::npos) << text;
  EXPECT_NE(text.find("all runs failed: killed by signal 11"), std::string::npos) << text;
  EXPECT_NE(text.find("PASS  sweep.recommendation  FAKE_MODE=fast beats the baseline FAKE_MODE=base by 25.0%"), std::string::npos) << text;
  EXPECT_EQ(text.find("\x1b["), std::string::npos);  // no colour into a file
}

// Every setting measured (sweep.result passes: it says what was measured and judges nothing) but
// no recommendation could be made: the headline says SKIP and why, never OK (exit status 0).
TEST(Sweep, MeasuredButNotRecommendedHeadsSkipWithWhy) {
  TempDir d;
  auto r = run_binary(PERFGAP_BINARY, {"sweep", "--env", "FAKE_MODE=base,fast", "--repeat", "2", "--sizes", "16G", "--run-dir", d.path() + "/run",
                                       "--", "/bin/sh", kFake});
  EXPECT_EQ(r.status, 0) << r.err;
  const std::string headline = r.out.substr(0, r.out.find('\n'));
  EXPECT_NE(headline.find(": SKIP  0 fail, 0 warn, 2 pass, 1 skip, 0 error; nothing could be decided: cannot recommend: the baseline measured none of the --sizes"),
            std::string::npos)
      << r.out;
}

TEST(Sweep, CtrlCStopsTheBenchmarkAndKeepsWhatFinished) {
  TempDir d;
  auto out_path = d.path() + "/out.json";
  std::vector<std::string> args{PERFGAP_BINARY, "sweep", "--env", "FAKE_MODE=base,hang,fast", "--repeat", "2", "--timeout", "60",
                                "--run-dir", d.path() + "/run", "--format", "json", "--", "/bin/sh", kFake};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 1, out_path.c_str(), O_WRONLY | O_CREAT | O_TRUNC, 0644);
  const std::string pidfile = d.path() + "/bench.pid";
  std::vector<std::string> env_s{"FAKE_PIDFILE=" + pidfile};
  for (char** e = environ; *e; ++e) env_s.emplace_back(*e);
  std::vector<char*> envp;
  for (auto& e : env_s) envp.push_back(e.data());
  envp.push_back(nullptr);
  pid_t pid;
  ASSERT_EQ(posix_spawn(&pid, PERFGAP_BINARY, &fa, nullptr, argv.data(), envp.data()), 0);
  posix_spawn_file_actions_destroy(&fa);
  // Wait until the hanging benchmark runs (run 2), then Ctrl-C.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(10);
  while (!fs::exists(d.path() + "/run/002-FAKE_MODE=hang.log") && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  auto t0 = std::chrono::steady_clock::now();
  ::kill(pid, SIGINT);
  int st = 0;
  ::waitpid(pid, &st, 0);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  ASSERT_TRUE(WIFEXITED(st));
  EXPECT_EQ(WEXITSTATUS(st), 130);
  EXPECT_LT(took, 5.0);
  auto m = json::parse(read_file(d.path() + "/run/manifest.json"));
  EXPECT_EQ(m["status"], "interrupted");
  ASSERT_EQ(m["runs"].size(), 2u);
  EXPECT_EQ(m["runs"][0]["outcome"], "ok");
  EXPECT_EQ(m["runs"][1]["outcome"], "interrupted");
  auto j = json::parse(read_file(out_path));
  EXPECT_EQ((*finding(j, "sweep.result", "FAKE_MODE=base"))["status"], "pass");
  EXPECT_EQ((*finding(j, "sweep.result", "FAKE_MODE=hang"))["status"], "skip");  // its run was cut short: not counted
  EXPECT_NE((*finding(j, "sweep.recommendation"))["title"].get<std::string>().find("interrupted"), std::string::npos);
  // The hanging benchmark's process group is gone (the pid file holds the last run's pid,
  // the leader of its own group).
  pid_t bench_pid = std::atoi(read_file(pidfile).c_str());
  ASSERT_GT(bench_pid, 0);
  auto stat = read_file("/proc/" + std::to_string(bench_pid) + "/stat");  // gone, or a zombie init has not reaped
  EXPECT_TRUE(stat.empty() || stat.find(") Z ") != std::string::npos) << stat;
}

TEST(Sweep, BadArgumentsExit2WithOneLine) {
  TempDir d;
  fs::create_directory(d.path() + "/full");
  std::ofstream(d.path() + "/full/x") << "x";
  const std::vector<std::vector<std::string>> cases = {
      {"sweep", "--", "/bin/sh", kFake},                                                // no --env
      {"sweep", "--env", "FAKE_MODE", "--", "/bin/sh", kFake},                          // no values
      {"sweep", "--env", "FAKE_MODE=a,,b", "--", "/bin/sh", kFake},                     // empty value
      {"sweep", "--env", "FAKE_MODE=a", "--", "/bin/sh", kFake},                        // one setting
      {"sweep", "--env", "FAKE_MODE=a,b"},                                              // no command
      {"sweep", "--env", "FAKE_MODE=a,b", "--", "/nonexistent/bench"},                  // not runnable
      {"sweep", "--env", "FAKE_MODE=a,b", "--repeat", "0", "--", "/bin/sh", kFake},     // repeat
      {"sweep", "--env", "FAKE_MODE=a,b", "--sizes", "1Q", "--", "/bin/sh", kFake},     // sizes
      {"sweep", "--env", "FAKE_MODE=a,b", "--run-dir", d.path() + "/full", "--", "/bin/sh", kFake},  // not empty
      {"sweep", "--env", "FAKE_MODE=a,b", "--output", d.path() + "/no/such/dir/r.json", "--", "/bin/sh", kFake},
  };
  for (const auto& c : cases) {
    auto r = run_binary(PERFGAP_BINARY, c);
    EXPECT_EQ(r.status, 2) << ::testing::PrintToString(c) << r.out;
    EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
    EXPECT_EQ(r.out, "");
  }
  EXPECT_TRUE(fs::exists(d.path() + "/full/x"));
  EXPECT_EQ(std::distance(fs::directory_iterator(d.path() + "/full"), fs::directory_iterator()), 1);
}
