// steps.gap against a reference that is no reference for the run (field review): another job's
// step log (its global batch size differs), a reference log whose median rests on start-up
// records only, and a run more than twice the reference's pace; the batch size as the step
// parsers read it (Megatron "global batch size:", NeMo "global_batch_size", consumed samples).
#include <gtest/gtest.h>

#include <optional>
#include <string>

#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"
#include "report/model.hpp"

using namespace perfgap;

namespace {

// Megatron lines: iteration, ms, global batch size (-1: the field left out), skipped.
struct MegatronLine {
  int iteration;
  double ms;
  int batch;
  bool skipped = false;
};
std::string megatron_text(const std::vector<MegatronLine>& lines) {
  std::string text;
  for (const auto& l : lines)
    text += "iteration " + std::to_string(l.iteration) + "/ 1000 | consumed samples: " + std::to_string(l.iteration * std::max(l.batch, 1)) +
            " | elapsed time per iteration (ms): " + std::to_string(l.ms) + " |" +
            (l.batch >= 0 ? " global batch size: " + std::to_string(l.batch) + " |" : std::string()) +
            " number of skipped iterations: " + (l.skipped ? "1" : "0") + " | number of nan iterations: 0 |\n";
  return text;
}

analyzers::StepStats stats_of(const std::string& text) {
  auto log = parsers::parse_steps(text);
  EXPECT_TRUE(log) << log.error().describe();
  auto s = analyzers::step_stats(*log, std::nullopt);
  EXPECT_TRUE(s);
  return *s;
}

report::Finding gap_against(const analyzers::StepStats& run, const analyzers::StepStats& ref) {
  analyzers::StepsOptions o;
  o.reference_log(ref, "ref.log");
  return analyzers::analyze_steps(run, "run.log", o).at(0);
}

bool has_metric(const report::Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name) return true;
  return false;
}

std::string all_evidence(const report::Finding& f) {
  std::string out;
  for (const auto& e : f.evidence) out += e.source + ": " + e.observed + "\n";
  return out;
}

}  // namespace

TEST(ParsersStepsBatch, MegatronAndNemoLinesGiveTheirGlobalBatchAndConsumedSamples) {
  auto m = parsers::parse_steps(
      "1:  iteration       25/73242187 | consumed samples:           50 | elapsed time per iteration (ms): 87.0 | learning rate: 1.638E-08 | "
      "global batch size:     2 | lm loss: 1.086954E+01 | number of skipped iterations:   0 | number of nan iterations:   0 |\n");
  ASSERT_TRUE(m) << m.error().describe();
  ASSERT_EQ(m->records.size(), 1u);
  EXPECT_EQ(m->records[0].global_batch, 2);
  EXPECT_EQ(m->records[0].consumed_samples, 50);
  auto n = parsers::parse_steps(
      "(pretraining, pid=4112) Training epoch 2, iteration 7/999 | lr: 6.897e-06 | global_batch_size: 512 | global_step: 45 | "
      "reduced_train_loss: 11.02 | train_step_timing in s: 47.12 | consumed_samples: 23552\n");
  ASSERT_TRUE(n) << n.error().describe();
  ASSERT_EQ(n->records.size(), 1u);
  EXPECT_EQ(n->records[0].global_batch, 512);
  EXPECT_EQ(n->records[0].consumed_samples, 23552);
  // A line without either: -1.
  auto bare = parsers::parse_steps("iteration 3/ 10 | elapsed time per iteration (ms): 80.0 |\n");
  ASSERT_TRUE(bare);
  EXPECT_EQ(bare->records[0].global_batch, -1);
  EXPECT_EQ(bare->records[0].consumed_samples, -1);
}

TEST(AnalyzersStepsReference, TheBatchIsTheOneTheLinesSayElseTheSamplesConsumedPerIteration) {
  EXPECT_EQ(stats_of(megatron_text({{1, 90, 8}, {2, 80, 8}, {3, 81, 8}})).global_batch, 8);
  // No batch field: consumed samples grow by 16 per iteration (iteration * 16).
  auto consumed = parsers::parse_steps(
      "iteration 10/ 100 | consumed samples: 160 | elapsed time per iteration (ms): 80.0 | number of nan iterations: 0 |\n"
      "iteration 11/ 100 | consumed samples: 176 | elapsed time per iteration (ms): 81.0 | number of nan iterations: 0 |\n"
      "iteration 13/ 100 | consumed samples: 208 | elapsed time per iteration (ms): 80.5 | number of nan iterations: 0 |\n");
  ASSERT_TRUE(consumed);
  auto s = analyzers::step_stats(*consumed, std::size_t{0});
  ASSERT_TRUE(s);
  EXPECT_EQ(s->global_batch, 16);
  // A ramp-up (sizes differ): no one batch.
  EXPECT_FALSE(stats_of(megatron_text({{1, 80, 8}, {2, 80, 8}, {3, 81, 16}, {4, 80, 16}})).global_batch);
}

// The field case: 3 iterations at global batch size 2 against a reference of one iteration at
// 128 (was PASS "23320.8% of reference"): another job, skip, both sizes named.
TEST(AnalyzersStepsReference, AReferenceOfAnotherGlobalBatchSizeIsAnotherJob) {
  const auto run = stats_of(megatron_text({{25, 87.0, 2}, {26, 86.5, 2}, {27, 88.4, 2}}));
  const auto ref = stats_of(megatron_text({{1, 20289.1, 128}}));
  const auto f = gap_against(run, ref);
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("the reference is another job: global batch size 2 in run.log, 128 in the reference ref.log"), std::string::npos) << f.title;
  EXPECT_FALSE(has_metric(f, "percent_of_reference")) << "not scored: nothing reads it as a score";
  const auto ev = all_evidence(f);
  EXPECT_NE(ev.find("global batch size: 2 in run.log, 128 in ref.log"), std::string::npos) << ev;
  EXPECT_NE(ev.find("not scored: as figures the run would read 23320.8% of this reference"), std::string::npos) << ev;
  EXPECT_NE(ev.find("start-up only: its only record (iteration 1) is the run's first step"), std::string::npos) << ev;
  // The same batch: scored.
  const auto same = gap_against(run, stats_of(megatron_text({{10, 86, 2}, {11, 85, 2}, {12, 86, 2}})));
  EXPECT_NE(same.status, report::Status::skip) << same.title;
}

// A reference of the same batch whose median rests on start-up records only: not a steady state,
// skip, saying which records; a log that does not say its batch is held to the same.
TEST(AnalyzersStepsReference, AReferenceOfStartUpRecordsOnlyIsNoSteadyState) {
  const auto run = stats_of(megatron_text({{25, 87.0, 2}, {26, 86.5, 2}, {27, 88.4, 2}}));
  const auto one = gap_against(run, stats_of(megatron_text({{1, 95.0, 2}})));
  EXPECT_EQ(one.status, report::Status::skip) << one.title;
  EXPECT_NE(one.title.find("the reference ref.log is no steady state: its only record (iteration 1) is the run's first step"), std::string::npos)
      << one.title;
  EXPECT_NE(one.title.find("--reference MS"), std::string::npos) << one.title;
  const auto skipped = gap_against(run, stats_of(megatron_text({{1, 95.0, 2, true}, {2, 90.0, 2, true}, {3, 91.0, 2, true}})));
  EXPECT_EQ(skipped.status, report::Status::skip) << skipped.title;
  EXPECT_NE(skipped.title.find("every record used is a skipped iteration (2 of them"), std::string::npos) << skipped.title;
  // One record from the middle of a run is a single record, not a start-up one: scored.
  const auto mid = gap_against(run, stats_of(megatron_text({{500, 90.0, 2}})));
  EXPECT_NE(mid.status, report::Status::skip) << mid.title;
  // The measured side's own start-up is said as before (not this rule).
  const auto self = gap_against(stats_of(megatron_text({{1, 95.0, 2}})), stats_of(megatron_text({{10, 86, 2}, {11, 85, 2}, {12, 86, 2}})));
  EXPECT_NE(self.status, report::Status::skip) << self.title;
}

// More than twice the reference's pace: scored, but the title and evidence ask whether the
// reference is the same job.
TEST(AnalyzersStepsReference, MoreThanTwiceTheReferencesPaceIsSaidToBeSuspect) {
  const auto run = stats_of(megatron_text({{25, 40.0, -1}, {26, 41.0, -1}, {27, 40.5, -1}}));
  const auto f = gap_against(run, stats_of(megatron_text({{10, 100, -1}, {11, 101, -1}, {12, 100, -1}})));
  EXPECT_EQ(f.status, report::Status::pass) << f.title;
  EXPECT_NE(f.title.find("; more than 2 times the reference's pace: check that it is the same job (model, global batch size, scale)"), std::string::npos)
      << f.title;
  EXPECT_NE(all_evidence(f).find("comparable?: "), std::string::npos) << all_evidence(f);
  const auto near = gap_against(run, stats_of(megatron_text({{10, 60, -1}, {11, 61, -1}, {12, 60, -1}})));
  EXPECT_EQ(near.title.find("times the reference's pace"), std::string::npos) << near.title;
}

// A throughput figure as a reference or a measurement (gap, explain): read as analyze steps reads it.
TEST(AnalyzersStepsReference, AThroughputFigureScoresAThroughputLog) {
  const auto fig = analyzers::step_throughput_figure(12, "samples/s");
  EXPECT_TRUE(fig.throughput);
  EXPECT_EQ(fig.unit, "samples/s");
  EXPECT_EQ(fig.records, 0u);
  analyzers::StepsOptions o;
  o.reference_log(fig, "--reference");
  const auto f = analyzers::analyze_steps(analyzers::step_throughput_figure(10.5, "samples/s"), "--measured", o).at(0);
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
  EXPECT_NE(f.title.find("87.5% of reference throughput (10.50 samples/s vs 12.00 samples/s)"), std::string::npos) << f.title;
  EXPECT_NE(all_evidence(f).find("--measured: 10.5 samples/s"), std::string::npos) << all_evidence(f);
}

// steps.gap carries the job's global batch size as its metric global_batch_size (the field
// review: compare took a batch-2 log and a batch-288 one for one job, as no report said the
// batch), with or without a reference; a log that does not say it, or whose batch changes, has none.
TEST(AnalyzersStepsReference, TheGapCarriesTheGlobalBatchSize) {
  auto metric = [](const report::Finding& f, const std::string& name) -> std::optional<double> {
    for (const auto& [k, v] : f.metrics)
      if (k == name) return v;
    return std::nullopt;
  };
  const auto run = stats_of(megatron_text({{25, 87.0, 2}, {26, 86.5, 2}, {27, 88.4, 2}}));
  const auto alone = analyzers::analyze_steps(run, "run.log", {}).at(0);
  ASSERT_EQ(alone.id, "steps.gap");
  EXPECT_EQ(metric(alone, "global_batch_size"), 2.0);
  EXPECT_TRUE(metric(alone, "median_ms"));
  EXPECT_EQ(metric(gap_against(run, stats_of(megatron_text({{10, 86, 2}, {11, 85, 2}, {12, 86, 2}}))), "global_batch_size"), 2.0);
  const auto unsaid = stats_of(
      " iteration        1/    1000 | elapsed time per iteration (ms): 90.0 |\n"
      " iteration        2/    1000 | elapsed time per iteration (ms): 80.0 |\n"
      " iteration        3/    1000 | elapsed time per iteration (ms): 81.0 |\n");
  EXPECT_FALSE(unsaid.global_batch);
  EXPECT_FALSE(metric(analyzers::analyze_steps(unsaid, "run.log", {}).at(0), "global_batch_size"));
  const auto ramp = stats_of(megatron_text({{1, 80, 8}, {2, 80, 8}, {3, 81, 16}, {4, 80, 16}}));
  EXPECT_FALSE(metric(analyzers::analyze_steps(ramp, "run.log", {}).at(0), "global_batch_size"));
}
