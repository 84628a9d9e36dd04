// perfgap whatif's job (analyzers/whatif.cpp): what is replayed, built from a job's digest and
// analysis: its collectives on one clock, one rank's own collectives, a pipeline's sends and
// receives paired (with its copies' collectives), or nothing to replay and why.
#pragma once

#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

// What is replayed: the job's collectives on one clock (several ranks), one rank's own
// collectives, a pipeline's sends and receives paired, or nothing to replay.
struct Job {
  CollectiveReplay replayer;
  bool pipeline = false;               // NCCL's only kernels are send/recv: `pipe` replays them
  PipelineReplay pipe;
  std::int64_t world = -1;             // the job's size its traces record; -1: not recorded
  Replay base;                         // as measured
  std::vector<std::size_t> gpu;        // replay rank -> GPU
  std::vector<std::string> name;       // replay rank -> its name in findings
  std::vector<std::int64_t> rank;      // replay rank -> the job's rank its trace records (pipelines); -1: not recorded
  std::vector<std::size_t> late_set;   // ranks late together (the analysis's)
  // Pipelines: the ranks computing longer than their stage's median rank, those together, and
  // (with data-parallel copies) the nodes whose ranks compute longer than their stages' elsewhere,
  // each with its replayed change: the analysis's where it built the graph, else found here.
  std::vector<SlowCopy> slow{};
  SlowSet slow_set{};
  std::vector<SlowNode> slow_nodes{};
  double step_ns = 0;                  // the measured step: the iterations' mean window
  std::size_t iterations = 0;          // windows
  std::string why_not;                 // nothing to replay: why
  std::string overlap_why;             // the overlap change cannot be decided: why ("" where it can)
  double exposed_ns = 0, wait_ns = 0;  // per iteration, mean over GPUs: exposed communication (profile.exposed_comm), waiting for a later rank
  // A job of collectives and send/recv replayed collective to collective (its pipeline could not
  // be replayed with its collectives): why not. Its send/recv count as each rank's own time there,
  // so a rank waiting in a receive would read as late: no rank, node or stage change is offered.
  std::string mixed_why{};
};

// The job as its traces allow it to be replayed (Job::why_not says why where they do not); takes
// the analysis's pipeline graph where one was built.
Job replayable(const Digest& d, Analysis& an);

// whatif's changes (each a finding: saved_ms_per_iter its first metric) sorted by what they save,
// a node after the late rank or late set within it whose saving it is (node_saving_is_its_ranks:
// it then passes, saying so), and a late set of most of a node's ranks after the node. `moved`:
// per finding, the replay's ranks its change moves (empty: none).
void place_nodes(std::vector<Finding>& tried, const std::vector<std::vector<std::size_t>>& moved);
// The ranks a change of collectives moves (those it has arrive on time), in order.
std::vector<std::size_t> on_time_ranks(const ReplayChange& c);

// A GPU's name in whatif's findings.
std::string gpu_name(const Digest& d, std::size_t g);

}  // namespace perfgap::analyzers::profile_model
