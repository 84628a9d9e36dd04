// A pipeline's send/recv replayed (docs/WHATIF.md "Pipelines"): every send joined to its
// receive, the ranks put on one clock from the pairs' ends, and the job replayed op to op with
// each stage's own time between its sends and receives changed. With collectives too (pipeline
// and data parallel: each stage's copies all-reducing their gradients), each collective joins the
// ranks of its group in the same graph. Pure: each rank's point-to-point kernels and collectives
// in, pairs, stages and replays out (whatif.cpp builds the findings).
#pragma once

#include <cstddef>
#include <cstdint>
#include <string>
#include <vector>

#include "analyzers/profile_ranks.hpp"
#include "parsers/profile.hpp"

namespace perfgap::analyzers {

// One send or recv kernel of a rank, on that rank's own clock (ns).
struct P2pOp {
  std::int64_t start = 0, end = 0;
  std::int64_t step = -1;      // the ProfilerStep#N it ran in; -1: none
  std::int64_t host_wait = 0;  // ns its GPU sat idle waiting for a launch since the previous send/recv's end
  std::uint64_t bytes = 0;     // its message; 0: unknown
  std::int32_t peer = -1;      // the job's rank it sends to or receives from (Kineto's Dst Rank / Src Rank); -1: unknown
  parsers::P2pDir dir = parsers::P2pDir::unknown;
  std::int64_t host_stall = 0;  // the part of host_wait in host stalls (gaps of kHostStallNs or longer)
};

// One change to a pipeline, replayed: per rank, the factor its own time between two of its
// sends/receives is multiplied by (missing or 1: as measured); and no GPU waiting for launches.
struct PipelineChange {
  std::vector<double> scale;
  bool no_host_wait = false;   // launch overhead removed (host-bound gaps shorter than kHostStallNs)
  bool no_host_stall = false;  // host stalls removed (host-bound gaps of kHostStallNs or longer)
};

// The job's sends and receives paired and replayed. Pairing (never by time): the n-th send of
// rank a to rank b in step s is the n-th receive of b from a in step s (NCCL matches a pair's
// point-to-point operations in the order they were posted); without step numbers, the n-th of
// the whole capture where both ranks hold as many. A peer the trace does not name is inferred
// only where it is unambiguous: a job of two ranks (each one's only peer is the other).
// Replay: each rank runs its sends and receives in order, its own time (compute, launches)
// between one's end and the next one's start; a pair starts when its later side has arrived and
// each side ends its own transfer after that (as measured). A send or receive whose peer's trace
// is not among the inputs keeps its measured length (as if the peer kept pace).
// Collectives (`colls`, where given): the stages are read from the pairs first; a collective
// joins the ranks of its rank's stage (the stage's data-parallel copies), or every rank where its
// recorded group size is the job's; the n-th of a group's collectives in step s is one instance
// on each of its ranks (by step and order, never by time). An instance starts when its last rank
// has arrived, and each rank ends its own transfer after that; the ranks' clocks come from the
// pairs' ends and the instances' ends together. A rank's own time lies between any two of its ops.
class PipelineReplay {
 public:
  PipelineReplay() = default;
  // `ops`: per rank its sends and receives, by start; `rank`: per rank its number in the job
  // (-1 unknown: it can be paired only by inference); `colls`: per rank its collectives, by start
  // (empty, or as many ranks as `ops`).
  PipelineReplay(const std::vector<std::vector<P2pOp>>& ops, const std::vector<std::int64_t>& rank,
                 const std::vector<std::vector<RankCollective>>& colls = {});
  // Empty when the job replays; else what is missing.
  const std::string& why_not() const { return why_not_; }
  // How the pairs' peers were known (the traces' fields, or the inference).
  const std::string& peers_from() const { return peers_from_; }
  Replay run(const PipelineChange& change) const;
  std::size_t pairs() const { return pairs_; }
  std::size_t unpaired() const { return unpaired_; }
  // Per rank, summed over the replay (ns): its own time between its sends and receives; inside
  // them, waiting for the peer to arrive; and transferring once both have.
  const std::vector<std::int64_t>& own() const { return own_; }
  const std::vector<std::int64_t>& waiting() const { return waiting_; }
  const std::vector<std::int64_t>& transfer() const { return transfer_; }
  const std::vector<std::int64_t>& host_wait() const { return host_; }  // launch overhead
  const std::vector<std::int64_t>& host_stall() const { return stall_; }  // host stalls
  // Per rank its pipeline stage (0: the first, whose activations go out first), -1 where the
  // send/recv graph is not a chain of stages; stages() 0 then, and why in stages_why().
  const std::vector<int>& stage() const { return stage_; }
  std::size_t stages() const { return stages_; }
  const std::string& stages_why() const { return stages_why_; }
  // Collectives joined across their group's ranks (instances), and those of a step whose ranks
  // hold different counts (a capture cut inside it: each keeps its measured length).
  std::size_t collectives() const { return instances_.size(); }
  std::size_t unjoined() const { return unjoined_; }
  // How each collective's group was known (its recorded size, or assumed the stage's copies).
  const std::string& groups_from() const { return groups_from_; }
  // Per rank, summed (ns): inside its collectives, waiting for the group's last rank; and
  // transferring once it had arrived.
  const std::vector<std::int64_t>& coll_waiting() const { return coll_waiting_; }
  const std::vector<std::int64_t>& coll_transfer() const { return coll_transfer_; }

 private:
  struct Op {
    std::size_t rank = 0;
    std::int64_t partner = -1;  // index of the paired op; -1: none
    std::int64_t gap = 0;       // own time since the rank's previous op ended (its first: its arrival on the common clock)
    std::int64_t host = 0;      // of the gap, host-bound idle in gaps shorter than kHostStallNs
    std::int64_t stall = 0;     // of the gap, host-bound idle in host stalls
    std::int64_t transfer = 0;  // its end after the later side's arrival (unpaired: its whole length)
    std::int64_t instance = -1;  // a collective joined: its instance in instances_; -1: none
    parsers::Coll coll = parsers::Coll::none;  // a collective's kind; none: a send or receive
  };
  void pair(const std::vector<std::vector<P2pOp>>& ops, const std::vector<std::int64_t>& rank);
  bool clocks(const std::vector<std::vector<P2pOp>>& ops);
  void build(const std::vector<std::vector<P2pOp>>& ops);
  void find_stages(const std::vector<std::vector<P2pOp>>& ops);
  // `group`: per op, a collective's recorded group size (0: unknown or a send/recv).
  void join_collectives(const std::vector<std::vector<P2pOp>>& ops, const std::vector<std::uint32_t>& group);
  std::vector<std::vector<std::size_t>> instances_;  // per collective instance: its ranks' ops
  std::vector<Op> ops_;                      // every rank's ops, rank after rank, each rank's in order
  std::vector<std::size_t> first_op_;        // per rank: index of its first op in ops_; one more entry: ops_.size()
  std::vector<std::int64_t> offset_;         // per rank: ns added to its clock to put it on the common one
  std::vector<int> component_;               // per rank: which ranks its pairs join it to (each set on its own clock); -1: no ops
  std::vector<std::int64_t> measured_;       // per component: from its first arrival to its last end, as measured
  std::size_t pairs_ = 0, unpaired_ = 0, stages_ = 0;
  std::vector<std::int64_t> own_, waiting_, transfer_, host_, stall_;
  std::vector<int> stage_;
  std::string why_not_, peers_from_, stages_why_;
  std::size_t unjoined_ = 0;
  std::vector<std::int64_t> coll_waiting_, coll_transfer_;
  std::string groups_from_;
};

// A rank of a stage of several ranks (the pipeline's data-parallel copies) that spends notably
// longer between its ops than its stage's median rank, and what the replay saves with its own
// time scaled to that median's: the rank that computes long, never one that only waited (a
// receive's or a collective's waiting is not own time). whatif.rank replays it; profile.straggler
// names the one that saves most on a job of send/recv and collectives.
struct SlowCopy {
  std::size_t rank = 0;        // the replay's rank
  std::size_t stage = 0;
  double own = 0, median = 0;  // ns over the replay: its own time, its stage's median rank's
  PipelineChange change;       // its own time scaled to the median's
  std::int64_t saved = 0;      // ns of the replay the change saves
};
// The ranks whose own time is `notable_ns` (over the replay) or more above their stage's median
// rank's, the one whose change saves most first (of equal savings, the lower rank); none where
// the job has no stages.
std::vector<SlowCopy> slow_copies(const PipelineReplay& p, double notable_ns);

// The slow copies together, each scaled to the median of its stage's ranks outside the set (the
// other ranks' median, as whatif's late set of collectives; where a stage's every rank is in the
// set, its median rank's): copies slow in different stages or copies hold the job each while
// another is slow (the AllReduce waits for the slowest copy of each stage, the pipeline for its
// slowest stage), so each alone saves little and only the set answers. A stage whose median rank
// is itself slow (two of four copies on a slow node) would otherwise halve the saving. At most
// `most` of them (those above their medians by most); no ranks where fewer than two are slow.
// How many slow ranks a set holds, and how many nodes are replayed (whatif's subjects replayed).
inline constexpr std::size_t kSlowSubjects = 8;

struct SlowSet {
  std::vector<std::size_t> ranks;  // the replay's ranks, in order
  std::vector<double> own, target;  // per rank of `ranks` (ns over the replay): its own time, and the median of its stage's ranks outside the set
  PipelineChange change;
  std::int64_t saved = 0;          // ns of the replay the change saves
};
SlowSet slow_set(const PipelineReplay& p, const std::vector<SlowCopy>& slow, std::size_t most);

// A node of a job with data-parallel copies whose ranks compute longer than their stages' ranks on
// the other nodes (a node of slow GPUs: every stage's copies on it are slow, so each stage's
// median rank may be slow too and no rank alone stands out), and what the replay saves with each
// of its ranks' own time scaled to the median of its stage's ranks elsewhere (never up). A rank
// whose stage has no rank on another node keeps its time.
struct SlowNode {
  std::string host;
  std::vector<std::size_t> ranks;  // the replay's ranks on it
  double own = 0, elsewhere = 0;   // ns over the replay, summed over its ranks: their own time, and their stages' medians elsewhere (at most their own)
  PipelineChange change;
  std::int64_t saved = 0;          // ns of the replay the change saves
};
// The nodes (`host`: per replay rank, "" where the trace names none) whose ranks' own time is
// `notable_ns` or more above their stages' medians elsewhere, at most `most` of them (those above
// by most), the one whose change saves most first; none with fewer than two named nodes.
std::vector<SlowNode> slow_nodes(const PipelineReplay& p, const std::vector<std::string>& host, double notable_ns, std::size_t most);

// Per stage, its own time (ns over the replay): its median rank's, of an even count the lower
// middle one (of two copies the faster). Never its ranks' mean: one slow copy pulled a balanced
// stage's mean up, and whatif.stage offered to move layers off it (6.34 ms of
// 1f1b:4:8:-1:dp=4:slow_rank=5, whose stages are balanced); that copy is whatif.rank's.
std::vector<double> stage_own(const PipelineReplay& p);

// A node's change holds its late ranks' changes: it saves at least what they save. Where `part`
// of its `node_ranks` ranks (at most half of them: one late rank, or a late set within it) save
// this share of what the node's change saves or more, the saving is theirs, not the node's (one
// late GPU is not a node to drain): whatif.node and profile.straggler name those ranks first.
inline constexpr double kNodeSavingOfItsRanks = 0.9;
inline bool node_saving_is_its_ranks(std::size_t node_ranks, std::size_t part, double node_saved, double part_saved) {
  return part > 0 && 2 * part <= node_ranks && node_saved > 0 && part_saved >= kNodeSavingOfItsRanks * node_saved;
}

}  // namespace perfgap::analyzers
