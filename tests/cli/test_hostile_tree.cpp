// Trees whose links point out of the tree, with the real binary: a sentinel outside must
// never reach any output format or a snapshot, with openat2 and with the walk by hand
// (PERFGAP_NO_OPENAT2=1, as where seccomp refuses openat2).
#include <gtest/gtest.h>

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

// --- 1. Reads never leave the root ------------------------------------------------------

constexpr const char* kSentinel = "SENTINEL-5f1e";

// A tree whose node name, release, audited environment and NCCL config come through links
// that point outside it, each kind once: an absolute host path, a '../' chain, a link to a
// directory outside, '..' after a link. With `control`, the same data lies inside the tree
// (marked CONTROL-5f1e), which proves each item reaches every output format.
struct HostileTree {
  TempDir tmp;
  fs::path tree, outside;

  explicit HostileTree(bool control) {
    tree = healthy_tree(fs::path(tmp.path()) / "tree");
    outside = fs::path(tmp.path()) / "outside";
    const std::string mark = control ? "CONTROL-5f1e" : kSentinel;
    const fs::path data = control ? tree / "inside" : outside;
    write_file(data / "hostname", mark + "-host\n");
    write_file(data / "osrelease", mark + "-release\n");
    write_file(data / "procself/environ",
               env_block({"SLURMD_NODENAME=" + mark + "-node", "NCCL_DEBUG=" + mark + "-env", "HOME=/root"}));
    fs::copy(tree / "proc/1000/status", data / "procself/status");
    write_file(data / "nccl.conf", "NCCL_IB_HCA=" + mark + "-conf\n");
    write_file(data / "shadow", "root:" + mark + "-hash:19000::::::\n");
    if (control) {
      replace_with_link(tree / "proc/sys/kernel/hostname", "/inside/hostname");
      replace_with_link(tree / "proc/sys/kernel/osrelease", "../../../inside/osrelease");
      replace_with_link(tree / "proc/self", "/inside/procself");
      replace_with_link(tree / "etc/nccl.conf", "../inside/nccl.conf");
      return;
    }
    const std::string abs = outside.string();
    replace_with_link(tree / "proc/sys/kernel/hostname", abs + "/hostname");                                 // absolute host path
    replace_with_link(tree / "proc/sys/kernel/osrelease", "../../../../../../../../../../.." + abs + "/osrelease");  // '../' chain
    replace_with_link(tree / "proc/self", abs + "/procself");                                                // a directory outside
    replace_with_link(tree / "etc/outside_dir", abs);
    replace_with_link(tree / "etc/nccl.conf", "outside_dir/nccl.conf");                                     // through a link to a dir
    replace_with_link(tree / "etc/shadow", abs + "/shadow");                                                 // /etc/shadow-like
    replace_with_link(tree / "proc/1/environ", "../self/../../../../outside/procself/environ");              // '..' after links
  }
};

TEST(HostileTree, ControlDataReachesEveryFormat) {
  HostileTree t(true);
  for (const auto& format : kFormats) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.tree.string(), "--format", format});
    ASSERT_LE(r.status, 1) << format << ": " << r.err;
    EXPECT_NE(r.out.find("CONTROL-5f1e-node"), std::string::npos) << format << " does not show the node name:\n" << r.out;
  }
  auto json = run_binary(PERFGAP_BINARY, {"check", "--root", t.tree.string(), "--format", "json"});
  EXPECT_NE(json.out.find("CONTROL-5f1e-env"), std::string::npos);
  EXPECT_NE(json.out.find("CONTROL-5f1e-release"), std::string::npos);
  EXPECT_NE(json.out.find("CONTROL-5f1e-conf"), std::string::npos);
}

TEST(HostileTree, NothingOutsideReachesAnyFormatWithOrWithoutOpenat2) {
  HostileTree t(false);
  for (bool walk : {false, true}) {
    std::vector<std::pair<std::string, std::string>> env;
    if (walk) env.push_back(kNoOpenat2);
    for (const auto& format : kFormats) {
      auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.tree.string(), "--format", format, "-v"}, env);
      ASSERT_LE(r.status, 1) << format << (walk ? " (no openat2)" : "") << ": " << r.err;
      EXPECT_EQ(r.out.find(kSentinel), std::string::npos) << format << (walk ? " (no openat2)" : "") << " leaked:\n" << r.out;
      EXPECT_EQ(r.err.find(kSentinel), std::string::npos) << r.err;
    }
    // A snapshot of the tree keeps the links, never what is behind them.
    const fs::path snap = fs::path(t.tmp.path()) / (walk ? "snap-walk" : "snap");
    auto s = run_binary(PERFGAP_BINARY, {"snapshot", "--root", t.tree.string(), snap.string()}, env);
    ASSERT_EQ(s.status, 0) << s.err;
    for (const auto& e : fs::recursive_directory_iterator(snap)) {
      if (e.is_symlink() || !e.is_regular_file()) continue;
      EXPECT_EQ(read_file(e.path()).find(kSentinel), std::string::npos) << e.path() << " holds the outside file";
    }
  }
}

}  // namespace
