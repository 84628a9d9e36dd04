// `perfgap analyze nccl-inspector` and `analyze nccl-ras`: exit statuses, a directory of the
// plugin's files, inputs that are not theirs (exit 2, one line naming the file and line), an
// unusable input next to good ones, options of other kinds, standard input.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdio>
#include <filesystem>

#include <nlohmann/json.hpp>

#include "files.hpp"
#include "report_json.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::line_count;
using perfgap::fixture::log_fixture;
using perfgap::fixture::read_file;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;

TEST(AnalyzeNcclInspector, DirectoryFilesAndExitStatus) {
  auto ok = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", log_fixture("nccl-inspector/healthy")}, 0);
  EXPECT_EQ((*finding(ok, "nccl_inspector.slow_rank"))["status"], "pass") << ok.dump(1);
  EXPECT_EQ((*finding(ok, "nccl_inspector.summary"))["metrics"]["ranks"], 16);
  auto slow = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", log_fixture("nccl-inspector/slow-rank")}, 1);
  const auto* s = finding(slow, "nccl_inspector.slow_rank", "0x5f3a9c21d4e7b1 rank 2");
  ASSERT_NE(s, nullptr) << slow.dump(1);
  EXPECT_EQ((*s)["status"], "fail");
  EXPECT_EQ((*s)["layer"], "network");
  // Files named one by one: the same findings as their directory.
  std::vector<std::string> args = {"analyze", "nccl-inspector"};
  for (const auto& e : fs::directory_iterator(log_fixture("nccl-inspector/slow-rank"))) args.push_back(e.path().string());
  auto files = json_report(PERFGAP_BINARY, args, 1);
  EXPECT_EQ((*finding(files, "nccl_inspector.slow_rank", "0x5f3a9c21d4e7b1 rank 2"))["metrics"], (*s)["metrics"]);
  // A late rank warns (exit 0) and the text report names it.
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "nccl-inspector", log_fixture("nccl-inspector/late-rank")});
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("rank 5 of communicator 'DP Group 0'"), std::string::npos) << t.out;
  // The NICs' basis, as for nccl-tests.
  auto low = json_report(PERFGAP_BINARY,
                         {"analyze", "nccl-inspector", log_fixture("nccl-inspector/healthy"), "--nics", "8", "--link-gbps", "400"}, 1);
  EXPECT_EQ((*finding(low, "nccl_inspector.busbw", "0x5f3a9c21d4e7b1"))["status"], "fail");
}

TEST(AnalyzeNcclInspector, InputsThatAreNotInspectorOutputAreExit2NamingFileAndLine) {
  TempDir d;
  const auto good = read_file(log_fixture("nccl-inspector/healthy/gpu-node-01-pid41000.log"));
  const auto first = good.substr(0, good.find('\n') + 1);
  std::string v5 = first;
  v5.replace(v5.find("v4.0"), 4, "v5.0");
  std::vector<std::pair<std::string, std::string>> files = {
      {write_in(d, "empty.log", ""), "empty"},
      {write_in(d, "cut.log", first.substr(0, first.size() / 2) + "\n"), "line 1"},
      {write_in(d, "v5.log", first + v5), "line 2"},
      {write_in(d, "wrong-type.log", "{\"header\":{\"id\":1},\"metadata\":{\"inspector_output_format_version\":\"v4.0\"},\"coll_perf\":{}}\n"), "line 1"},
      {log_fixture("nccl-ras/healthy.txt"), "line 1"},
  };
  for (const auto& [f, where] : files) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-inspector", f});
    EXPECT_EQ(r.status, 2) << f << "\n" << r.out;
    EXPECT_TRUE(r.out.empty()) << f;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(where), std::string::npos) << r.err;
  }
  TempDir none;
  auto empty_dir = run_binary(PERFGAP_BINARY, {"analyze", "nccl-inspector", none.path()});
  EXPECT_EQ(empty_dir.status, 2);
  EXPECT_NE(empty_dir.err.find("holds no Inspector files"), std::string::npos) << empty_dir.err;
  // Next to good files: an error finding naming it; a damaged line of a good file too.
  auto mixed = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", log_fixture("nccl-inspector/healthy"), files[1].first},1);
  EXPECT_EQ((*finding(mixed, "nccl_inspector.summary", files[1].first))["status"], "error") << mixed.dump(1);
  const auto damaged = write_in(d, "damaged.log", first + first.substr(0, 40) + "\n");
  auto dm = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", damaged},1);
  const auto* df = finding(dm, "nccl_inspector.summary", damaged + " (unreadable lines)");
  ASSERT_NE(df, nullptr) << dm.dump(1);
  EXPECT_EQ((*df)["status"], "error");
  EXPECT_EQ((*df)["evidence"][0]["source"], damaged + ":2");
}

namespace {
// The plugin's v4 Prometheus text of one JSON record (NVIDIA/nccl inspector_prom.cc before the
// v5 aggregates: the rank's labels, the size as %.2f of 1024-based units, %.6g values).
std::string as_prometheus(const nlohmann::json& j) {
  const auto& h = j["header"];
  const auto& c = j["coll_perf"];
  auto printed = [](const char* format, double v) {
    char b[64];
    std::snprintf(b, sizeof b, format, v);
    return std::string(b);
  };
  double size = c["coll_msg_size_bytes"].get<double>();
  const char* units[] = {"B", "KB", "MB", "GB", "TB"};
  int u = 0;
  while (size >= 1024 && u < 4) size /= 1024, ++u;
  const int rank = h["rank"].get<int>();
  const std::string labels = "comm_id=\"" + h["id"].get<std::string>() + "\",hostname=\"" + j["metadata"]["hostname"].get<std::string>() +
                             "\",rank=\"" + std::to_string(rank) + "\",slurm_job=\"unknown\",slurm_job_id=\"unknown\",nranks=\"" +
                             std::to_string(h["n_ranks"].get<int>()) + "\",n_nodes=\"" + std::to_string(h["nnodes"].get<int>()) +
                             "\",gpu_device_id=\"GPU" + std::to_string(rank % 2) + "\",collective=\"" + c["coll"].get<std::string>() +
                             "\",coll_sn=\"" + std::to_string(c["coll_sn"].get<long>()) + "\",timestamp=\"2025-12-02T10:40:00Z\",message_size=\"" +
                             (u == 0 ? std::to_string(c["coll_msg_size_bytes"].get<long>()) + "B" : printed("%.2f", size) + units[u]) + "\"";
  return "nccl_algorithm_bandwidth_gbs{" + labels + "} " + printed("%.6g", c["coll_algobw_gbs"].get<double>()) + "\nnccl_bus_bandwidth_gbs{" + labels +
         "} " + printed("%.6g", c["coll_busbw_gbs"].get<double>()) + "\nnccl_collective_exec_time_microseconds{" + labels + "} " +
         printed("%.6g", c["coll_exec_time_us"].get<double>()) + "\n";
}
}  // namespace

// The forms a user holds: the plugin's .log, the exporters' .jsonl and .log.gz, the README's
// pretty-printed records, the Prometheus mode's .prom; a directory of them, or a quoted glob,
// gives the slow rank the plugin's own .log files give, and each file's form is named.
TEST(AnalyzeNcclInspector, EveryFormOfTheOutputGivesTheSameSlowRank) {
  std::vector<fs::path> logs;
  for (const auto& e : fs::directory_iterator(log_fixture("nccl-inspector/slow-rank"))) logs.push_back(e.path());
  std::sort(logs.begin(), logs.end());
  ASSERT_EQ(logs.size(), 8u);
  TempDir d;
  const char* forms[] = {"JSON lines", "JSON lines", "pretty-printed JSON", "Prometheus text"};
  std::vector<std::pair<std::string, std::string>> written;  // file, form
  for (std::size_t i = 0; i < logs.size(); ++i) {
    const auto text = read_file(logs[i]);
    const auto stem = logs[i].stem().string();
    std::string pretty, prom;
    for (std::size_t at = 0, nl; at < text.size(); at = nl + 1) {
      nl = text.find('\n', at);
      auto j = nlohmann::json::parse(text.substr(at, nl - at));
      pretty += j.dump(2) + "\n";
      if (j.contains("coll_perf")) prom += as_prometheus(j);  // point-to-point: no v4 Prometheus metric
    }
    switch (i % 4) {
      case 0: written.push_back({write_in(d, stem + ".jsonl", text), forms[0]}); break;
      case 1: written.push_back({write_in(d, stem + ".log.gz", perfgap::fixture::gzip_text(text)), forms[1]}); break;
      case 2: written.push_back({write_in(d, stem + ".log", pretty), forms[2]}); break;
      default: written.push_back({write_in(d, "nccl_inspector_metrics_GPU-" + stem + ".prom", prom), forms[3]}); break;
    }
  }
  write_in(d, "README.txt", "not an Inspector file: left out of the directory\n");
  auto r = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", d.path()}, 1);
  const auto* s = finding(r, "nccl_inspector.slow_rank", "0x5f3a9c21d4e7b1 rank 2");
  ASSERT_NE(s, nullptr) << r.dump(1);
  EXPECT_EQ((*s)["status"], "fail");
  const auto* sum = finding(r, "nccl_inspector.summary");
  ASSERT_NE(sum, nullptr);
  EXPECT_EQ((*sum)["metrics"]["ranks"], 16) << sum->dump(1);
  EXPECT_EQ(r["source"]["inputs"].size(), 8u) << r["source"].dump(1);
  for (const auto& [file, form] : written) {
    bool named = false;
    for (const auto& ev : (*sum)["evidence"])
      named |= ev["source"] == file && ev["observed"].get<std::string>().find("(" + form + ")") != std::string::npos;
    EXPECT_TRUE(named) << file << " " << form << "\n" << sum->dump(1);
  }
  // A quoted glob: the same.
  auto g = json_report(PERFGAP_BINARY, {"analyze", "nccl-inspector", d.path() + "/*pid*"}, 1);
  EXPECT_NE(finding(g, "nccl_inspector.slow_rank", "0x5f3a9c21d4e7b1 rank 2"), nullptr) << g.dump(1);
  // A .gz that is not gzip: its own error.
  auto bad = run_binary(PERFGAP_BINARY, {"analyze", "nccl-inspector", write_in(d, "x.log.gz", "plain text\n")});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("gzip"), std::string::npos) << bad.err;
}

TEST(AnalyzeNcclRas, ExitStatusFindingsAndStandardInput) {
  auto ok = json_report(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/healthy.txt")}, 0);
  EXPECT_EQ((*finding(ok, "nccl_ras.dead"))["status"], "pass");
  auto bad = json_report(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/dead-rank.txt")}, 1);
  EXPECT_EQ((*finding(bad, "nccl_ras.dead"))["status"], "fail");
  EXPECT_EQ((*finding(bad, "nccl_ras.comm_error", "7c3f9a2e51b04d16"))["status"], "fail");
  auto piped = run_binary("/bin/sh", {"-c", "exec \"$0\" analyze nccl-ras - --format json < \"$1\"", PERFGAP_BINARY,
                                      log_fixture("nccl-ras/dead-rank.txt")});
  EXPECT_EQ(piped.status, 1) << piped.err;
  EXPECT_NE(piped.out.find("\"nccl_ras.dead\""), std::string::npos);
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/dead-rank.txt")});
  EXPECT_NE(t.out.find("process 52817 on node 10.10.4.23"), std::string::npos) << t.out;
}

TEST(AnalyzeNcclRas, InputsThatAreNotTheStatusAreExit2AndOptionsOfOtherKindsAreRefused) {
  TempDir d;
  std::vector<std::pair<std::string, std::string>> files = {
      {write_in(d, "refused.txt", "Connecting to localhost:28028: Connection refused\n"), "line 1"},
      {write_in(d, "json.txt", "{\n  \"nccl_version\": \"2.30.1\",\n"), "-f json"},
      {write_in(d, "v3.txt", "NCCL version 3.0.0 compiled with CUDA 13.0\n\nJob summary\n"), "line 1"},
      {write_in(d, "empty.txt", ""), "empty"},
  };
  for (const auto& [f, what] : files) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-ras", f});
    EXPECT_EQ(r.status, 2) << f << "\n" << r.out;
    EXPECT_EQ(line_count(r.err), 1) << r.err;
    EXPECT_NE(r.err.find(f), std::string::npos) << r.err;
    EXPECT_NE(r.err.find(what), std::string::npos) << r.err;
  }
  auto mixed = json_report(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/healthy.txt"), files[0].first}, 1);
  EXPECT_EQ((*finding(mixed, "nccl_ras.dead", files[0].first))["status"], "error");
  auto opt = run_binary(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/healthy.txt"), "--nics", "4", "--link-gbps", "400"});
  EXPECT_EQ(opt.status, 2);
  EXPECT_NE(opt.err.find("--nics"), std::string::npos) << opt.err;
}
