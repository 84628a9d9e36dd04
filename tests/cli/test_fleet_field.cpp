// perfgap fleet over the real step logs and profiles of ../shared (field review 5): measurements
// of unrelated jobs (global batch sizes 2 to 1024; V100 and A100 profiles of 2 to 16 ranks) are
// not one fleet's pace, and logs of start-up steps only set none; explain then prices no slowest
// node. Skipped where ../shared is absent.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>
#include <string>
#include <vector>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::run_binary;

namespace {

const fs::path kFleetShared = fs::path(PERFGAP_SHARED_DIR);

// The step logs the reviewer gave fleet (stfl/): batch 2, 128, 512, 1024 and a samples/sec log
// with steady-state steps; 288 (skipped iterations only), 4 (one skipped iteration), a log of
// skipped iterations without its batch and one of iteration 1/1 at 128: start-up only.
const std::vector<fs::path> kStepLogs = {
    kFleetShared / "field/logs/st-fsdp-samples-per-sec-srun/input.txt",
    kFleetShared / "field/logs/st-megatron-abbrev-log-skipped-iters/input.txt",
    kFleetShared / "fixtures/steps/megatron-bert-fp16-skipped-iters-timers-lines-nccl-743.txt",
    kFleetShared / "fixtures/steps/megatron-llm-slow-86s-iterations-no-timestamp-epfllm-11.txt",
    kFleetShared / "fixtures/steps/megatron-lm-2020-gpt2-v100-memory-and-timers-megatron-60.txt",
    kFleetShared / "fixtures/steps/megatron-lm-mixtral-16xh100-timestamped-tflops-moe-megatron-756.txt",
    kFleetShared / "field/logs/st-megatron-srun-label-3-iters-vs-80ms/input.txt",
    kFleetShared / "field/logs/st-megatron-timestamped-single-iteration/input.txt",
    kFleetShared / "field/logs/st-nemo2-skypilot-train-step-timing/input.txt",
};

// The Kineto traces of kfl/: A100 at 16, 8 and 2 ranks, V100 at 2 ranks (16 and 32 GB).
const std::vector<fs::path> kProfiles = {
    kFleetShared / "fixtures/profiles/kineto_hta_a100_ws16_rank0_sendrecv.json.gz",
    kFleetShared / "fixtures/profiles/kineto_hta_a100_ws8_trace_diff_control.json.gz",
    kFleetShared / "fixtures/profiles/kineto_hta_a100_ws8_trace_diff_test.json.gz",
    kFleetShared / "fixtures/profiles/kineto_hta_a100x2_nccl_metadata.json.gz",
    kFleetShared / "fixtures/profiles/kineto_hta_v100x2_allreduce_df_index_resolver.json.gz",
};

bool all_present(const std::vector<fs::path>& files) {
  for (const auto& f : files)
    if (!fs::exists(f)) return false;
  return true;
}

// Each input analyzed by the real binary into DIR/NAME-K.json.
void fleet_field_analyze(const std::string& kind, const std::vector<fs::path>& inputs, const perfgap::fixture::TempDir& dir) {
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    auto r = run_binary(PERFGAP_BINARY, {"analyze", kind, inputs[k].string(), "--format", "json", "--output",
                                         dir.path() + "/in/" + kind + "-" + std::to_string(k) + ".json"});
    ASSERT_TRUE(r.status == 0 || r.status == 1) << inputs[k] << ": " << r.err;
  }
}

std::vector<json> fleet_field_findings(const json& report, const std::string& id) {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["id"] == id) out.push_back(f);
  return out;
}

}  // namespace

// Before: WARN fleet.pace [steps.gap.median_ms] "st-megatron-abbrev-log-skipped-iters/input sets the
// pace: 243391 ms against the fleet's median 12880 ms (1789.7% above)", and explain priced it as
// slowest_node, 94.7 points, "drain it".
TEST(FleetField, StepLogsOfDifferentJobsSetNoPace) {
  if (!all_present(kStepLogs)) GTEST_SKIP() << kFleetShared << " absent";
  perfgap::fixture::TempDir dir;
  fs::create_directories(dir.path() + "/in");
  fleet_field_analyze("steps", kStepLogs, dir);
  // The report says the job's global batch size where the log does, and why a log is start-up only.
  const auto abbrev = json::parse(perfgap::fixture::read_file(dir.path() + "/in/steps-1.json"));
  const auto gap = fleet_field_findings(abbrev, "steps.gap").at(0);
  EXPECT_EQ(gap["metrics"]["global_batch_size"], 288) << gap.dump(1);
  bool startup = false;
  for (const auto& e : gap["evidence"]) startup |= e["source"] == "start-up only";
  EXPECT_TRUE(startup) << gap.dump(1);

  const std::string out = dir.path() + "/fleet.json";
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json", "--output", out});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  const auto fleet = json::parse(perfgap::fixture::read_file(out));
  // One pace per global batch size, each of a single node: none names a pace setter.
  const auto paces = fleet_field_findings(fleet, "fleet.pace");
  ASSERT_FALSE(paces.empty());
  int batch_paces = 0;
  for (const auto& p : paces) {
    const std::string subject = p["subject"], title = p["title"];
    EXPECT_NE(p["status"], "warn") << subject << ": " << title;
    EXPECT_EQ(title.find("sets the pace"), std::string::npos) << subject << ": " << title;
    batch_paces += subject.starts_with("steps.gap.median_ms [global batch size ");
  }
  EXPECT_EQ(batch_paces, 4) << "batch 2, 128, 512 and 1024";
  // The four logs of start-up steps only are named, with why.
  int startup_only = 0;
  for (const auto& u : fleet_field_findings(fleet, "fleet.unreadable"))
    startup_only += u["title"].get<std::string>().find("start-up steps only") != std::string::npos;
  EXPECT_EQ(startup_only, 4);
  // explain prices no slowest node from it.
  auto e = run_binary(PERFGAP_BINARY, {"explain", "--reference", "12880", "--measured", kStepLogs[1].string(), out, "--format", "json"});
  ASSERT_TRUE(e.status == 0 || e.status == 1) << e.err;
  const auto budget = fleet_field_findings(json::parse(e.out), "gap.budget").at(0);
  EXPECT_FALSE(budget["metrics"].contains("step.slowest_node.measured")) << budget["title"];
  EXPECT_EQ(budget.value("fix", "").find("drain it"), std::string::npos) << budget["fix"];
}

// Before: PASS fleet.pace [profile.iterations.iteration_ms] "kineto_hta_v100x2_... sets the pace:
// iteration time 348 ms against the fleet's median 215 ms (61.6% above)": five different jobs.
TEST(FleetField, ProfilesOfDifferentJobsSetNoPace) {
  if (!all_present(kProfiles)) GTEST_SKIP() << kFleetShared << " absent";
  perfgap::fixture::TempDir dir;
  fs::create_directories(dir.path() + "/in");
  fleet_field_analyze("kineto", kProfiles, dir);
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", "json"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  const auto paces = fleet_field_findings(json::parse(r.out), "fleet.pace");
  ASSERT_EQ(paces.size(), 5u) << "one per GPU model and world size";
  for (const auto& p : paces) {
    const std::string subject = p["subject"], title = p["title"];
    EXPECT_EQ(p["status"], "skip") << subject << ": " << title;
    EXPECT_EQ(title.find("sets the pace"), std::string::npos) << subject << ": " << title;
    EXPECT_TRUE(subject.starts_with("profile.iterations.iteration_ms [")) << subject;
  }
  bool a100_8 = false;
  for (const auto& p : paces) a100_8 |= p["subject"] == "profile.iterations.iteration_ms [NVIDIA A100-PG509-200, 8 ranks]";
  EXPECT_TRUE(a100_8) << paces.front()["subject"];
}
