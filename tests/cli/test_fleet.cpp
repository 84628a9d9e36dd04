// perfgap fleet on the real binary: 200 generated node reports with injected drift, an
// outlier and failing nodes, plus unusable inputs among them.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <regex>
#include <sstream>

#include "files.hpp"
#include "fleet_gen.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::line_count;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_file;

namespace {

std::string fleet_fixture(const std::string& name) { return perfgap::fixture::fixture_path("fleet/" + name); }

std::vector<json> findings(const json& report, const std::string& id) {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["id"] == id) out.push_back(f);
  return out;
}

class Fleet : public ::testing::Test {
 protected:
  void SetUp() override {
    for (std::size_t i = 1; i <= 200; ++i) {
      perfgap::fleetgen::NodeSpec s;
      s.name = perfgap::fleetgen::node_name(i);
      s.seed = i;
      if (i == 3 || i == 50 || i == 120) s.kernel = "6.8.0-47-generic";
      if (i == 42) s.environment["NCCL_IB_QPS_PER_CONNECTION"] = "1";
      if (i == 77) s.metrics["pcie.link.link_width@0000:5d:00.0"] = 8;
      if (i == 77) s.status["pcie.link"] = "warn";  // its link at x8: an outlier where its check warns
      if (i == 10 || i == 11) s.status["cpu.governor"] = "fail";
      write_file(dir.path() + "/" + s.name + ".json", perfgap::fleetgen::report_json(s));
    }
    fs::copy_file(fleet_fixture("truncated.json"), dir.path() + "/truncated.json");
    fs::copy_file(fleet_fixture("foreign-schema.json"), dir.path() + "/foreign-schema.json");
  }
  TempDir dir;
};

TEST_F(Fleet, DriftOutlierFailuresAndUnreadableInOneReport) {
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path(), "--format", "json"});
  ASSERT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(r.err.empty()) << r.err;
  auto rep = json::parse(r.out);
  EXPECT_EQ(rep["schema"], "perfgap.report/1");
  EXPECT_EQ(rep["source"]["kind"], "fleet");
  EXPECT_TRUE(rep["node"].is_null());
  EXPECT_EQ(rep["source"]["inputs"].size(), 202u);

  auto bad = findings(rep, "fleet.unreadable");
  ASSERT_EQ(bad.size(), 2u);
  EXPECT_EQ(bad[0]["status"], "error");
  EXPECT_EQ(bad[0]["subject"], dir.path() + "/foreign-schema.json");
  EXPECT_NE(bad[0]["title"].get<std::string>().find("schema is not perfgap.report/1 ('nhc.report/2')"), std::string::npos) << bad[0]["title"];
  EXPECT_EQ(bad[1]["subject"], dir.path() + "/truncated.json");
  EXPECT_NE(bad[1]["title"].get<std::string>().find("truncated"), std::string::npos) << bad[1]["title"];

  auto failures = findings(rep, "fleet.node_failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["status"], "fail");
  EXPECT_EQ(failures[0]["metrics"]["nodes"], 200.0);
  EXPECT_EQ(failures[0]["metrics"]["failing_nodes"], 2.0);
  EXPECT_EQ(failures[0]["evidence"][0]["source"], "gpu[0010-0011]");
  EXPECT_EQ(failures[0]["evidence"][0]["observed"], "cpu.governor (2 nodes)");

  auto drift = findings(rep, "fleet.drift");
  ASSERT_EQ(drift.size(), 2u) << drift.size();
  EXPECT_EQ(drift[0]["subject"], "kernel");
  EXPECT_EQ(drift[0]["evidence"][0]["observed"], "6.8.0-45-generic on 197 nodes: gpu[0001-0002,0004-0049,0051-0119,0121-0200]");
  EXPECT_EQ(drift[0]["evidence"][1]["observed"], "6.8.0-47-generic on 3 nodes: gpu[0003,0050,0120]");
  EXPECT_EQ(drift[0]["evidence"][1]["expected"], "6.8.0-45-generic");
  EXPECT_EQ(drift[1]["subject"], "environment.NCCL_IB_QPS_PER_CONNECTION");
  EXPECT_EQ(drift[1]["evidence"][1]["observed"], "1 on 1 node: gpu0042");

  auto out = findings(rep, "fleet.outliers");
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0]["status"], "warn");
  EXPECT_EQ(out[0]["subject"], "gpu0077");
  EXPECT_EQ(out[0]["evidence"][0]["source"], "pcie.link.link_width@0000:5d:00.0");
  EXPECT_EQ(out[0]["metrics"]["pcie.link.link_width@0000:5d:00.0"], 8.0);
  EXPECT_EQ(out[0]["metrics"]["pcie.link.link_width@0000:5d:00.0:fleet_median"], 16.0);
}

TEST_F(Fleet, TextViewFitsATerminalAndNamesFailingNodes) {
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path()}, {{"COLUMNS", "100"}});
  ASSERT_EQ(r.status, 1) << r.err;
  std::istringstream in(r.out);
  std::string line;
  while (std::getline(in, line)) EXPECT_LE(line.size(), 100u) << line;
  EXPECT_EQ(r.out.rfind("perfgap fleet: FAIL  200 nodes from 202 reports (2 unreadable)\n", 0), 0u) << r.out;
  EXPECT_NE(r.out.find("  gpu[0010-0011] (2)  cpu.governor\n"), std::string::npos) << r.out;
  EXPECT_NE(r.out.find("fleet.outliers [gpu0077]"), std::string::npos) << r.out;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos) << "colour when piped";
  auto v = run_binary(PERFGAP_BINARY, {"fleet", dir.path(), "-v"});
  EXPECT_GT(v.out.size(), r.out.size());
  // Not a terminal and no COLUMNS (saved to a file, mailed): whole lines, nothing cut.
  auto whole = run_binary(PERFGAP_BINARY, {"fleet", dir.path()}, {{"COLUMNS", ""}});
  ASSERT_EQ(whole.status, 1) << whole.err;
  std::istringstream lines(whole.out);
  std::size_t longest = 0;
  while (std::getline(lines, line)) {
    longest = std::max(longest, line.size());
    EXPECT_FALSE(line.size() > 3 && line.compare(line.size() - 3, 3, "...") == 0) << "cut: " << line;
  }
  EXPECT_GT(longest, 100u) << whole.out;
}

TEST_F(Fleet, QuotedGlobsAreExpandedAndOutputIsAtomic) {
  auto out = dir.path() + "/out/fleet.json";
  fs::create_directories(dir.path() + "/out");
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/gpu00[0-4]?.json", "--format", "json", "--output", out});
  EXPECT_EQ(r.status, 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  std::ifstream f(out);
  std::stringstream ss;
  ss << f.rdbuf();
  auto rep = json::parse(ss.str());
  EXPECT_EQ(rep["source"]["inputs"].size(), 49u);  // gpu0001..gpu0049
  EXPECT_TRUE(findings(rep, "fleet.unreadable").empty());
  EXPECT_EQ(std::distance(fs::directory_iterator(dir.path() + "/out"), fs::directory_iterator()), 1);
}

TEST_F(Fleet, NewestReportOfANodeWinsAndSaysSo) {
  fs::create_directories(dir.path() + "/old");
  perfgap::fleetgen::NodeSpec s;
  s.name = "gpu0010";
  s.generated_at = "2026-11-01T00:00:00Z";
  write_file(dir.path() + "/old/gpu0010.json", perfgap::fleetgen::report_json(s));
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/old", dir.path(), "--format", "json"});
  ASSERT_EQ(r.status, 1) << r.err;
  auto f = findings(json::parse(r.out), "fleet.node_failures")[0];
  EXPECT_EQ(f["metrics"]["failing_nodes"], 2.0);  // the newer, failing gpu0010 report is used
  EXPECT_EQ(f["evidence"].back()["source"], dir.path() + "/old/gpu0010.json");
}

TEST_F(Fleet, NoUsableInputIsExit2WithOneLine) {
  TempDir empty;
  for (auto args : {std::vector<std::string>{"fleet", fleet_fixture("truncated.json"), fleet_fixture("foreign-schema.json")},
                    {"fleet", "/nonexistent/report.json"},
                    {"fleet", empty.path()},
                    {"fleet", empty.path() + "/*.json"}}) {
    auto r = run_binary(PERFGAP_BINARY, args);
    EXPECT_EQ(r.status, 2) << ::testing::PrintToString(args) << r.out;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(args[1]), std::string::npos) << r.err;
    EXPECT_TRUE(r.out.empty());
  }
  // An analyze report without a per-node figure (this one has steps.gap's percentage only) is
  // named, with why, beside the node report (measurements: tests/cli/test_fleet_measured.cpp).
  auto r = run_binary(PERFGAP_BINARY, {"fleet", fleet_fixture("analyze-report.json"), dir.path() + "/gpu0001.json", "--format", "json"});
  EXPECT_EQ(r.status, 0) << r.err;
  auto bad = findings(json::parse(r.out), "fleet.unreadable");
  ASSERT_EQ(bad.size(), 1u);
  EXPECT_NE(bad[0]["title"].get<std::string>().find("no per-node measurement"), std::string::npos);
  // Its fix says what fleet needs, not to run check again (it is not a broken check report).
  EXPECT_EQ(bad[0]["fix"].get<std::string>().find("perfgap check"), std::string::npos) << bad[0]["fix"];
  EXPECT_NE(bad[0]["fix"].get<std::string>().find("measures nothing fleet compares"), std::string::npos) << bad[0]["fix"];
}

TEST_F(Fleet, JunitAndPrometheusCoverEveryNode) {
  auto j = run_binary(PERFGAP_BINARY, {"fleet", dir.path(), "--format", "junit"});
  ASSERT_EQ(j.status, 1) << j.err;
  EXPECT_EQ(j.out.rfind("<?xml", 0), 0u);
  std::size_t suites = 0;
  for (auto p = j.out.find("<testsuite "); p != std::string::npos; p = j.out.find("<testsuite ", p + 1)) ++suites;
  EXPECT_EQ(suites, 201u);  // 200 nodes and the fleet
  EXPECT_NE(j.out.find("<testcase classname=\"gpu0010\" name=\"cpu.governor\">\n      <failure"), std::string::npos);
  EXPECT_NE(j.out.find("<testcase classname=\"fleet\" name=\"fleet.drift kernel\">\n      <system-out>warn: "), std::string::npos);

  auto p = run_binary(PERFGAP_BINARY, {"fleet", dir.path(), "--format", "prometheus"});
  ASSERT_EQ(p.status, 1) << p.err;
  const std::regex sample(R"(^perfgap_(finding|findings|metric|last_run_timestamp_seconds)\{([a-z_]+="([^"\\]|\\.)*",?)+\} ([-+]?[0-9.e+-]+|NaN|[-+]Inf)$)");
  std::istringstream in(p.out);
  std::string line;
  std::size_t samples = 0;
  while (std::getline(in, line))
    if (line.rfind("# ", 0) != 0) {
      ++samples;
      if (!std::regex_match(line, sample)) ADD_FAILURE() << line;
    }
  EXPECT_GT(samples, 200u * 40u);
  EXPECT_NE(p.out.find("perfgap_findings{node=\"gpu0010\",status=\"fail\"} 1\n"), std::string::npos);
  // Every node's metrics too, under its own node label, as its check --format prometheus gives them.
  EXPECT_NE(p.out.find("perfgap_metric{node=\"gpu0010\",id=\""), std::string::npos);
  EXPECT_NE(p.out.find("perfgap_last_run_timestamp_seconds{node=\"gpu0200\"} 1796040000\n"), std::string::npos);
  EXPECT_NE(p.out.find("perfgap_finding{node=\"\",id=\"fleet.unreadable\",layer=\"fleet\",subject=\"" + dir.path() + "/truncated.json\",status=\"error\"} 1\n"),
            std::string::npos);
}

}  // namespace

namespace {

// The reports of the real `check` (not only the generator's imitation) are what fleet reads.
TEST(FleetOfRealReports, GoldenNodesAggregate) {
  TempDir reports;
  std::vector<std::string> names;
  for (const char* tree : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}) {
    TempDir root;
    auto u = perfgap::fixture::unpack_tree((fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/golden" / (std::string(tree) + ".tree")).string(),
                                           root.path());
    ASSERT_TRUE(u) << u.error();
    auto c = run_binary(PERFGAP_BINARY, {"check", "--root", root.path(), "--format", "json", "--output", reports.path() + "/" + tree + ".json"});
    ASSERT_LE(c.status, 1) << c.err;
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", reports.path(), "--format", "json"});
  ASSERT_EQ(r.status, 1) << r.err;
  auto rep = json::parse(r.out);
  EXPECT_TRUE(findings(rep, "fleet.unreadable").empty());
  auto failures = findings(rep, "fleet.node_failures");
  ASSERT_EQ(failures.size(), 1u);
  EXPECT_EQ(failures[0]["metrics"]["nodes"], 4.0);
  EXPECT_GE(failures[0]["metrics"]["failing_nodes"], 1.0);
  bool kernel_drift = false;
  for (const auto& d : findings(rep, "fleet.drift")) kernel_drift |= d["subject"] == "kernel";
  EXPECT_TRUE(kernel_drift);
  EXPECT_EQ(findings(rep, "fleet.outliers")[0]["status"], "skip");  // 4 nodes: too few to judge
}

}  // namespace

namespace {

// A captured tree without a hostname is named from its directory, --node-name sets the name,
// and fleet names a report that has none from its file instead of refusing it (issue 41 item 5).
TEST(FleetNames, CapturedTreesWithoutHostnamesMakeAFleet) {
  TempDir dir;
  fs::create_directories(dir.file("gpu017/proc"));
  write_file(dir.file("gpu017/proc/cpuinfo"), "processor\t: 0\nmodel name\t: Test CPU\n");
  auto tree = run_binary(PERFGAP_BINARY, {"check", "--root", dir.file("gpu017") + "/", "--format", "json"});
  ASSERT_TRUE(tree.status == 0 || tree.status == 1) << tree.err;
  auto j = json::parse(tree.out);
  EXPECT_EQ(j["node"]["hostname"], "");
  EXPECT_EQ(j["node"]["name"], "gpu017");
  auto named = run_binary(PERFGAP_BINARY, {"check", "--root", dir.file("gpu017"), "--node-name", "rack4-n9", "--format", "json"});
  ASSERT_TRUE(named.status == 0 || named.status == 1) << named.err;
  EXPECT_EQ(json::parse(named.out)["node"]["name"], "rack4-n9");
  // Reports written by an older perfgap, with node.name "": named from their files.
  fs::create_directories(dir.file("reports"));
  j["node"]["name"] = "";
  write_file(dir.file("reports/gpu099.json"), j.dump());
  j["node"]["name"] = "gpu100";
  write_file(dir.file("reports/gpu100.json"), j.dump());
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", dir.file("reports")});
  ASSERT_TRUE(fleet.status == 0 || fleet.status == 1) << fleet.out << fleet.err;
  EXPECT_NE(fleet.out.find("2 nodes from 2 reports"), std::string::npos) << fleet.out;
  EXPECT_EQ(fleet.err.find("node.name"), std::string::npos) << fleet.err;
}

}  // namespace
