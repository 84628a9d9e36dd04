// compare refuses two reports of evidently different jobs or machines: profile reports of other
// GPUs or another world size, node reports of another GPU or CPU model (a skip naming the
// differences, nothing fixed or regressed); two runs of one job are compared as before.
#include <gtest/gtest.h>

#include <string>

#include "compare/compare.hpp"
#include "compare/run_shape.hpp"
#include "compare/same_job.hpp"

using namespace perfgap;
using compare::compare_reports;
using compare::read_report;
using report::Status;

namespace {

std::string same_job_report(const std::string& findings, const std::string& kind, const std::string& node) {
  return R"({"schema":"perfgap.report/1","tool":{"name":"perfgap","version":"0.1.0"},"generated_at":"2026-12-01T00:00:00Z",
    "source":{"kind":")" + kind + R"(","root":null,"inputs":["in.json.gz"]},"node":)" + node + R"(,
    "summary":{"pass":0,"warn":0,"fail":0,"skip":0,"error":0},"findings":[)" + findings + "]}";
}

// analyze kineto's profile.summary (GPU label in its evidence, world size where recorded) and a
// verdict that differs between the two runs.
std::string same_job_profile(const std::string& gpu, int world, const std::string& iteration_status) {
  std::string metrics = world > 0 ? R"({"kernels":10,"world_size":)" + std::to_string(world) + "}" : R"({"kernels":10})";
  return same_job_report(
      R"({"id":"profile.summary","layer":"workload","status":"pass","subject":"in.json.gz","title":"Kineto trace","evidence":[{"source":"in.json.gz","observed":"rank 1 GPU 1 ()" +
          gpu + R"(): 10 kernels, 1.00 ms of kernels"}],"fix":"","impact":"","metrics":)" + metrics +
          R"(},{"id":"profile.gpu_idle","layer":"workload","status":")" + iteration_status +
          R"(","subject":"in.json.gz","title":"idle","evidence":[],"fix":"","impact":"","metrics":{"idle_pct":5}})",
      "analyze", "null");
}

std::string same_job_node(const std::string& gpus, const std::string& cpu, const std::string& numa_status) {
  return same_job_report(
      R"({"id":"gpu.inventory","layer":"gpu","status":"pass","title":")" + gpus +
          R"(","evidence":[],"fix":"","impact":"","metrics":{}},{"id":"numa.balancing","layer":"placement","status":")" + numa_status +
          R"(","title":"numa","evidence":[],"fix":"","impact":"","metrics":{}})",
      "root", R"({"name":"gpu1","settings":{"cpu_model":")" + cpu + R"("}})");
}

std::vector<report::Finding> same_job_compare(const std::string& before, const std::string& after) {
  auto b = read_report(before);
  auto a = read_report(after);
  EXPECT_TRUE(b) << (b ? "" : b.error());
  EXPECT_TRUE(a) << (a ? "" : a.error());
  if (!a || !b) return {};
  return compare_reports(*b, "before.json", *a, "after.json", {});
}

}  // namespace

// The reviewer's pair: A100 at world size 8 against V100 at world size 2 said fixed and regressed.
TEST(CompareSameJob, ProfilesOfOtherGpusOrWorldSizeAreRefused) {
  auto fs = same_job_compare(same_job_profile("NVIDIA A100-PG509-200", 8, "pass"), same_job_profile("Tesla V100-SXM2-16GB", 2, "fail"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "compare.summary");
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("different jobs or machines"), std::string::npos) << fs[0].title;
  EXPECT_NE(fs[0].title.find("GPUs NVIDIA A100-PG509-200 in before.json, Tesla V100-SXM2-16GB in after.json"), std::string::npos) << fs[0].title;
  EXPECT_NE(fs[0].title.find("world size 8 in before.json, 2 in after.json"), std::string::npos) << fs[0].title;
  // The world size alone, where the GPUs match.
  fs = same_job_compare(same_job_profile("NVIDIA A100", 8, "pass"), same_job_profile("NVIDIA A100", 16, "fail"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
}

TEST(CompareSameJob, RunsOfOneJobAreComparedAsBefore) {
  auto fs = same_job_compare(same_job_profile("NVIDIA A100", 8, "pass"), same_job_profile("NVIDIA A100", 8, "fail"));
  ASSERT_GT(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::pass) << fs[0].title;
  bool regressed = false;
  for (const auto& f : fs) regressed = regressed || (f.id == "compare.regressed" && f.status == Status::fail);
  EXPECT_TRUE(regressed);
  // A side that does not say (no world size recorded) is no difference.
  fs = same_job_compare(same_job_profile("NVIDIA A100", -1, "pass"), same_job_profile("NVIDIA A100", 8, "fail"));
  ASSERT_GT(fs.size(), 1u);
}

TEST(CompareSameJob, NodesOfAnotherKindAreRefused) {
  auto fs = same_job_compare(same_job_node("8 GPU(s): 8 x NVIDIA H100 80GB HBM3, driver 550.90.07", "Intel(R) Xeon(R) Platinum 8480+", "fail"),
                             same_job_node("4 GPU(s): 4 x NVIDIA GB200, driver 570.1", "Neoverse-V2", "pass"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("GPUs NVIDIA H100 80GB HBM3 in before.json, NVIDIA GB200 in after.json"), std::string::npos) << fs[0].title;
  EXPECT_NE(fs[0].title.find("CPU Intel(R) Xeon(R) Platinum 8480+ in before.json, Neoverse-V2 in after.json"), std::string::npos) << fs[0].title;
  // The same kind: a fix is a fix, also with a GPU fallen off the bus before (a title naming no model).
  fs = same_job_compare(same_job_node("the NVIDIA driver sees 7 of 8 GPUs on PCI (missing: 0000:18:00.0)", "Intel(R) Xeon(R) Platinum 8480+", "fail"),
                        same_job_node("8 GPU(s): 8 x NVIDIA H100 80GB HBM3, driver 550.90.07", "Intel(R) Xeon(R) Platinum 8480+", "pass"));
  bool fixed = false;
  for (const auto& f : fs) fixed = fixed || f.id == "compare.fixed";
  EXPECT_TRUE(fixed);
}

// A whatif report's world size (whatif.replay's world_size) against an analyze report of another
// job: explain and compare say the reports are of different jobs (the reviewer's case: an A100
// world-8 analyze report beside the whatif report of a V100 world-2 trace).
TEST(CompareSameJob, AWhatifReportOfAnotherWorldSizeIsAnotherJob) {
  const std::string whatif = same_job_report(
      R"({"id":"whatif.replay","layer":"workload","status":"pass","subject":"","title":"replayed","evidence":[],"fix":"","impact":"","metrics":{"ranks":1,"world_size":2}})",
      "whatif", "null");
  auto a = read_report(same_job_profile("NVIDIA A100-PG509-200", 8, "pass"));
  auto w = read_report(whatif);
  ASSERT_TRUE(a && w);
  auto d = compare::different_jobs(*a, "analyze.json", *w, "whatif.json");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "world size 8 in analyze.json, 2 in whatif.json");
  EXPECT_TRUE(compare::different_jobs(*read_report(same_job_profile("NVIDIA A100-PG509-200", 2, "pass")), "a", *w, "w").empty());
}

// A whatif report's GPUs (whatif.replay's "GPUs traced" evidence, the models its traces name)
// against another report's: the same world size on another GPU is another machine (issue 40;
// before, the whatif report of a V100 trace and an A100 profile of world size 2 read as one job).
TEST(CompareSameJob, AWhatifReportOfAnotherGpuIsAnotherMachine) {
  auto whatif = [](const std::string& gpus) {
    return same_job_report(
        R"({"id":"whatif.replay","layer":"workload","status":"pass","subject":"","title":"replayed","evidence":[{"source":"GPUs traced","observed":")" +
            gpus + R"("}],"fix":"","impact":"","metrics":{"ranks":1,"world_size":2}})",
        "whatif", "null");
  };
  auto a = read_report(same_job_profile("NVIDIA A100-PG509-200", 2, "pass"));
  auto v = read_report(whatif("Tesla V100-SXM2-32GB"));
  ASSERT_TRUE(a && v);
  auto d = compare::different_jobs(*a, "analyze.json", *v, "whatif.json");
  ASSERT_EQ(d.size(), 1u);
  EXPECT_EQ(d[0], "GPUs NVIDIA A100-PG509-200 in analyze.json, Tesla V100-SXM2-32GB in whatif.json");
  EXPECT_TRUE(compare::different_jobs(*a, "a", *read_report(whatif("NVIDIA A100-PG509-200")), "w").empty());
  // Two whatif reports of other GPUs: compare refuses them.
  auto fs = same_job_compare(whatif("NVIDIA H100 80GB HBM3"), whatif("Tesla V100-SXM2-32GB + NVIDIA H100 80GB HBM3"));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
}

TEST(CompareSameJob, TheGpuModelOfAProfilesLabel) {
  EXPECT_EQ(compare::gpu_model_of_label("rank 1 GPU 1 (Tesla V100-SXM2-32GB)"), "Tesla V100-SXM2-32GB");
  EXPECT_EQ(compare::gpu_model_of_label("GPU 3 (NVIDIA H100 80GB HBM3) pid 1234"), "NVIDIA H100 80GB HBM3");
  EXPECT_EQ(compare::gpu_model_of_label("r (1).json: rank 3 GPU 3 (NVIDIA A100 (rev 2)) on node-7"), "NVIDIA A100 (rev 2)");
  EXPECT_EQ(compare::gpu_model_of_label("rank 0 GPU 0"), "");
  EXPECT_EQ(compare::gpu_model_of_label("GPU 0 pid 12"), "");
}

// Step logs of samples/s, tokens/s or step times (steps.gap's "throughput unit" evidence, or its
// median_ms): a samples/s run against a tokens/s one read as "+118880% throughput" before.
TEST(CompareSameJob, StepLogsOfAnotherUnitAreAnotherJob) {
  auto steps = [](const std::string& unit, double median) {
    const std::string evidence =
        unit.empty() ? "" : R"({"source":"throughput unit","observed":")" + unit + R"("})";
    const std::string metrics = unit.empty() ? R"({"median_ms":)" + std::to_string(median) + "}"
                                             : R"({"median_throughput":)" + std::to_string(median) + "}";
    return same_job_report(R"({"id":"steps.gap","layer":"workload","status":"skip","subject":"train.log","title":"median","evidence":[)" +
                               evidence + R"(],"fix":"","impact":"","metrics":)" + metrics + "}",
                           "analyze", "null");
  };
  auto fs = same_job_compare(steps("samples/s", 10.1), steps("tokens/s", 12017));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("steps in samples/s in before.json, in tokens/s in after.json"), std::string::npos) << fs[0].title;
  fs = same_job_compare(steps("", 1000), steps("samples/s", 10.1));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_NE(fs[0].title.find("steps in ms per iteration in before.json, in samples/s in after.json"), std::string::npos) << fs[0].title;
  // The same unit: compared, the throughput's fall a regression.
  fs = same_job_compare(steps("tokens/s", 12000), steps("tokens/s", 9000));
  ASSERT_GT(fs.size(), 1u);
  bool worse = false;
  for (const auto& f : fs) worse = worse || (f.id == "compare.metric" && f.status != Status::pass);
  EXPECT_TRUE(worse) << fs[0].title;
}

namespace {

// analyze nccl-tests' nccl_tests.busbw: the collective measured (empty: not said), ranks and
// nodes (0: not said), the peak at 256 MiB.
std::string same_job_nccl_tests(const std::string& collective, int ranks, int nodes, double busbw) {
  std::string metrics = R"({"max_busbw_gbps":)" + std::to_string(busbw) + R"(,"busbw_gbps.268435456":)" + std::to_string(busbw);
  if (ranks > 0) metrics += R"(,"ranks":)" + std::to_string(ranks);
  if (nodes > 0) metrics += R"(,"nodes":)" + std::to_string(nodes);
  metrics += "}";
  const std::string evidence = collective.empty() ? "" : R"({"source":"collective measured","observed":")" + collective + R"("})";
  return same_job_report(R"({"id":"nccl_tests.busbw","layer":"network","status":"skip","subject":"in.txt","title":"peak","evidence":[)" +
                             evidence + R"(],"fix":"","impact":"","metrics":)" + metrics + "}",
                         "analyze", "null");
}

}  // namespace

// The field review's pair: an all_reduce_perf run and an alltoall_perf one (its collective known
// by the file's name) read "busbw 67.29 -> 0.51 (-99.2%)", FAIL compare.metric, exit 1.
TEST(CompareSameJob, NcclTestsOfAnotherCollectiveAreAnotherRun) {
  auto fs = same_job_compare(same_job_nccl_tests("AllReduce", 256, 16, 67.29),
                             same_job_nccl_tests("AllToAll (by the file's name, alltoall.txt: the output names no collective)", 0, 0, 0.51));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].id, "compare.summary");
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("the reports are of different runs (AllReduce in before.json, AllToAll in after.json)"), std::string::npos) << fs[0].title;
  bool metric = false;
  for (const auto& [k, v] : fs[0].metrics) metric = metric || (k == "different_runs" && v == 1);
  EXPECT_TRUE(metric);
  // explain's budget takes each collective's bandwidth: not a different job for it.
  EXPECT_TRUE(compare::different_jobs(*read_report(same_job_nccl_tests("AllReduce", 0, 0, 60)), "a", *read_report(same_job_nccl_tests("AllToAll", 0, 0, 1)), "b")
                  .empty());
  // The same collective, or one side that does not say it: compared.
  fs = same_job_compare(same_job_nccl_tests("AllReduce", 16, 2, 60), same_job_nccl_tests("AllReduce", 16, 2, 30));
  ASSERT_GT(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::pass) << fs[0].title;
  fs = same_job_compare(same_job_nccl_tests("", 16, 2, 60), same_job_nccl_tests("AllReduce", 16, 2, 30));
  ASSERT_GT(fs.size(), 1u);
}

// Ranks and nodes as fleet.pace reads a run's shape (compare::RunShape): 256 ranks on 16 nodes
// against 8 on 8 is another job, said with the collective where that differs too.
TEST(CompareSameJob, NcclTestsOfAnotherShapeAreAnotherJob) {
  auto fs = same_job_compare(same_job_nccl_tests("AllReduce", 256, 16, 67.29), same_job_nccl_tests("AllToAll", 8, 8, 0.51));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("different jobs or machines (256 ranks in before.json, 8 in after.json; 16 nodes in before.json, 8 in after.json; "
                             "AllReduce in before.json, AllToAll in after.json)"),
            std::string::npos)
      << fs[0].title;
}

TEST(CompareRunShape, OneShapeForFleetAndCompare) {
  auto r = read_report(same_job_nccl_tests("AllToAll (by the file's name, x.txt: the output names no collective)", 16, 2, 40));
  ASSERT_TRUE(r);
  const auto sh = compare::run_shape(r->findings.at(0));
  EXPECT_EQ(sh.collective, "AllToAll");
  EXPECT_EQ(sh.ranks, 16);
  EXPECT_EQ(sh.nodes, 2);
  EXPECT_EQ(sh.largest, 268435456u);
  EXPECT_EQ(sh.words(), "16 ranks on 2 nodes, to 256 MiB");
  compare::RunShape unsaid;
  unsaid.read_metric("busbw_gbps.1024.spread", 3);
  unsaid.read_metric("ranks", -1);
  EXPECT_EQ(unsaid.words(), "ranks not said");
  EXPECT_EQ(compare::collective_measured("AllReduce"), "AllReduce");
}

// Step logs of another global batch size (steps.gap's metric global_batch_size): the field review's
// batch-2 Megatron log against a batch-288 one read "median_ms: 87 -> 2.434e+05 (+279660.2%)", FAIL.
TEST(CompareSameJob, StepLogsOfAnotherGlobalBatchAreAnotherJob) {
  auto steps = [](double median, double batch) {
    std::string metrics = R"({"median_ms":)" + std::to_string(median);
    if (batch > 0) metrics += R"(,"global_batch_size":)" + std::to_string(batch);
    metrics += "}";
    return same_job_report(R"({"id":"steps.gap","layer":"workload","status":"skip","subject":"train.log","title":"median","evidence":[],"fix":"","impact":"","metrics":)" +
                               metrics + "}",
                           "analyze", "null");
  };
  auto fs = same_job_compare(steps(87, 2), steps(243400, 288));
  ASSERT_EQ(fs.size(), 1u);
  EXPECT_EQ(fs[0].status, Status::skip);
  EXPECT_NE(fs[0].title.find("different jobs or machines (global batch size 2 in before.json, 288 in after.json)"), std::string::npos) << fs[0].title;
  // The same batch, or a log that does not say it: compared, the slower steps a regression.
  for (double other : {2.0, 0.0}) {
    fs = same_job_compare(steps(87, 2), steps(120, other));
    ASSERT_GT(fs.size(), 1u);
    bool worse = false;
    for (const auto& f : fs) worse = worse || (f.id == "compare.metric" && f.status == Status::fail);
    EXPECT_TRUE(worse) << fs[0].title;
  }
}
