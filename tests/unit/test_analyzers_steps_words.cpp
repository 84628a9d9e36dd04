// What steps.gap says (field logs, issue: profile-trust item 3): a share under 1% with the digits
// it needs, never 0.0%; a short log's verdict said to rest on its few records, as steps.tail
// says them too few; the iterations the warm-up dropped, by the log's own numbers, and why.
#include <gtest/gtest.h>

#include <string>

#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"
#include "report/model.hpp"

using namespace perfgap;

namespace {

parsers::StepLog megatron(const std::vector<std::pair<int, double>>& its) {
  std::string text;
  for (const auto& [i, ms] : its)
    text += " iteration       " + std::to_string(i) + "/73242187 | consumed samples:           50 | elapsed time per iteration (ms): " +
            std::to_string(ms) + " | learning rate: 1.638E-08 | number of skipped iterations:   0 |\n";
  auto log = parsers::parse_steps(text);
  EXPECT_TRUE(log) << log.error().describe();
  return *log;
}

parsers::StepLog throughput(const std::vector<double>& values) {
  parsers::StepLog log;
  log.throughput = true;
  log.unit = "samples/s";
  for (double v : values) log.records.push_back({v, -1, static_cast<int>(log.records.size() + 1), false});
  return log;
}

const report::Finding& gap_of(const std::vector<report::Finding>& fs) { return fs.at(0); }

bool has_evidence(const report::Finding& f, const std::string& what) {
  for (const auto& e : f.evidence)
    if (e.observed.find(what) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(AnalyzersStepsWords, TinyShareKeepsItsDigitsAndAHugeGapSaysTimes) {
  auto st = analyzers::step_stats(megatron({{1, 255940.5}, {2, 255000.0}, {3, 256100.0}}), std::nullopt);
  ASSERT_TRUE(st);
  analyzers::StepsOptions o;
  o.reference_ms(92);
  const auto fs = analyzers::analyze_steps(*st, "m", o);
  const auto& f = gap_of(fs);
  EXPECT_EQ(f.status, report::Status::fail);
  EXPECT_EQ(f.title.find("0.0%"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("0.036% of reference"), std::string::npos) << f.title;
  EXPECT_NE(f.impact.find("times the reference"), std::string::npos) << f.impact;
  EXPECT_EQ(f.impact.find("% slower"), std::string::npos) << f.impact;
  ASSERT_FALSE(f.table.empty());
  EXPECT_EQ(f.table.at(1).at(2), "0.036%");
}

TEST(AnalyzersStepsWords, AShortLogsVerdictSaysItRestsOnItsRecordsAndWhichWarmUpWasDropped) {
  auto st = analyzers::step_stats(megatron({{25, 91.0}, {26, 86.5}, {27, 88.4}}), std::nullopt);
  ASSERT_TRUE(st);
  analyzers::StepsOptions o;
  o.reference_ms(80);
  const auto fs = analyzers::analyze_steps(*st, "m", o);
  const auto& f = gap_of(fs);
  EXPECT_NE(f.title.find("from only 2 records after warm-up"), std::string::npos) << f.title;
  EXPECT_TRUE(has_evidence(f, "the median rests on 2 records")) << f.title;
  EXPECT_TRUE(has_evidence(f, "warm-up dropped: iteration 25 (the first record; by default 10% of the records")) << f.title;
  EXPECT_NE(fs.at(1).title.find("too few"), std::string::npos) << fs.at(1).title;
  // --warmup given: said as such.
  auto given = analyzers::step_stats(megatron({{25, 87.0}, {26, 86.5}, {27, 88.4}}), 2);
  ASSERT_TRUE(given);
  const auto given_fs = analyzers::analyze_steps(*given, "m", o);
  EXPECT_TRUE(has_evidence(gap_of(given_fs), "warm-up dropped: iterations 25 to 26 (the first 2 records; --warmup)"));
}

// Field review 3: a Megatron log cut from the middle of a run (iteration 71/100 first, and the
// fastest of three) lost its first record as warm-up, and the verdict flipped from 96.9% (pass)
// to 93.8% (fail). Start-up makes steps slower: a default warm-up no slower than the rest stays.
TEST(AnalyzersStepsWords, ADefaultWarmUpNoSlowerThanTheRestIsKeptAndSaid) {
  auto st = analyzers::step_stats(megatron({{71, 5361.6}, {72, 5470.7}, {73, 5829.9}}), std::nullopt);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->warmup, 0u);
  EXPECT_EQ(st->used, 3u);
  EXPECT_DOUBLE_EQ(st->median, 5470.7);
  analyzers::StepsOptions o;
  o.reference_ms(5300);
  const auto fs = analyzers::analyze_steps(*st, "m", o);
  const auto& f = gap_of(fs);
  EXPECT_EQ(f.status, report::Status::pass) << f.title;
  EXPECT_TRUE(has_evidence(f, "no warm-up dropped: iteration 71 (5361.6 ms), the default warm-up, is no slower than the median of the records after it (5650.3 ms)")) << f.title;
  EXPECT_FALSE(has_evidence(f, "warm-up dropped: iteration 71 (the first")) << f.title;
  // --warmup 1 still drops it; a slower first record is still dropped by default.
  EXPECT_DOUBLE_EQ(analyzers::step_stats(megatron({{71, 5361.6}, {72, 5470.7}, {73, 5829.9}}), 1)->median, 5650.3);
  EXPECT_EQ(analyzers::step_stats(megatron({{1, 9000}, {2, 5470.7}, {3, 5829.9}}), std::nullopt)->warmup, 1u);
  // A throughput log: a first record no lower than the rest holds no start-up either.
  auto tp = analyzers::step_stats(throughput({12.0, 10.0, 11.0}), std::nullopt);
  ASSERT_TRUE(tp);
  EXPECT_EQ(tp->warmup, 0u);
  EXPECT_EQ(analyzers::step_stats(throughput({4.0, 10.0, 11.0}), std::nullopt)->warmup, 1u);
}
