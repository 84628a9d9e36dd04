// What one nccl-tests run was, as its report says it (analyze nccl-tests: nccl_tests.busbw's
// metrics and its "collective measured" and "nccl-tests GPUs" evidence): the collective, the
// ranks and nodes, the GPU models and the largest size measured. One notion for every reader of
// such reports: fleet.pace keeps runs of different shapes apart (fleet/measured), compare and
// explain do not take a run of another shape for the same run (compare/same_job).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>

#include "compare/compare.hpp"

namespace perfgap::compare {

struct RunShape {
  std::string collective;          // "AllReduce", "AllToAll"; "" where the report does not say
  long long ranks = 0, nodes = 0;  // 0: not said
  std::string gpus;                // the models, " + "-joined ("nccl-tests GPUs"); "" not said
  std::uint64_t largest = 0;       // the largest size with a busbw (busbw_gbps.SIZE), bytes; 0: none

  // One metric of nccl_tests.busbw (ranks, nodes, busbw_gbps.SIZE; the others are no part of it).
  void read_metric(std::string_view name, double value);
  // One evidence line: "collective measured", "nccl-tests GPUs"; the others are no part of it.
  void read_evidence(std::string_view source, std::string_view observed);
  // "8 ranks on 1 node, NVIDIA H100 80GB HBM3, to 8 GiB" ("ranks not said, ..." where it does not
  // say them); the collective apart, which fleet.pace groups by first and compare names itself.
  std::string words() const;
};

// The collective a "collective measured" evidence names: "AllToAll (by the file's name, ...)" ->
// "AllToAll".
std::string_view collective_measured(std::string_view observed);

// The shape a report's nccl_tests.busbw finding says.
RunShape run_shape(const ReportFinding& busbw);

}  // namespace perfgap::compare
