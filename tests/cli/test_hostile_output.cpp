// Every kind of --output target, with the real binary: /dev/null and other character
// devices are written (never renamed over), a FIFO's reader gets the report, a symlink stays
// a link with its target replaced, '-' is stdout, a directory is exit 2 for every command.
#include <gtest/gtest.h>

#include <sys/stat.h>
#include <sys/sysmacros.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <future>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <string>
#include <vector>

#include "hostile_support.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap::hostile;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

// --- 2. Outputs --------------------------------------------------------------------------

struct OutputTest : ::testing::Test {
  TempDir tmp;
  fs::path dir = tmp.path();
  fs::path tree = healthy_tree(dir / "tree");
  std::vector<std::string> check(const std::string& out, const std::string& format = "json") {
    return {"check", "--root", tree.string(), "--format", format, "--output", out};
  }
};

TEST_F(OutputTest, CharacterDevicesAreWrittenNotReplaced) {
  // A private null device first, so that a regression fails here rather than on /dev/null.
  const fs::path null = dir / "null";
  if (::mknod(null.c_str(), S_IFCHR | 0666, makedev(1, 3)) == 0) {
    auto r = run_binary(PERFGAP_BINARY, check(null.string()));
    EXPECT_EQ(r.status, 0) << r.err;
    struct stat st {};
    ASSERT_EQ(::lstat(null.c_str(), &st), 0);
    ASSERT_TRUE(S_ISCHR(st.st_mode)) << "the device node was renamed over";
  }
  for (const auto& args : std::vector<std::vector<std::string>>{
           check("/dev/null"), {"gap", "--reference", "830", "--measured", "850", "--output", "/dev/null"},
           {"check", "--list", "--output", "/dev/null"}}) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_LE(r.status, 1) << args[0] << ": " << r.err;
    struct stat st {};
    ASSERT_EQ(::lstat("/dev/null", &st), 0);
    ASSERT_TRUE(S_ISCHR(st.st_mode)) << args[0] << " replaced /dev/null";
  }
  // /dev/stdout is our own standard output, whatever it is (a pipe here).
  auto r = run_binary(PERFGAP_BINARY, check("/dev/stdout"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(nlohmann::json::parse(r.out).is_object());
}

TEST_F(OutputTest, AFifoBeingReadGetsTheReport) {
  const fs::path fifo = dir / "report.fifo";
  ASSERT_EQ(::mkfifo(fifo.c_str(), 0600), 0);
  auto reader = std::async(std::launch::async, [&] { return read_file(fifo); });
  auto r = run_binary(PERFGAP_BINARY, check(fifo.string()));
  EXPECT_EQ(r.status, 0) << r.err;
  ASSERT_EQ(reader.wait_for(std::chrono::seconds(30)), std::future_status::ready);
  auto got = reader.get();
  auto j = nlohmann::json::parse(got);
  EXPECT_EQ(j["schema"], "perfgap.report/1");
  struct stat st {};
  ASSERT_EQ(::lstat(fifo.c_str(), &st), 0);
  EXPECT_TRUE(S_ISFIFO(st.st_mode));
}

TEST_F(OutputTest, ASymlinkStaysALinkAndItsTargetIsReplaced) {
  write_file(dir / "reports/real.json", "old\n");
  ::chmod((dir / "reports/real.json").c_str(), 0600);
  fs::create_symlink("reports/real.json", dir / "link.json");
  auto r = run_binary(PERFGAP_BINARY, check((dir / "link.json").string()));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "link.json"));
  EXPECT_EQ(fs::read_symlink(dir / "link.json"), "reports/real.json");
  EXPECT_EQ(nlohmann::json::parse(read_file(dir / "reports/real.json"))["schema"], "perfgap.report/1");
  EXPECT_EQ(fs::status(dir / "reports/real.json").permissions() & fs::perms::all, fs::perms::owner_read | fs::perms::owner_write)
      << "the replaced file's mode is kept";
  // A dangling link: its target is created, the link stays.
  fs::create_symlink("reports/new.prom", dir / "dangling.prom");
  r = run_binary(PERFGAP_BINARY, check((dir / "dangling.prom").string(), "prometheus"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "dangling.prom"));
  EXPECT_NE(read_file(dir / "reports/new.prom").find("perfgap_finding{"), std::string::npos);
  // Nothing else was left beside them (no temporary files).
  auto left = entries_of(dir / "reports");
  std::sort(left.begin(), left.end());
  EXPECT_EQ(left, (std::vector<std::string>{"new.prom", "real.json"}));
}

TEST_F(OutputTest, DashIsStandardOutput) {
  auto r = run_binary(PERFGAP_BINARY, check("-"));
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_EQ(nlohmann::json::parse(r.out)["schema"], "perfgap.report/1");
  EXPECT_FALSE(fs::exists(fs::current_path() / "-"));
}

TEST_F(OutputTest, ADirectoryIsExit2NamingItForEveryCommand) {
  const fs::path out = dir / "out.tar.gz";  // a directory, named like an archive for snapshot
  fs::create_directories(out / "keep");
  write_file(dir / "steps.log", read_file(std::string(PERFGAP_SOURCE_DIR) + "/tests/fixtures/logs/steps/reference.log"));
  const std::string o = out.string();
  const std::vector<std::vector<std::string>> commands = {
      check(o),
      {"check", "--list", "--output", o},
      {"analyze", "steps", (dir / "steps.log").string(), "--reference-ms", "100", "--output", o},
      {"gap", "--reference", "830", "--measured", "850", "--output", o},
      {"fleet", std::string(PERFGAP_SOURCE_DIR) + "/tests/golden/healthy-x86.json", "--output", o},
      {"sweep", "--env", "X=1,2", "--run-dir", (dir / "runs").string(), "--output", o, "--", "/bin/true"},
      {"snapshot", "--root", tree.string(), o},
  };
  for (const auto& args : commands) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << args[0] << ": " << r.out << r.err;
    EXPECT_TRUE(one_line(r.err)) << args[0] << ": " << r.err;
    EXPECT_NE(r.err.find(o), std::string::npos) << args[0] << ": " << r.err;
    EXPECT_TRUE(fs::is_directory(out / "keep")) << args[0];
    EXPECT_EQ(entries_of(out), std::vector<std::string>{"keep"}) << args[0];
  }
  EXPECT_FALSE(fs::exists(dir / "runs")) << "sweep started runs before refusing its --output";
}

TEST_F(OutputTest, SnapshotArchiveGoesThroughTheSameWriter) {
  write_file(dir / "snaps/real.tar.gz", "old");
  fs::create_symlink("snaps/real.tar.gz", dir / "node.tar.gz");
  auto r = run_binary(PERFGAP_BINARY, {"snapshot", "--root", tree.string(), (dir / "node.tar.gz").string()});
  EXPECT_EQ(r.status, 0) << r.err;
  EXPECT_TRUE(fs::is_symlink(dir / "node.tar.gz"));
  auto bytes = read_file(dir / "snaps/real.tar.gz");
  ASSERT_GE(bytes.size(), 2u);
  EXPECT_EQ(static_cast<unsigned char>(bytes[0]), 0x1f);
  auto replay = run_binary(PERFGAP_BINARY, {"check", "--root", (dir / "node.tar.gz").string(), "--format", "json"});
  EXPECT_EQ(replay.status, 0) << replay.err;
}

}  // namespace
