// gap.budget's next measurement follows from what the reports show (field review 5): a profile
// whose GPU waits on its host and that holds no communication kernel points at the host, not at
// nccl-tests; and a report's steps.gap of another log than the --measured one is another run's
// gap, said and not used as this one's.
#include <gtest/gtest.h>

#include <string>

#include "analyzers/budget.hpp"
#include "compare/compare.hpp"
#include "core/kb.hpp"

using perfgap::analyzers::explain_budget;
using perfgap::report::Finding;
using perfgap::report::Status;

namespace {

perfgap::compare::ReportFinding next_rf(std::string id, Status st, std::string subject, std::vector<std::pair<std::string, double>> metrics = {}) {
  perfgap::compare::ReportFinding f;
  f.id = std::move(id);
  f.status = st;
  f.subject = std::move(subject);
  f.title = "t";
  f.metrics = std::move(metrics);
  return f;
}

std::string next_evidence(const Finding& f, const std::string& source) {
  for (const auto& e : f.evidence)
    if (e.source == source) return e.observed;
  return {};
}

// The reviewer's nsys profile (a JAX step on one GPU: 99.6% waiting on the host, no NCCL or other
// communication kernel) beside a node report (cpu.turbo: node configuration is covered).
perfgap::compare::ReportView next_host_bound_profile() {
  perfgap::compare::ReportView prof;
  prof.kind = "analyze";
  prof.findings = {next_rf("profile.summary", Status::pass, "p.sqlite", {{"kernels", 1002}, {"nccl_kernel_ms", 0}}),
                   next_rf("profile.exposed_comm", Status::skip, "all", {{"comm_ms_per_iter", 0}, {"exposed_pct_of_iter", 0}}),
                   next_rf("profile.gpu_idle", Status::warn, "p.sqlite", {{"idle_pct", 99.6}, {"host_bound_pct", 99.6}}),
                   next_rf("profile.launch_bound", Status::warn, "p.sqlite", {{"host_bound_pct", 99.6}})};
  return prof;
}

perfgap::compare::ReportView next_node() {
  perfgap::compare::ReportView node;
  node.kind = "root";
  node.node = "gb10";
  node.findings = {next_rf("cpu.turbo", Status::warn, ""), next_rf("container.detect", Status::skip, "")};
  return node;
}

perfgap::analyzers::BudgetOptions next_at(double pct, std::string measured = {}) {
  perfgap::analyzers::BudgetOptions o;
  o.measured_pct = pct;
  o.measured_source = std::move(measured);
  return o;
}

}  // namespace

// Before: "next: collective bandwidth: nccl-tests all_gather_perf ..." for a profile that shows no
// communication and a GPU that waits on its host 99.6% of the time.
TEST(AnalyzersBudgetNext, AHostBoundProfileWithoutCommunicationPointsAtTheHost) {
  const auto f = explain_budget({{"nsys2.json", next_host_bound_profile()}, {"gb10.json", next_node()}}, perfgap::core::builtin_kb(), next_at(92));
  const std::string unexplained = next_evidence(f, "unexplained");
  EXPECT_NE(unexplained.find("next measurement: CPU kernel time"), std::string::npos) << unexplained;
  EXPECT_NE(unexplained.find("the GPU waits on its host 99.6% of the time (in nsys2.json [p.sqlite]): the host's side first"), std::string::npos)
      << unexplained;
  EXPECT_NE(f.title.find("; next: CPU kernel time"), std::string::npos) << f.title;
  EXPECT_EQ(f.title.find("collective bandwidth"), std::string::npos) << f.title;
  EXPECT_EQ(f.fix.find("collective bandwidth"), std::string::npos) << f.fix;
  const std::string moot = next_evidence(f, "not indicated");
  EXPECT_NE(moot.find("collective bandwidth, NCCL transport and topology, collective bandwidth per rank in production: the profile in "
                      "nsys2.json [all] shows no communication kernel"),
            std::string::npos)
      << moot;
  EXPECT_EQ(next_evidence(f, "not measured").find("collective bandwidth"), std::string::npos) << next_evidence(f, "not measured");
}

// A profile that shows communication, or a GPU that does not wait on its host: the knowledge
// base's order as before (collective bandwidth after the node and the profile).
TEST(AnalyzersBudgetNext, WithCommunicationOrNoHostWaitTheOrderIsTheKnowledgeBases) {
  auto prof = next_host_bound_profile();
  prof.findings[1] = next_rf("profile.exposed_comm", Status::warn, "all", {{"comm_ms_per_iter", 30}, {"exposed_pct_of_iter", 20}});
  prof.findings[2] = next_rf("profile.gpu_idle", Status::pass, "p.sqlite", {{"idle_pct", 2}, {"host_bound_pct", 2}});
  prof.findings[3] = next_rf("profile.launch_bound", Status::pass, "p.sqlite", {{"host_bound_pct", 2}});
  const auto f = explain_budget({{"prof.json", prof}, {"node.json", next_node()}}, perfgap::core::builtin_kb(), next_at(92));
  EXPECT_NE(next_evidence(f, "unexplained").find("next measurement: collective bandwidth"), std::string::npos) << next_evidence(f, "unexplained");
  EXPECT_EQ(next_evidence(f, "not indicated"), "");
}

// Before: gap80.json's steps.gap of another log (87 ms against 80 ms) was listed "not counted: the
// measured gap itself" beside a --measured NeMo log.
TEST(AnalyzersBudgetNext, AnotherLogsStepsGapIsAnotherRunsGap) {
  perfgap::compare::ReportView gap;
  gap.kind = "gap";
  auto g = next_rf("steps.gap", Status::fail, "logs/megatron/input.txt", {{"median_ms", 87}, {"reference_ms", 80}});
  g.title = "92.0% of reference (87.0 ms vs 80.0 ms per iteration)";
  gap.findings = {g};
  const auto f = explain_budget({{"gap80.json", gap}, {"gb10.json", next_node()}}, perfgap::core::builtin_kb(), next_at(85, "logs/nemo/input.txt"));
  bool said = false;
  for (const auto& e : f.evidence) {
    EXPECT_NE(e.source, "steps.gap") << e.observed;
    if (e.source == "reports" && e.observed.find("gap80.json: steps.gap of logs/megatron/input.txt is another run's gap (fail: 92.0% of reference "
                                                 "(87.0 ms vs 80.0 ms per iteration)), not the measured logs/nemo/input.txt's: not used") == 0)
      said = true;
  }
  EXPECT_TRUE(said) << next_evidence(f, "reports");
  // The --measured log's own gap (the same file, given another way): the measured gap itself.
  const auto same = explain_budget({{"gap.json", gap}}, perfgap::core::builtin_kb(), next_at(92, "./logs/megatron/input.txt"));
  bool itself = false;
  for (const auto& e : same.evidence) itself = itself || (e.source == "steps.gap" && e.observed.find("not counted: the measured gap itself") != std::string::npos);
  EXPECT_TRUE(itself);
}
