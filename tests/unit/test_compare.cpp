// compare: reading reports from text and matching findings by (id, subject).
#include <gtest/gtest.h>

#include <string>

#include "compare/compare.hpp"

using namespace perfgap;
using compare::compare_reports;
using compare::read_report;
using report::Status;

namespace {

std::string report_text(const std::string& findings, const std::string& kind = "root") {
  return R"({"schema":"perfgap.report/1","tool":{"name":"perfgap","version":"0.1.0"},"generated_at":"2026-12-01T00:00:00Z",
    "source":{"kind":")" + kind + R"(","root":null,"inputs":[]},"node":{"name":"gpu1"},
    "summary":{"pass":0,"warn":0,"fail":0,"skip":0,"error":0},"findings":[)" + findings + "]}";
}

std::string finding(const std::string& id, const std::string& status, const std::string& subject = "", const std::string& metrics = "{}") {
  return R"({"id":")" + id + R"(","layer":"cpu-power","status":")" + status + R"(",)" + (subject.empty() ? "" : R"("subject":")" + subject + R"(",)") +
         R"("title":"t )" + id + R"(","evidence":[],"fix":"","impact":"","metrics":)" + metrics + "}";
}

std::vector<report::Finding> run(const std::string& before, const std::string& after, double tolerance = 5) {
  auto b = read_report(report_text(before));
  auto a = read_report(report_text(after));
  EXPECT_TRUE(b && a);
  compare::Options o;
  o.tolerance_pct = tolerance;
  return compare_reports(*b, "before.json", *a, "after.json", o);
}

const report::Finding* cmp_find(const std::vector<report::Finding>& fs, const std::string& id, const std::string& subject) {
  for (const auto& f : fs)
    if (f.id == id && f.subject == subject) return &f;
  return nullptr;
}

double cmp_metric(const report::Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name) return v;
  ADD_FAILURE() << "no metric " << name;
  return -1;
}

TEST(Compare, EachTransitionHasItsFinding) {
  auto fs = run(finding("a.fixed", "fail") + "," + finding("a.regressed", "pass") + "," + finding("a.still", "warn") + "," +
                    finding("a.better", "fail") + "," + finding("a.undecided", "fail") + "," + finding("a.gone", "warn") + "," +
                    finding("a.ok", "pass"),
                finding("a.fixed", "pass") + "," + finding("a.regressed", "fail") + "," + finding("a.still", "warn") + "," +
                    finding("a.better", "warn") + "," + finding("a.undecided", "skip") + "," + finding("a.new", "error") + "," +
                    finding("a.newwarn", "warn") + "," + finding("a.ok", "pass"));
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].id, "compare.summary");
  auto expect = [&](const char* id, const char* subject, Status st) {
    const auto* f = cmp_find(fs, id, subject);
    ASSERT_NE(f, nullptr) << id << " " << subject;
    EXPECT_EQ(f->status, st) << id << " " << subject << ": " << f->title;
  };
  expect("compare.fixed", "a.fixed", Status::pass);
  expect("compare.regressed", "a.regressed", Status::fail);
  expect("compare.unchanged", "a.still", Status::warn);
  expect("compare.improved", "a.better", Status::pass);
  expect("compare.gone", "a.undecided", Status::skip);
  expect("compare.gone", "a.gone", Status::skip);
  expect("compare.new", "a.new", Status::fail);
  expect("compare.new", "a.newwarn", Status::warn);
  for (const auto& f : fs) EXPECT_NE(f.subject, "a.ok") << "an unchanged pass is only counted";
  EXPECT_EQ(cmp_metric(fs[0], "unchanged_ok"), 1);
  EXPECT_EQ(cmp_metric(fs[0], "regressed"), 1);
  EXPECT_EQ(cmp_metric(fs[0], "gone"), 2);
}

TEST(Compare, MatchesBySubjectAndKeepsTheWorstOfRepeats) {
  auto fs = run(finding("numa.remote_memory", "fail", "pid:1") + "," + finding("numa.remote_memory", "pass", "pid:2"),
                finding("numa.remote_memory", "pass", "pid:1") + "," + finding("numa.remote_memory", "pass", "pid:2") + "," +
                    finding("numa.remote_memory", "fail", "pid:2"));
  EXPECT_NE(cmp_find(fs, "compare.fixed", "numa.remote_memory (pid:1)"), nullptr);
  const auto* r = cmp_find(fs, "compare.regressed", "numa.remote_memory (pid:2)");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::fail);
}

TEST(Compare, SubjectsThatNameTheInputsMatchByPlace) {
  auto text = [](const std::string& file, const std::string& status) {
    std::string t = report_text(finding("nccl_tests.busbw", status, file), "analyze");
    t.replace(t.find(R"("inputs":[])"), 11, R"("inputs":[")" + file + R"("])");
    return t;
  };
  auto b = read_report(text("/runs/ref.txt", "pass"));
  auto a = read_report(text("/runs/slow.txt", "fail"));
  ASSERT_TRUE(b && a);
  auto fs = compare_reports(*b, "b", *a, "a", {});
  const auto* r = cmp_find(fs, "compare.regressed", "nccl_tests.busbw (/runs/slow.txt)");
  ASSERT_NE(r, nullptr) << "matched as the first input of each";
  EXPECT_EQ(cmp_find(fs, "compare.gone", "nccl_tests.busbw (/runs/ref.txt)"), nullptr);
}

TEST(Compare, MetricsWorseInTheirDirectionBeyondTheTolerance) {
  auto fs = run(finding("nccl_tests.busbw", "pass", "", R"({"median_ms":100,"kernels":10,"busbw_gbps.1M.median":10,"busbw_gbps.1G.median":400})"),
                finding("nccl_tests.busbw", "pass", "", R"({"median_ms":103,"kernels":20,"busbw_gbps.1M.median":9,"busbw_gbps.1G.median":300})"));
  const auto* m = cmp_find(fs, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, Status::fail) << m->title;
  EXPECT_NE(m->title.find("busbw_gbps.1G.median"), std::string::npos) << m->title;
  EXPECT_EQ(m->title.find("median_ms"), std::string::npos) << "3% slower is within 5%: " << m->title;
  EXPECT_EQ(m->title.find("kernels"), std::string::npos) << "no known direction: only a delta";
  EXPECT_DOUBLE_EQ(cmp_metric(*m, "busbw_gbps.1G.median.delta_pct"), -25);
  // The worst move first, then the other worse one, then the rest in the report's order.
  ASSERT_EQ(m->evidence.size(), 4u);
  EXPECT_EQ(m->evidence[0].source, "after.json busbw_gbps.1G.median");
  EXPECT_EQ(m->evidence[1].source, "after.json busbw_gbps.1M.median");
  EXPECT_EQ(m->evidence[2].source, "after.json median_ms");
  EXPECT_EQ(m->evidence[3].source, "after.json kernels");
  EXPECT_DOUBLE_EQ(cmp_metric(*m, "kernels.after"), 20);
  // A looser tolerance lets the same drop pass; better values never fail.
  auto loose = run(finding("x.y", "pass", "", R"({"busbw_gbps.1G.median":400})"), finding("x.y", "pass", "", R"({"busbw_gbps.1G.median":300})"), 30);
  EXPECT_EQ(cmp_find(loose, "compare.metric", "x.y")->status, Status::pass);
  auto better = run(finding("x.y", "pass", "", R"({"median_ms":100})"), finding("x.y", "pass", "", R"({"median_ms":50})"));
  EXPECT_EQ(cmp_find(better, "compare.metric", "x.y")->status, Status::pass);
  auto same = run(finding("x.y", "pass", "", R"({"median_ms":100})"), finding("x.y", "pass", "", R"({"median_ms":100})"));
  EXPECT_EQ(cmp_find(same, "compare.metric", "x.y"), nullptr);
}

TEST(Compare, DirectionsOfRealMetricNames) {
  using compare::Direction;
  EXPECT_EQ(compare::metric_direction("busbw_gbps.64M.median"), Direction::higher_is_better);
  EXPECT_EQ(compare::metric_direction("pct_of_reference"), Direction::higher_is_better);
  EXPECT_EQ(compare::metric_direction("remote_pct"), Direction::lower_is_better);
  EXPECT_EQ(compare::metric_direction("exposed_ms_per_iter.allreduce"), Direction::lower_is_better);
  EXPECT_EQ(compare::metric_direction("steal_pct"), Direction::lower_is_better);
  EXPECT_EQ(compare::metric_direction("busbw_gbps.1048576"), Direction::higher_is_better);
  EXPECT_EQ(compare::metric_direction("busbw_gbps.1048576.median"), Direction::higher_is_better);
  EXPECT_EQ(compare::metric_direction("busbw_gbps.65536"), Direction::unknown) << "latency-bound sizes are not judged";
  EXPECT_EQ(compare::metric_direction("busbw_gbps.256.min"), Direction::unknown);
  EXPECT_EQ(compare::metric_direction("compute_ms_per_iter"), Direction::unknown);
  EXPECT_EQ(compare::metric_direction("iterations"), Direction::unknown);
}

TEST(CompareRead, RefusesWhatIsNotAReport) {
  EXPECT_NE(read_report("{").error().find("byte"), std::string::npos);
  EXPECT_NE(read_report("[]").error().find("not a JSON object"), std::string::npos);
  EXPECT_NE(read_report(R"({"schema":"other"})").error().find("schema"), std::string::npos);
  EXPECT_NE(read_report(report_text(R"({"status":"pass"})")).error().find("findings[0]: no id"), std::string::npos);
  EXPECT_NE(read_report(report_text(R"({"id":"a.b","status":"fine"})")).error().find("findings[0].status 'fine' is not one of pass, warn, fail, skip, error"), std::string::npos);
  EXPECT_NE(read_report(std::string(100000, '[')).error().find("nested deeper"), std::string::npos);
  auto ok = read_report(report_text(finding("a.b", "warn", "", R"({"x":1,"y":null})"), "fleet"));
  ASSERT_TRUE(ok) << ok.error();
  EXPECT_EQ(ok->kind, "fleet");
  ASSERT_EQ(ok->findings.size(), 1u);
  EXPECT_EQ(ok->findings[0].metrics.size(), 1u) << "a null (non-finite) metric is not compared";
  EXPECT_EQ(compare::comparable_kind("live"), compare::comparable_kind("root"));
}

}  // namespace

// Issue 26: the headline counts improved and regressed metrics and names the largest of each,
// so a +116% busbw win is seen without -v.
TEST(CompareHeadline, CountsAndNamesTheLargestImprovementAndRegression) {
  auto fs = run(finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1073741824":28.3,"busbw_gbps.268435456":27.9,"median_ms":100})"),
                finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1073741824":61.2,"busbw_gbps.268435456":58.0,"median_ms":120})"));
  ASSERT_FALSE(fs.empty());
  const auto& s = fs[0];
  ASSERT_EQ(s.id, "compare.summary");
  EXPECT_NE(s.title.find("2 metrics improved, 1 regressed"), std::string::npos) << s.title;
  EXPECT_NE(s.title.find("largest improvement: busbw_gbps.1073741824 of nccl_tests.busbw 28.3 -> 61.2 (+116.3%)"), std::string::npos) << s.title;
  EXPECT_NE(s.title.find("largest regression: median_ms of nccl_tests.busbw 100 -> 120 (+20.0%)"), std::string::npos) << s.title;
  EXPECT_DOUBLE_EQ(cmp_metric(s, "metrics_improved"), 2);
  const auto* m = cmp_find(fs, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(m, nullptr);
  EXPECT_NE(m->title.find("better: busbw_gbps.1073741824"), std::string::npos) << m->title;
}

// A percent metric moves a whole point before it counts: 0.25% -> 0.40% remote memory is +60%
// relative and noise. A bandwidth must move beyond the spread the report gives.
TEST(CompareHeadline, NoiseFloorPerMetricKind) {
  auto fs = run(finding("numa.remote_memory", "pass", "pid:1", R"({"remote_pct":0.25})"),
                finding("numa.remote_memory", "pass", "pid:1", R"({"remote_pct":0.40})"));
  const auto* m = cmp_find(fs, "compare.metric", "numa.remote_memory (pid:1)");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, Status::pass) << m->title;
  EXPECT_NE(m->evidence[0].observed.find("within the noise floor of 1 point"), std::string::npos) << m->evidence[0].observed;
  EXPECT_NE(fs[0].title.find("0 metrics improved, 0 regressed; 1 move within noise"), std::string::npos) << fs[0].title;
  auto real = run(finding("numa.remote_memory", "pass", "pid:1", R"({"remote_pct":2})"), finding("numa.remote_memory", "fail", "pid:1", R"({"remote_pct":18})"));
  EXPECT_EQ(cmp_find(real, "compare.metric", "numa.remote_memory (pid:1)")->status, Status::fail);
  // busbw 100 -> 90 is -10%, but in-place and out-of-place differ by 12 GB/s in the run: noise.
  auto spread = run(finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1048576":100,"busbw_gbps.1048576.spread":12})"),
                    finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1048576":90,"busbw_gbps.1048576.spread":3})"));
  const auto* b = cmp_find(spread, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(b, nullptr);
  EXPECT_EQ(b->status, Status::pass) << b->title;
  EXPECT_EQ(b->title.find("spread"), std::string::npos) << "the spread is not itself a metric: " << b->title;
  auto beyond = run(finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1048576":100,"busbw_gbps.1048576.spread":2})"),
                    finding("nccl_tests.busbw", "pass", "", R"({"busbw_gbps.1048576":90,"busbw_gbps.1048576.spread":3})"));
  EXPECT_EQ(cmp_find(beyond, "compare.metric", "nccl_tests.busbw")->status, Status::fail);
}

// Two nodes' reports, or a live and a root report, are compared, and the headline says so first.
TEST(CompareHeadline, CrossNodeAndCrossKindAreSaidInTheHeadline) {
  auto b = read_report(report_text(finding("a.b", "pass")));
  std::string other = report_text(finding("a.b", "pass"), "live");
  other.replace(other.find("\"gpu1\""), 6, "\"gpu017\"");
  auto a = read_report(other);
  ASSERT_TRUE(b && a);
  auto fs = compare_reports(*b, "before.json", *a, "after.json", {});
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].status, Status::warn);
  EXPECT_EQ(fs[0].title.rfind("different nodes: gpu1 vs gpu017; different kinds: a root report vs a live report: ", 0), 0u) << fs[0].title;
  auto same = run(finding("a.b", "pass"), finding("a.b", "pass"));
  EXPECT_EQ(same[0].status, Status::pass);
  EXPECT_EQ(same[0].title.find("different"), std::string::npos) << same[0].title;
}

// Issue 42: after the C-state fix busy cores went 3000 -> 3800 MHz (+26.7%) and C6 residency
// 0 -> 96.21. Both findings cost the same by the knowledge base; the headline names the clock, a
// move from 0 has no percent (never "inf"), and says "from 0".
TEST(CompareHeadline, RanksByImpactThenTheMoveAndSaysFromZeroInWords) {
  auto b = read_report(report_text(finding("turbostat.deep_idle", "fail", "t.txt", R"({"idle_cpus":4,"deep_pct":0})") + "," +
                                   finding("turbostat.busy_mhz", "fail", "t.txt", R"({"busy_mhz":3000,"ratio":0.7894736842})")));
  auto a = read_report(report_text(finding("turbostat.deep_idle", "pass", "t.txt", R"({"idle_cpus":4,"deep_pct":96.21})") + "," +
                                   finding("turbostat.busy_mhz", "pass", "t.txt", R"({"busy_mhz":3800,"ratio":1})")));
  ASSERT_TRUE(b && a);
  compare::Options o;
  o.impact_pct = [](std::string_view id) { return id.substr(0, 10) == "turbostat." ? 4.0 : 0.0; };
  auto fs = compare_reports(*b, "before.json", *a, "after.json", o);
  const auto& s = fs[0];
  EXPECT_NE(s.title.find("largest improvement: busy_mhz of turbostat.busy_mhz (t.txt) 3000 -> 3800 (+26.7%)"), std::string::npos) << s.title;
  const auto* deep = cmp_find(fs, "compare.metric", "turbostat.deep_idle (t.txt)");
  ASSERT_NE(deep, nullptr);
  ASSERT_FALSE(deep->evidence.empty());
  EXPECT_EQ(deep->evidence[0].observed, "0 -> 96.21 (from 0, higher is better)");
  for (const auto& f : fs) {
    EXPECT_EQ(f.title.find("inf"), std::string::npos) << f.title;
    for (const auto& e : f.evidence) EXPECT_EQ(e.observed.find("inf"), std::string::npos) << e.observed;
  }
  // Without the clock, the move from 0 is the largest, in words.
  auto only_deep = run(finding("turbostat.deep_idle", "fail", "", R"({"deep_pct":0})"), finding("turbostat.deep_idle", "pass", "", R"({"deep_pct":96.21})"));
  EXPECT_NE(only_deep[0].title.find("largest improvement: deep_pct of turbostat.deep_idle 0 -> 96.21 (from 0)"), std::string::npos) << only_deep[0].title;
  // The knowledge base first: a +10% move of a finding that costs throughput before a +50% move of one that costs nothing known.
  auto b2 = read_report(report_text(finding("numastat.remote", "pass", "", R"({"remote_pct":20})") + "," + finding("x.y", "pass", "", R"({"busy_mhz":1000})")));
  auto a2 = read_report(report_text(finding("numastat.remote", "pass", "", R"({"remote_pct":18})") + "," + finding("x.y", "pass", "", R"({"busy_mhz":1500})")));
  ASSERT_TRUE(b2 && a2);
  o.impact_pct = [](std::string_view id) { return id == "numastat.remote" ? 3.5 : 0.0; };
  auto ranked = compare_reports(*b2, "before.json", *a2, "after.json", o);
  EXPECT_NE(ranked[0].title.find("largest improvement: remote_pct of numastat.remote 20 -> 18 (-10.0%)"), std::string::npos) << ranked[0].title;
  auto unranked = compare_reports(*b2, "before.json", *a2, "after.json", {});
  EXPECT_NE(unranked[0].title.find("largest improvement: busy_mhz of x.y 1000 -> 1500 (+50.0%)"), std::string::npos) << unranked[0].title;
}

// check --history's own findings compare a run with its past, not with the other report: never
// a regression, a fix or new (issue 42: history --compare previous latest counted history.changed).
TEST(Compare, HistoryFindingsAreNeverMatched) {
  auto fs = run(finding("history.changed", "pass") + "," + finding("history.since_good", "pass") + "," + finding("a.b", "pass"),
                finding("history.changed", "warn") + "," + finding("history.since_good", "warn") + "," + finding("a.b", "pass"));
  for (const auto& f : fs) EXPECT_EQ(f.subject.find("history."), std::string::npos) << f.id << " " << f.subject << ": " << f.title;
  EXPECT_DOUBLE_EQ(cmp_metric(fs[0], "regressed"), 0);
  EXPECT_DOUBLE_EQ(cmp_metric(fs[0], "new"), 0);
  EXPECT_NE(fs[0].status, Status::fail);
}

namespace {
std::string titled(const std::string& id, const std::string& status, const std::string& subject, const std::string& title,
                   const std::string& metrics = "{}") {
  return R"({"id":")" + id + R"(","layer":"network","status":")" + status + R"(",)" + (subject.empty() ? "" : R"("subject":")" + subject + R"(",)") +
         R"("title":")" + title + R"(","evidence":[],"fix":"","impact":"","metrics":)" + metrics + "}";
}
}  // namespace

TEST(CompareLostDevices, APortGoneWhereTheAfterRunReadItsOtherPortsRegressed) {
  auto fs = run(titled("net.ib.ports", "pass", "mlx4_0:1", "port ACTIVE") + "," + titled("net.ib.ports", "warn", "mlx5_0:1", "odd phys_state") + "," +
                    titled("numa.remote_memory", "pass", "pid:4242", "local"),
                titled("net.ib.ports", "warn", "mlx5_0:1", "odd phys_state") + "," + titled("numa.remote_memory", "pass", "pid:5151", "local"));
  const auto* r = cmp_find(fs, "compare.regressed", "net.ib.ports (mlx4_0:1)");
  ASSERT_NE(r, nullptr);
  EXPECT_EQ(r->status, Status::fail);
  EXPECT_NE(r->title.find("mlx4_0:1 is gone"), std::string::npos) << r->title;
  EXPECT_NE(r->title.find("mlx5_0:1"), std::string::npos) << "names what the after run did read: " << r->title;
  EXPECT_EQ(cmp_find(fs, "compare.gone", "net.ib.ports (mlx4_0:1)"), nullptr);
  // A process that ended is no lost device: still "cannot tell".
  EXPECT_NE(cmp_find(fs, "compare.gone", "numa.remote_memory (pid:4242)"), nullptr);
  EXPECT_EQ(fs[0].status, Status::pass);
  EXPECT_DOUBLE_EQ(cmp_metric(fs[0], "regressed"), 1);
}

TEST(CompareLostDevices, EveryPortGoneWhereTheAfterRunFoundNoneRegressedButNotWhereItReadNothing) {
  const std::string before = titled("net.ib.ports", "pass", "mlx4_0:1", "port ACTIVE") + "," + titled("pcie.link", "pass", "0000:18:00.0", "x16");
  auto none = run(before, titled("net.ib.ports", "skip", "", "no RDMA devices (/sys/class/infiniband absent or empty)") + "," +
                              titled("pcie.link", "pass", "0000:af:00.0", "x16"));
  EXPECT_NE(cmp_find(none, "compare.regressed", "net.ib.ports (mlx4_0:1)"), nullptr);
  EXPECT_NE(cmp_find(none, "compare.regressed", "pcie.link (0000:18:00.0)"), nullptr);
  auto unread = run(before, titled("net.ib.ports", "skip", "", "RDMA devices not captured in this tree"));
  EXPECT_NE(cmp_find(unread, "compare.gone", "net.ib.ports (mlx4_0:1)"), nullptr) << "the after run did not read the source";
  EXPECT_NE(cmp_find(unread, "compare.gone", "pcie.link (0000:18:00.0)"), nullptr) << "no pcie.link at all after: not run";
  EXPECT_EQ(cmp_find(unread, "compare.regressed", "net.ib.ports (mlx4_0:1)"), nullptr);
}

TEST(CompareLostDevices, AGpuCountThatDroppedIsARegression) {
  auto gone = run(titled("gpu.inventory", "pass", "", "1 GPU(s)", R"({"gpus_pci":1,"gpus_visible":1})"),
                  titled("gpu.inventory", "skip", "", "no NVIDIA GPU on PCI (vendor 0x10de, class 0x0300/0x0302)"));
  const auto* r = cmp_find(gone, "compare.regressed", "gpu.inventory");
  ASSERT_NE(r, nullptr);
  EXPECT_NE(r->title.find("gpus_pci 1 -> absent"), std::string::npos) << r->title;
  auto unread = run(titled("gpu.inventory", "pass", "", "1 GPU(s)", R"({"gpus_pci":1})"),
                    titled("gpu.inventory", "skip", "", "PCI devices not readable: permission denied"));
  EXPECT_EQ(cmp_find(unread, "compare.regressed", "gpu.inventory"), nullptr) << "unread is not gone";
  auto fewer = run(titled("gpu.inventory", "pass", "", "8 GPU(s)", R"({"gpus_pci":8})"), titled("gpu.inventory", "pass", "", "7 GPU(s)", R"({"gpus_pci":7})"));
  const auto* m = cmp_find(fewer, "compare.metric", "gpu.inventory");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, Status::fail) << m->title;
}

// Kernel-log findings name devices by their events: a device without events in a later log (a
// reboot, a rotated log) is no lost device; nor is one that failed before and was taken out.
TEST(CompareLostDevices, EventsGoneFromTheLogAndFailingDevicesGoneAreNotLosses) {
  auto fs = run(titled("gpu.xid", "fail", "0000:18:00.0", "Xid 79") + "," + titled("net.link_flaps", "pass", "0000:ae:00.0", "bring-up only") + "," +
                    titled("net.ib.ports", "fail", "mlx5_1:1", "port DOWN") + "," + titled("net.ib.ports", "pass", "mlx5_0:1", "ACTIVE"),
                titled("gpu.xid", "pass", "", "no Xid in the kernel log") + "," + titled("net.link_flaps", "pass", "", "no link events") + "," +
                    titled("net.ib.ports", "pass", "mlx5_0:1", "ACTIVE"));
  for (const char* subject : {"gpu.xid (0000:18:00.0)", "net.link_flaps (0000:ae:00.0)", "net.ib.ports (mlx5_1:1)"}) {
    EXPECT_EQ(cmp_find(fs, "compare.regressed", subject), nullptr) << subject;
    EXPECT_NE(cmp_find(fs, "compare.gone", subject), nullptr) << subject;
  }
}


// Two reports that decided nothing (perf.summary says what a profile holds, the rest skipped)
// compare to nothing: the headline says so (compare::undecided_why), never OK; one finding
// judged in both reports, or a problem that went away, is a comparison.
TEST(CompareHeadline, NothingDecidedInBothIsNothingCompared) {
  const std::string undecided = finding("perf.summary", "pass", "", R"({"samples":7})") + "," + finding("perf.hot_kernel", "skip");
  auto fs = run(undecided, finding("perf.summary", "pass", "", R"({"samples":9})") + "," + finding("perf.hot_kernel", "skip"));
  ASSERT_FALSE(fs.empty());
  EXPECT_EQ(fs[0].status, Status::pass);  // compare.summary: its counts, as before
  EXPECT_EQ(cmp_metric(fs[0], "decided_in_both"), 0);
  const auto why = compare::undecided_why(fs);
  EXPECT_EQ(why.rfind("nothing could be compared: no finding was decided in both reports", 0), 0u) << why;
  // A problem before that is undecided after: said, still nothing compared.
  auto gone = run(finding("perf.hot_kernel", "warn"), undecided);
  EXPECT_NE(compare::undecided_why(gone).find("1 decided before and not after (compare.gone)"), std::string::npos) << compare::undecided_why(gone);
  // A real pass in both decides; so does a fix.
  auto judged = run(undecided + "," + finding("perf.smmu_cmdq", "pass"), undecided + "," + finding("perf.smmu_cmdq", "pass"));
  EXPECT_EQ(cmp_metric(judged[0], "decided_in_both"), 1);
  EXPECT_EQ(compare::undecided_why(judged), "");
  EXPECT_EQ(compare::undecided_why(run(finding("perf.smmu_cmdq", "warn"), finding("perf.smmu_cmdq", "pass"))), "");
}

// Field review 4: a run over 8 B to 16 GiB against one that stopped at 2 GiB read as a peak fallen
// 10.1% (487.1 -> 437.8) though both read about the same at 2 GiB. A peak is compared over the
// sizes both runs measured, an average over different sizes not at all, and the count of sizes
// is said to be no measure of speed.
TEST(CompareSizeRanges, APeakIsComparedOverTheSizesBothRunsMeasured) {
  const std::string longer = R"({"busbw_gbps.1073741824":436.9,"busbw_gbps.2147483648":443.7,"busbw_gbps.4294967296":465.9,)"
                             R"("busbw_gbps.17179869184":487.1,"max_busbw_gbps":487.1,"avg_busbw_gbps":120,"sizes":4})";
  const std::string shorter = R"({"busbw_gbps.1073741824":435,"busbw_gbps.2147483648":437.8,"max_busbw_gbps":437.8,"avg_busbw_gbps":52.98,"sizes":2})";
  auto fs = run(finding("nccl_tests.busbw", "skip", "", longer), finding("nccl_tests.busbw", "skip", "", shorter));
  const auto* m = cmp_find(fs, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(m, nullptr);
  EXPECT_EQ(m->status, Status::pass) << m->title;
  EXPECT_EQ(m->title.find("max_busbw_gbps"), std::string::npos) << m->title;
  EXPECT_DOUBLE_EQ(cmp_metric(*m, "max_busbw_gbps.before"), 443.7);
  EXPECT_DOUBLE_EQ(cmp_metric(*m, "max_busbw_gbps.after"), 437.8);
  std::string peak, avg, sizes;
  for (const auto& e : m->evidence) {
    if (e.source == "after.json max_busbw_gbps") peak = e.observed;
    if (e.source == "after.json avg_busbw_gbps") avg = e.observed;
    if (e.source == "after.json sizes") sizes = e.observed;
  }
  EXPECT_NE(peak.find("443.7 -> 437.8 (-1.3%, higher is better; the peak over the 2 sizes both runs measured (1 GiB to 2 GiB)"), std::string::npos) << peak;
  EXPECT_NE(peak.find("the reports' own peaks, 487.1 -> 437.8, are over different sizes (before 1 GiB to 16 GiB, after 1 GiB to 2 GiB)"),
            std::string::npos)
      << peak;
  EXPECT_NE(avg.find("not compared: an average over each run's own sizes"), std::string::npos) << avg;
  EXPECT_EQ(avg.find('%'), std::string::npos) << avg;
  for (const auto& [k, v] : m->metrics) EXPECT_NE(k, "avg_busbw_gbps.delta_pct");
  EXPECT_NE(sizes.find("not a measure of speed"), std::string::npos) << sizes;

  // The peak that did fall over the common sizes is still a regression.
  const std::string slower = R"({"busbw_gbps.1073741824":300,"busbw_gbps.2147483648":310,"max_busbw_gbps":310,"sizes":2})";
  auto worse = run(finding("nccl_tests.busbw", "skip", "", longer), finding("nccl_tests.busbw", "skip", "", slower));
  const auto* w = cmp_find(worse, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(w, nullptr);
  EXPECT_EQ(w->status, Status::fail);
  EXPECT_NE(w->title.find("max_busbw_gbps"), std::string::npos) << w->title;
  EXPECT_DOUBLE_EQ(cmp_metric(*w, "max_busbw_gbps.before"), 443.7);

  // No size in common: the peak is not compared.
  const std::string apart = R"({"busbw_gbps.1048576":20,"busbw_gbps.2097152":30,"max_busbw_gbps":30,"sizes":2})";
  auto none = run(finding("nccl_tests.busbw", "skip", "", longer), finding("nccl_tests.busbw", "skip", "", apart));
  const auto* n = cmp_find(none, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(n, nullptr);
  EXPECT_EQ(n->status, Status::pass) << n->title;
  bool said = false;
  for (const auto& e : n->evidence) said = said || e.observed.find("not compared: the runs measured no size in common") != std::string::npos;
  EXPECT_TRUE(said);

  // The same sizes: the reports' own peaks, as before.
  const std::string same = R"({"busbw_gbps.1073741824":436.9,"busbw_gbps.2147483648":443.7,"busbw_gbps.4294967296":465.9,)"
                           R"("busbw_gbps.17179869184":400,"max_busbw_gbps":465.9,"sizes":4})";
  auto alike = run(finding("nccl_tests.busbw", "skip", "", longer), finding("nccl_tests.busbw", "skip", "", same));
  const auto* s = cmp_find(alike, "compare.metric", "nccl_tests.busbw");
  ASSERT_NE(s, nullptr);
  EXPECT_DOUBLE_EQ(cmp_metric(*s, "max_busbw_gbps.before"), 487.1);
  EXPECT_EQ(s->status, Status::fail) << s->title;  // 16 GiB fell 18%
}
