// The one subprocess runner (src/sys/process.cpp) and the one executable search
// (sys::find_executable): output kept apart or merged or streamed, the environment, exit codes
// and signals, the deadline and the stop flag stopping the whole process group, a command
// that exits while a child it left holds the output, a command that cannot start.
#include <gtest/gtest.h>

#include <signal.h>

#include <csignal>
#include <string>
#include <thread>

#include "sys/executable.hpp"
#include "sys/process.hpp"

namespace {

using perfgap::sys::CommandOptions;
using perfgap::sys::run_command;

// The process named by a pid file is gone or a zombie.
bool sysproc_gone(const std::string& pid_text) {
  if (pid_text.empty()) return false;
  std::string stat_path = "/proc/" + pid_text + "/stat";
  FILE* f = std::fopen(stat_path.c_str(), "r");
  if (!f) return true;
  char buf[512] = {};
  std::size_t n = std::fread(buf, 1, sizeof buf - 1, f);
  std::fclose(f);
  std::string stat(buf, n);
  auto close = stat.rfind(')');
  return close != std::string::npos && close + 2 < stat.size() && stat[close + 2] == 'Z';
}

}  // namespace

TEST(SysProcess, KeepsStdoutAndStderrApartOrMerged) {
  auto r = run_command({"sh", "-c", "echo out; echo err >&2; exit 3"}, {});
  ASSERT_TRUE(r.started) << r.error;
  EXPECT_EQ(r.out, "out\n");
  EXPECT_EQ(r.err, "err\n");
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 3);
  EXPECT_EQ(r.status, 3);
  EXPECT_FALSE(r.signal);

  CommandOptions merged;
  merged.merge_stderr = true;
  auto m = run_command({"sh", "-c", "echo out; echo err >&2"}, merged);
  EXPECT_EQ(m.out, "out\nerr\n");
  EXPECT_EQ(m.err, "");
}

TEST(SysProcess, StreamsOutputToTheCallback) {
  CommandOptions o;
  std::string seen;
  o.on_output = [&seen](std::string_view text) { seen += text; };
  auto r = run_command({"sh", "-c", "seq 1 20000"}, o);
  EXPECT_EQ(r.out, "");  // went to the callback
  EXPECT_EQ(seen.substr(0, 4), "1\n2\n");
  EXPECT_EQ(seen.size(), 108894U);  // the digits of 1..20000 and their newlines
}

TEST(SysProcess, EnvironmentOverridesOrWhole) {
  CommandOptions o;
  o.env = {{"PERFGAP_SYSPROC_A", "one"}, {"HOME", ""}};
  auto r = run_command({"sh", "-c", "echo \"$PERFGAP_SYSPROC_A:${HOME-unset}:${PATH:+path}\""}, o);
  EXPECT_EQ(r.out, "one:unset:path\n");

  CommandOptions whole;
  whole.environment = std::vector<std::string>{"PERFGAP_SYSPROC_B=two"};
  auto w = run_command({"/bin/sh", "-c", "echo \"$PERFGAP_SYSPROC_B:${HOME-nohome}\""}, whole);
  EXPECT_EQ(w.out, "two:nohome\n");
}

TEST(SysProcess, SignalDeathIsReportedAsTheSignal) {
  auto r = run_command({"sh", "-c", "kill -SEGV $$"}, {});
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGSEGV);
  EXPECT_EQ(r.status, 128 + SIGSEGV);
  EXPECT_FALSE(r.exit_code);
  EXPECT_FALSE(r.timed_out);
}

TEST(SysProcess, DeadlineStopsTheWholeGroup) {
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(300);
  // The grandchild writes its pid and sleeps: the deadline must take it down too.
  auto r = run_command({"sh", "-c", "sleep 30 & echo $!; wait"}, o);
  EXPECT_TRUE(r.timed_out);
  EXPECT_FALSE(r.stopped);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGKILL);
  std::string pid = r.out.substr(0, r.out.find('\n'));
  for (int i = 0; i < 200 && !sysproc_gone(pid); ++i) std::this_thread::sleep_for(std::chrono::milliseconds(10));
  EXPECT_TRUE(sysproc_gone(pid)) << pid;
}

TEST(SysProcess, TermGraceThenKillWhenTermIsIgnored) {
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(200);
  o.term_grace = std::chrono::milliseconds(200);
  auto polite = run_command({"sh", "-c", "sleep 30"}, o);
  EXPECT_TRUE(polite.timed_out);
  ASSERT_TRUE(polite.signal);
  EXPECT_EQ(*polite.signal, SIGTERM);

  auto stubborn = run_command({"sh", "-c", "trap '' TERM; echo ready; while :; do sleep 0.05; done"}, o);
  EXPECT_TRUE(stubborn.timed_out);
  ASSERT_TRUE(stubborn.signal);
  EXPECT_EQ(*stubborn.signal, SIGKILL);
  EXPECT_EQ(stubborn.out, "ready\n");
}

TEST(SysProcess, StopFlagStopsLikeTheDeadline) {
  static volatile std::sig_atomic_t flag = 0;
  flag = 0;
  CommandOptions o;
  o.timeout = std::chrono::milliseconds(0);  // none: only the flag ends it
  o.stop = &flag;
  std::thread setter([] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    flag = SIGINT;
  });
  auto r = run_command({"sleep", "30"}, o);
  setter.join();
  EXPECT_TRUE(r.stopped);
  EXPECT_FALSE(r.timed_out);
  ASSERT_TRUE(r.signal);
  EXPECT_EQ(*r.signal, SIGKILL);
}

TEST(SysProcess, ChildLeftHoldingTheOutputDoesNotHangOrCountAsTimeout) {
  CommandOptions o;
  o.timeout = std::chrono::seconds(60);
  o.exit_drain = std::chrono::milliseconds(200);
  auto r = run_command({"sh", "-c", "sleep 30 & echo done"}, o);
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 0);
  EXPECT_FALSE(r.timed_out);
  EXPECT_EQ(r.out, "done\n");
}

TEST(SysProcess, NotCapturedStillWaitsForTheExit) {
  CommandOptions o;
  o.capture_output = false;
  auto r = run_command({"sh", "-c", "exit 7"}, o);
  ASSERT_TRUE(r.exit_code);
  EXPECT_EQ(*r.exit_code, 7);
}

TEST(SysProcess, CommandThatCannotStartSaysWhy) {
  auto r = run_command({"/nonexistent/perfgap-sysproc"}, {});
  EXPECT_FALSE(r.started);
  EXPECT_NE(r.error.find("/nonexistent/perfgap-sysproc"), std::string::npos) << r.error;
  auto empty = run_command({}, {});
  EXPECT_FALSE(empty.started);
  EXPECT_FALSE(empty.error.empty());
}

TEST(SysExecutable, FindsOnPathAsSpawnWould) {
  EXPECT_EQ(perfgap::sys::find_executable(""), "");
  EXPECT_EQ(perfgap::sys::find_executable("/nonexistent/x"), "");
  EXPECT_EQ(perfgap::sys::find_executable("/bin/sh"), "/bin/sh");
  EXPECT_NE(perfgap::sys::find_executable("sh"), "");
  EXPECT_EQ(perfgap::sys::find_executable("/etc"), "");  // a directory is not a program
  EXPECT_EQ(perfgap::sys::find_executable("perfgap-no-such-program-here"), "");
}
