// `perfgap analyze` over the real logs of ../shared/field/logs (one directory per log: the
// prefix says the kind, `nt-` nccl-tests, `nl-` nccl-log, `st-` steps; a `reference.txt`
// beside `input.txt` is the reference run). No expected verdicts: invariants any report on
// real logs must hold. Skipped when ../shared is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>
#include <tuple>

#include "contract.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

const fs::path kLogs = fs::path(PERFGAP_SHARED_DIR) / "field" / "logs";

std::string kind_of(const std::string& dir) {
  static const std::map<std::string, std::string> kinds = {{"nt-", "nccl-tests"}, {"nl-", "nccl-log"}, {"st-", "steps"}};
  for (const auto& [prefix, kind] : kinds)
    if (dir.rfind(prefix, 0) == 0) return kind;
  return "";
}

std::size_t words(const std::string& s) {
  std::istringstream in(s);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

TEST(AnalyzeFieldLogs, InvariantsOnEveryRealLog) {
  if (!fs::is_directory(kLogs)) GTEST_SKIP() << kLogs << " is absent";
  int judged = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kLogs))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const auto name = dir.filename().string();
    const auto kind = kind_of(name);
    SCOPED_TRACE(name);
    ASSERT_FALSE(kind.empty()) << "unknown kind prefix";
    ASSERT_TRUE(fs::exists(dir / "input.txt"));
    std::vector<std::string> args = {"analyze", kind, (dir / "input.txt").string()};
    if (fs::exists(dir / "reference.txt")) {
      args.push_back("--reference");
      args.push_back((dir / "reference.txt").string());
    }
    auto text = run_binary(PERFGAP_BINARY, args);
    EXPECT_TRUE(text.status == 0 || text.status == 1) << "exit " << text.status << ": " << text.err;
    args.push_back("--format");
    args.push_back("json");
    auto r = run_binary(PERFGAP_BINARY, args);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << "exit " << r.status << ": " << r.err;
    EXPECT_EQ(r.status, text.status) << "text and JSON disagree";
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
    auto v = perfgap::fixture::contract_violations(j);
    EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
    ASSERT_TRUE(j["findings"].is_array());
    EXPECT_FALSE(j["findings"].empty());
    bool any_fail = false;
    for (const auto& f : j["findings"]) {
      auto status = f.value("status", "");
      auto title = f.value("title", "");
      SCOPED_TRACE(f.value("id", "?") + ": " + title);
      EXPECT_NE(status, "error");
      any_fail = any_fail || status == "fail";
      if (status == "skip") { EXPECT_GE(words(title), 5u) << "a skip must say why in its title"; }
      if (status == "pass") { EXPECT_FALSE(f.value("evidence", nlohmann::json::array()).empty()) << "a pass must show its evidence"; }
    }
    EXPECT_EQ(r.status, any_fail ? 1 : 0);
    ++judged;
  }
  EXPECT_GT(judged, 0);
}

// A reference of another collective or job shape is no basis for a verdict (skip, exit 0, the
// differences named once in the title, both shapes in the evidence): all_reduce on 16 ranks, 2 nodes against an MI250X all_gather (it passed at
// 1382.9%), against 8 ranks on 1 node (it failed at 13.6% and sent the user to tune NCCL), and the
// p5 2-node run against its 1-node reference, neither printing its ranks (16 and 8 by busbw/algbw).
TEST(AnalyzeFieldLogs, ReferencesOfAnotherShapeAreRefused) {
  const fs::path fixtures = fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "nccl-tests";
  if (!fs::is_directory(kLogs) || !fs::is_directory(fixtures)) GTEST_SKIP() << "../shared is absent";
  const auto a3 = (kLogs / "nt-a3mega-h100-2node-allreduce-8g" / "input.txt").string();
  const std::vector<std::tuple<std::string, std::string, std::string>> cases = {
      {a3, (fixtures / "all-gather-mi250x-srun-label-prefix-rccl-1490.txt").string(), "one that does not reduce"},
      {a3, (fixtures / "all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt").string(), "(16 ranks here, 8 in the reference; 2 nodes here, 1 in the reference)"},
      {(kLogs / "nt-p5-2node-vs-1node-reference" / "input.txt").string(), (kLogs / "nt-p5-2node-vs-1node-reference" / "reference.txt").string(),
       "(16 ranks here, 8 in the reference)"},
  };
  for (const auto& [input, ref, why] : cases) {
    SCOPED_TRACE(input + " against " + ref);
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", input, "--reference", ref, "--format", "json"});
    EXPECT_EQ(r.status, 0) << r.err;
    auto j = nlohmann::json::parse(r.out);
    const auto& f = j["findings"][0];
    EXPECT_EQ(f["id"], "nccl_tests.busbw");
    EXPECT_EQ(f["status"], "skip");
    const std::string title = f["title"];
    EXPECT_NE(title.find("the reference is another kind of run"), std::string::npos) << title;
    EXPECT_NE(title.find(why), std::string::npos) << title;
  }
}

// The RoCE all_reduce_perf run over two hosts (nt-/nl-p40-roce-vf-ibext-*: no nNodes line, no
// '# Rank' lines, four hostnames in the prefixes for two ranks): the ranks' init and destroy
// lines name their hosts, so both analyzers count two nodes and say how. Before, nccl-tests read
// "all_reduce_perf on 2 ranks, nodes not shown" and the NCCL-log analyzer said nothing of nodes.
TEST(AnalyzeFieldLogs, TheRoceRunOverTwoHostsShowsItsNodes) {
  const auto nt = kLogs / "nt-p40-roce-vf-ibext-interleaved-info" / "input.txt";
  const auto nl = kLogs / "nl-p40-roce-vf-ibext-v8" / "input.txt";
  if (!fs::exists(nt) || !fs::exists(nl)) GTEST_SKIP() << "../shared is absent";
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", nt.string(), "--format", "json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = nlohmann::json::parse(r.out);
  const auto& bw = j["findings"][0];
  ASSERT_EQ(bw["id"], "nccl_tests.busbw");
  EXPECT_NE(bw["title"].get<std::string>().find("all_reduce_perf on 2 ranks, 2 nodes (by the hostnames of every rank's NCCL INFO lines)"),
            std::string::npos)
      << bw["title"];
  auto l = run_binary(PERFGAP_BINARY, {"analyze", "nccl-log", nl.string(), "--format", "json"});
  ASSERT_EQ(l.status, 0) << l.err;
  const auto lj = nlohmann::json::parse(l.out);
  bool said = false;
  for (const auto& f : lj["findings"])
    if (f["id"] == "nccl_log.net")
      for (const auto& e : f["evidence"])
        said =
            said || (e["source"] == "nodes" &&
                     e["observed"] == "2 nodes by the hostnames of every rank's NCCL INFO lines: rank 0 on pod-vf02, rank 1 on pod-vf01");
  EXPECT_TRUE(said) << l.out;
}
