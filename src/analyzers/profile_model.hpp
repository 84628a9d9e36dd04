// What the profile analyzer keeps of a profile and how it reads it, shared by its parts: the
// digest of a rank (profile_digest.cpp: per GPU its intervals, collectives and candidate
// iteration windows), the job's analysis of the digests (profile_analysis.cpp: iterations, the
// ranks on one clock, stragglers), the findings (profile.cpp; the straggler's and exposed
// communication's in profile_comm_findings.cpp), the job's files read into one
// digest (profile_job.cpp) and the what-if replays (whatif.cpp). Internal to src/analyzers.
#pragma once

#include <fmt/format.h>

#include <array>
#include <cstddef>
#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "analyzers/profile_pipeline.hpp"
#include "analyzers/profile_ranks.hpp"
#include "core/kb.hpp"
#include "parsers/profile.hpp"

namespace perfgap::analyzers::profile_model {

using parsers::ActKind;
using parsers::Coll;
using parsers::GpuActivity;
using parsers::kCollCount;
using parsers::Profile;

constexpr std::size_t kMinKernelsToJudge = 50;

// A host-bound gap (the GPU idle until the host launched its next work) this long or longer is a
// host stall: the host did something else for a millisecond or more (data loading, JIT compiling,
// Python between steps), which no cheaper launch removes. Shorter ones are launch overhead: a
// framework's dispatch and the launch call per kernel (tens to a few hundred microseconds).
constexpr std::int64_t kHostStallNs = 1'000'000;

// The communication kernels besides NCCL's (data/kb/comm_kernels.yaml, or the --kb table), their
// libraries in slots after the NCCL collectives' (analyzers.hpp kCommSlots). The slots follow the
// table's order, so every rank's digest numbers them alike. Entries of names starting with `nccl`
// are NCCL's and RCCL's, told by parsers::nccl_collective: they take no slot.
struct CommLibraries {
  static constexpr auto kLibraries = static_cast<std::size_t>(kCommLibraries);
  const std::vector<core::KbCommKernel>* table = nullptr;
  std::vector<std::string> name, kind;  // per slot from kCollCount

  explicit CommLibraries(const ProfileOptions& o) : table(o.comm_kernels ? o.comm_kernels : &core::builtin_kb().comm_kernels) {
    for (const auto& e : *table) {
      if (e.match.starts_with("nccl") || slot(e.library) >= 0) continue;
      if (name.size() + 1 == kLibraries) {  // the last slot holds every further library
        name.emplace_back("other communication libraries");
        kind.emplace_back("collective");
      }
      if (name.size() == kLibraries) continue;
      name.push_back(e.library);
      kind.push_back(e.kind);
    }
  }
  // The slot of a library; -1 for one with no slot of its own (NCCL's entries).
  int slot(std::string_view library) const {
    for (std::size_t i = 0; i < name.size(); ++i)
      if (name[i] == library) return parsers::kCollCount + static_cast<int>(i);
    return name.size() == kLibraries ? kCommSlots - 1 : -1;
  }
  std::string slot_name(int c) const {
    return c < parsers::kCollCount ? std::string(parsers::coll_name(static_cast<Coll>(c))) : name[static_cast<std::size_t>(c - parsers::kCollCount)];
  }
  std::string_view slot_kind(int c) const {
    if (c < parsers::kCollCount) return static_cast<Coll>(c) == Coll::SendRecv ? "sendrecv" : "collective";
    return kind[static_cast<std::size_t>(c - parsers::kCollCount)];
  }
};

// A library's name in metric names: lower-case letters and digits, `+` as `p` (MSCCL++: mscclpp),
// every other run of characters one `_`.
std::string library_key(std::string_view name);

// A finding of this analyzer, its status the default (skip) until the block decides.
Finding started(std::string_view id, std::string_view layer, std::string subject);

struct Iv {
  std::int64_t s, e;
};
using Ivs = std::vector<Iv>;

void push(Ivs& u, std::int64_t s, std::int64_t e);

// a minus b (both merged and sorted).
Ivs minus(const Ivs& a, const Ivs& b);

// Length of a merged list inside [ws, we).
std::int64_t measure(const Ivs& u, std::int64_t ws, std::int64_t we);

double ms(double ns);

// The usual median: of an even count, the mean of the two middle values.
double median(std::vector<double> v);

double percentile(std::vector<double>& v, double q);

// What profile.copies tells apart: a copy's direction and, for host copies, the host memory
// (pageable copies are staged through a driver buffer and hold the host; pinned ones are DMA).
enum CopyClass : std::uint8_t {
  kH2dPageable,
  kH2dPinned,
  kH2dManaged,
  kH2d,
  kD2hPageable,
  kD2hPinned,
  kD2hManaged,
  kD2h,
  kD2d,
  kP2p,
  kOtherCopy,
  kMemset,
  kCopyClasses
};
constexpr std::array<std::string_view, kCopyClasses> kCopyClassName = {"H2D pageable", "H2D pinned", "H2D managed",  "H2D",
                                                                       "D2H pageable", "D2H pinned", "D2H managed",  "D2H",
                                                                       "D2D",          "P2P",        "other copies", "memset"};
constexpr std::array<std::string_view, kCopyClasses> kCopyClassKey = {"h2d_pageable", "h2d_pinned", "h2d_managed", "h2d",
                                                                      "d2h_pageable", "d2h_pinned", "d2h_managed", "d2h",
                                                                      "d2d",          "p2p",        "other",       "memset"};

CopyClass copy_class(const GpuActivity& a);

struct Win {
  std::int64_t s, e;
  std::int64_t step = -1;  // its ProfilerStep#N number; -1: none
};
struct WinStats {
  double len = 0, compute = 0, busy = 0, idle = 0, host_idle = 0, copy = 0, comm_all = 0, exposed_all = 0;
  double wait = 0;  // inside collectives, waiting for a later rank (cross-rank profiles)
  double copy_bare = 0;  // copies and memsets while no kernel runs
  std::array<double, kCopyClasses> copy_by{};
  std::array<double, kCommSlots> comm{}, exposed{};  // per slot: NCCL collective, then library
  std::array<double, kCommSlots> kernels{};          // communication kernels starting in the window
  double host_stall = 0;  // the part of host_idle in gaps of kHostStallNs or longer (host stalls, not launch overhead)
};

// The ways of cutting iterations that analyze() chooses among over the whole job: each rank's
// windows for each are found while its activities are there (digest()), the choice is the job's.
enum Cut : std::uint8_t { kCutRange, kCutStep, kCutStepLike, kCutPeriod, kCutWhole, kCuts };

// A GPU's windows by one cut, with the figures of each window that need no other rank.
struct LocalStats {
  double len = 0, compute = 0, copy = 0, idle = 0, host_idle = 0;
  double host_stall = 0;  // as WinStats::host_stall
};
struct CutWindows {
  std::vector<Win> wins;
  std::vector<LocalStats> stats;
};

// A GPU as analyze() needs it once its activities are dropped: its counts, its communication
// (only where it runs: compute is kept where it overlaps communication, enough for the exposed
// part), its NCCL kernels, its collective sequence for the cross-rank alignment, and its
// candidate windows with their local figures. About 0.5 MB for a rank of 150k kernels in 3,500
// iterations (the unit test ProfileRanks.JobHoldsAProfilePerThreadAndSmallDigestsNotTheRanks).
struct GpuTimeline {
  std::size_t acts = 0, kernels = 0;
  Ivs compute;  // compute kernels, cut to where communication runs
  Ivs comm_all, exposed_all;
  Ivs wait;  // parts of its collective kernels spent waiting for a later rank
  std::array<Ivs, kCommSlots> comm, exposed;  // per slot (analyzers.hpp kCommSlots)
  std::array<Ivs, kCopyClasses> copies;              // copies and memsets of each class (profile.copies)
  Ivs copy_bare;                                     // copies and memsets while no kernel runs
  std::vector<std::pair<std::int64_t, Coll>> colls;  // its communication kernels (start, slot as Coll's uint8_t), by start
  bool nccl = false;                                 // it ran NCCL kernels (a rank of the job)
  std::vector<RankCollective> seq;                   // its collectives that align ranks, by start
  std::vector<P2pOp> p2p;                            // its point-to-point send/recv kernels, by start (pipelines: profile_pipeline.hpp)
  std::int64_t rank = -1;                            // its process's rank in the job (Kineto's distributedInfo); -1: unknown
  std::vector<std::int64_t> compute_before;          // per seq entry: compute since the previous one's end (its first activity)
  std::array<CutWindows, kCuts> cuts;
  std::size_t period = 0;  // the period (kernels) that its timeline repeats at; 0: none found
  double kernel_ns = 0, nccl_ns = 0;
  std::int64_t first = 0, last = 0;
  std::vector<Win> wins;  // the windows of the cut chosen
  std::size_t windows = 0;
  WinStats total;  // its windows' figures summed
  // Its host stalls (host-bound gaps of kHostStallNs or longer) over the whole profile: how many,
  // and the longest (ns).
  std::size_t host_stalls = 0;
  std::int64_t host_stall_longest = 0;
  // Where those stalls' time went: their sum (ns), the part the launching thread (the thread of
  // the call that launched the work ending each stall) spent inside host runtime/driver calls
  // (Profile::slow_calls: cudaMalloc, cudaFree, a first launch loading its module), and that
  // part by call name, most first (a name's calls may overlap one another: the union is
  // stall_in_calls).
  std::int64_t stall_ns = 0, stall_in_calls = 0;
  std::vector<std::pair<std::string, std::int64_t>> stall_calls;
};

// Launch figures as (value, count) sorted by value: exact percentiles without a value per
// kernel (a job's launch calls and delays repeat the same few thousand nanosecond values).
using Hist = std::vector<std::pair<std::int64_t, std::uint64_t>>;

// Sorts `v` by LSD radix, 11 bits a pass (a pass whose digit all values share is skipped: the
// high digits of nanosecond durations): a rank's ~10^5 values in a fraction of std::sort's time.
void radix_sort(std::vector<std::int64_t>& v);

Hist hist_of(std::vector<std::int64_t>& v);

void hist_add(Hist& into, const Hist& more);

// The value percentile() gives over the values the histogram counts, in microseconds.
double hist_percentile_us(const Hist& h, double q);

// A job's inputs as the rank-set check left them (profile.ranks): what was read, left out,
// unreadable, and which of the recorded world's ranks are missing.
struct JobRanks {
  bool several = false;
  std::size_t inputs = 0;
  std::vector<std::pair<std::string, std::string>> left_out, unreadable;  // (file, why)
  // Files found in a directory or by a glob that are no trace at all (a config.json beside the
  // traces): said, not counted as ranks nor as unreadable ones.
  std::vector<std::pair<std::string, std::string>> not_traces;
  std::int64_t world = -1;
  std::vector<std::int64_t> ranks, missing;
  std::size_t kept = 0;
  // Kept files that record neither rank nor capture time: assumed of this run (RankSet::untied).
  std::vector<std::string> assumed;
  // Job-level verdicts cover only part of the job: they cannot pass.
  bool partial() const { return !missing.empty() || !unreadable.empty(); }
};

// What the findings need of a profile (one rank's, or a job's ranks' absorbed in order): the
// model's per-file facts and per-GPU timelines, never its activities.
struct Digest {
  std::string format;
  std::vector<parsers::GpuInfo> gpus;
  std::vector<GpuTimeline> tl;  // per GPU
  std::size_t api_calls = 0, ranges = 0;
  std::size_t sync_calls = 0;  // host calls that wait for the GPU (parsers::is_sync_call) and their time
  std::int64_t sync_ns = 0;
  bool env_present = false, graphs = false, empty = true;
  std::vector<std::pair<std::string, std::string>> env, system;
  std::vector<std::string> notes;
  std::array<bool, 3> found{};     // a range of the kind of kCutRange, kCutStep, kCutStepLike anywhere
  std::vector<std::string> shown;  // the first 3 step-like range names, in the ranges' order
  Hist api_ns, delay_ns;           // launch call durations, launch delays
  std::size_t launches = 0, short_kernels = 0;
  std::size_t graph_kernels = 0;  // kernels launched by a CUDA graph launch: not in the launch figures
  std::array<std::size_t, kCopyClasses> copy_count{};
  std::array<std::uint64_t, kCopyClasses> copy_bytes{};
  std::array<std::size_t, kCommSlots> coll_kernels{};
  std::array<std::uint64_t, kCommSlots> coll_bytes{};
  std::array<std::uint32_t, kCommSlots> coll_group{};
  std::array<double, kCommSlots> coll_ns{};  // kernel time per slot (profile.summary)
  JobRanks job;  // a job of several inputs: which ranks it holds (analyze_profile_job)
  parsers::FrameworkSeen framework;  // what made its GPU work, as its names show (parsers::framework_of)
};

bool starts_with(std::string_view s, std::string_view p);

bool profiler_step(std::string_view n);

// N of "ProfilerStep#N"; -1 for any other name (or a number too long to be a step).
std::int64_t profiler_step_number(std::string_view n);

// NVTX names that are iterations: step, iteration, iter, train_step, training step, ... with an
// optional number ("step 12", "iteration_3", "train_step#4").
bool step_like(std::string_view n);

bool range_named(std::string_view n, std::string_view want);

// The job's ranks (the GPUs with NCCL kernels) on one clock, and who arrives last at the
// collectives (profile_ranks.hpp). Totals are ns over the matched collectives.
struct CrossRanks {
  bool present = false;                          // at least two GPUs with NCCL kernels
  std::vector<std::size_t> gpu;                  // rank -> GPU index
  std::vector<std::vector<RankCollective>> seqs;  // per rank, its own clock
  RankAlignment al;
  std::vector<std::int32_t> iter_of;             // per match: the reference rank's window, -1 outside every one
  std::vector<std::size_t> columns;              // the windows that hold matched collectives
  std::size_t aligned = 0;
  std::vector<std::size_t> last_count, present_in;
  std::vector<double> late, wait, cost, others_wait, compute_before;
  std::vector<std::vector<double>> late_iter;    // [rank][column]
  std::size_t with_last = 0;
  std::int32_t straggler = -1;                   // the rank whose lateness costs the most; -1 none
  bool straggler_warn = false;
  // Ranks late together (profile_ranks.hpp CollectiveReplay): each arrives later than the
  // median rank by 1% of the iteration or more; replayed with all of them on time the job
  // saves `set_saved_pct` of the replayed time. Warns where no single straggler explains it.
  std::vector<std::size_t> late_set;
  double set_saved_pct = 0;
  CollectiveReplay replayer;  // the job's collectives, read once for every set tried
  Replay replay;              // as measured
  bool set_warn = false;
  double iteration_ns = 0;
  std::vector<double> skews;                     // per match, last - first arrival
};

// A job whose ranks run send/recv and collectives (pipeline and data parallel): its ops in one
// graph (profile_pipeline.hpp PipelineReplay with collectives) where its stages and each
// collective's group can be told from the traces. Replayed collective to collective (CrossRanks),
// a receive counts as the rank's own time, so a rank waiting in one for its slow pipeline peer
// reads as late: whatif replays its changes on this graph, and profile.straggler names the rank
// it names (`slow`'s first), or no rank where the graph cannot be built (`why_not`).
struct PipelineWithCollectives {
  bool mixed = false;              // send/recv and collectives in the job
  std::string why_not;             // mixed, and no graph: why ("" where it was built)
  PipelineReplay pipe;
  Replay base;                     // as measured
  std::vector<std::size_t> gpu;    // replay rank -> GPU
  std::vector<std::int64_t> rank;  // replay rank -> the job's rank its trace records; -1: not recorded
  // The ranks computing longer than their stage's median rank by 1% of the step and 0.1 ms (as
  // whatif's notable), the one whose change saves most first.
  std::vector<SlowCopy> slow;
  SlowSet slow_set;  // `slow` together, where two or more are slow
  // The nodes whose ranks compute longer than their stages' ranks elsewhere (traces that name
  // their hosts), the one whose change saves most first.
  std::vector<SlowNode> slow_nodes;
  bool built() const { return mixed && why_not.empty(); }
};

struct Analysis {
  std::vector<GpuTimeline> gpus;
  CrossRanks xr;
  PipelineWithCollectives pp;
  std::string method;  // how iterations were found; empty: none
  std::string method_kind;  // "range", "step", "period", ""
  bool iterations = false;
  std::size_t launches = 0;  // kernels joined to a host call of their own (not a CUDA graph launch)
  Hist api_ns, delay_ns;  // launch call durations, launch delays (ns)
  std::size_t short_kernels = 0;
  std::size_t graph_kernels = 0;  // kernels joined to a CUDA graph launch
  std::array<std::size_t, kCopyClasses> copy_count{};
  std::array<std::uint64_t, kCopyClasses> copy_bytes{};
  std::array<std::size_t, kCommSlots> coll_kernels{};
  std::array<std::uint64_t, kCommSlots> coll_bytes{};
  std::array<std::uint32_t, kCommSlots> coll_group{};
  std::array<double, kCommSlots> coll_ns{};
  // Means over GPUs of the per-iteration figures.
  WinStats per_iter;
  std::vector<WinStats> by_index;  // iteration j, mean over the GPUs that have it
  double iteration_ms_median = 0;
  std::size_t iteration_count = 0;
  std::size_t gpus_with_windows = 0;
};

// Both merged and sorted.
Ivs intersect(const Ivs& a, const Ivs& b);

// Below this share of the iteration, what the last rank costs is noise, not a straggler.
constexpr double kStragglerPct = 5;

// A profile (one rank's, or several merged) reduced to what analyze() needs: per GPU its
// interval lists, collectives and candidate windows with their local figures; launch figures
// as histograms. The activities are read here once; the digest holds none of them.
Digest digest(const Profile& p, const ProfileOptions& o);
// Appends a rank's digest (of input `file`) to the job's, as Profile::merge appends a profile:
// its GPUs keep their identity (a key already taken gets the file's prefix).
void absorb(Digest& job, Digest&& r, std::uint32_t file);
// Bytes a digest holds (the job's memory once its ranks are read).
std::size_t digest_bytes(const Digest& d);

// Whether the digest's traces are complete enough for host-bound verdicts: "" where they are,
// else the evidence that one is filtered or sampled (its host calls' correlation ids are
// mostly missing: GpuInfo::corr_gap_median of kSampledCorrGap or more over kSampledMinCalls
// calls or more). Complete traces run 1 to 6; HTA's trace_filter output 36.
constexpr std::int64_t kSampledCorrGap = 16;
constexpr std::uint64_t kSampledMinCalls = 100;
std::string sampled_trace_evidence(const Digest& d, double* held_pct = nullptr);

// Where the job's host stalls' time went, over its GPUs (GpuTimeline::stall_*): their sum, the
// part the launching thread spent inside host runtime/driver calls, and that part by call name,
// most first. profile.launch_bound and whatif.launch read it alike.
struct StallTime {
  std::int64_t ns = 0, in_calls = 0;
  std::vector<std::pair<std::string, std::int64_t>> calls;
  // The calls hold the stalls: a millisecond or more of them, and half of their time or more
  // (their fix is the calls', not the data loader's).
  bool calls_hold() const;
  std::vector<std::string> call_names() const;
};
StallTime stall_time(const Analysis& an);

// The job's figures from its digest (the digest's timelines move into the analysis): the
// iterations chosen, per-iteration figures, the ranks on one clock and who holds them.
Analysis analyze(Digest& d, const ProfileOptions& o);

// A rank's name in the cross-rank findings: its label, and its node where the profile names it.
std::string rank_name(const Digest& p, const CrossRanks& xr, std::size_t r);

// A job's files read into one digest: each rank read and digested on up to `threads` threads,
// the rank set checked (profile_ranks.hpp check_rank_set), the kept ranks absorbed in the
// files' order. `job` has everything but the findings; `source` names the job in them.
struct JobDigest {
  ProfileJob job;
  Digest all;
  std::string source;
};
JobDigest read_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, std::size_t threads);

// A rank's digest as bytes and back (whatif --digest; profile_digest_io.cpp). `source` names the
// trace it was made from (its ranks' labels carry it in a job, as the trace's would).
// `libraries`: the communication libraries of its slots (CommLibraries::name of the table it was
// written with): read with another table, its slots would name other libraries.
struct SourcedDigest {
  Digest digest;
  std::string source;
  std::vector<std::string> libraries;
};
bool is_digest(std::string_view bytes);
std::string serialize_digest(const Digest& d, const std::string& source, const std::vector<std::string>& libraries);
tl::expected<SourcedDigest, std::string> deserialize_digest(std::string_view bytes);
// Why a digest read back cannot be analysed with these libraries' slots ("" when it can): the
// table differs from the one it was written with, or a slot no library names holds data.
std::string digest_slots_damage(const SourcedDigest& sd, const CommLibraries& libs);

// The fixes that name a framework's API (profile_fixes.cpp): each in the words of the framework
// the profile shows, CUDA's own calls where it is unknown.
enum class FixTopic : std::uint8_t {
  launch_sync,             // profile.launch_bound: the host synchronises after most kernels
  launch_overhead,         // profile.launch_bound: small kernels, launch overhead
  iterations,              // profile.iterations: how to mark a step
  copies_pageable,         // profile.copies by the class that takes most time
  copies_d2h,
  copies_d2d,
  copies_p2p,              // its opening words (what makes peer copies), before the topology advice
  copies_memset,
  copies_overlap,
  straggler_host,          // profile.straggler: what on the late rank's host to look at (words in a list)
  job_partial,             // profile.ranks: what writes a trace per rank (words in parentheses)
  whatif_overlap,          // whatif.overlap
  whatif_launch,           // whatif.launch
  whatif_launch_pipeline,  // whatif.launch of a pipeline's replay
  exposed_gather,          // profile.exposed_comm's overlap words (ending "; ") for AllGather and ReduceScatter
  exposed_allreduce,       // ... for AllReduce
  exposed_alltoall,        // ... for AllToAll
  host_stall,              // profile.launch_bound and whatif.launch: the GPU waits mostly in host stalls (kHostStallNs)
};
std::string framework_fix(parsers::Framework fw, FixTopic t);
// profile.launch_bound's fix where the host stalls are spent mostly inside CUDA runtime/driver
// calls (GpuTimeline::stall_calls): what each kind of call named does (allocation, a first
// launch loading its module, set-up, synchronisation), and leaving warm-up out of the capture.
std::string host_call_stall_fix(parsers::Framework fw, const std::vector<std::string>& calls);
// The evidence line of a finding whose fix framework_fix wrote: the framework and why.
std::string framework_evidence(const parsers::FrameworkSeen& f);
// A trace of AMD GPUs (ROCm: PyTorch's profiler names them "AMD Instinct ...", "AMD Radeon
// ..."): each fix that names CUDA's tools gets their ROCm counterparts beside it (HIP graphs,
// rocprofv3, MIOpen, RCCL), and an evidence line says why.
void rocm_fix_words(const Digest& d, std::vector<report::Finding>& findings);

// What the job's files held as ranks: all of one run, or which were left out, unreadable or
// missing (job-level verdicts over part of a job cannot pass: profile.straggler).
Finding ranks_finding(const JobRanks& j, const std::string& source, parsers::Framework fw);

// What the findings of one digest read (profile.cpp, profile_comm_findings.cpp): the digest, its
// analysis, the options and the communication slots found.
struct DigestFindingInputs {
  const Digest& p;
  const Analysis& an;
  const std::string& source;
  const ProfileOptions& o;
  const CommLibraries& libs;
  std::vector<int> colls;  // the communication slots the profile has: NCCL collectives, then libraries
  bool pipeline = false;   // NCCL's only kernels are point-to-point send/recv (its stages pass activations on)
};

// part's share of whole in percent; 0 of nothing.
double pct(double part, double whole);
// Bytes as B, KiB, MiB or GiB.
std::string size_text(double bytes);

// The job's world size the digest records (its rank set, else Kineto's distributedInfo
// world_size); -1 where neither says.
std::int64_t recorded_world(const Digest& d);
// "per iteration", or "over the whole profile" where no iterations were found.
std::string iteration_words(const Analysis& an);
// What the figures' window is, in "of the 660.55 ms {}": "iteration", or "capture" when no
// iterations were found (the window is the whole profile of a GPU).
std::string_view window_noun(const Analysis& an);

// profile.straggler (a job of several ranks): who arrives last at the collectives, what it costs.
Finding straggler_finding(const Digest& p, const Analysis& an, const std::string& source);
// profile.exposed_comm: one per communication slot and one for all communication, or one skip.
std::vector<Finding> exposed_comm_findings(const DigestFindingInputs& in);

}  // namespace perfgap::analyzers::profile_model
