// `perfgap analyze kineto|nsys` over a job's rank files through the real binary: a directory, a
// quoted glob, the straggler in JSON, text and HTML, a bad file among the ranks (one line naming
// it, exit 2), and the real 8-rank-job traces of ../shared (two ranks of two different runs).
#include <gtest/gtest.h>
#include <sys/stat.h>

#include <filesystem>
#include <regex>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "profile_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;
namespace gen = perfgap::gen;

namespace {

// The job's rank files in DIR/ranks: Kineto traces (every other one gzip) or nsys exports.
std::string xrank_cli_write(const TempDir& d, const gen::Scenario& s, bool nsys) {
  fs::create_directories(d.path() + "/ranks");
  for (std::size_t r = 0; r < s.gpus.size(); ++r) {
    const std::string name = "ranks/rank" + std::to_string(r);
    if (nsys) {
      EXPECT_EQ(gen::write_nsys_sqlite(gen::rank_of(s, r), d.path() + "/" + name + ".sqlite"), "");
    } else {
      auto json = gen::kineto_json(s, r, static_cast<int>(r));
      if (r % 2) write_in(d, name + ".json.gz", perfgap::fixture::gzip_text(json));
      else write_in(d, name + ".json", json);
    }
  }
  return d.path() + "/ranks";
}

gen::Scenario xrank_cli_job(int late_rank) {
  gen::JobSpec spec;
  spec.late_rank = late_rank;
  spec.clock_offset_ms = gen::node_clock_offsets(16);
  spec.ranks = 16;
  return gen::job(spec);
}

}  // namespace

TEST(AnalyzeRanks, DirectoryAndGlobOfKinetoRanksNameTheStraggler) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(11), false);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "kineto", dir}, 0);
  EXPECT_EQ(j["source"]["inputs"].size(), 16u);
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)["status"], "warn");
  EXPECT_NE((*st)["title"].get<std::string>().find("rank 11 GPU 3"), std::string::npos) << (*st)["title"];
  EXPECT_NEAR((*st)["metrics"]["wait_ms_per_iter"].get<double>(), 30, 1.5);
  EXPECT_EQ((*st)["metrics"]["ranks_aligned"], 16);
  auto ar = finding(j, "profile.exposed_comm", "AllReduce");
  ASSERT_TRUE(ar);
  EXPECT_EQ((*ar)["fix"].get<std::string>().find("perfgap sweep"), std::string::npos);
  // A quoted glob: the same files.
  auto g = json_report(PERFGAP_BINARY, {"analyze", "kineto", dir + "/rank*.json*"}, 0);
  EXPECT_EQ(g["source"]["inputs"].size(), 16u);
  EXPECT_EQ((*finding(g, "profile.straggler"))["title"], (*st)["title"]);
  // Text: the per-rank table, latest first.
  auto t = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir});
  EXPECT_EQ(t.status, 0) << t.err;
  EXPECT_NE(t.out.find("profile.straggler"), std::string::npos);
  EXPECT_NE(t.out.find("compute before ms/iter"), std::string::npos) << t.out;
  // HTML: the rank x iteration heatmap.
  auto h = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir, "--format", "html"});
  EXPECT_EQ(h.status, 0) << h.err;
  EXPECT_NE(h.out.find("lateness at the collectives per rank and iteration"), std::string::npos);
  EXPECT_NE(h.out.find("class=\"hm st-warn\""), std::string::npos);
}

TEST(AnalyzeRanks, NsysExportsPerRankNameTheNode) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(9), true);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nsys", dir}, 0);
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)["status"], "warn");
  EXPECT_NE((*st)["title"].get<std::string>().find("rank9.sqlite: GPU 1"), std::string::npos) << (*st)["title"];
  EXPECT_NE((*st)["title"].get<std::string>().find("on node1"), std::string::npos) << (*st)["title"];
}

// .nsys-rep ranks are read side by side, their `nsys export`s one at a time: a stand-in nsys
// that finds another export running (its lock directory there) fails, which would fail the job.
TEST(AnalyzeRanks, NsysRepRanksExportOneAtATime) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(9), true);
  for (const auto& e : fs::directory_iterator(dir)) {
    if (e.path().extension() != ".sqlite") continue;
    fs::rename(e.path(), fs::path(e.path()).replace_extension(".src"));
    write_in(d, "ranks/" + e.path().stem().string() + ".nsys-rep", std::string("NVIDIA Tegra Profiler Report 1.\n\x0b", 32) + std::string(100, '\x01'));
  }
  fs::create_directories(d.path() + "/bin");
  auto script = write_in(d, "bin/nsys",
                         "#!/bin/sh\nmkdir '" + d.path() + "/exporting' || { echo 'ERROR: two exports at once' >&2; exit 3; }\n"
                         "while [ $# -gt 1 ]; do [ \"$1\" = --output ] && out=$2; shift; done\n"
                         "sleep 0.05\ncp \"${1%.nsys-rep}.src\" \"$out\"\nrmdir '" + d.path() + "/exporting'\n");
  ::chmod(script.c_str(), 0755);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nsys", dir}, 0, {{"PATH", d.path() + "/bin:/usr/bin:/bin"}});
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_NE((*st)["title"].get<std::string>().find("rank9.nsys-rep: GPU 1"), std::string::npos) << (*st)["title"];
  EXPECT_FALSE(fs::exists(d.path() + "/exporting"));
}

TEST(AnalyzeRanks, NoStragglerPassesAndNamesNobody) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(-1), false);
  auto j = json_report(PERFGAP_BINARY, {"analyze", "kineto", dir}, 0);
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)["status"], "pass");
  EXPECT_FALSE(std::regex_search((*st)["title"].get<std::string>(), std::regex("rank [0-9]"))) << (*st)["title"];
}

TEST(AnalyzeRanks, BadOrForeignFileAmongTheRanksIsOneLineExit2) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(3), false);
  auto other = write_in(d, "ranks/rank99.json", "{\"schema\": \"perfgap.report/1\"}\n");
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(other + ": "), std::string::npos) << r.err;
  EXPECT_NE(r.err.find("traceEvents"), std::string::npos) << r.err;
  EXPECT_EQ(std::count(r.err.begin(), r.err.end(), '\n'), 1) << r.err;
  EXPECT_TRUE(r.out.empty());
  // An nsys export among Kineto traces; a directory without traces; a glob that matches nothing.
  fs::remove(other);
  TempDir e;
  auto sq = e.path() + "/rank5.sqlite";
  EXPECT_EQ(gen::write_nsys_sqlite(gen::rank_of(xrank_cli_job(3), 5), sq), "");
  r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir + "/rank0.json", sq});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find(sq + ": an SQLite database"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", e.path()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds no Kineto trace"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir + "/none*.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no file matches"), std::string::npos) << r.err;
}

// The public 8-rank HTA traces are rank 3 of one run and rank 1 of another (five days apart):
// given together they are not one job, and the report says so instead of naming a straggler.
TEST(AnalyzeRanks, SharedTracesOfTwoRunsAreNotAligned) {
  fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  auto control = dir / "kineto_hta_a100_ws8_trace_diff_control.json.gz", test = dir / "kineto_hta_a100_ws8_trace_diff_test.json.gz";
  if (!fs::exists(control) || !fs::exists(test)) GTEST_SKIP() << "no " << control << " / " << test;
  auto j = json_report(PERFGAP_BINARY, {"analyze", "kineto", control.string(), test.string()}, 0);
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)["status"], "skip") << (*st)["title"];
  EXPECT_EQ((*st)["metrics"]["ranks_unaligned"], 1);
}

// explain: the straggler's measured cost (waiting per iteration over the step) is a cause of the
// gap budget, and the waiting is not counted again as communication. The job's step is 93.2 ms
// with rank 5 30 ms late and would be 63.2 ms without: the straggler explains the shortfall.
TEST(AnalyzeRanks, ExplainTakesTheStragglerAsAMeasuredCause) {
  TempDir d;
  gen::JobSpec spec;
  spec.late_rank = 5;
  auto dir = xrank_cli_write(d, gen::job(spec), false);
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir, "--format", "json", "--output", d.path() + "/job.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto j = json_report(PERFGAP_BINARY, {"explain", "--reference", "63.2", "--measured", "93.2", d.path() + "/job.json"}, 1);
  auto b = finding(j, "gap.budget");
  ASSERT_TRUE(b);
  const auto& mt = (*b)["metrics"];
  ASSERT_TRUE(mt.contains("step.straggler_rank.points")) << mt.dump();
  EXPECT_EQ(mt["step.straggler_rank.measured"], 1);
  EXPECT_EQ(mt["step.straggler_rank.findings"], 1);
  const double shortfall = mt["shortfall_pct"].get<double>();
  EXPECT_NEAR(mt["step.straggler_rank.estimate_pct"].get<double>(), shortfall, 0.05 * shortfall);
  EXPECT_GT(mt["step.straggler_rank.points"].get<double>(), 0.9 * shortfall);
  EXPECT_FALSE(mt.contains("step.collective_bandwidth.points")) << "the waiting is not a second, collective cause: " << mt.dump();
  bool said = false;
  for (const auto& e : (*b)["evidence"])
    said = said || (e["source"] == "straggler_rank" && e["observed"].get<std::string>().find("the other ranks wait") != std::string::npos);
  EXPECT_TRUE(said) << (*b)["evidence"].dump(1);
}
