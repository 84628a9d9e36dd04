// Small usage rules, with the real binary: bad --pid values are a short usage error, and
// nobody is told to run as root who already is (or who reads a tree).
#include <gtest/gtest.h>

#include <unistd.h>


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

// --- 6. Small ----------------------------------------------------------------------------

TEST(HostileArgs, BadPidsAreAShortUsageError) {
  for (const std::string cmd : {"check", "snapshot"}) {
    for (const std::string pid : {"0", "-1", "99999999999", "4194305", "abc", "12x"}) {
      std::vector<std::string> args = {cmd, "--pid", pid};
      if (cmd == "snapshot") args.push_back("/nonexistent-perfgap-out.tar.gz");
      auto r = run_binary(PERFGAP_BINARY, args);
      EXPECT_EQ(r.status, 2) << cmd << " --pid " << pid << ": " << r.err;
      EXPECT_TRUE(one_line(r.err)) << r.err;
      EXPECT_LT(r.err.size(), 120u) << r.err;
      EXPECT_NE(r.err.find("not a process id"), std::string::npos) << r.err;
    }
  }
}

TEST(HostileArgs, NoRunAsRootHintForRootOrATree) {
  TempDir tmp;
  // A tree without training processes whose one environ cannot be read (a directory): the
  // skip says so, without telling anyone to run as root (root does not help a tree).
  const fs::path tree = fs::path(tmp.path()) / "tree";
  fs::create_directories(tree / "proc/2000/environ");
  write_file(tree / "proc/sys/kernel/hostname", "gpu9\n");
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.string(), "--only", "placement.*", "--format", "json", "-v"});
  ASSERT_LE(r.status, 1) << r.err;
  EXPECT_NE(r.out.find("environ could not be read"), std::string::npos) << "the test tree does not exercise the message:\n" << r.out;
  EXPECT_EQ(r.out.find("run as root"), std::string::npos);
  if (::geteuid() != 0) GTEST_SKIP() << "the live half needs root";
  auto live = run_binary(PERFGAP_BINARY, {"check", "--only", "placement.*", "--format", "json", "-v"});
  EXPECT_EQ(live.out.find("run as root to see every process"), std::string::npos) << live.out;
}

}  // namespace
