// Runs the pair search of slurm/pairs inside an allocation: every round's disjoint pairs at once,
// one `srun --nodes=2 --nodelist=A,B BENCHMARK...` each (sys::run_command, own process group),
// the cover rounds, then confirm rounds while suspects remain, within a time budget. SIGINT,
// SIGTERM and SIGHUP stop every srun still running (srun cancels its step on SIGTERM) and end
// the search with what was measured; the caller writes the report, then lets the signal finish
// the process.
#pragma once

#include <cstdio>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "slurm/pairs.hpp"

namespace perfgap::slurm {

struct PairSearchPlan {
  std::string srun = "srun";
  std::vector<std::string> nodes;       // the allocation's (or --nodelist's, a subset of it)
  std::vector<std::string> srun_args;   // before the benchmark (--mpi=pmix, --gpus-per-node=8)
  std::vector<std::string> benchmark;   // nccl-tests or perfgap-collbench, printing nccl-tests' format
  double budget_s = 1800;               // the whole search: no round starts that would not fit
  double pair_timeout_s = 600;          // one srun
  int max_confirm_rounds = 4;
  PairRule rule;
};

struct PairSearchResult {
  std::vector<PairMeasurement> runs;
  PairSearchSummary summary;
  int signal = 0;  // the signal that stopped the search, 0: none
};

// The srun line of one pair.
std::vector<std::string> pair_srun_command(const PairSearchPlan& plan, const NodePair& pair);

// The pair's figure from the benchmark's output (nccl-tests format): the out-of-place busbw of
// the largest size, else the average bus bandwidth. Errors: no table, wrong results, a busbw
// of 0 (the two tasks ran as two singletons: srun needs --mpi=pmix or the site's MPI plugin).
tl::expected<double, std::string> pair_busbw(std::string_view output);

// `log` (stderr) gets a line per round as it ends.
PairSearchResult run_pair_search(const PairSearchPlan& plan, std::FILE* log);

}  // namespace perfgap::slurm
