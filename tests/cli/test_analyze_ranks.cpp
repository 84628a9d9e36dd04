// `perfgap analyze kineto|nsys` over a job's rank files through the real binary: a directory, a
// quoted glob, the straggler in JSON, text and HTML, a bad file among the ranks (one line naming
// it as an error finding, the others analysed), and the real traces of ../shared (ranks of other
// runs and copies left out and said).
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

// Issue 41: an unreadable rank among many is an error finding naming it (and the line), the
// others are analysed and the job-level verdicts count it missing; exit 1 (a JSON beside the
// traces that is no trace at all is left aside, said in profile.ranks). Before: exit 2 for
// the whole job. A directory without traces and a glob matching nothing stay usage errors.
TEST(AnalyzeRanks, AnUnreadableRankIsAnErrorFindingAndTheOthersAreAnalysed) {
  TempDir d;
  auto dir = xrank_cli_write(d, xrank_cli_job(3), false);
  auto other = write_in(d, "ranks/rank99.json", "{\"schema\": \"perfgap.report/1\"}\n");
  // A truncated trace (a job killed while writing): cut inside its events.
  const std::string whole = perfgap::fixture::read_file(dir + "/rank4.json");
  const std::string cut = write_in(d, "ranks/rank4.json", whole.substr(0, whole.size() / 2));
  auto j = json_report(PERFGAP_BINARY, {"analyze", "kineto", dir}, 1);
  std::size_t errors = 0;
  for (const auto& f : j["findings"])
    if (f["status"] == "error") {
      ++errors;
      const std::string t = f["title"];
      if (t.find(other) != std::string::npos) EXPECT_NE(t.find("traceEvents"), std::string::npos) << t;
      else EXPECT_TRUE(t.find(cut) != std::string::npos && t.find("line ") != std::string::npos) << t;
    }
  // The JSON found beside the traces that is no trace (a perfgap report) is left aside and said,
  // not an unreadable rank.
  EXPECT_EQ(errors, 1u);
  auto rk = finding(j, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["status"], "warn");
  EXPECT_EQ((*rk)["metrics"]["unreadable"], 1);
  EXPECT_EQ((*rk)["metrics"]["not_traces"], 1);
  EXPECT_NE((*rk)["title"].get<std::string>().find("rank 4 missing"), std::string::npos) << (*rk)["title"];
  auto st = finding(j, "profile.straggler");
  ASSERT_TRUE(st);
  EXPECT_EQ((*st)["status"], "warn");
  EXPECT_NE((*st)["title"].get<std::string>().find("rank 3 GPU 3"), std::string::npos) << (*st)["title"];
  EXPECT_EQ((*st)["metrics"]["ranks"], 15);
  // An nsys export among Kineto traces: the same.
  fs::remove(other);
  fs::remove(cut);
  TempDir e;
  auto sq = e.path() + "/rank5.sqlite";
  EXPECT_EQ(gen::write_nsys_sqlite(gen::rank_of(xrank_cli_job(3), 5), sq), "");
  auto k = json_report(PERFGAP_BINARY, {"analyze", "kineto", dir + "/rank0.json", dir + "/rank1.json.gz", sq}, 1);
  bool said = false;
  for (const auto& f : k["findings"]) said = said || (f["status"] == "error" && f["title"].get<std::string>().find(sq + ": an SQLite database") != std::string::npos);
  EXPECT_TRUE(said) << k.dump(1);
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", e.path()});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("holds no Kineto trace"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"analyze", "kineto", dir + "/none*.json"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("no file matches"), std::string::npos) << r.err;
}

// The public HTA traces read as a job (../shared, in place): rank 3 of an 8-rank run and rank 1
// of a 2-rank run 8.5 days later are not one job; a copy of a trace is read once; three traces
// of three runs keep the job the most of them agree on.
TEST(AnalyzeRanks, SharedTracesOfOtherRunsAndCopiesAreLeftOutAndSaid) {
  fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  auto control = dir / "kineto_hta_a100_ws8_trace_diff_control.json.gz", test = dir / "kineto_hta_a100_ws8_trace_diff_test.json.gz";
  auto v100 = dir / "kineto_hta_v100x2_allreduce_df_index_resolver.json.gz", a100 = dir / "kineto_hta_a100x2_nccl_metadata.json.gz";
  for (const auto& f : {control, test, v100, a100})
    if (!fs::exists(f)) GTEST_SKIP() << "no " << f;
  auto alone = json_report(PERFGAP_BINARY, {"analyze", "kineto", control.string()}, 0);
  const double kernels = (*finding(alone, "profile.summary"))["metrics"]["kernels"];
  const double iter = (*finding(alone, "profile.iterations"))["metrics"]["iteration_ms"];
  auto j = json_report(PERFGAP_BINARY, {"analyze", "kineto", control.string(), test.string()}, 0);
  auto rk = finding(j, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["status"], "warn");
  EXPECT_NE((*rk)["title"].get<std::string>().find("rank 1 of a 2-rank job, not of this 8-rank job"), std::string::npos) << (*rk)["title"];
  EXPECT_EQ((*rk)["metrics"]["ranks_missing"], 7);
  EXPECT_EQ((*finding(j, "profile.summary"))["metrics"]["kernels"], kernels) << "the other run's trace is in no figure";
  EXPECT_EQ((*finding(j, "profile.iterations"))["metrics"]["iteration_ms"], iter);
  EXPECT_FALSE(finding(j, "profile.straggler")) << "one rank left: no cross-rank verdict";
  // A copy under a second name.
  TempDir d;
  fs::create_symlink(control, d.path() + "/rank3-again.json.gz");
  auto c = json_report(PERFGAP_BINARY, {"analyze", "kineto", control.string(), d.path() + "/rank3-again.json.gz"}, 0);
  EXPECT_EQ((*finding(c, "profile.summary"))["metrics"]["kernels"], kernels) << "kernels counted once";
  EXPECT_NE((*finding(c, "profile.ranks"))["title"].get<std::string>().find("the same trace as " + control.string()), std::string::npos);
  // Three runs: two 2-rank traces (the job size most agree on) captured 18 months apart.
  auto t = json_report(PERFGAP_BINARY, {"analyze", "kineto", control.string(), v100.string(), a100.string()}, 0);
  auto t_rk = finding(t, "profile.ranks");
  ASSERT_TRUE(t_rk);
  EXPECT_EQ((*t_rk)["metrics"]["world_size"], 2);
  EXPECT_EQ((*t_rk)["metrics"]["left_out"], 2) << (*t_rk).dump(1);
}

// nsys exports of different runs were "3 traces of one run" (profile.ranks pass) and their GPUs
// one job's. The session's start (TARGET_INFO_SESSION_START_TIME) tells runs apart: the public
// jax exports of report1 and report2 started 13.7 hours apart, so report2 is left out, saying so;
// the 2021 export records no session time (nor rank): it is kept, and said to be assumed.
TEST(AnalyzeRanks, NsysExportsOfOtherRunsAreLeftOutOrSaidAssumed) {
  fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/profiles";
  auto old = dir / "nsys_2021_v100pcie_x2_openmp_report2.sqlite";
  auto r1 = dir / "nsys_2023.2.3_v100x8_jax_report1.exported-by-nsys-2023.4.4.sqlite";
  auto r2 = dir / "nsys_2023.2.3_v100x8_jax_report2.exported-by-nsys-2023.4.4.sqlite";
  for (const auto& f : {old, r1, r2})
    if (!fs::exists(f)) GTEST_SKIP() << "no " << f;
  for (const char* cmd : {"analyze", "whatif"}) {
    std::vector<std::string> args{cmd};
    if (std::string(cmd) == "analyze") args.emplace_back("nsys");
    for (const auto& f : {old, r1, r2}) args.push_back(f.string());
    auto j = json_report(PERFGAP_BINARY, args, 0);
    auto rk = finding(j, "profile.ranks");
    ASSERT_TRUE(rk) << cmd;
    const std::string title = (*rk)["title"];
    EXPECT_EQ((*rk)["status"], "warn") << title;
    EXPECT_NE(title.find(r2.string() + ": this trace was captured 13.7 hours after the other traces: another run"), std::string::npos) << title;
    EXPECT_NE(title.find("assumed one run: " + old.string() + " records neither rank nor capture time to tell"), std::string::npos) << title;
    EXPECT_EQ((*rk)["metrics"]["left_out"], 1);
    EXPECT_EQ((*rk)["metrics"]["assumed_of_this_run"], 1);
  }
  // report1 and report2 alone: report2 is left out, nothing assumed.
  auto two = json_report(PERFGAP_BINARY, {"analyze", "nsys", r1.string(), r2.string()}, 0);
  auto rk = finding(two, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["metrics"]["left_out"], 1);
  EXPECT_FALSE((*rk)["metrics"].contains("assumed_of_this_run")) << (*rk).dump(1);
}

// Generated nsys exports of one job with rank 3 (the late one) from a capture five hours later:
// it is left out, naming the file and the time, and no straggler is named across the two runs.
// Exports of 2021 (no session time) are kept and said assumed of one run.
TEST(AnalyzeRanks, NsysExportOfAnotherSessionIsNoStraggler) {
  gen::JobSpec spec;
  spec.ranks = 4;
  spec.late_rank = 3;
  const auto s = gen::job(spec);
  TempDir d;
  fs::create_directories(d.path() + "/ranks");
  for (std::size_t r = 0; r < s.gpus.size(); ++r) {
    auto one = gen::rank_of(s, r);
    if (r == 3) one.session_start_utc_ns += 5 * 3'600'000'000'000LL;
    ASSERT_EQ(gen::write_nsys_sqlite(one, d.path() + "/ranks/rank" + std::to_string(r) + ".sqlite"), "");
  }
  auto j = json_report(PERFGAP_BINARY, {"analyze", "nsys", d.path() + "/ranks"}, 0);
  auto rk = finding(j, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["status"], "warn");
  EXPECT_NE((*rk)["title"].get<std::string>().find("rank3.sqlite: this trace was captured 5.0 hours after the other traces: another run"), std::string::npos)
      << (*rk)["title"];
  // Rank 3's GPU is in no other finding (before: profile.straggler named it, 30 ms late).
  for (const auto& f : j["findings"]) {
    if (f["id"] != "profile.ranks") {
      EXPECT_EQ(f.dump().find("rank3.sqlite"), std::string::npos) << f.dump(1);
    }
  }
  // The same job's exports of 2021: nothing tells their run; kept and said assumed.
  TempDir o;
  fs::create_directories(o.path() + "/ranks");
  for (std::size_t r = 0; r < 3; ++r) ASSERT_EQ(gen::write_nsys_sqlite(gen::rank_of(s, r), o.path() + "/ranks/rank" + std::to_string(r) + ".sqlite", gen::NsysSchema::v2021), "");
  auto a = json_report(PERFGAP_BINARY, {"analyze", "nsys", o.path() + "/ranks"}, 0);
  auto ark = finding(a, "profile.ranks");
  ASSERT_TRUE(ark);
  EXPECT_EQ((*ark)["status"], "pass");
  EXPECT_NE((*ark)["title"].get<std::string>().find("3 traces, each read once, assumed one run: "), std::string::npos) << (*ark)["title"];
  EXPECT_EQ((*ark)["metrics"]["assumed_of_this_run"], 3);
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
