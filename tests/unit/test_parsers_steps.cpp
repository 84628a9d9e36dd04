#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "parsers/steps.hpp"

using namespace perfgap;

TEST(ParsersSteps, Megatron) {
  auto s = parsers::parse_steps(
      " [2024-04-06 03:02:12] iteration       71/     100 | consumed samples:         9088 | elapsed time per iteration (ms): 5361.6 | x\n"
      "time (ms) | forward-compute: 193.77\n"
      " iteration       72/     100 | elapsed time per iteration (ms): 5470.7 |\n");
  ASSERT_TRUE(s) << s.error().describe();
  ASSERT_EQ(s->records.size(), 2u);
  EXPECT_EQ(s->records[0].iteration, 71);
  EXPECT_DOUBLE_EQ(s->records[1].ms, 5470.7);
  EXPECT_EQ(s->records[1].line, 3);
}

TEST(ParsersSteps, CsvAndJsonLines) {
  auto c = parsers::parse_steps("step,loss,step_time_s\n1,2.0,1.5\n2,1.9,1.0\n3,1.8\n");
  ASSERT_TRUE(c);
  EXPECT_EQ(c->layout, parsers::StepLog::Layout::csv);
  ASSERT_EQ(c->records.size(), 2u);
  EXPECT_DOUBLE_EQ(c->records[1].ms, 1000);
  ASSERT_EQ(c->damaged.size(), 1u);
  EXPECT_EQ(c->damaged[0].line, 4);
  auto j = parsers::parse_steps("{\"step\": 1, \"iteration_time_ms\": 100}\n{\"step\": 2, \"iteration_time_ms\": 110}\n{\"step\": 3, \"iter\n");
  ASSERT_TRUE(j);
  EXPECT_EQ(j->records.size(), 2u);
  EXPECT_EQ(j->records[1].iteration, 2);
  EXPECT_EQ(j->damaged.size(), 1u);
  EXPECT_FALSE(parsers::parse_steps("a,b\n1,2\n"));
  EXPECT_FALSE(parsers::parse_steps(""));
}

TEST(AnalyzersSteps, StatsAndStatuses) {
  parsers::StepLog log;
  for (double v : {5000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1000.0, 1200.0}) log.records.push_back({v, -1, 1});
  auto st = analyzers::step_stats(log, std::nullopt);
  ASSERT_TRUE(st);
  EXPECT_EQ(st->warmup, 1u);  // 10% of 11, at least 1
  EXPECT_DOUBLE_EQ(st->median_ms, 1000);
  EXPECT_DOUBLE_EQ(st->p99_ms, 1200);
  analyzers::StepsOptions o;
  o.reference_ms = 960;  // 96% of reference
  auto f = analyzers::analyze_steps(*st, "m", o);
  EXPECT_EQ(f[0].status, report::Status::pass);
  EXPECT_EQ(f[1].status, report::Status::warn);  // p99 20% above the median
  o.reference_ms = 940;
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::fail);
  o.reference_ms.reset();
  EXPECT_EQ(analyzers::analyze_steps(*st, "m", o)[0].status, report::Status::skip);
  EXPECT_FALSE(analyzers::step_stats(log, 11));
}
