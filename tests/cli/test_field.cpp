// perfgap over real machine trees that nobody here wrote (../shared/field/trees: hwloc,
// util-linux, ghw, nri-plugins, procfs and node_exporter captures). No expected findings
// exist for them; the invariants every report must keep do: exit 0 or 1, a valid report, no
// `error`, no `pass` without evidence, an architecture name or "unknown", a reason in every
// skip. Skipped where ../shared is absent (a user's clone).
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include <filesystem>
#include <fstream>
#include <map>
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

// Field review 5, over these trees' fleet: fleet.drift told nodes whose check passes to change
// ("C6 on 4 nodes ... (cpu.cstate.deep_idle passes there) (expected C2)", "acpi_idle ... (passes
// there) (expected intel_idle)" on AMD and GB10 nodes), and fleet.outliers warned on values whose
// own check passes (container.shm.shm_gib 251.3, deepest_latency_us 8800, max_cpu_steal_pct 1.06).
void field_fleet_judges_as_the_checks(const nlohmann::json& fleet, const std::map<std::string, nlohmann::json>& reports) {
  bool idle_state = false;
  for (const auto& f : fleet["findings"]) {
    const std::string id = f["id"], subject = f.value("subject", "");
    if (id == "fleet.drift") {
      for (const auto& e : f["evidence"]) {
        const std::string observed = e["observed"];
        if (observed.find(" passes there)") != std::string::npos || observed.find(" passes on ") != std::string::npos) {
          EXPECT_FALSE(e.contains("expected") && !e["expected"].is_null()) << subject << ": " << observed << " expected " << e["expected"];
        }
      }
      if (subject == "settings.deepest_idle_state") {
        idle_state = true;
        EXPECT_EQ(f["title"].get<std::string>().find("differ from C2"), std::string::npos) << f["title"];
        EXPECT_EQ(f.value("fix", "").find("to C2 on the other nodes"), std::string::npos) << f["fix"];
      }
    }
    if (id != "fleet.outliers" || f["status"] != "warn") continue;
    auto node = reports.find(subject);
    if (node == reports.end()) continue;
    for (const auto& e : f["evidence"]) {
      const std::string key = e["source"];  // id.metric[@subject]
      for (const auto& nf : node->second["findings"]) {
        const std::string nid = nf["id"], nsub = nf.value("subject", "");
        const auto at = key.find('@');
        const bool same = key.starts_with(nid + ".") && (at == std::string::npos ? nsub.empty() : key.substr(at + 1) == nsub);
        // An informational summary's pass (virt.hypervisor, container.detect, gpu.nvml) judges nothing.
        const bool informational = nid == "virt.hypervisor" || nid == "container.detect" || nid == "gpu.nvml";
        if (same && !informational) {
          EXPECT_NE(nf["status"], "pass") << subject << ": " << key << " " << e["observed"] << " where " << nid << " passes";
        }
      }
    }
  }
  EXPECT_TRUE(idle_state) << "the trees' deepest idle states no longer differ: the drift above is not tested";
}

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
  std::map<std::string, nlohmann::json> reports;  // by node name
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
    reports[j["node"].value("name", "")] = j;
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
  field_fleet_judges_as_the_checks(nlohmann::json::parse(fleet.out), reports);
}

}  // namespace

