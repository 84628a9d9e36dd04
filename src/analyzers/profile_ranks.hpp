// Cross-rank alignment of a job's profiles: the ranks' clocks are put on one timeline from the
// ends of the same collectives (an NCCL collective ends on every rank of the communicator at
// about the same moment, whatever time each rank arrived), then each collective's arrivals,
// skew and last rank follow. Pure: collective kernels in, alignment out (analyzers/profile.cpp
// builds the findings).
#pragma once

#include <array>
#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include "parsers/profile.hpp"

namespace perfgap::analyzers {

// One collective kernel of a rank, on that rank's own clock (ns).
struct RankCollective {
  parsers::Coll coll = parsers::Coll::none;
  std::int64_t start = 0, end = 0;
  std::int64_t step = -1;      // the ProfilerStep#N it ran in; -1: none (no step annotations)
  std::int64_t host_wait = 0;  // ns the GPU sat idle waiting for a launch since the previous one's end (what-if: launches)
  std::uint64_t bytes = 0;     // its message (nccl-tests' size: the larger of in and out); 0: unknown
  std::uint32_t group = 0;     // ranks in its communicator (Kineto's args); 0: unknown
  std::int64_t host_stall = 0;  // the part of host_wait in host stalls (gaps of kHostStallNs or longer)
};

// A collective seen by several ranks (after alignment, on the reference rank's clock).
struct MatchedCollective {
  parsers::Coll coll = parsers::Coll::none;
  std::size_t ref_index = 0;            // its index in the reference rank's sequence
  std::int64_t end = 0;                 // the reference rank's end
  std::vector<std::int32_t> index;      // per rank: its index in that rank's sequence; -1 none
  std::vector<std::int64_t> arrival;    // per rank: kernel start on the reference clock (valid where index >= 0)
  std::int64_t first = 0, last = 0, second = 0;  // earliest, latest and second-latest arrival
  std::int32_t last_rank = -1;          // the rank that arrived last by more than the tie margin; -1: none
};

struct RankAlignment {
  std::size_t reference = 0;
  std::vector<bool> aligned;
  std::vector<std::int64_t> offset;     // ns added to a rank's clock to put it on the reference's
  std::vector<std::int64_t> end_spread; // ns: the median distance of its collective ends from the reference's after alignment
  std::vector<std::string> why_not;     // per rank not aligned: why
  std::vector<bool> by_step;            // per rank: paired with the reference by step number and order (else by the ends' times)
  std::vector<MatchedCollective> matches;  // in the reference rank's order
  std::int64_t tolerance = 0;           // ns: how far apart the ends of one collective may be
};

// The collectives that align ranks: every NCCL kernel but SendRecv (point-to-point transfers
// do not end together across the job).
bool aligns_ranks(parsers::Coll c);

// Aligns the ranks (each sequence sorted by start). Where both a rank and the reference carry
// step numbers, their collectives are paired by step and order within the step first, whatever
// their clocks say (two hosts' clocks may be seconds apart: the nearest ends are then whole
// iterations off); otherwise, or where that pairing does not hold, by the pairing whose ends
// meet at the smallest offset. Ranks without collectives, and ranks whose sequence matches the
// reference's at no offset where the ends coincide, are left out and named in why_not; a
// rank's clock is never guessed.
RankAlignment align_ranks(const std::vector<std::vector<RankCollective>>& ranks);

// The job's aligned collectives replayed: each collective starts when its last rank arrives and
// lasts as long as it did after that (its transfer), and each rank arrives its own time after
// the previous collective's end (what it computes and launches in between, on nothing else).
// Replayed as measured this is the measured timeline between the first and the last matched
// collective; with the ranks in `on_time` given, at every collective, the median time of the
// other ranks instead of their own, the difference is what those ranks cost the job together. Two ranks
// late together are one cause: either alone saves nothing (the other still holds everyone).
// A job of one rank replays its own timeline (nothing waits for another rank).
struct Replay {
  std::int64_t measured = 0, replayed = 0;  // ns from the first matched collective's end to the last's
  std::size_t intervals = 0;                // collective-to-collective steps replayed
  std::size_t sized = 0;                    // of them, steps whose collective's size is known (busbw)
  double sized_transfer = 0;                // their transfers as measured (ns)
  double sized_at_1gbps = 0;                // their transfers at 1 GB/s bus bandwidth (ns): / sized_transfer is their busbw
  std::size_t at_known_busbw = 0;           // of them, steps ReplayChange::busbw_at knew a bandwidth for
  // Over whole iterations only (CollectiveReplay::overlap found their bounds; else 0): from the
  // end of one iteration's last collective to the end of a later one's. A capture's first and
  // last iterations enter the replay in part, and the parts are not shaped like a whole step.
  // `whole_iterations`: how many iterations that span is (the reference rank's windows it
  // crosses), so that a saving over it and the step it is taken from are of the same iterations.
  std::int64_t whole_measured = 0, whole_replayed = 0;
  std::size_t whole_iterations = 0;
};
// One change to the job, replayed (docs/WHATIF.md): what each rank and collective would do instead.
struct ReplayChange {
  std::vector<bool> on_time;   // these ranks arrive no later than the median of the others
  bool no_host_wait = false;   // no GPU waits for a launch: each rank's host-bound idle removed, its host stalls aside
  double busbw_gbps = 0;       // > 0: a collective of known size lasts no longer than at this bus bandwidth
  // Else, where given: the bus bandwidth (GB/s) a collective of this kind and size reaches (a
  // healthy nccl-tests run); 0 where unknown (the collective keeps its time).
  std::function<double(parsers::Coll, std::uint64_t bytes)> busbw_at;
  // Communication overlapped (whatif.overlap): within an iteration each rank computes at its own
  // pace, not waiting for its collectives; the collectives run in issue order, each once its last
  // rank has issued it and the one before has ended; the first collective of the next iteration
  // (the optimizer and the next forward before it) waits for the whole chain. Needs overlap().
  bool overlap = false;
  bool no_host_stall = false;  // no host stalls: each rank's host-bound gaps of kHostStallNs or longer removed
};
// What the overlap change needs of the job: per match of the alignment, the iteration it lies
// in (-1: none), and per rank the time its compute was held by collectives between two instants
// of its own clock (its collective kernels with no compute kernel running beside them).
struct OverlapInput {
  std::vector<std::int32_t> iter_of;
  std::function<std::int64_t(std::size_t rank, std::int64_t from, std::int64_t to)> held;
};
// nccl-tests' bus-bandwidth factor: busbw = size / time x factor (all-reduce 2(n-1)/n, all-gather,
// reduce-scatter and all-to-all (n-1)/n, broadcast and reduce 1).
double busbw_factor(parsers::Coll c, std::uint32_t ranks);
// The job's steps read once from the alignment; then replayed as often as there are changes to
// try (the late set, each late rank, each node, launches, a bandwidth).
class CollectiveReplay {
 public:
  CollectiveReplay() = default;
  CollectiveReplay(const RankAlignment& al, const std::vector<std::vector<RankCollective>>& ranks);
  Replay run(const ReplayChange& change) const;
  // Reads what ReplayChange::overlap replays: each rank's own time between its arrivals at two
  // collectives of one iteration, less the time its compute was held by collectives in between.
  void overlap(const RankAlignment& al, const std::vector<std::vector<RankCollective>>& ranks, const OverlapInput& in);
  // Per rank: the time its compute was held by collectives within iterations, summed over the
  // whole iterations replayed (Replay::whole_*), else over every step overlap() could chain (ns).
  const std::vector<std::int64_t>& held() const { return held_; }
  // Of held(), summed over the ranks, by the collective that held the compute (Coll's index).
  const std::array<std::int64_t, parsers::kCollCount>& held_by_coll() const { return held_by_coll_; }
  // Steps chained to the one before within an iteration (overlap()), and the iterations held()
  // counts (the whole iterations, else those the chained steps lie in).
  std::size_t chained() const { return chained_; }
  std::size_t held_iterations() const { return held_iterations_; }
  // Steps whose collective starts on some rank before the previous one has ended there: the
  // collectives of several communicators running at once on their own streams, not one chain.
  std::size_t concurrent() const { return concurrent_; }
  std::size_t steps() const { return steps_.size(); }
  // The timeline with the ranks in `on_time` arriving, at every collective, no later than the
  // median of the other ranks; an empty set replays it as measured.
  Replay run(const std::vector<bool>& on_time) const { return run(ReplayChange{on_time, false, 0, {}}); }
  // Per rank: its time to arrive after the previous collective's end, beyond the median of the
  // other ranks' (the pace run() gives a changed rank), summed over the replayed steps (ns); 0
  // for ranks not aligned. Of two ranks the later one's whole lead; of half a job late, each late
  // rank's lead on the other half.
  const std::vector<std::int64_t>& excess() const { return excess_; }
  // Per rank: its host-bound idle inside the replayed steps, summed (ns); of it, inside the steps
  // of whole iterations (Replay::whole_*; empty where overlap() found none). Host stalls apart:
  // host_wait() is the launch overhead, host_stall() the gaps of kHostStallNs or longer.
  const std::vector<std::int64_t>& host_wait() const { return host_wait_; }
  const std::vector<std::int64_t>& whole_host_wait() const { return whole_host_wait_; }
  const std::vector<std::int64_t>& host_stall() const { return host_stall_; }
  const std::vector<std::int64_t>& whole_host_stall() const { return whole_host_stall_; }
  // Per rank: its time to arrive after the previous collective's end, summed over the steps (ns).
  const std::vector<std::int64_t>& arriving() const { return arriving_; }

 private:
  struct Step {
    std::vector<std::int64_t> gap;   // per rank: its time to arrive after the previous end; -1: not both seen
    std::vector<std::int64_t> host;  // per rank: of that, host-bound GPU idle in gaps shorter than kHostStallNs
    std::vector<std::int64_t> stall;  // per rank: of that, host-bound GPU idle in host stalls
    std::int64_t median = 0;         // the median rank's gap
    std::int64_t transfer = 0;       // the collective's end after its last arrival
    std::int64_t measured = 0;       // end(k) - end(k-1)
    std::int64_t at_busbw = -1;      // its transfer at ReplayChange::busbw_gbps = 1 GB/s (ns); -1: size unknown
    parsers::Coll coll = parsers::Coll::none;
    std::uint64_t bytes = 0;         // its size (nccl-tests' size); 0: unknown
    std::size_t match = 0;           // its collective's index in the alignment's matches
    bool within = false;             // overlap(): the previous step ends at the collective before, in the same iteration
    std::vector<std::int64_t> own;   // overlap(): per rank, its own time since its arrival at the previous collective
  };
  std::vector<Step> steps_;
  std::vector<std::int64_t> excess_, host_wait_, arriving_, held_, whole_host_wait_, host_stall_, whole_host_stall_;
  std::array<std::int64_t, parsers::kCollCount> held_by_coll_{};
  std::size_t chained_ = 0, held_iterations_ = 0, concurrent_ = 0;
  std::size_t whole_lo_ = 0, whole_hi_ = 0;  // the steps of whole iterations: [lo, hi); empty: none
  std::size_t whole_iterations_ = 0;         // the iterations they span
};

// One input (a rank's trace) of a job, as the rank-set check sees it before anything is judged.
struct RankInput {
  std::string name;                        // the file
  std::int64_t rank = -1, world = -1;      // Kineto distributedInfo; -1: not recorded
  std::int64_t wall_start_ns = -1;         // the capture's start on the wall clock (ns since the epoch); -1: unknown
  std::int64_t step_lo = -1, step_hi = -1;  // the ProfilerStep numbers it holds; -1: none
  std::uint64_t fingerprint = 0;           // of its timeline: equal for two copies of one trace
  // Its GPUs' collectives (those with any), held by its digest: not copied per input (a job of
  // 64 ranks of 3,500 iterations holds ~30 MB of them).
  std::vector<const std::vector<RankCollective>*> seqs;
};

// Which inputs make the job: a copy of a trace already read, a rank number read twice (the
// later trace is of another run or a restart), a trace of a job of another size, captured
// hours from the others, at steps none of the others ran, or whose collectives meet none of
// the others' while most ranks' do, is left out and said why; then which ranks of the job's
// recorded size are missing.
struct RankSet {
  std::vector<std::string> left_out;  // per input: why it is left out; empty: in the job
  std::int64_t world = -1;            // the job's size, where the traces record it
  std::vector<std::int64_t> ranks;    // the rank numbers kept, sorted (those recorded)
  std::vector<std::int64_t> missing;  // of 0..world-1, the ranks no kept input holds
  // Kept inputs (indices) that record neither their rank nor their capture's wall-clock start
  // (nsys exports before 2022, Kineto traces of no distributed run): nothing tells whether
  // they are of this run, so they are assumed to be. Empty with one kept input.
  std::vector<std::size_t> untied;
};
RankSet check_rank_set(const std::vector<RankInput>& inputs);

// "2-5, 7" for {2,3,4,5,7}.
std::string rank_ranges(const std::vector<std::int64_t>& sorted);

}  // namespace perfgap::analyzers
