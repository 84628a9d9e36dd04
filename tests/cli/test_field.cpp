// perfgap over real machine trees that nobody here wrote (../shared/field/trees: hwloc,
// util-linux, ghw, nri-plugins, procfs and node_exporter captures). No expected findings
// exist for them; the invariants every report must keep do: exit 0 or 1, a valid report, no
// `error`, no `pass` without evidence, an architecture name or "unknown", a reason in every
// skip. Skipped where ../shared is absent (a user's clone).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <set>

#include "contract.hpp"
#include "field.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

const std::set<std::string> kArchNames = {"x86_64", "i686", "aarch64", "arm", "s390x", "s390", "powerpc", "ppc64le", "ppc64",
                                          "riscv64", "riscv32", "loongarch64", "sparc64", "mips64", "mips", "unknown"};

TEST(FieldTrees, EveryReportKeepsTheInvariants) {
  const fs::path trees = fs::path(PERFGAP_SOURCE_DIR) / "../shared/field/trees";
  if (!fs::is_directory(trees)) GTEST_SKIP() << trees << " not present (a clone without shared/)";
  perfgap::fixture::TempDir tmp;
  auto found = perfgap::fixture::unpack_field_trees(trees.string(), tmp.path());
  ASSERT_TRUE(found) << found.error();
  ASSERT_GE(found->size(), 20u) << "the field archives hold fewer trees than expected";
  for (const auto& t : *found) {
    SCOPED_TRACE(t.name);
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.root, "--format", "json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << "exit " << r.status << ": " << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON";
    auto problems = perfgap::fixture::contract_violations(j);
    EXPECT_TRUE(problems.empty()) << problems.front();
    const auto arch = j["node"]["arch"].get<std::string>();
    EXPECT_TRUE(kArchNames.count(arch)) << "arch '" << arch << "'";
    for (const auto& f : j["findings"]) {
      const std::string id = f["id"], status = f["status"], title = f["title"];
      const std::string what = id + (f.value("subject", "").empty() ? "" : "@" + f.value("subject", "")) + ": " + title;
      EXPECT_NE(status, "error") << what;
      if (status == "pass") {
        EXPECT_FALSE(f["evidence"].empty()) << "pass without evidence: " << what;
      }
      if (status == "skip") {
        EXPECT_GT(title.size(), 15u) << "skip without a reason: " << what;
      }
      EXPECT_EQ(title.find("  "), std::string::npos) << what;
      EXPECT_FALSE(title.empty()) << what;
    }
  }
}

}  // namespace

namespace {

// Captured trees that record no hostname still make a fleet (issue 41 item 5): each report
// is named from its tree, and fleet reads every one of them instead of refusing it.
TEST(FieldTrees, AFleetOfCapturedTreesNamesEveryNode) {
  const fs::path trees = fs::path(PERFGAP_SOURCE_DIR) / "../shared/field/trees";
  if (!fs::is_directory(trees)) GTEST_SKIP() << trees << " not present (a clone without shared/)";
  perfgap::fixture::TempDir tmp;
  auto found = perfgap::fixture::unpack_field_trees(trees.string(), tmp.file("trees"));
  ASSERT_TRUE(found) << found.error();
  fs::create_directories(tmp.file("reports"));
  std::set<std::string> names;
  int unnamed_trees = 0;
  for (std::size_t i = 0; i < found->size(); ++i) {
    const auto& t = (*found)[i];
    SCOPED_TRACE(t.name);
    const std::string out = tmp.file("reports/" + std::to_string(i) + ".json");
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.root, "--format", "json", "--output", out});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    std::ifstream in(out);
    auto j = nlohmann::json::parse(in);
    const std::string name = j["node"]["name"], hostname = j["node"].value("hostname", "");
    EXPECT_FALSE(name.empty());
    if (hostname.empty()) {
      ++unnamed_trees;
      std::string dir = t.root;
      while (dir.size() > 1 && dir.back() == '/') dir.pop_back();
      EXPECT_EQ(name, dir.substr(dir.rfind('/') + 1));
    }
    names.insert(name);
  }
  EXPECT_GT(unnamed_trees, 0) << "every field tree records a hostname: this test no longer tests the fallback";
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", tmp.file("reports"), "--format", "json"});
  ASSERT_TRUE(fleet.status == 0 || fleet.status == 1) << fleet.err;
  EXPECT_EQ(fleet.err.find("node.name"), std::string::npos) << fleet.err;
}

}  // namespace
