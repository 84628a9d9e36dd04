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

// Verdicts a review of these trees settled, by tree and id: kept from regressing.
struct FieldVerdict {
  const char* tree;  // FieldTree::name
  const char* id;
  const char* status;
  const char* title;  // a part of the title
};
const FieldVerdict kFieldVerdicts[] = {
    // intel_pstate no_turbo=0, max_perf_pct=100, no cpuN/cpufreq gathered: turbo on and no cap
    // seen, the unread per-CPU limits named. Was a warn for what could not be read.
    {"hwloc/32intel64-2p8co2t+8ve.tar.bz2:32intel64-2p8co2t+8ve", "cpu.turbo", "pass",
     "no frequency cap seen (intel_pstate max_perf_pct=100); no CPU's own limit (scaling_max_freq) is readable (32 online CPUs)"},
};

TEST(FieldTrees, EveryReportKeepsTheInvariants) {
  const fs::path trees = fs::path(PERFGAP_SOURCE_DIR) / "../shared/field/trees";
  if (!fs::is_directory(trees)) GTEST_SKIP() << trees << " not present (a clone without shared/)";
  perfgap::fixture::TempDir tmp;
  auto found = perfgap::fixture::unpack_field_trees(trees.string(), tmp.path());
  ASSERT_TRUE(found) << found.error();
  ASSERT_GE(found->size(), 20u) << "the field archives hold fewer trees than expected";
  // Every report is also kept, and the trees make one fleet: a tree that records no hostname
  // is named after its directory or archive (issue 41 item 5), and fleet reads every report.
  fs::create_directories(tmp.file("reports"));
  int unnamed_trees = 0;
  std::size_t verdict_trees = 0;
  for (std::size_t i = 0; i < found->size(); ++i) {
    const auto& t = (*found)[i];
    SCOPED_TRACE(t.name);
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.root, "--format", "json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << "exit " << r.status << ": " << r.err;
    auto j = nlohmann::json::parse(r.out, nullptr, false);
    ASSERT_FALSE(j.is_discarded()) << "not JSON";
    std::ofstream(tmp.file("reports/" + std::to_string(i) + ".json")) << r.out;
    if (j["node"].value("hostname", "").empty()) {
      ++unnamed_trees;
      std::string tree = t.root;
      while (tree.size() > 1 && tree.back() == '/') tree.pop_back();
      tree = tree.substr(tree.rfind('/') + 1);
      for (const std::string suffix : {".tar.gz", ".tgz", ".tar"})
        if (tree.size() > suffix.size() && tree.ends_with(suffix)) {
          tree.resize(tree.size() - suffix.size());
          break;
        }
      EXPECT_EQ(j["node"]["name"], tree);
    }
    for (const auto& v : kFieldVerdicts) {
      if (t.name != v.tree) continue;
      ++verdict_trees;
      bool seen = false;
      for (const auto& f : j["findings"])
        if (f["id"] == v.id) {
          seen = true;
          EXPECT_EQ(f["status"], v.status) << v.id << ": " << f["title"];
          EXPECT_NE(f["title"].get<std::string>().find(v.title), std::string::npos) << v.id << ": " << f["title"];
        }
      EXPECT_TRUE(seen) << v.id;
    }
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
  EXPECT_EQ(verdict_trees, std::size(kFieldVerdicts)) << "a tree of kFieldVerdicts was not found";
  EXPECT_GT(unnamed_trees, 0) << "every field tree records a hostname: the naming above is no longer tested";
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", tmp.file("reports"), "--format", "json"});
  ASSERT_TRUE(fleet.status == 0 || fleet.status == 1) << fleet.err;
  EXPECT_EQ(fleet.err.find("node.name"), std::string::npos) << fleet.err;
}

}  // namespace

