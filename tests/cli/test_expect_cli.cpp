// perfgap expect learn, check --expect and fleet --expect end to end. The fleet is made from a
// real report of the binary (the gb200-vm golden tree) edited as nodes go wrong: a NIC gone, a
// GPU at x8, a port at 200 Gb/s, another kernel; and a second kind whose GPUs all run x8. The
// tree itself is then changed (a link trained narrow, a NIC removed) and checked against what
// the fleet learned. The real trees of ../shared/field/trees are learned and checked as fleets
// of their own kinds.
#include <gtest/gtest.h>

#include <optional>

#include <filesystem>
#include <fstream>
#include <regex>
#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "field.hpp"
#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace expect_cli {
namespace {

struct Base {
  TempDir tree;
  json report;
  std::string gpu_bdf, nic_bdf;  // the first GPU's and the second NIC's PCI addresses, as pcie.link names them
};

// gb200-vm: 4 GPUs and 4 NICs with readable links, 4 RDMA ports at 400 Gb/s.
void make_base(Base& b) {
  ASSERT_TRUE(perfgap::fixture::unpack_tree(perfgap::fixture::fixture_path("golden/gb200-vm.tree"), b.tree.path()));
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", b.tree.path(), "--format", "json"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  b.report = json::parse(r.out);
  int nics = 0;
  for (const auto& f : b.report["findings"]) {
    if (f["id"] != "pcie.link") continue;
    const std::string title = f["title"];
    if (title.rfind("GPU", 0) == 0 && b.gpu_bdf.empty()) b.gpu_bdf = f["subject"];
    if (title.rfind("NIC", 0) == 0 && ++nics == 2) b.nic_bdf = f["subject"];
  }
  ASSERT_FALSE(b.gpu_bdf.empty());
  ASSERT_FALSE(b.nic_bdf.empty());
}

void set_metric(json& f, const std::string& name, double v) { f["metrics"][name] = v; }

// The findings of `id` (and `subject` when given) of a report.
std::vector<json*> findings_of(json& report, const std::string& id, const std::string& subject = "") {
  std::vector<json*> out;
  for (auto& f : report["findings"])
    if (f["id"] == id && (subject.empty() || f.value("subject", "") == subject)) out.push_back(&f);
  return out;
}

const json& only_finding(const json& report, const std::string& id) {
  for (const auto& f : report["findings"])
    if (f["id"] == id) return f;
  throw std::runtime_error("no " + id + " in " + report.dump().substr(0, 300));
}

void write_report(const std::string& dir, const std::string& name, json r) {
  r["node"]["name"] = name;
  r["node"]["hostname"] = name;
  ASSERT_TRUE(perfgap::fixture::write_file(dir + "/" + name + ".json", r.dump(2)));
}

// gpu0001..gpu0010 of the base's kind, four of them gone wrong; cpu0001..cpu0004 of a kind
// whose GPUs all run x8 by design.
void make_fleet(const Base& b, const std::string& dir) {
  for (int i = 1; i <= 10; ++i) {
    json r = b.report;
    if (i == 3) {  // mlx5_1 gone: its port, its counters and its PCI link
      auto& fs_ = r["findings"];
      for (auto it = fs_.begin(); it != fs_.end();)
        it = (it->value("subject", "") == "mlx5_1:1" || it->value("subject", "") == b.nic_bdf) ? fs_.erase(it) : it + 1;
    }
    if (i == 5)
      for (auto* f : findings_of(r, "pcie.link", b.gpu_bdf)) set_metric(*f, "link_width", 8);
    if (i == 7)
      for (auto* f : findings_of(r, "net.ib.ports", "mlx5_2:1")) set_metric(*f, "rate_gbps", 200);
    if (i == 9) r["node"]["kernel"] = "6.8.0-99-generic";
    write_report(dir, "gpu" + std::string(i < 10 ? "000" : "00") + std::to_string(i), r);
  }
  for (int i = 1; i <= 4; ++i) {
    json r = b.report;
    r["node"]["settings"]["cpu_model"] = "Neoverse-V2 (x8 risers)";
    for (auto* f : findings_of(r, "pcie.link"))
      if ((*f)["title"].get<std::string>().rfind("GPU", 0) == 0) set_metric(*f, "link_width", 8);
    write_report(dir, "cpu000" + std::to_string(i), r);
  }
}

class ExpectFleet : public ::testing::Test {
 protected:
  static void SetUpTestSuite() {
    base_ = new Base;
    make_base(*base_);
  }
  static void TearDownTestSuite() {
    delete base_;
    base_ = nullptr;
  }
  void SetUp() override {
    ASSERT_FALSE(base_->gpu_bdf.empty());
    fs::create_directories(out_.file("reports"));
    make_fleet(*base_, out_.file("reports"));
  }
  std::string learn(const std::vector<std::string>& extra = {}) {
    std::vector<std::string> args = {"expect", "learn", out_.file("reports"), "--output", out_.file("expect.yaml")};
    args.insert(args.end(), extra.begin(), extra.end());
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 0) << r.err;
    return perfgap::fixture::read_file(out_.file("expect.yaml"));
  }
  static Base* base_;
  TempDir out_;
};
Base* ExpectFleet::base_ = nullptr;

TEST_F(ExpectFleet, LearnsEachKindWithTheVoteOnEveryEntry) {
  const auto text = learn();
  EXPECT_NE(text.find("schema: perfgap.expect/1"), std::string::npos) << text;
  // The GPU at x8 on gpu0005 is outvoted 9 to 1, and named; the x8 kind learns x8 from all four.
  const std::string key = "gpu " + base_->gpu_bdf + " pcie_width";
  EXPECT_NE(text.find(key + ": 16  # 9 of 10 nodes; not: gpu0005 (8)"), std::string::npos) << text;
  EXPECT_NE(text.find(key + ": 8  # 4 of 4 nodes"), std::string::npos) << text;
  EXPECT_NE(text.find("kernel: " + base_->report["node"]["kernel"].get<std::string>() + "  # 9 of 10 nodes; not: gpu0009 (6.8.0-99-generic)"),
            std::string::npos)
      << text;
  EXPECT_NE(text.find("port mlx5_2:1 rate_gbps: 400  # 9 of 10 nodes; not: gpu0007 (200)"), std::string::npos) << text;
  EXPECT_NE(text.find("kind: NVIDIA GB200 / Neoverse-V2 (x8 risers)"), std::string::npos) << text;
}

// node.settings.nccl_topo_file is "unset" only where the audited environment was read.
TEST(ExpectSettings, TopoFileUnknownWhereTheEnvironmentWasNotRead) {
  TempDir tree;
  ASSERT_TRUE(perfgap::fixture::unpack_tree(perfgap::fixture::fixture_path("golden/healthy-x86.tree"), tree.path()));
  TempDir out;
  fs::create_directories(out.file("reports"));
  // The setting the tree's report holds, and what expect learn takes from it.
  auto setting = [&](std::string* learned) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.path(), "--format", "json"});
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    auto j = json::parse(r.out);
    EXPECT_TRUE(perfgap::fixture::write_file(out.file("reports/n1.json"), r.out));
    auto l = run_binary(PERFGAP_BINARY, {"expect", "learn", out.file("reports"), "--output", out.file("expect.yaml")});
    EXPECT_EQ(l.status, 0) << l.err;
    *learned = perfgap::fixture::read_file(out.file("expect.yaml"));
    return j["node"]["settings"]["nccl_topo_file"].get<std::string>();
  };
  std::string learned;
  EXPECT_EQ(setting(&learned), "unset");
  EXPECT_NE(learned.find("nccl_topo_file: unset"), std::string::npos) << learned;
  ASSERT_TRUE(fs::remove(tree.path() + "/proc/1000/environ"));
  EXPECT_EQ(setting(&learned), "unknown");
  EXPECT_EQ(learned.find("nccl_topo_file"), std::string::npos) << learned;
}

TEST_F(ExpectFleet, FleetGroupsNodesByWhatDiffersAndDrainsTheBrokenHardware) {
  learn();
  auto r = run_binary(PERFGAP_BINARY, {"fleet", out_.file("reports"), "--expect", out_.file("expect.yaml"), "--format", "json"});
  ASSERT_EQ(r.status, 1) << r.err;
  auto j = json::parse(r.out);
  const auto& fe = only_finding(j, "fleet.expect");
  EXPECT_EQ(fe["status"], "fail");
  std::map<std::string, std::string> by_nodes;
  for (const auto& e : fe["evidence"]) by_nodes[e["source"]] += e["observed"].get<std::string>() + "\n";
  EXPECT_NE(by_nodes["gpu0003"].find("fail: counts: port mlx5_1:1 missing"), std::string::npos) << fe.dump(1);
  EXPECT_NE(by_nodes["gpu0005"].find("fail: links: gpu " + base_->gpu_bdf + " pcie_width 8 (kind: 16)"), std::string::npos) << fe.dump(1);
  EXPECT_NE(by_nodes["gpu0007"].find("fail: links: port mlx5_2:1 rate_gbps 200 (kind: 400)"), std::string::npos) << fe.dump(1);
  EXPECT_NE(by_nodes["gpu0009"].find("warn: versions: kernel 6.8.0-99-generic"), std::string::npos) << fe.dump(1);
  for (const auto& [nodes, what] : by_nodes) EXPECT_EQ(nodes.find("cpu"), std::string::npos) << nodes << ": " << what;
  // Missing and degraded hardware drains; another kernel does not.
  const std::string drained = only_finding(j, "fleet.drain")["title"];
  EXPECT_NE(drained.find("gpu[0003,0005,0007]"), std::string::npos) << drained;
  EXPECT_EQ(drained.find("0009"), std::string::npos) << drained;
  auto problems = perfgap::fixture::contract_violations(j);
  EXPECT_TRUE(problems.empty()) << problems.front();

  auto text = run_binary(PERFGAP_BINARY, {"fleet", out_.file("reports"), "--expect", out_.file("expect.yaml")});
  EXPECT_EQ(text.status, 1);
  EXPECT_NE(text.out.find("fleet.expect"), std::string::npos) << text.out;
}

TEST_F(ExpectFleet, CheckHoldsTheTreeToItsKind) {
  learn();
  auto expects = [&](const std::string& tree) {
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree, "--expect", out_.file("expect.yaml"), "--format", "json"});
    EXPECT_TRUE(r.status == 0 || r.status == 1) << r.err;
    auto j = json::parse(r.out);
    auto problems = perfgap::fixture::contract_violations(j);
    EXPECT_TRUE(problems.empty()) << problems.front();
    std::map<std::string, json> out;
    for (const auto& f : j["findings"])
      if (f["id"].get<std::string>().rfind("expect.", 0) == 0) out[f["id"]] = f;
    return out;
  };
  // The tree the fleet was made from matches its kind on everything learned.
  auto same = expects(base_->tree.path());
  ASSERT_EQ(same.size(), 5u);
  for (const auto& [id, f] : same) EXPECT_TRUE(f["status"] == "pass" || f["status"] == "skip") << f.dump(1);
  EXPECT_EQ(same["expect.links"]["status"], "pass");
  EXPECT_EQ(same["expect.counts"]["status"], "pass");

  // The same tree with a GPU trained at x8 and a NIC gone.
  TempDir broken;
  fs::copy(base_->tree.path(), broken.path(), fs::copy_options::recursive | fs::copy_options::copy_symlinks | fs::copy_options::overwrite_existing);
  ASSERT_TRUE(perfgap::fixture::write_file(broken.path() + "/sys/bus/pci/devices/" + base_->gpu_bdf + "/current_link_width", "8\n"));
  ASSERT_GT(fs::remove_all(broken.path() + "/sys/class/infiniband/mlx5_1"), 0u);
  auto bad = expects(broken.path());
  EXPECT_EQ(bad["expect.links"]["status"], "fail") << bad["expect.links"].dump(1);
  EXPECT_NE(bad["expect.links"]["title"].get<std::string>().find("gpu " + base_->gpu_bdf + " pcie_width 8 (kind: 16)"), std::string::npos)
      << bad["expect.links"].dump(1);
  EXPECT_EQ(bad["expect.counts"]["status"], "fail");
  EXPECT_NE(bad["expect.counts"]["title"].get<std::string>().find("port mlx5_1:1 missing"), std::string::npos) << bad["expect.counts"].dump(1);
}

TEST_F(ExpectFleet, KindNotInTheFileSkipsNamingItsKinds) {
  fs::remove_all(out_.file("reports"));
  fs::create_directories(out_.file("reports"));
  make_fleet(*base_, out_.file("all"));
  for (int i = 1; i <= 4; ++i) fs::copy(out_.file("all/cpu000" + std::to_string(i) + ".json"), out_.file("reports/"));
  learn();
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", base_->tree.path(), "--expect", out_.file("expect.yaml"), "--only", "gpu.*", "--format", "json"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  const auto j = json::parse(r.out);
  const auto& f = only_finding(j, "expect.links");
  EXPECT_EQ(f["status"], "skip");
  EXPECT_NE(f["title"].get<std::string>().find("it has: NVIDIA GB200 / Neoverse-V2 (x8 risers)"), std::string::npos) << f.dump(1);
}

TEST_F(ExpectFleet, UpdateKeepsWhatAPersonReviewed) {
  auto text = learn();
  // The reviewer says the x8 kind's first GPU should be x16 after all.
  const std::string line = "gpu " + base_->gpu_bdf + " pcie_width: 8  # 4 of 4 nodes";
  auto at = text.find(line);
  ASSERT_NE(at, std::string::npos) << text;
  text.replace(at, line.size(), "gpu " + base_->gpu_bdf + " pcie_width: 16");
  ASSERT_TRUE(perfgap::fixture::write_file(out_.file("reviewed.yaml"), text));
  auto again = learn({"--update", out_.file("reviewed.yaml")});
  EXPECT_NE(again.find("gpu " + base_->gpu_bdf + " pcie_width: 16  # reviewed: kept by --update"), std::string::npos) << again;
}

TEST_F(ExpectFleet, BadFilesAreOneLineExitTwoAndNothingWritten) {
  const auto not_yaml = perfgap::fixture::write_in(out_, "broken.yaml", "schema: perfgap.expect/1\nkinds: [\n  {kind: \n");
  const auto report = out_.file("reports/gpu0001.json");
  const auto config = perfgap::fixture::write_in(out_, "config.yaml", "cpu.steal:\n  warn_pct: 3\n");
  for (const auto& file : {not_yaml, report, config}) {
    SCOPED_TRACE(file);
    auto c = run_binary(PERFGAP_BINARY, {"check", "--root", base_->tree.path(), "--expect", file, "--format", "json"});
    EXPECT_EQ(c.status, 2);
    EXPECT_TRUE(perfgap::fixture::one_line(c.err)) << c.err;
    EXPECT_NE(c.err.find(file), std::string::npos) << c.err;
    EXPECT_TRUE(c.out.empty());
    auto f = run_binary(PERFGAP_BINARY, {"fleet", out_.file("reports"), "--expect", file});
    EXPECT_EQ(f.status, 2);
    EXPECT_TRUE(perfgap::fixture::one_line(f.err)) << f.err;
    auto u = run_binary(PERFGAP_BINARY, {"expect", "learn", out_.file("reports"), "--update", file, "--output", out_.file("new.yaml")});
    EXPECT_EQ(u.status, 2);
    EXPECT_TRUE(perfgap::fixture::one_line(u.err)) << u.err;
    EXPECT_FALSE(fs::exists(out_.file("new.yaml")));
  }
  // Line numbers where the file has them.
  auto c = run_binary(PERFGAP_BINARY, {"check", "--root", base_->tree.path(), "--expect", report});
  // (the report's schema key is on its last lines: nlohmann writes keys in order)
  EXPECT_TRUE(std::regex_search(c.err, std::regex(": schema is 'perfgap.report/1', not perfgap.expect/1"))) << c.err;
  EXPECT_TRUE(std::regex_search(c.err, std::regex("gpu0001\\.json:[0-9]+: schema"))) << c.err;
  // --agree under half would learn from a minority.
  for (const char* pct : {"40", "101", "x"}) {
    auto a = run_binary(PERFGAP_BINARY, {"expect", "learn", out_.file("reports"), "--agree", pct, "--output", out_.file("new.yaml")});
    EXPECT_EQ(a.status, 2) << pct;
    EXPECT_TRUE(perfgap::fixture::one_line(a.err)) << a.err;
    EXPECT_NE(a.err.find("--agree"), std::string::npos) << a.err;
    EXPECT_FALSE(fs::exists(out_.file("new.yaml")));
  }
  // No report at all to learn from.
  auto none = run_binary(PERFGAP_BINARY, {"expect", "learn", out_.file("nothing-here"), "--output", out_.file("new.yaml")});
  EXPECT_EQ(none.status, 2);
  EXPECT_TRUE(perfgap::fixture::one_line(none.err)) << none.err;
  EXPECT_FALSE(fs::exists(out_.file("new.yaml")));
}

// Every real tree is a fleet of its own kind: learned alone, it matches itself; a tree of
// another kind is skipped naming the kinds the file has.
TEST(ExpectField, RealTreesLearnedAndCheckedAsFleetsOfTheirOwnKinds) {
  const fs::path trees = fs::path(PERFGAP_SOURCE_DIR) / "../shared/field/trees";
  if (!fs::is_directory(trees)) GTEST_SKIP() << trees << " not present (a clone without shared/)";
  TempDir tmp;
  auto found = perfgap::fixture::unpack_field_trees(trees.string(), tmp.path());
  ASSERT_TRUE(found) << found.error();
  ASSERT_GE(found->size(), 20u);
  fs::create_directories(tmp.file("reports"));
  std::size_t passes = 0;
  std::optional<std::size_t> learned;  // the first tree whose file holds something to judge
  for (std::size_t i = 0; i < found->size(); ++i) {
    const auto& t = (*found)[i];
    SCOPED_TRACE(t.name);
    const auto report = tmp.file("reports/r" + std::to_string(i) + ".json"), file = tmp.file("e" + std::to_string(i) + ".yaml");
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", t.root, "--format", "json", "--output", report});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
    auto l = run_binary(PERFGAP_BINARY, {"expect", "learn", report, "--output", file});
    ASSERT_EQ(l.status, 0) << l.err;
    auto c = run_binary(PERFGAP_BINARY, {"check", "--root", t.root, "--expect", file, "--format", "json"});
    ASSERT_TRUE(c.status == 0 || c.status == 1) << c.err;
    auto j = json::parse(c.out);
    std::size_t mine = 0;
    for (const auto& f : j["findings"]) {
      if (f["id"].get<std::string>().rfind("expect.", 0) != 0) continue;
      ++mine;
      EXPECT_TRUE(f["status"] == "pass" || f["status"] == "skip") << f.dump(1);
      passes += f["status"] == "pass" ? 1 : 0;
      if (f["status"] == "pass" && !learned) learned = i;
    }
    EXPECT_EQ(mine, 5u);
  }
  ASSERT_TRUE(learned);
  EXPECT_GT(passes, found->size()) << "the real trees gave almost nothing to learn";
  // The whole field held to the file of the first tree that learned something: the trees of
  // other kinds are skipped, named, and counted as not judged.
  const auto file = tmp.file("e" + std::to_string(*learned) + ".yaml");
  auto f = run_binary(PERFGAP_BINARY, {"fleet", tmp.file("reports"), "--expect", file, "--format", "json"});
  ASSERT_TRUE(f.status == 0 || f.status == 1) << f.err;
  const auto fj = json::parse(f.out);
  const auto& fe = only_finding(fj, "fleet.expect");
  // That tree matches its own file; every other kind is one skip line naming the file.
  EXPECT_EQ(fe["status"], "pass") << fe.dump(1);
  ASSERT_EQ(fe["evidence"].size(), 1u) << fe.dump(1);
  EXPECT_EQ(fe["evidence"][0]["observed"], "skip: kind not in " + file) << fe.dump(1);
  EXPECT_NE(fe["title"].get<std::string>().find("(1 node; "), std::string::npos) << fe.dump(1);
  EXPECT_NE(fe["title"].get<std::string>().find(" nodes not judged)"), std::string::npos) << fe.dump(1);
  EXPECT_EQ(fe["metrics"]["differing_nodes"], 0.0);
  // The first tree's own file, if it learned nothing: its node is not judged, never passed.
  if (*learned > 0) {
    auto none = run_binary(PERFGAP_BINARY, {"fleet", tmp.file("reports"), "--expect", tmp.file("e0.yaml"), "--format", "json"});
    ASSERT_TRUE(none.status == 0 || none.status == 1) << none.err;
    const auto nj = json::parse(none.out);
    const auto& ne = only_finding(nj, "fleet.expect");
    EXPECT_EQ(ne["status"], "skip") << ne.dump(1);
  }
}

}  // namespace
}  // namespace expect_cli
