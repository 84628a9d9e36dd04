// Whether two reports are evidently of different jobs or machines, by what the reports carry:
// compare judges two runs of one job (before and after a change), and a difference between two
// setups is not a fix or a regression (as analyze kineto --reference's "another job").
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "compare/compare.hpp"

namespace perfgap::compare {

// The evidence source under which a whatif report's whatif.replay names the GPU models of its
// traces (observed: the models, " + "-joined: Kineto's deviceProperties, nsys's GPU table), which
// different_jobs reads as it reads a profile report's.
inline constexpr std::string_view kTracedGpusEvidence = "GPUs traced";

// The GPU model a profile's GPU label names: "rank 1 GPU 1 (Tesla V100-SXM2-32GB)", "GPU 3 (NVIDIA
// H100 80GB HBM3) pid 1234", "r3.json: rank 3 GPU 3 (NVIDIA A100-PG509-200) on node-7" -> the
// model; "" where the label names none.
std::string gpu_model_of_label(std::string_view label);

// The GPU model of a profile report's per-GPU line (profile.summary's evidence: "rank 3 GPU 3
// (NVIDIA A100-PG509-200): 8568 kernels, ..."), which fleet paces profiles by too; "" for any
// other line.
std::string gpu_model_of_profile_line(std::string_view observed);

// Each difference in words ("GPUs NVIDIA A100-PG509-200 in BEFORE, Tesla V100-SXM2-16GB in AFTER");
// empty when nothing the reports carry says they differ. Profile reports (analyze nsys/kineto:
// profile.summary): the GPU models of its evidence and the recorded world size (metric
// world_size); whatif reports (whatif.replay) the same: its GPUs traced evidence and world_size.
// Node reports (check): the node's kind, its GPU models (gpu.inventory) and CPU
// model (settings.cpu_model), where both reports read them. nccl-tests reports (analyze
// nccl-tests: nccl_tests.busbw): the ranks and nodes of the runs (metrics ranks, nodes) and the
// GPU models its Rank lines name (evidence "nccl-tests GPUs"), read as compare/run_shape reads
// them; a profile's world size is weighed against an nccl-tests run's ranks, its GPU models
// against the run's. Step logs (analyze steps: steps.gap): what they measured (samples/s,
// tokens/s, ms per iteration) and the job's global batch size (metric global_batch_size).
std::vector<std::string> different_jobs(const ReportView& before, const std::string& before_name, const ReportView& after,
                                        const std::string& after_name);

// Two runs of one job that are still not one measurement: nccl-tests reports of different
// collectives (RunShape's collective, "collective measured": an AllReduce's busbw is no
// AllToAll's), as "AllReduce in BEFORE, AllToAll in AFTER"; empty where both name the same or
// one does not say. compare refuses them as it does different jobs; explain does not (a job's
// budget takes the bandwidth of each of its collectives, each pricing its own).
std::vector<std::string> different_runs(const ReportView& before, const std::string& before_name, const ReportView& after,
                                        const std::string& after_name);

}  // namespace perfgap::compare
