// Files named on the command line, with the real binary: a FIFO without a writer or a device
// never hangs or floods perfgap (--config, --baseline, --dmesg, analyze inputs, fleet
// reports); a pipe is read to its end; '-' is standard input for analyze.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <chrono>
#include <filesystem>
#include <fstream>
#include <future>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::RunResult;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

// The binary under a 20 s deadline: a hang is exit 124, not a stuck test.
RunResult run_bounded(std::vector<std::string> args) {
  args.insert(args.begin(), {"20", PERFGAP_BINARY});
  return run_binary("/usr/bin/timeout", args);
}

std::string steps_log() { return read_file(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/logs/steps/reference.log"); }

struct NamedFiles : ::testing::Test {
  TempDir tmp;
  fs::path dir = tmp.path();
  fs::path fifo = dir / "no-writer.fifo";
  fs::path tree = healthy_tree(dir / "tree");
  void SetUp() override { ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0); }
};

TEST_F(NamedFiles, AFifoWithoutAWriterNeverHangs) {
  const std::string f = fifo.string();
  const std::vector<std::vector<std::string>> commands = {
      {"check", "--root", tree.string(), "--config", f},
      {"check", "--root", tree.string(), "--baseline", f},
      {"check", "--root", tree.string(), "--dmesg", f, "--only", "cpu.steal"},
      {"analyze", "steps", f, "--reference-ms", "100"},
      {"fleet", f},
  };
  for (const auto& args : commands) {
    auto r = run_bounded(args);
    EXPECT_NE(r.status, 124) << args[0] << " " << args[3 < args.size() ? 3 : 1] << ": hung on a FIFO";
    EXPECT_LE(r.status, 2) << r.err;
  }
  // A configuration that is a FIFO is refused at once (read as empty, it would be a run with
  // the default thresholds that looks configured).
  auto c = run_bounded({"check", "--root", tree.string(), "--config", f});
  EXPECT_EQ(c.status, 2) << c.out;
  EXPECT_NE(c.err.find(f), std::string::npos) << c.err;
  EXPECT_NE(c.err.find("is a FIFO"), std::string::npos) << c.err;
  EXPECT_EQ(c.err.find('\n'), c.err.size() - 1) << c.err;
  // An empty baseline or analyzer input is unusable, said on one line naming it.
  auto b = run_bounded({"check", "--root", tree.string(), "--baseline", f});
  EXPECT_EQ(b.status, 2);
  EXPECT_NE(b.err.find(f), std::string::npos) << b.err;
  auto a = run_bounded({"analyze", "steps", f, "--reference-ms", "100"});
  EXPECT_EQ(a.status, 2);
  EXPECT_NE(a.err.find(f), std::string::npos) << a.err;
}

TEST_F(NamedFiles, DevicesAreRefusedAtOnceNotReadToTheLimit) {
  for (const auto& args : std::vector<std::vector<std::string>>{{"check", "--root", tree.string(), "--config", "/dev/zero"},
                                                               {"check", "--root", tree.string(), "--baseline", "/dev/zero"},
                                                               {"analyze", "perf", "/dev/zero"},
                                                               {"fleet", "/dev/urandom"}}) {
    const auto t0 = std::chrono::steady_clock::now();
    auto r = run_bounded(args);
    const auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - t0).count();
    EXPECT_EQ(r.status, 2) << args.back() << ": " << r.err;
    EXPECT_NE(r.err.find("is a character device"), std::string::npos) << r.err;
    EXPECT_EQ(r.err.find('\n'), r.err.size() - 1) << r.err;
    EXPECT_LT(ms, 5000) << "read toward the size limit instead of refusing: " << args.back();
  }
  auto d = run_bounded({"check", "--root", tree.string(), "--config", dir.string()});
  EXPECT_EQ(d.status, 2);
  EXPECT_NE(d.err.find("is a directory"), std::string::npos) << d.err;
}

TEST_F(NamedFiles, APipeIsReadToItsEndAndDashIsStdin) {
  const fs::path log = dir / "steps.log";
  write_file(log, steps_log());
  auto direct = run_bounded({"analyze", "steps", log.string(), "--reference-ms", "100", "--format", "json"});
  ASSERT_LE(direct.status, 1) << direct.err;
  // A FIFO whose writer writes late. The write end is opened here first (O_RDWR never waits
  // on Linux), so however late perfgap opens and reads, a writer is there, and it sees the
  // end of input only when the writer closes: no race with perfgap's start.
  int wfd = ::open(fifo.c_str(), O_RDWR | O_CLOEXEC);
  ASSERT_GE(wfd, 0);
  auto writer = std::async(std::launch::async, [&, wfd] {
    std::this_thread::sleep_for(std::chrono::milliseconds(200));
    const auto text = steps_log();
    for (std::size_t at = 0; at < text.size();) {
      auto n = ::write(wfd, text.data() + at, text.size() - at);
      if (n <= 0) break;
      at += static_cast<std::size_t>(n);
    }
    ::close(wfd);
  });
  auto piped = run_bounded({"analyze", "steps", fifo.string(), "--reference-ms", "100", "--format", "json"});
  writer.get();
  EXPECT_EQ(piped.status, direct.status) << piped.err;
  EXPECT_NE(piped.out.find("\"steps."), std::string::npos) << piped.out;
  auto stdin_run = run_binary("/bin/sh", {"-c", "exec \"$0\" analyze steps - --reference-ms 100 --format json < \"$1\"", PERFGAP_BINARY, log.string()});
  EXPECT_EQ(stdin_run.status, direct.status) << stdin_run.err;
  EXPECT_NE(stdin_run.out.find("\"steps."), std::string::npos) << stdin_run.out;
}

}  // namespace
