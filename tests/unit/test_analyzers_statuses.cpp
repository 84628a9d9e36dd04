// The statuses of analyzer findings that the capture-based tests do not reach.
#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "findings.hpp"
#include "parsers/perf.hpp"
#include "parsers/steps.hpp"

using namespace perfgap;
using fixture::find;
using report::Status;

TEST(AnalyzerStatuses, SmmuCmdqAtOrBelowFivePercentPasses) {
  auto p = parsers::parse_perf(
      "# Overhead  Command  Shared Object      Symbol\n"
      "# ........  .......  .................  ..............................\n"
      "    60.00%  python   libcuda.so.1       [.] cuLaunchKernel\n"
      "    35.00%  python   [kernel.kallsyms]  [k] copy_user_enhanced_fast_string\n"
      "     5.00%  python   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n");
  ASSERT_TRUE(p) << p.error().describe();
  auto fs = analyzers::analyze_perf(*p, "report.txt");
  EXPECT_EQ(find(fs, "perf.smmu_cmdq").status, Status::pass);
  auto q = parsers::parse_perf(
      "# Overhead  Command  Shared Object      Symbol\n"
      "    94.00%  python   libcuda.so.1       [.] cuLaunchKernel\n"
      "     6.00%  python   [kernel.kallsyms]  [k] arm_smmu_cmdq_issue_cmdlist\n");
  ASSERT_TRUE(q) << q.error().describe();
  EXPECT_EQ(find(analyzers::analyze_perf(*q, "report.txt"), "perf.smmu_cmdq").status, Status::fail);
}

TEST(AnalyzerStatuses, StepsTailPassesWhenP99IsCloseToMedian) {
  // A CSV step log whose step times vary by under 1%.
  std::string log = "step,step_time_ms\n";
  for (int i = 0; i < 200; ++i) log += std::to_string(i) + "," + std::to_string(1000 + (i % 7)) + "\n";
  auto st = parsers::parse_steps(log);
  ASSERT_TRUE(st) << st.error().describe();
  auto stats = analyzers::step_stats(*st, std::nullopt);
  ASSERT_TRUE(stats);
  analyzers::StepsOptions o;
  o.reference_ms(1000);
  auto fs = analyzers::analyze_steps(*stats, "steps.csv", o);
  EXPECT_EQ(find(fs, "steps.tail").status, Status::pass);
  EXPECT_EQ(find(fs, "steps.gap").status, Status::pass);
}
