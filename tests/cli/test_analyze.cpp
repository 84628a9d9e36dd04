// `perfgap analyze` and `perfgap gap` as scripts see them: exit statuses 0/1/2, unusable
// inputs (empty, binary, another tool's output) alone and mixed, --output, JSON shape.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>
#include <sstream>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::line_count;
using perfgap::fixture::log_fixture;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

TEST(Analyze, ReportShapeAndExitStatus) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "perf", log_fixture("perf/smmu-report.txt")}, 1);
  EXPECT_EQ(j["source"]["kind"], "analyze");
  EXPECT_EQ(j["source"]["inputs"], nlohmann::json::array({log_fixture("perf/smmu-report.txt")}));
  EXPECT_TRUE(j["node"].is_null());
  auto f = finding(j, "perf.smmu_cmdq");
  ASSERT_TRUE(f);
  EXPECT_EQ((*f)["status"], "fail");
  EXPECT_EQ((*f)["layer"], "virtualization");
  EXPECT_DOUBLE_EQ((*f)["metrics"]["smmu_cmdq_pct"].get<double>(), 24.10);
  EXPECT_EQ((*finding(j, "perf.hot_kernel"))["status"], "warn");
  // Passing input: exit 0.
  auto ok = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/ref-allreduce.txt")}, 0);
  EXPECT_EQ((*finding(ok, "nccl_tests.busbw"))["layer"], "network");
}

TEST(Analyze, NcclTestsReferenceAndSizes) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference", log_fixture("nccl-tests/ref-allreduce.txt")}, 1);
  auto f = finding(j, "nccl_tests.busbw");
  ASSERT_TRUE(f);
  EXPECT_NEAR((*f)["metrics"]["ratio.67108864"].get<double>(), 249.82 / 361.67, 1e-9);
  // 512 KiB is below 1 MiB: not judged unless asked; 1 MiB alone is within 95%.
  json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference", log_fixture("nccl-tests/ref-allreduce.txt"), "--sizes", "1M"}, 0);
  json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference", log_fixture("nccl-tests/ref-allreduce.txt"), "--sizes", "512K,1M"}, 1);
  auto bad = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--sizes", "1X"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_EQ(line_count(bad.err), 1);
  // The text report shows the table rows.
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/slow-allreduce.txt"), "--reference", log_fixture("nccl-tests/ref-allreduce.txt")});
  EXPECT_NE(t.out.find("64 MiB"), std::string::npos) << t.out;
  EXPECT_NE(t.out.find("69.1%"), std::string::npos) << t.out;
}

TEST(Analyze, DamagedRowIsAnErrorFindingNamingTheLine) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log_fixture("nccl-tests/cut-row.txt")}, 1);
  bool named = false;
  for (const auto& f : j["findings"])
    if (f["status"] == "error")
      for (const auto& e : f["evidence"]) named = named || e["source"].get<std::string>().ends_with("cut-row.txt:3");
  EXPECT_TRUE(named) << j.dump(2);
}

TEST(Analyze, UnusableInputsAloneAreExit2) {
  TempDir d;
  auto empty = write_in(d, "empty.txt", "");
  auto binary = write_in(d, "bin.dat", std::string("\x7f" "ELF\0\0\x01\x02", 8) + std::string(200, '\0'));
  auto other = log_fixture("perf/smmu-report.txt");  // perf output given as nccl-tests
  for (const auto& [kind, file] : std::vector<std::pair<std::string, std::string>>{
           {"nccl-tests", empty}, {"nccl-tests", binary}, {"nccl-tests", other}, {"turbostat", other},
           {"numastat", other}, {"nccl-log", other}, {"steps", other}, {"perf", log_fixture("steps/measured.csv")},
           {"perf", d.path() + "/missing.txt"}}) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", kind, file});
    EXPECT_EQ(r.status, 2) << kind << " " << file << "\n" << r.out;
    EXPECT_TRUE(r.out.empty()) << kind;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(file), std::string::npos) << r.err;
  }
  // A 100 KB line without content of the kind.
  auto longline = write_in(d, "long.txt", std::string(100000, 'a') + "\n");
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "perf", longline}).status, 2);
}

TEST(Analyze, UnusableInputMixedWithGoodIsAnErrorFinding) {
  TempDir d;
  auto empty = write_in(d, "empty.txt", "");
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", empty, log_fixture("nccl-tests/ref-allreduce.txt"), log_fixture("perf/smmu-report.txt")}, 1);
  auto e = finding(j, "nccl_tests.busbw", empty);
  ASSERT_TRUE(e);
  EXPECT_EQ((*e)["status"], "error");
  auto o = finding(j, "nccl_tests.busbw", log_fixture("perf/smmu-report.txt"));
  ASSERT_TRUE(o);
  EXPECT_EQ((*o)["status"], "error");
  EXPECT_EQ((*finding(j, "nccl_tests.busbw", log_fixture("nccl-tests/ref-allreduce.txt")))["status"], "skip") << "read, and no basis to pass";
  EXPECT_EQ(j["summary"]["error"], 2);
}

TEST(Analyze, NcclLogAndSteps) {
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log_fixture("nccl-log/topo-missing-2.27.txt")}, 1);
  EXPECT_EQ((*finding(j, "nccl_log.topo_file"))["status"], "fail");
  EXPECT_EQ((*finding(j, "nccl_log.net"))["status"], "pass");
  // The file reached NCCL and NCCL's XML reader refused it: fail, the WARN line as evidence.
  auto bad = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log_fixture("nccl-log/topo-file-rejected-xml-parse.txt")}, 1);
  const auto& topo = *finding(bad, "nccl_log.topo_file");
  EXPECT_EQ(topo["status"], "fail") << topo.dump();
  EXPECT_NE(topo["title"].get<std::string>().find("rejected the topology file /etc/nccl/topo.xml: XML Parse : Unexpected EOF"), std::string::npos) << topo.dump();
  EXPECT_NE(topo.dump().find("topo-file-rejected-xml-parse.txt:9"), std::string::npos) << topo.dump();
  auto s = json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/measured.csv"), "--reference-ms", "830"}, 1);
  EXPECT_EQ((*finding(s, "steps.gap"))["layer"], "workload");
  EXPECT_NEAR((*finding(s, "steps.gap"))["metrics"]["percent_of_reference"].get<double>(), 100 * 830.0 / 1090.0, 1e-6);
  EXPECT_EQ((*finding(s, "steps.tail"))["status"], "warn");
  json_report(PERFGAP_BINARY, {"analyze", "steps", log_fixture("steps/measured.jsonl"), "--reference", log_fixture("steps/reference.log")}, 0);
  // Options of another kind are usage errors.
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "perf", log_fixture("perf/smmu-report.txt"), "--rated-mhz", "3800"});
  EXPECT_EQ(r.status, 2);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "nsys", log_fixture("perf/smmu-report.txt")}).status, 2);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"analyze", "perf"}).status, 2);
}

// An NCCL 2.18 log of a RoCE all_reduce_perf run over two hosts (no nNodes line, no '# Rank'
// lines: tests/fixtures/logs/nccl-log/roce-2hosts-all-reduce-2.18.txt): every rank's init line
// names its host, so both analyzers count two nodes and say how; an excerpt of one host's lines
// says the nodes are not shown, and what it saw. (Before, nccl-tests read "nodes not shown" and
// the NCCL-log analyzer said nothing of the nodes.)
namespace {
std::string analyze_nodes_evidence(const nlohmann::json& f) {
  for (const auto& e : f["evidence"])
    if (e["source"] == "nodes") return e["observed"];
  return "";
}
}  // namespace

TEST(Analyze, NcclInfoLinesCountTheNodesTheyShow) {
  const auto log = log_fixture("nccl-log/roce-2hosts-all-reduce-2.18.txt");
  auto nt = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log}, 0);
  const auto& bw = *finding(nt, "nccl_tests.busbw");
  EXPECT_NE(bw["title"].get<std::string>().find("all_reduce_perf on 4 ranks, 2 nodes (by the hostnames of every rank's NCCL INFO lines)"),
            std::string::npos)
      << bw["title"];
  EXPECT_EQ(bw["metrics"]["nodes"], 2);
  EXPECT_EQ(
      analyze_nodes_evidence(bw),
      "2 nodes by the hostnames of every rank's NCCL INFO lines: rank 0 on node-a, rank 1 on node-a, rank 2 on node-b, rank 3 on node-b");
  // Across two nodes the NICs' line rate is a basis: 11.07 GB/s of 100 Gb/s / 8.
  auto rate = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", log, "--nics", "1", "--link-gbps", "100"}, 0);
  EXPECT_NE((*finding(rate, "nccl_tests.busbw"))["title"].get<std::string>().find("88.6% of the 12.5 GB/s the NICs allow"),
            std::string::npos)
      << (*finding(rate, "nccl_tests.busbw"))["title"];
  auto nl = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", log}, 0);
  const auto& net = *finding(nl, "nccl_log.net");
  EXPECT_EQ(net["status"], "pass") << net.dump(1);
  EXPECT_EQ(net["metrics"]["nodes"], 2);
  EXPECT_NE(analyze_nodes_evidence(net).find("2 nodes by the hostnames of every rank's NCCL INFO lines"), std::string::npos) << net.dump(1);
  // node-a's lines alone: one host of four ranks, and nothing says how many others ran.
  TempDir d;
  std::string only_a;
  std::istringstream in(perfgap::fixture::read_file(log));
  for (std::string line; std::getline(in, line);)
    if (line.rfind("node-b:", 0) != 0) only_a += line + "\n";
  const auto a = write_in(d, "node-a.txt", only_a);
  auto nt_a = json_report(PERFGAP_BINARY, {"analyze", "nccl-tests", a}, 0);
  const auto& bw_a = *finding(nt_a, "nccl_tests.busbw");
  EXPECT_NE(bw_a["title"].get<std::string>().find("all_reduce_perf on 4 ranks, nodes not shown"), std::string::npos) << bw_a["title"];
  EXPECT_FALSE(bw_a["metrics"].contains("nodes"));
  EXPECT_EQ(analyze_nodes_evidence(bw_a),
            "not shown: the lines name one host (node-a) for 4 ranks, and not every rank's line is in the log");
  auto nl_a = json_report(PERFGAP_BINARY, {"analyze", "nccl-log", a}, 0);
  EXPECT_EQ(analyze_nodes_evidence(*finding(nl_a, "nccl_log.net")),
            "not shown: the lines name one host (node-a) for 4 ranks, and not every rank's line is in the log");
}

TEST(Analyze, OutputIsWrittenAtomically) {
  TempDir d;
  auto out = d.path() + "/r.json";
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "perf", log_fixture("perf/smmu-report.txt"), "--format", "json", "--output", out});
  EXPECT_EQ(r.status, 1);
  EXPECT_TRUE(r.out.empty());
  std::ifstream f(out);
  auto j = nlohmann::json::parse(f);
  EXPECT_EQ(j["source"]["kind"], "analyze");
  int files = 0;
  for ([[maybe_unused]] const auto& e : fs::directory_iterator(d.path())) ++files;
  EXPECT_EQ(files, 1);  // no temp file left behind
}

TEST(Gap, NumbersAndStepLogs) {
  // 0.83 s reference, 1.09 s measured: 76.1% of reference.
  auto j = json_report(PERFGAP_BINARY, {"gap", "--reference", "830", "--measured", "1090"}, 1);
  EXPECT_EQ(j["source"]["kind"], "gap");
  EXPECT_TRUE(j["node"].is_null());
  auto g = finding(j, "steps.gap");
  ASSERT_TRUE(g);
  EXPECT_NEAR((*g)["metrics"]["percent_of_reference"].get<double>(), 100 * 830.0 / 1090.0, 1e-6);
  EXPECT_EQ((*finding(j, "steps.tail"))["status"], "skip");
  json_report(PERFGAP_BINARY, {"gap", "--reference", "1000", "--measured", "1040"}, 0);  // 96.2%
  json_report(PERFGAP_BINARY, {"gap", "--reference", "1000", "--measured", "1040", "--threshold", "0.97"}, 1);
  auto logs = json_report(PERFGAP_BINARY, {"gap", "--reference", log_fixture("steps/reference.log"), "--measured", log_fixture("steps/measured.csv")}, 1);
  EXPECT_EQ(logs["source"]["inputs"].size(), 2u);
  EXPECT_NEAR((*finding(logs, "steps.gap"))["metrics"]["median_ms"].get<double>(), 1090.0, 1e-9);
  json_report(PERFGAP_BINARY, {"gap", "--reference", log_fixture("steps/reference.log"), "--measured", log_fixture("steps/measured.jsonl")}, 0);
  TempDir d;
  auto empty = write_in(d, "e.log", "");
  auto r = run_binary(PERFGAP_BINARY, {"gap", "--reference", empty, "--measured", "1000"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(empty), std::string::npos);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"gap", "--reference", "-5", "--measured", "1000"}).status, 2);
  EXPECT_EQ(run_binary(PERFGAP_BINARY, {"gap", "--measured", "1000"}).status, 2);
}

// The fast perf text route: `perf script -G` (no call chains: the leaf on the sample line)
// piped to `-` gives the findings of the full call-chain text of the same samples.
TEST(Analyze, PerfScriptWithoutCallChainsPipedGivesTheSameFindings) {
  TempDir tmp;
  std::string chains, leaves;
  const char* leaf[] = {"arm_smmu_cmdq_issue_cmdlist+0x1a4 ([kernel.kallsyms])", "memcpy+0x10 (/usr/lib/x86_64-linux-gnu/libc.so.6)",
                        "arm_smmu_cmdq_issue_cmdlist+0x88 ([kernel.kallsyms])", "_PyEval_EvalFrameDefault+0x2f (/usr/bin/python3.11)"};
  for (int i = 0; i < 400; ++i) {
    std::string head = "python3 4242/" + std::to_string(4245 + i % 3) + " [017] 81234." + std::to_string(100000 + i) + ":     250000 cpu-clock: ";
    const char* l = leaf[i % 4 == 3 ? 3 : i % 3];
    chains += head + "\n\tffffffff81234567 " + l + "\n\tffffffff81200000 do_syscall_64+0x3b ([kernel.kallsyms])\n\n";
    leaves += "         " + head + "     ffffffff81234567 " + l + "\n";
  }
  auto full = write_in(tmp, "script.txt", chains);
  auto g = write_in(tmp, "script-G.txt", leaves);
  auto a = json_report(PERFGAP_BINARY, {"analyze", "perf", full}, 1);
  auto piped = run_binary("/bin/sh", {"-c", "exec \"$0\" analyze perf - --format json < \"$1\"", PERFGAP_BINARY, g});
  ASSERT_EQ(piped.status, 1) << piped.err;
  auto b = nlohmann::json::parse(piped.out);
  ASSERT_TRUE(a["findings"].is_array());
  ASSERT_EQ(a["findings"].size(), b["findings"].size());
  for (std::size_t i = 0; i < a["findings"].size(); ++i) {
    EXPECT_EQ(a["findings"][i]["id"], b["findings"][i]["id"]);
    EXPECT_EQ(a["findings"][i]["status"], b["findings"][i]["status"]);
    EXPECT_EQ(a["findings"][i]["metrics"], b["findings"][i]["metrics"]) << a["findings"][i]["id"];
  }
  EXPECT_EQ(finding(b, "perf.smmu_cmdq")->at("status"), "fail");
}
