// Whether two reports are evidently of different jobs or machines, by what the reports carry:
// compare judges two runs of one job (before and after a change), and a difference between two
// setups is not a fix or a regression (as analyze kineto --reference's "another job").
#pragma once

#include <string>
#include <vector>

#include "compare/compare.hpp"

namespace perfgap::compare {

// Each difference in words ("GPUs NVIDIA A100-PG509-200 in BEFORE, Tesla V100-SXM2-16GB in AFTER");
// empty when nothing the reports carry says they differ. Profile reports (analyze nsys/kineto:
// profile.summary): the GPU models of its evidence and the recorded world size (metric
// world_size). Node reports (check): the node's kind, its GPU models (gpu.inventory) and CPU
// model (settings.cpu_model), where both reports read them. nccl-tests reports (analyze
// nccl-tests: nccl_tests.busbw): the ranks and nodes of the runs (metrics ranks, nodes) and the
// GPU models its Rank lines name (evidence "nccl-tests GPUs"); a profile's world size is weighed
// against an nccl-tests run's ranks, its GPU models against the run's.
std::vector<std::string> different_jobs(const ReportView& before, const std::string& before_name, const ReportView& after,
                                        const std::string& after_name);

}  // namespace perfgap::compare
