// Every check reads only what it declares: over every fixture case, each check runs alone on
// fresh facts (so the facts it uses read again, for it) with the sysroot's read log on, and
// every path it opened, listed, stat'ed or followed must match one of its `reads` patterns
// or be a directory on the way to one. `perfgap snapshot` captures exactly the declared
// paths, so this is what makes a snapshot complete for the checks.
#include <gtest/gtest.h>
#include <fnmatch.h>

#include <filesystem>
#include <set>

#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/runner.hpp"
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
  facts::Options opts;  // as tests/checks/test_cases.cpp gives them
  for (const auto& [k, v] : spec->options) {
    if (k == "pid") opts.pids.push_back(std::stoi(v));
    else if (k == "dmesg") opts.dmesg_path = tmp.path() + "/" + v;
    else if (k == "baseline") {
      auto b = core::load_baseline(tmp.path() + "/" + v);
      ASSERT_TRUE(b) << b.error();
      opts.baseline = std::move(*b);
    }
  }
  auto root = sys::Sysroot::at(tmp.path());
  ASSERT_TRUE(root);
  std::set<std::string> undeclared;
  for (const auto& info : core::builtin_registry().all()) {
    auto facts = std::make_shared<facts::Facts>(*root, opts);
    sys::start_read_log();
    (void)core::run_checks({&info}, facts, core::Config{}, core::RunOptions{});
    const auto paths = sys::stop_read_log();
    for (const auto& path : paths) {
      bool ok = false;
      for (auto pattern : info.reads) ok = ok || declared_by(path, pattern);
      if (!ok) undeclared.insert(std::string(info.id) + " read " + path + ", not declared");
    }
  }
  EXPECT_TRUE(undeclared.empty()) << GetParam() << ":\n" << ::testing::PrintToString(undeclared);
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
}

}  // namespace
