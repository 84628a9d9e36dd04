// Running one benchmark (src/sweep/process.cpp): exactly the given environment, the output
// bound (head and tail kept), the timeout stopping the whole process group, a stray child
// holding the output open, a command that cannot start.
#include <gtest/gtest.h>

#include <signal.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <thread>

#include "files.hpp"
#include "sweep/process.hpp"
#include "sys/executable.hpp"
#include "tree.hpp"

using namespace perfgap::sweep;
using perfgap::fixture::read_file;
using perfgap::fixture::TempDir;
namespace fs = std::filesystem;

namespace {

// Gone, or a zombie waiting for a parent (here init) to reap it.
bool running(pid_t pid) {
  auto stat = read_file("/proc/" + std::to_string(pid) + "/stat");
  if (stat.empty()) return false;
  auto close = stat.rfind(')');
  return close == std::string::npos || close + 2 >= stat.size() || stat[close + 2] != 'Z';
}

const std::vector<std::string> kEnv{"PATH=/usr/bin:/bin", "FOO=bar"};

}  // namespace

TEST(SweepProcess, RunsWithExactlyTheGivenEnvironment) {
  TempDir t;
  std::string kept;
  RunLimits l;
  l.timeout_s = 10;
  auto r = run_process({"sh", "-c", "echo \"$FOO/${HOME-nohome}\"; echo err >&2; exit 3"}, kEnv, t.file("a.log"), l, kept);
  EXPECT_TRUE(r.spawn_error.empty()) << r.spawn_error;
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 3);
  EXPECT_FALSE(r.signal);
  EXPECT_EQ(kept, "bar/nohome\nerr\n");  // stdout and stderr together, HOME not inherited
  EXPECT_EQ(read_file(t.file("a.log")), kept);
  EXPECT_EQ(r.output_bytes, kept.size());
}

TEST(SweepProcess, OutputIsBoundedKeepingHeadAndTail) {
  TempDir t;
  std::string kept;
  RunLimits l;
  l.timeout_s = 10;
  l.head_bytes = 1000;
  l.tail_bytes = 1000;
  // 20000 numbered lines (~108 KB), then the "table".
  auto r = run_process({"sh", "-c", "i=0; while [ $i -lt 20000 ]; do echo line $i; i=$((i+1)); done; echo TABLE-END"}, kEnv,
                       t.file("b.log"), l, kept);
  EXPECT_TRUE(r.truncated);
  EXPECT_GT(r.output_bytes, 100000u);
  EXPECT_LT(kept.size(), 2200u);
  EXPECT_EQ(kept.rfind("line 0\n", 0), 0u);
  EXPECT_NE(kept.find("bytes of output dropped here]"), std::string::npos);
  EXPECT_NE(kept.find("line 19999\nTABLE-END\n"), std::string::npos);
  EXPECT_EQ(read_file(t.file("b.log")), kept);
}

TEST(SweepProcess, TimeoutStopsTheWholeGroup) {
  TempDir t;
  std::string kept;
  RunLimits l;
  l.timeout_s = 1;  // time enough for sh to start its child on a loaded machine
  l.grace_s = 1;
  auto pidfile = t.file("child.pid");
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", "sleep 30 & echo $! > " + pidfile + "; echo started; wait"}, kEnv, t.file("c.log"), l, kept);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_TRUE(r.timed_out);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGTERM);
  EXPECT_LT(took, 4.0);
  EXPECT_EQ(kept, "started\n");
  pid_t child = std::atoi(read_file(pidfile).c_str());
  ASSERT_GT(child, 0);
  // The background sleep got the group's SIGTERM too; its exit is asynchronous to ours.
  auto deadline = std::chrono::steady_clock::now() + std::chrono::seconds(3);
  while (running(child) && std::chrono::steady_clock::now() < deadline)
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  EXPECT_FALSE(running(child));
}

TEST(SweepProcess, TermIgnoredGetsKill) {
  TempDir t;
  std::string kept;
  RunLimits l;
  l.timeout_s = 1;  // time enough for sh to set its trap on a loaded machine
  l.grace_s = 0.3;
  auto r = run_process({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}, kEnv, t.file("d.log"), l, kept);
  EXPECT_TRUE(r.timed_out);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGKILL);
  EXPECT_LT(r.duration_s, 4.0);
  EXPECT_EQ(kept, "ready\n");
}

TEST(SweepProcess, StrayChildHoldingTheOutputDoesNotHangTheSweep) {
  TempDir t;
  std::string kept;
  RunLimits l;
  l.timeout_s = 20;
  l.grace_s = 0.3;
  auto t0 = std::chrono::steady_clock::now();
  auto r = run_process({"sh", "-c", "sleep 30 & echo done"}, kEnv, t.file("e.log"), l, kept);
  double took = std::chrono::duration<double>(std::chrono::steady_clock::now() - t0).count();
  EXPECT_LT(took, 3.0);
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(kept, "done\n");
}

TEST(SweepProcess, CommandThatCannotStart) {
  TempDir t;
  std::string kept;
  auto r = run_process({"/nonexistent/bench"}, kEnv, t.file("f.log"), RunLimits{}, kept);
  EXPECT_FALSE(r.spawn_error.empty());
  EXPECT_FALSE(r.exit_code);
  EXPECT_EQ(perfgap::sys::find_executable("/nonexistent/bench"), "");
  EXPECT_NE(perfgap::sys::find_executable("sh"), "");
}
