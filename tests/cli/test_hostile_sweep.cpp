// perfgap sweep against benchmarks that misbehave, with the real binary: a process that
// escapes the benchmark's process group (setsid) is stopped after the run (perfgap is a
// child subreaper), and SIGHUP stops a sweep as SIGTERM does (exit 129, report written).
#include <gtest/gtest.h>

#include <fcntl.h>
#include <signal.h>
#include <spawn.h>
#include <sys/wait.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <sstream>
#include <string>
#include <thread>
#include <vector>

#include <nlohmann/json.hpp>

#include "hostile_support.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

const std::string kBench = std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/sweep/bench";

// Alive and not a zombie waiting for its parent.
bool alive(pid_t pid) {
  if (::kill(pid, 0) != 0) return false;
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] != 'Z';
}

std::vector<pid_t> pids_in(const fs::path& file) {
  std::vector<pid_t> out;
  std::istringstream in(read_file(file));
  for (long p; in >> p;) out.push_back(static_cast<pid_t>(p));
  return out;
}

TEST(HostileSweep, ADaemonisedLeftoverIsStoppedAfterItsRun) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  const fs::path pidfile = dir / "escaped.pid";
  // The benchmark prints a good table and leaves a sleeper in a session of its own.
  write_file(dir / "bench.sh", "setsid sh -c 'echo $$ >> \"$ESCAPED\"; exec sleep 300' </dev/null >/dev/null 2>&1 &\n"
                               "while [ ! -s \"$ESCAPED\" ]; do sleep 0.01; done\n"
                               "cat \"" + kBench + "/base.txt\"\n");
  auto r = run_binary(PERFGAP_BINARY, {"sweep", "--env", "X=1,2", "--repeat", "1", "--run-dir", (dir / "run").string(), "--format", "json",
                                       "--", "/bin/sh", (dir / "bench.sh").string()},
                      {{"ESCAPED", pidfile.string()}});
  auto escaped = pids_in(pidfile);
  ASSERT_FALSE(escaped.empty()) << "the benchmark did not start its sleeper: " << r.err;
  for (pid_t p : escaped) {
    const bool survived = alive(p);
    if (survived) ::kill(p, SIGKILL);  // never leave it behind, whatever the result
    EXPECT_FALSE(survived) << "pid " << p << " left the benchmark's group and outlived the sweep";
  }
  EXPECT_LE(r.status, 1) << r.err;
}

TEST(HostileSweep, SighupStopsTheSweepLikeSigterm) {
  TempDir tmp;
  const fs::path dir = tmp.path();
  const std::string out = (dir / "out.json").string();
  std::vector<std::string> args{PERFGAP_BINARY, "sweep", "--env", "FAKE_MODE=base,hang", "--repeat", "1", "--timeout", "60",
                                "--run-dir", (dir / "run").string(), "--format", "json", "--output", out,
                                "--", "/bin/sh", kBench + "/fake-nccl-tests.sh"};
  std::vector<char*> argv;
  for (auto& a : args) argv.push_back(a.data());
  argv.push_back(nullptr);
  posix_spawn_file_actions_t fa;
  posix_spawn_file_actions_init(&fa);
  posix_spawn_file_actions_addopen(&fa, 2, "/dev/null", O_WRONLY, 0);
  pid_t pid = 0;
  ASSERT_EQ(posix_spawn(&pid, argv[0], &fa, nullptr, argv.data(), environ), 0);
  posix_spawn_file_actions_destroy(&fa);
  const fs::path hang_log = dir / "run/002-FAKE_MODE=hang.log";
  for (int i = 0; i < 500 && !fs::exists(hang_log); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(20));
  std::this_thread::sleep_for(std::chrono::milliseconds(200));
  ASSERT_EQ(::kill(pid, SIGHUP), 0);
  int st = 0;
  ASSERT_EQ(::waitpid(pid, &st, 0), pid);
  ASSERT_TRUE(WIFEXITED(st)) << "killed by signal " << WTERMSIG(st);
  EXPECT_EQ(WEXITSTATUS(st), 129);
  auto j = nlohmann::json::parse(read_file(out));
  bool said = false;
  for (const auto& f : j["findings"])
    if (f["id"] == "sweep.recommendation") said = f["title"].get<std::string>().find("SIGHUP") != std::string::npos;
  EXPECT_TRUE(said) << j.dump(2);
}

}  // namespace
