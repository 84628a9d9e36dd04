// Every check reads only what it declares: over every fixture case, each check runs alone on
// fresh facts (so the facts it uses read again, for it) with the sysroot's read log on, and
// every path it opened, listed, stat'ed or followed must match one of its `reads` patterns
// (a placeholder such as $NCCL_TOPO_FILE as facts::named_read_paths resolves it on that
// tree) or be a directory on the way to one. `perfgap snapshot` captures exactly the
// declared paths, so this is what makes a snapshot complete for the checks. Reads are
// declared by the facts (facts/reads.hpp) and composed by each check.
#include <gtest/gtest.h>
#include <fnmatch.h>

#include <filesystem>
#include <functional>
#include <memory>
#include <set>

#include "case_options.hpp"
#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/node.hpp"
#include "core/runner.hpp"
#include "facts/reads.hpp"
#include "files.hpp"
#include "sys/sysroot.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;

namespace {

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  std::size_t i = 0;
  while (i < path.size()) {
    while (i < path.size() && path[i] == '/') ++i;
    std::size_t j = path.find('/', i);
    if (j == std::string_view::npos) j = path.size();
    if (j > i) out.emplace_back(path.substr(i, j - i));
    i = j;
  }
  return out;
}

// PATH is the pattern's file, or one of the directories leading to it.
bool declared_by(const std::string& path, std::string_view pattern) {
  const auto p = components(path), pat = components(pattern);
  if (p.size() > pat.size()) return false;
  for (std::size_t i = 0; i < p.size(); ++i)
    if (::fnmatch(pat[i].c_str(), p[i].c_str(), FNM_PERIOD) != 0) return false;
  return true;
}

class DeclaredReads : public ::testing::TestWithParam<std::string> {};

TEST_P(DeclaredReads, EveryCheckReadsOnlyWhatItDeclares) {
  fs::path file = fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/cases" / GetParam();
  fixture::TempDir tmp;
  auto spec = fixture::unpack_tree(file.string(), tmp.path());
  ASSERT_TRUE(spec) << spec.error();
  auto opts = fixture::case_options(spec->options, tmp.path());
  ASSERT_TRUE(opts) << opts.error();
  auto root = sys::Sysroot::at(tmp.path());
  ASSERT_TRUE(root);
  std::set<std::string> undeclared;
  // Runs `read` on fresh facts with the read log on; what it read outside `patterns` is listed.
  auto audit = [&](const std::string& who, const std::vector<std::string_view>& patterns, const std::function<void(const std::shared_ptr<facts::Facts>&)>& read) {
    auto facts = std::make_shared<facts::Facts>(*root, *opts);
    sys::start_read_log();
    read(facts);
    const auto paths = sys::stop_read_log();
    std::vector<std::string> declared;
    for (auto pattern : patterns)
      for (auto& p : facts::named_read_paths(*facts, pattern)) declared.push_back(std::move(p));
    for (const auto& path : paths) {
      // Not the node's files: --dmesg FILE is read as given, and .perfgap/snapshot.json is
      // the manifest snapshot writes itself (Facts::absence_is_real).
      if ((opts->dmesg_path && path == *opts->dmesg_path) || path == "/.perfgap/snapshot.json") continue;
      bool ok = false;
      for (const auto& pattern : declared) ok = ok || declared_by(path, pattern);
      if (!ok) undeclared.insert(who + " read " + path + ", not declared");
    }
  };
  for (const auto& info : core::builtin_registry().all()) {
    const std::vector<std::string_view> patterns(info.reads.begin(), info.reads.end());
    audit(std::string(info.id), patterns, [&](const std::shared_ptr<facts::Facts>& facts) {
      (void)core::run_checks({&info}, facts, core::Config{}, core::RunOptions{});
    });
  }
  // The report's node section too: snapshot captures core::node_reads() for it.
  audit("describe_node", core::node_reads(), [](const std::shared_ptr<facts::Facts>& facts) { (void)core::describe_node(*facts); });
  std::string listed;  // every one (PrintToString would cut the list at 32)
  for (const auto& u : undeclared) listed += "  " + u + "\n";
  EXPECT_TRUE(undeclared.empty()) << GetParam() << ": " << undeclared.size() << " undeclared reads:\n" << listed;
}

INSTANTIATE_TEST_SUITE_P(Cases, DeclaredReads, ::testing::ValuesIn(fixture::case_tree_files()),
                         [](const auto& info) {
                           std::string n = info.param;
                           for (auto& c : n)
                             if (!std::isalnum(static_cast<unsigned char>(c))) c = '_';
                           return n;
                         });

TEST(DeclaredReadsMatch, FilesAndTheDirectoriesOnTheWay) {
  EXPECT_TRUE(declared_by("/proc/12/environ", "/proc/[0-9]*/environ"));
  EXPECT_TRUE(declared_by("/proc", "/proc/[0-9]*/environ"));
  EXPECT_TRUE(declared_by("/sys/devices/system/cpu/cpu3/cpuidle", "/sys/devices/system/cpu/cpu*/cpuidle/state*/name"));
  EXPECT_FALSE(declared_by("/proc/self/environ", "/proc/[0-9]*/environ"));
  EXPECT_FALSE(declared_by("/proc/12/maps", "/proc/[0-9]*/environ"));
  EXPECT_FALSE(declared_by("/proc/12/environ/x", "/proc/[0-9]*/environ"));
  // The upstream port of a PCI device: ".." after the device's link (facts::read_pci_link).
  EXPECT_TRUE(declared_by("/sys/bus/pci/devices/0000:18:00.0/../max_link_speed", "/sys/bus/pci/devices/*/../max_link_speed"));
  EXPECT_FALSE(declared_by("/sys/devices/pci0000:17/0000:17:01.0/max_link_speed", "/sys/bus/pci/devices/*/../max_link_speed"));
}

// Placeholders name the files NCCL's settings name on the node read, as NCCL resolves them.
TEST(DeclaredReadsNamed, PlaceholdersResolveOnTheNodeRead) {
  fixture::TempDir tmp;
  const fs::path t = tmp.path();
  ASSERT_TRUE(fixture::write_file(t / "proc/self/environ", std::string("HOME=/home/u\0NCCL_CONF_FILE=/opt/site.conf\0", 43)));
  ASSERT_TRUE(fixture::write_file(t / "proc/self/status", "Name:\tperfgap\nUid:\t1000\t1000\t1000\t1000\n"));
  ASSERT_TRUE(fixture::write_file(t / "etc/passwd", "u:x:1000:1000::/home/pw:/bin/sh\n"));
  ASSERT_TRUE(fixture::write_file(t / "opt/site.conf", "NCCL_TOPO_FILE=/opt/topo.xml\n"));
  auto root = sys::Sysroot::at(tmp.path());
  ASSERT_TRUE(root);
  facts::Facts f(*root, facts::Options{});
  EXPECT_TRUE(facts::is_named_read(facts::reads::kNcclTopoFile));
  EXPECT_FALSE(facts::is_named_read("/etc/nccl.conf"));
  EXPECT_EQ(facts::named_read_paths(f, "$NCCL_CONF_FILE"), std::vector<std::string>{"/opt/site.conf"});
  EXPECT_EQ(facts::named_read_paths(f, "$NCCL_TOPO_FILE"), std::vector<std::string>{"/opt/topo.xml"});
  EXPECT_EQ(facts::named_read_paths(f, "~/.nccl.conf"), (std::vector<std::string>{"/home/pw/.nccl.conf", "/home/u/.nccl.conf"}));
  EXPECT_EQ(facts::named_read_paths(f, "/etc/nccl.conf"), std::vector<std::string>{"/etc/nccl.conf"});
  // Every placeholder a check declares is one named_read_paths knows.
  for (const auto& info : core::builtin_registry().all()) {
    for (auto pattern : info.reads) {
      if (!facts::is_named_read(pattern)) continue;
      EXPECT_TRUE(pattern == facts::reads::kNcclConfFile || pattern == facts::reads::kHomeNcclConf || pattern == facts::reads::kNcclTopoFile)
          << info.id << ": " << pattern;
    }
  }
}

}  // namespace
