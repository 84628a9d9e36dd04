// The sweep's statistics and findings on recorded result sets (tests/fixtures/sweep/sets):
// a clear winner, a tie, a noisy loser, a setting whose runs all failed, runs missing sizes,
// a single repeat, a failed baseline.
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include <nlohmann/json.hpp>

#include "sweep/sweep.hpp"

using namespace perfgap;
using namespace perfgap::sweep;
using report::Status;

namespace {

constexpr std::uint64_t MiB = 1ull << 20;

std::vector<SettingRuns> load_set(const std::string& name) {
  auto path = std::filesystem::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/sweep/sets" / (name + ".json");
  std::ifstream f(path);
  EXPECT_TRUE(f) << path;
  auto j = nlohmann::json::parse(f);
  std::vector<SettingRuns> out;
  int n = 0;
  for (const auto& s : j.at("settings")) {
    SettingRuns sr;
    for (const auto& [k, v] : s.at("setting").items()) sr.setting.values.emplace_back(k, v.get<std::string>());
    for (const auto& r : s.at("runs")) {
      RunOutcome o;
      o.file = std::to_string(++n) + ".log";
      if (r.contains("failed")) {
        o.problem = r.at("failed").get<std::string>();
      } else {
        o.ok = true;
        for (const auto& [size, b] : r.at("busbw").items()) o.busbw[std::stoull(size)] = b.get<double>();
      }
      sr.runs.push_back(std::move(o));
    }
    out.push_back(std::move(sr));
  }
  return out;
}

const CandidateVerdict& verdict(const Decision& d, std::size_t setting) {
  for (const auto& v : d.candidates)
    if (v.setting == setting) return v;
  throw std::runtime_error("no verdict");
}

const report::Finding& rec(const SweepFindings& f) { return f.findings.back(); }

}  // namespace

TEST(SweepStats, MedianMinMaxPerSize) {
  std::vector<RunOutcome> runs(4);
  double v[] = {10, 30, 20, 40};
  for (int i = 0; i < 4; ++i) {
    runs[i].ok = i != 3;  // a failed run does not count
    runs[i].busbw[MiB] = v[i];
  }
  runs[1].busbw[2 * MiB] = 5;
  auto st = size_stats(runs);
  EXPECT_DOUBLE_EQ(st.at(MiB).median, 20);
  EXPECT_DOUBLE_EQ(st.at(MiB).min, 10);
  EXPECT_DOUBLE_EQ(st.at(MiB).max, 30);
  EXPECT_EQ(st.at(MiB).n, 3u);
  EXPECT_EQ(st.at(2 * MiB).n, 1u);
  runs[3].ok = true;  // even count: mean of the middle two
  EXPECT_DOUBLE_EQ(size_stats(runs).at(MiB).median, 25);
}

TEST(SweepStats, ClearWinnerIsTheSignificantOneNotTheBestMedian) {
  auto data = load_set("clear-winner");
  auto d = decide(data, {});
  ASSERT_EQ(d.kind, Decision::Kind::winner) << d.reason;
  // Sizes that matter by default: the baseline's sizes of 1 MiB or more.
  EXPECT_EQ(d.sizes, (std::vector<std::uint64_t>{MiB, 4 * MiB, 16 * MiB, 64 * MiB, 256 * MiB, 1024 * MiB}));
  ASSERT_TRUE(d.winner);
  EXPECT_EQ(data[*d.winner].setting.label(), "NCCL_IB_QPS_PER_CONNECTION=4");
  EXPECT_NEAR(d.gain_pct, 22.0, 0.2);
  EXPECT_TRUE(verdict(d, 1).significant);   // 2 also wins, by less
  EXPECT_NEAR(verdict(d, 1).gain_pct, 6.7, 0.2);
  // 8 has the best median (+23%) but one run fell to the baseline's level: not beyond noise.
  EXPECT_FALSE(verdict(d, 3).significant);
  EXPECT_GT(verdict(d, 3).gain_pct, d.gain_pct);
  EXPECT_NE(verdict(d, 3).why.find("within noise"), std::string::npos) << verdict(d, 3).why;

  auto f = make_findings(data, d, "rd");
  ASSERT_EQ(f.findings.size(), 5u);
  EXPECT_EQ(rec(f).id, "sweep.recommendation");
  EXPECT_EQ(rec(f).status, Status::pass);
  EXPECT_NE(rec(f).title.find("NCCL_IB_QPS_PER_CONNECTION=4 beats the baseline NCCL_IB_QPS_PER_CONNECTION=1"), std::string::npos) << rec(f).title;
  ASSERT_TRUE(f.recommendation);
  EXPECT_EQ(f.recommendation->setting.at("NCCL_IB_QPS_PER_CONNECTION"), "4");
  EXPECT_NEAR(f.recommendation->gain_pct, 22.0, 0.2);
  for (std::size_t i = 0; i < 4; ++i) {
    EXPECT_EQ(f.findings[i].id, "sweep.result");
    EXPECT_EQ(f.findings[i].status, Status::pass);
    EXPECT_EQ(f.findings[i].subject, data[i].setting.label());
  }
  // Median with min/max per size as metrics.
  bool median = false, min = false, max = false;
  for (const auto& [k, v] : f.findings[0].metrics) {
    median = median || (k == "busbw_gbps.1048576.median" && v == 60.0);
    min = min || (k == "busbw_gbps.1048576.min" && v == 59.1);
    max = max || (k == "busbw_gbps.1048576.max" && v == 60.72);
  }
  EXPECT_TRUE(median && min && max);
}

TEST(SweepStats, SizesThatMatterDecide) {
  auto data = load_set("clear-winner");
  // Below 1 MiB every setting is latency-bound; 8's collapsed run still overlaps there.
  auto d = decide(data, {64 * 1024, 256 * 1024});
  EXPECT_EQ(d.sizes.size(), 2u);
  ASSERT_TRUE(d.winner);
  EXPECT_EQ(data[*d.winner].setting.label(), "NCCL_IB_QPS_PER_CONNECTION=4");
  // Sizes the baseline never measured are named, the rest still compared.
  auto m = decide(data, {MiB, 3 * MiB});
  EXPECT_EQ(m.sizes, (std::vector<std::uint64_t>{MiB}));
  EXPECT_EQ(m.sizes_missing, (std::vector<std::uint64_t>{3 * MiB}));
  auto none = decide(data, {3 * MiB});
  EXPECT_EQ(none.kind, Decision::Kind::cannot_judge);
  EXPECT_EQ(make_findings(data, none, "rd").findings.back().status, Status::skip);
}

TEST(SweepStats, TieKeepsTheBaseline) {
  auto data = load_set("tie");
  auto d = decide(data, {});
  EXPECT_EQ(d.kind, Decision::Kind::no_difference);
  EXPECT_FALSE(d.winner);
  EXPECT_TRUE(verdict(d, 1).judged);
  EXPECT_FALSE(verdict(d, 1).significant);
  EXPECT_LT(std::abs(verdict(d, 1).gain_pct), 1.0);
  auto f = make_findings(data, d, "rd");
  EXPECT_EQ(rec(f).status, Status::warn);
  EXPECT_NE(rec(f).title.find("no significant difference: keep the baseline NCCL_ALGO=Ring"), std::string::npos) << rec(f).title;
  ASSERT_TRUE(f.recommendation);
  EXPECT_EQ(f.recommendation->setting.at("NCCL_ALGO"), "Ring");
  EXPECT_EQ(f.recommendation->gain_pct, 0.0);
}

TEST(SweepStats, NoisyLoserAndSizeRegressionDoNotWin) {
  auto data = load_set("noisy-loser");
  auto d = decide(data, {});
  EXPECT_EQ(d.kind, Decision::Kind::no_difference);
  // 4: +5% on medians, but one run below the baseline's best.
  EXPECT_GT(verdict(d, 1).gain_pct, 4.0);
  EXPECT_FALSE(verdict(d, 1).significant);
  EXPECT_NE(verdict(d, 1).why.find("within noise"), std::string::npos);
  // 8: its every run scores above the baseline overall, but it is slower beyond noise at 1 MiB.
  EXPECT_GT(verdict(d, 2).gain_pct, 15.0);
  EXPECT_FALSE(verdict(d, 2).significant);
  EXPECT_NE(verdict(d, 2).why.find("slower beyond noise at 1 MiB"), std::string::npos) << verdict(d, 2).why;
  // With only the large sizes that matter to this workload, 8 wins.
  auto big = decide(data, {64 * MiB, 256 * MiB, 1024 * MiB});
  ASSERT_TRUE(big.winner);
  EXPECT_EQ(*big.winner, 2u);
}

TEST(SweepStats, SettingWhoseRunsAllFailedIsAnErrorAndCannotWin) {
  auto data = load_set("all-failed");
  auto d = decide(data, {});
  ASSERT_TRUE(d.winner);
  EXPECT_EQ(*d.winner, 1u);
  EXPECT_EQ(verdict(d, 2).why, "every run failed");
  auto f = make_findings(data, d, "rd");
  const auto& failed = f.findings[2];
  EXPECT_EQ(failed.status, Status::error);
  EXPECT_EQ(failed.subject, "NCCL_IB_QPS_PER_CONNECTION=16");
  EXPECT_NE(failed.title.find("all 3 run(s) failed (first: killed by signal 11 (SIGSEGV))"), std::string::npos) << failed.title;
  ASSERT_EQ(failed.evidence.size(), 3u);
  EXPECT_EQ(failed.evidence[1].observed, "timed out after 600 s (killed)");
  EXPECT_EQ(failed.evidence[1].source, "rd/" + data[2].runs[1].file);
}

TEST(SweepStats, RunsMissingSizes) {
  auto data = load_set("missing-sizes");
  auto d = decide(data, {});
  // 2 never measured 1 GiB: it cannot be judged at the sizes that matter, however fast.
  EXPECT_FALSE(verdict(d, 1).has_gain);
  EXPECT_NE(verdict(d, 1).why.find("no result at 1 GiB"), std::string::npos) << verdict(d, 1).why;
  // 4 wins on its two complete runs against the baseline's two complete runs; the per-size
  // medians still use every run that measured the size.
  ASSERT_TRUE(d.winner) << verdict(d, 2).why;
  EXPECT_EQ(*d.winner, 2u);
  auto st = size_stats(data[0].runs);
  EXPECT_EQ(st.at(1024 * MiB).n, 2u);
  EXPECT_EQ(st.at(256 * MiB).n, 3u);
  // Restricted to sizes 2 measured, 2 (+33%) wins.
  auto small = decide(data, {MiB, 4 * MiB});
  ASSERT_TRUE(small.winner);
  EXPECT_EQ(*small.winner, 1u);
}

TEST(SweepStats, SingleRepeatNeverClaimsSignificance) {
  auto data = load_set("single-repeat");
  auto d = decide(data, {});
  EXPECT_EQ(d.kind, Decision::Kind::no_difference);
  EXPECT_TRUE(d.noise_unjudged);
  EXPECT_NEAR(verdict(d, 1).gain_pct, 20.0, 0.1);
  EXPECT_FALSE(verdict(d, 1).significant);
  auto f = make_findings(data, d, "rd");
  EXPECT_EQ(rec(f).status, Status::warn);
  EXPECT_NE(rec(f).title.find("too few runs to judge noise"), std::string::npos) << rec(f).title;
}

TEST(SweepStats, FailedBaselineCannotBeJudged) {
  auto data = load_set("baseline-failed");
  auto d = decide(data, {});
  EXPECT_EQ(d.kind, Decision::Kind::cannot_judge);
  auto f = make_findings(data, d, "rd");
  EXPECT_EQ(f.findings[0].status, Status::error);
  EXPECT_NE(f.findings[0].title.find("baseline"), std::string::npos);
  EXPECT_EQ(rec(f).status, Status::skip);
  EXPECT_FALSE(f.recommendation);
}

TEST(SweepStats, InterruptedSweepMarksSettingsNotRun) {
  auto data = load_set("tie");
  data[1].runs.clear();
  auto d = decide(data, {});
  EXPECT_EQ(d.kind, Decision::Kind::cannot_judge);
  auto f = make_findings(data, d, "rd", "sweep interrupted by SIGINT after 3 of 6 runs");
  EXPECT_EQ(f.findings[1].status, Status::skip);
  EXPECT_NE(f.findings[1].title.find("not run"), std::string::npos);
  EXPECT_NE(rec(f).title.find("interrupted"), std::string::npos);
}
