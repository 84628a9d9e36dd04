// Profiles (nsys, Kineto): per GPU and per iteration, compute, communication per collective,
// exposed communication, GPU idle (host-bound or not), copies, and launch overhead.
#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cctype>
#include <charconv>
#include <cmath>
#include <map>
#include <mutex>
#include <optional>
#include <set>
#include <thread>
#include <unordered_set>
#include <utility>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "analyzers/profile_ranks.hpp"
#include "core/kb.hpp"
#include "facts/nccl.hpp"
#include "report/redact.hpp"

namespace perfgap::analyzers {

using parsers::ActKind;
using parsers::Coll;
using parsers::GpuActivity;
using parsers::kCollCount;
using parsers::Profile;

namespace {

// Fewer kernels than this in a profile: profile.gpu_idle and profile.launch_bound skip.
constexpr std::size_t kMinKernelsToJudge = 50;

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
std::string library_key(std::string_view name) {
  std::string k;
  for (char ch : name) {
    const auto u = static_cast<unsigned char>(ch);
    if (std::isalnum(u)) k.push_back(static_cast<char>(std::tolower(u)));
    else if (ch == '+') k.push_back('p');
    else if (!k.empty() && k.back() != '_') k.push_back('_');
  }
  while (!k.empty() && k.back() == '_') k.pop_back();
  return k.empty() ? "library" : k;
}

// A finding of this analyzer, its status the default (skip) until the block decides.
Finding started(std::string_view id, std::string_view layer, std::string subject) {
  Finding f;
  f.id = std::string(id);
  f.layer = std::string(layer);
  f.subject = std::move(subject);
  return f;
}

struct Iv {
  std::int64_t s, e;
};
using Ivs = std::vector<Iv>;

void push(Ivs& u, std::int64_t s, std::int64_t e) {
  if (e <= s) return;
  if (!u.empty() && s <= u.back().e) u.back().e = std::max(u.back().e, e);
  else u.push_back({s, e});
}

// a minus b (both merged and sorted).
Ivs minus(const Ivs& a, const Ivs& b) {
  Ivs out;
  std::size_t j = 0;
  for (const auto& x : a) {
    std::int64_t s = x.s;
    while (j < b.size() && b[j].e <= s) ++j;
    std::size_t k = j;
    while (k < b.size() && b[k].s < x.e) {
      if (b[k].s > s) out.push_back({s, b[k].s});
      s = std::max(s, b[k].e);
      if (s >= x.e) break;
      ++k;
    }
    if (s < x.e) out.push_back({s, x.e});
  }
  return out;
}

// Length of a merged list inside [ws, we).
std::int64_t measure(const Ivs& u, std::int64_t ws, std::int64_t we) {
  auto it = std::lower_bound(u.begin(), u.end(), ws, [](const Iv& v, std::int64_t t) { return v.e <= t; });
  std::int64_t sum = 0;
  for (; it != u.end() && it->s < we; ++it) sum += std::min(it->e, we) - std::max(it->s, ws);
  return sum;
}

double ms(double ns) { return ns / 1e6; }

// The usual median: of an even count, the mean of the two middle values.
double median(std::vector<double> v) {
  if (v.empty()) return 0;
  const std::size_t h = v.size() / 2;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(h), v.end());
  const double hi = v[h];
  if (v.size() % 2) return hi;
  return (*std::max_element(v.begin(), v.begin() + static_cast<long>(h)) + hi) / 2;
}

double percentile(std::vector<double>& v, double q) {
  if (v.empty()) return 0;
  auto k = static_cast<std::size_t>(std::ceil(q * static_cast<double>(v.size())));
  k = std::clamp<std::size_t>(k, 1, v.size()) - 1;
  std::nth_element(v.begin(), v.begin() + static_cast<long>(k), v.end());
  return v[k];
}

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

CopyClass copy_class(const GpuActivity& a) {
  using parsers::CopyKind;
  using parsers::HostMem;
  if (a.kind == ActKind::memset) return kMemset;
  auto host = [&](CopyClass pageable) {
    switch (a.host_mem) {
      case HostMem::pageable: return pageable;
      case HostMem::pinned: return static_cast<CopyClass>(pageable + 1);
      case HostMem::managed: return static_cast<CopyClass>(pageable + 2);
      default: return static_cast<CopyClass>(pageable + 3);
    }
  };
  switch (a.copy) {
    case CopyKind::h2d: return host(kH2dPageable);
    case CopyKind::d2h: return host(kD2hPageable);
    case CopyKind::d2d: return kD2d;
    case CopyKind::p2p: return kP2p;
    default: return kOtherCopy;
  }
}

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
};

// The ways of cutting iterations that analyze() chooses among over the whole job: each rank's
// windows for each are found while its activities are there (digest()), the choice is the job's.
enum Cut : std::uint8_t { kCutRange, kCutStep, kCutStepLike, kCutPeriod, kCutWhole, kCuts };

// A GPU's windows by one cut, with the figures of each window that need no other rank.
struct LocalStats {
  double len = 0, compute = 0, copy = 0, idle = 0, host_idle = 0;
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
  std::vector<std::int64_t> compute_before;          // per seq entry: compute since the previous one's end (its first activity)
  std::array<CutWindows, kCuts> cuts;
  std::size_t period = 0;  // the period (kernels) that its timeline repeats at; 0: none found
  double kernel_ns = 0, nccl_ns = 0;
  std::int64_t first = 0, last = 0;
  std::vector<Win> wins;  // the windows of the cut chosen
  std::size_t windows = 0;
  WinStats total;  // its windows' figures summed
};

// Launch figures as (value, count) sorted by value: exact percentiles without a value per
// kernel (a job's launch calls and delays repeat the same few thousand nanosecond values).
using Hist = std::vector<std::pair<std::int64_t, std::uint64_t>>;

// Sorts `v` by LSD radix, 11 bits a pass (a pass whose digit all values share is skipped: the
// high digits of nanosecond durations): a rank's ~10^5 values in a fraction of std::sort's time.
void radix_sort(std::vector<std::int64_t>& v) {
  if (v.size() < 256) {
    std::sort(v.begin(), v.end());
    return;
  }
  constexpr int kBits = 11;
  constexpr std::size_t kBuckets = std::size_t{1} << kBits;
  auto key = [](std::int64_t x) { return static_cast<std::uint64_t>(x) ^ (std::uint64_t{1} << 63); };  // signed order
  std::vector<std::int64_t> tmp(v.size());
  std::vector<std::size_t> count(kBuckets);
  for (int shift = 0; shift < 64; shift += kBits) {
    std::fill(count.begin(), count.end(), 0);
    for (auto x : v) ++count[(key(x) >> shift) & (kBuckets - 1)];
    if (count[(key(v[0]) >> shift) & (kBuckets - 1)] == v.size()) continue;
    std::size_t sum = 0;
    for (auto& c : count) sum += std::exchange(c, sum);
    for (auto x : v) tmp[count[(key(x) >> shift) & (kBuckets - 1)]++] = x;
    v.swap(tmp);
  }
}

Hist hist_of(std::vector<std::int64_t>& v) {
  radix_sort(v);
  Hist h;
  for (auto x : v) {
    if (!h.empty() && h.back().first == x) ++h.back().second;
    else h.emplace_back(x, 1);
  }
  return h;
}

void hist_add(Hist& into, const Hist& more) {
  if (more.empty()) return;
  Hist out;
  out.reserve(into.size() + more.size());
  std::size_t i = 0, j = 0;
  while (i < into.size() || j < more.size()) {
    if (j == more.size() || (i < into.size() && into[i].first < more[j].first)) out.push_back(into[i++]);
    else if (i == into.size() || more[j].first < into[i].first) out.push_back(more[j++]);
    else out.emplace_back(into[i].first, into[i].second + more[j].second), ++i, ++j;
  }
  into = std::move(out);
}

// The value percentile() gives over the values the histogram counts, in microseconds.
double hist_percentile_us(const Hist& h, double q) {
  std::uint64_t n = 0;
  for (const auto& [v, c] : h) n += c;
  if (n == 0) return 0;
  auto k = static_cast<std::uint64_t>(std::ceil(q * static_cast<double>(n)));
  k = std::clamp<std::uint64_t>(k, 1, n) - 1;
  for (const auto& [v, c] : h) {
    if (k < c) return static_cast<double>(v) / 1e3;
    k -= c;
  }
  return 0;
}

// A job's inputs as the rank-set check left them (profile.ranks): what was read, left out,
// unreadable, and which of the recorded world's ranks are missing.
struct JobRanks {
  bool several = false;
  std::size_t inputs = 0;
  std::vector<std::pair<std::string, std::string>> left_out, unreadable;  // (file, why)
  std::int64_t world = -1;
  std::vector<std::int64_t> ranks, missing;
  std::size_t kept = 0;
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
};

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

bool profiler_step(std::string_view n) {
  if (!starts_with(n, "ProfilerStep#") || n.size() == 13) return false;
  for (char c : n.substr(13))
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

// N of "ProfilerStep#N"; -1 for any other name (or a number too long to be a step).
std::int64_t profiler_step_number(std::string_view n) {
  if (!profiler_step(n) || n.size() > 13 + 15) return -1;
  std::int64_t v = 0;
  for (char c : n.substr(13)) v = v * 10 + (c - '0');
  return v;
}

// NVTX names that are iterations: step, iteration, iter, train_step, training step, ... with an
// optional number ("step 12", "iteration_3", "train_step#4").
bool step_like(std::string_view n) {
  std::string s;
  for (char c : n) s.push_back(static_cast<char>(std::tolower(static_cast<unsigned char>(c))));
  std::string_view v = s;
  for (std::string_view pre : {"training", "train"})
    if (starts_with(v, pre)) {
      v.remove_prefix(pre.size());
      while (!v.empty() && (v.front() == '_' || v.front() == ' ' || v.front() == '-')) v.remove_prefix(1);
      break;
    }
  bool word = false;
  for (std::string_view w : {"iteration", "iter", "step"})
    if (starts_with(v, w)) {
      v.remove_prefix(w.size());
      word = true;
      break;
    }
  if (!word) return false;
  while (!v.empty() && (v.front() == '_' || v.front() == ' ' || v.front() == '#' || v.front() == ':' || v.front() == '-' || v.front() == '=')) v.remove_prefix(1);
  for (char c : v)
    if (!std::isdigit(static_cast<unsigned char>(c))) return false;
  return true;
}

bool range_named(std::string_view n, std::string_view want) {
  if (n == want) return true;
  if (!starts_with(n, want)) return false;
  char next = n[want.size()];
  return !std::isalpha(static_cast<unsigned char>(next));
}

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

struct Analysis {
  std::vector<GpuTimeline> gpus;
  CrossRanks xr;
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

// Windows of each GPU from host ranges: a GPU activity belongs to the range in which its
// launch call began (its own start without one); the GPU window runs from the first activity
// of the range to the first of the next when the ranges follow each other, else to its last end.
bool windows_from_ranges(const Profile& p, const std::vector<std::vector<std::uint32_t>>& acts, const std::vector<bool>& chosen,
                         std::vector<std::vector<Win>>& out) {
  struct Step {
    std::int64_t s, e;
    std::int64_t number;  // ProfilerStep#N's N; -1: another name
  };
  std::map<std::pair<std::uint32_t, std::uint64_t>, std::vector<Step>> by_proc;
  for (const auto& r : p.ranges)
    if (chosen[r.name]) by_proc[{r.file, r.process}].push_back({r.start, r.end, profiler_step_number(p.names[r.name])});
  if (by_proc.empty()) return false;
  for (auto& [k, v] : by_proc) {
    std::sort(v.begin(), v.end(), [](const Step& a, const Step& b) { return a.s != b.s ? a.s < b.s : a.e > b.e; });
    std::vector<Step> top;
    for (const auto& r : v)
      if (top.empty() || r.s >= top.back().e || r.e > top.back().e) top.push_back(r);  // nested copies are dropped
    v = std::move(top);
  }
  bool any = false;
  for (std::size_t g = 0; g < acts.size(); ++g) {
    auto it = by_proc.find({p.gpus[g].file, p.gpus[g].process});
    if (it == by_proc.end()) {
      // A process without annotations of its own: the file's ranges when one process has them all.
      auto only = by_proc.end();
      int n = 0;
      for (auto i = by_proc.begin(); i != by_proc.end(); ++i)
        if (i->first.first == p.gpus[g].file) only = i, ++n;
      if (n != 1) continue;
      it = only;
    }
    const auto& R = it->second;
    std::vector<std::int64_t> first(R.size(), INT64_MAX), last(R.size(), INT64_MIN);
    for (auto ai : acts[g]) {
      const auto& a = p.acts[ai];
      std::int64_t t = a.api_start >= 0 ? a.api_start : a.start;
      auto r = std::upper_bound(R.begin(), R.end(), t, [](std::int64_t x, const Step& v) { return x < v.s; });
      if (r == R.begin()) continue;
      --r;
      if (t >= r->e) continue;
      auto idx = static_cast<std::size_t>(r - R.begin());
      first[idx] = std::min(first[idx], a.start);
      last[idx] = std::max(last[idx], a.end);
    }
    std::vector<std::size_t> used;
    for (std::size_t i = 0; i < R.size(); ++i)
      if (first[i] != INT64_MAX) used.push_back(i);
    auto& wins = out[g];
    for (std::size_t u = 0; u < used.size(); ++u) {
      std::size_t i = used[u];
      std::int64_t s = first[i], e = last[i];
      if (u + 1 < used.size()) {
        std::size_t n = used[u + 1];
        bool adjacent = n == i + 1 && R[n].s - R[i].e <= (R[i].e - R[i].s) / 20;
        if (adjacent) e = first[n];
        e = std::min(e, first[n]);
      } else if (R[i].e > R[i].s) {
        // The last range has no next one to end at: its window is as long as the range (the
        // step) itself, from its first activity (the GPU's lag at the step's start taken for
        // its lag at the end, as the other windows run first activity to first activity), not
        // to the end of the last work it launched (that tail ran on into what was not
        // profiled: 173.69 ms for a 122.15 ms ProfilerStep of HTA's trace_diff test trace).
        e = s + (R[i].e - R[i].s);
      }
      if (e > s) wins.push_back({s, e, R[i].number});
    }
    any = any || !wins.empty();
  }
  return any;
}

// Windows from the period of the GPU timeline: on the stream with the most kernels, the
// shortest lag L at which the kernel-name sequence repeats (>= 90% of positions equal), found
// from names that recur at a regular stride.
bool windows_from_period(const Profile& p, const std::vector<std::vector<std::uint32_t>>& acts, const std::vector<GpuTimeline>& tl,
                         std::vector<std::vector<Win>>& out, std::vector<std::size_t>& period_out) {
  bool any = false;
  for (std::size_t g = 0; g < acts.size(); ++g) {
    const auto& gacts = acts[g];
    auto& wins = out[g];
    std::map<std::uint32_t, std::size_t> per_stream;
    for (auto ai : gacts)
      if (p.acts[ai].kind == ActKind::kernel) ++per_stream[p.acts[ai].stream];
    if (per_stream.empty()) continue;
    auto busiest = std::max_element(per_stream.begin(), per_stream.end(), [](auto& a, auto& b) { return a.second < b.second; })->first;
    std::vector<std::uint32_t> seq;  // activity indices
    for (auto ai : gacts)
      if (p.acts[ai].kind == ActKind::kernel && p.acts[ai].stream == busiest) seq.push_back(ai);
    const std::size_t n = seq.size();
    if (n < 6) continue;
    std::map<std::uint32_t, std::vector<std::size_t>> pos;
    for (std::size_t i = 0; i < n; ++i) pos[p.acts[seq[i]].name].push_back(i);
    std::map<std::size_t, std::size_t> cand;  // lag -> earliest first position of a name with that stride
    for (const auto& [name, v] : pos) {
      if (v.size() < 3) continue;
      std::map<std::size_t, std::size_t> diffs;
      for (std::size_t i = 1; i < v.size(); ++i) ++diffs[v[i] - v[i - 1]];
      auto mode = std::max_element(diffs.begin(), diffs.end(), [](auto& a, auto& b) { return a.second < b.second; });
      if (mode->first < 2 || mode->second * 10 < (v.size() - 1) * 8) continue;
      auto [it, fresh] = cand.emplace(mode->first, v[0]);
      if (!fresh) it->second = std::min(it->second, v[0]);
    }
    std::size_t tried = 0;
    for (const auto& [L, anchor] : cand) {
      if (++tried > 32) break;
      if (n / L < 3) break;
      std::size_t same = 0;
      for (std::size_t i = 0; i + L < n; ++i) same += p.acts[seq[i]].name == p.acts[seq[i + L]].name;
      if (same * 10 < (n - L) * 9) continue;
      for (std::size_t b = anchor; b + L <= n; b += L) {
        std::int64_t s = p.acts[seq[b]].start;
        std::int64_t e;
        if (b + L < n) e = p.acts[seq[b + L]].start;
        else e = tl[g].last;  // the last period runs to the GPU's last activity
        if (e > s) wins.push_back({s, e});
      }
      period_out[g] = L;
      any = any || !wins.empty();
      break;
    }
  }
  return any;
}

// Below this share of the iteration, what the last rank costs is noise, not a straggler.
constexpr double kStragglerPct = 5;

// The ranks of a profile of several GPUs with NCCL kernels, aligned (analyzers/profile_ranks),
// and each rank's waiting inside its collective kernels: from its own arrival to the last one's.
void align_cross_ranks(Analysis& an) {
  auto& xr = an.xr;
  std::size_t ranks = 0;
  for (const auto& gt : an.gpus) ranks += gt.nccl;
  if (ranks < 2) return;
  std::vector<std::vector<RankCollective>> seqs;
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    if (!an.gpus[g].nccl) continue;
    xr.gpu.push_back(g);
    seqs.push_back(std::move(an.gpus[g].seq));
  }
  xr.present = true;
  xr.al = align_ranks(seqs);
  xr.seqs = std::move(seqs);
  const std::size_t n = xr.gpu.size();
  std::vector<Ivs> waits(n);
  for (const auto& m : xr.al.matches)
    for (std::size_t r = 0; r < n; ++r) {
      if (m.index[r] < 0) continue;
      const std::int64_t w = m.last - m.arrival[r];
      if (w <= 0) continue;
      const auto& c = xr.seqs[r][static_cast<std::size_t>(m.index[r])];
      waits[r].push_back({c.start, std::min(c.end, c.start + w)});
    }
  for (std::size_t r = 0; r < n; ++r) {
    auto& v = waits[r];
    std::sort(v.begin(), v.end(), [](const Iv& a, const Iv& b) { return a.s < b.s; });
    auto& out = an.gpus[xr.gpu[r]].wait;
    for (const auto& x : v) push(out, x.s, x.e);
  }
}

// Per rank and iteration (the reference rank's windows): lateness (own arrival after the first
// rank's), waiting (the last rank's arrival after its own), what its lateness costs the step
// (its arrival after the next-latest, where it is last), the compute it ran since its previous
// collective; then the straggler, the rank whose lateness costs the most.
void cross_rank_figures(Analysis& an) {
  auto& xr = an.xr;
  if (!xr.present) return;
  const std::size_t n = xr.gpu.size();
  const auto& al = xr.al;
  for (std::size_t r = 0; r < n; ++r) xr.aligned += al.aligned[r];
  const auto& ref_wins = an.gpus[xr.gpu[al.reference]].wins;
  std::vector<std::int32_t> column_of(ref_wins.size(), -1);
  xr.iter_of.assign(al.matches.size(), -1);
  for (std::size_t k = 0; k < al.matches.size(); ++k) {
    const auto t = xr.seqs[al.reference][al.matches[k].ref_index].start;
    auto w = std::upper_bound(ref_wins.begin(), ref_wins.end(), t, [](std::int64_t x, const Win& v) { return x < v.s; });
    if (w == ref_wins.begin()) continue;
    --w;
    if (t >= w->e) continue;
    auto j = static_cast<std::size_t>(w - ref_wins.begin());
    if (column_of[j] < 0) {
      column_of[j] = static_cast<std::int32_t>(xr.columns.size());
      xr.columns.push_back(j);
    }
    xr.iter_of[k] = column_of[j];
  }
  const std::size_t cols = xr.columns.size();
  xr.last_count.assign(n, 0);
  xr.present_in.assign(n, 0);
  for (auto* v : {&xr.late, &xr.wait, &xr.cost, &xr.others_wait, &xr.compute_before}) v->assign(n, 0);
  xr.late_iter.assign(n, std::vector<double>(cols, 0));
  for (std::size_t k = 0; k < al.matches.size(); ++k) {
    const auto& m = al.matches[k];
    const std::int32_t col = xr.iter_of[k];
    if (col < 0) continue;
    xr.skews.push_back(static_cast<double>(m.last - m.first));
    std::size_t present = 0;
    double others = 0;
    for (std::size_t r = 0; r < n; ++r) {
      if (m.index[r] < 0) continue;
      ++present;
      ++xr.present_in[r];
      const double late = static_cast<double>(m.arrival[r] - m.first);
      xr.late[r] += late;
      xr.late_iter[r][static_cast<std::size_t>(col)] += late;
      xr.wait[r] += static_cast<double>(m.last - m.arrival[r]);
      others += static_cast<double>(m.last - m.arrival[r]);
      const auto i = static_cast<std::size_t>(m.index[r]);
      xr.compute_before[r] += static_cast<double>(an.gpus[xr.gpu[r]].compute_before[i]);
    }
    if (m.last_rank >= 0) {
      const auto L = static_cast<std::size_t>(m.last_rank);
      ++xr.with_last;
      ++xr.last_count[L];
      xr.cost[L] += static_cast<double>(m.last - m.second);
      if (present > 1) xr.others_wait[L] += others / static_cast<double>(present - 1);
    }
  }
  xr.iteration_ns = an.per_iter.len;
  double most = 0;
  for (std::size_t r = 0; r < n; ++r)
    if (xr.cost[r] > most) most = xr.cost[r], xr.straggler = static_cast<std::int32_t>(r);
  if (xr.straggler >= 0 && cols > 0) {
    const double per_iter = xr.cost[static_cast<std::size_t>(xr.straggler)] / static_cast<double>(cols);
    xr.straggler_warn = xr.iteration_ns > 0 && 100 * per_iter / xr.iteration_ns >= kStragglerPct;
  }
  // The ranks late together, and what they cost as a set, by replay.
  xr.replayer = CollectiveReplay(xr.al, xr.seqs);
  xr.replay = xr.replayer.run({});
  if (xr.replay.replayed <= 0 || cols == 0 || xr.iteration_ns <= 0) return;
  const auto& excess = xr.replayer.excess();
  const double steps_per_iter = static_cast<double>(xr.replay.intervals) / static_cast<double>(cols);
  std::vector<bool> on_time(n, false);
  for (std::size_t r = 0; r < n; ++r) {
    const double per_iter = static_cast<double>(excess[r]) / static_cast<double>(std::max<std::size_t>(1, xr.replay.intervals)) * steps_per_iter;
    if (per_iter >= 0.01 * xr.iteration_ns && per_iter >= 100'000) xr.late_set.push_back(r), on_time[r] = true;
  }
  if (xr.late_set.size() < 2) return;
  const Replay cf = xr.replayer.run(on_time);
  xr.set_saved_pct = 100.0 * static_cast<double>(xr.replay.replayed - cf.replayed) / static_cast<double>(xr.replay.replayed);
  const double single_pct = xr.straggler >= 0 ? 100 * xr.cost[static_cast<std::size_t>(xr.straggler)] / static_cast<double>(cols) / xr.iteration_ns : 0;
  xr.set_warn = xr.set_saved_pct >= kStragglerPct && xr.set_saved_pct > 1.5 * single_pct;
}

// Both merged and sorted.
Ivs intersect(const Ivs& a, const Ivs& b) {
  Ivs out;
  std::size_t i = 0, j = 0;
  while (i < a.size() && j < b.size()) {
    const std::int64_t s = std::max(a[i].s, b[j].s), e = std::min(a[i].e, b[j].e);
    if (s < e) out.push_back({s, e});
    if (a[i].e < b[j].e) ++i;
    else ++j;
  }
  return out;
}

// A profile (one rank's, or several merged) reduced to what analyze() needs: per GPU its
// interval lists, collectives and candidate windows with their local figures; launch figures
// as histograms. The activities are read here once; the digest holds none of them.
Digest digest(const Profile& p, const ProfileOptions& o) {
  Digest d;
  d.format = p.format;
  d.gpus = p.gpus;
  d.api_calls = p.api_calls;
  d.ranges = p.ranges.size();
  d.env_present = p.env_present;
  d.env = p.env;
  d.system = p.system;
  d.notes = p.notes;
  d.empty = p.gpus.empty() && p.acts.empty() && p.ranges.empty() && p.env.empty() && p.system.empty() && p.notes.empty();
  d.graphs = std::any_of(p.acts.begin(), p.acts.end(), [](const GpuActivity& a) { return a.kind == parsers::ActKind::graph; });
  const std::size_t G = p.gpus.size();
  d.tl.resize(G);
  // Each kernel's communication slot: its NCCL collective (the parser's), else its library's
  // when the table names the kernel, else -1 (compute). The table is looked up once per distinct
  // name (a profile holds 10^5-10^6 kernels of a few thousand names).
  const CommLibraries libs(o);
  std::vector<std::int8_t> lib_of(p.names.size(), -2);  // -2: not looked up yet
  auto slot_of = [&](const GpuActivity& a) -> int {
    if (a.coll != Coll::none) return static_cast<int>(a.coll);
    if (a.name >= lib_of.size()) return -1;
    auto& known = lib_of[a.name];
    if (known == -2) {
      const auto* e = core::match_comm_kernel(*libs.table, p.names[a.name]);
      known = static_cast<std::int8_t>(e ? libs.slot(e->library) : -1);
    }
    return known;
  };
  std::vector<std::vector<std::uint32_t>> acts(G);  // per GPU, sorted by start
  for (std::uint32_t i = 0; i < p.acts.size(); ++i) acts[p.acts[i].gpu].push_back(i);
  struct Local {
    Ivs compute, copy, idle, host_idle;
  };
  std::vector<Local> loc(G);
  for (std::size_t g = 0; g < G; ++g) {
    auto& gt = d.tl[g];
    auto& v = acts[g];
    auto earlier = [&](std::uint32_t a, std::uint32_t b) {
      const auto& x = p.acts[a];
      const auto& y = p.acts[b];
      return x.start != y.start ? x.start < y.start : x.end < y.end;
    };
    if (!std::is_sorted(v.begin(), v.end(), earlier)) std::stable_sort(v.begin(), v.end(), earlier);
    gt.acts = v.size();
    if (v.empty()) continue;
    auto& lc = loc[g];
    gt.first = p.acts[v.front()].start;
    gt.last = INT64_MIN;
    Ivs busy, kernels;
    std::vector<std::uint32_t> starter;  // the activity that opens each busy interval
    for (auto ai : v) {
      const auto& a = p.acts[ai];
      gt.last = std::max(gt.last, a.end);
      if (a.kind == ActKind::kernel || a.kind == ActKind::graph) push(kernels, a.start, a.end);
      if (a.kind == ActKind::kernel) {
        ++gt.kernels;
        gt.kernel_ns += static_cast<double>(a.end - a.start);
        const int c = slot_of(a);
        if (c < 0) push(lc.compute, a.start, a.end);
        else {
          push(gt.comm[c], a.start, a.end);
          push(gt.comm_all, a.start, a.end);
          gt.colls.emplace_back(a.start, static_cast<Coll>(c));  // a library's slot too: Coll is a uint8_t
          // Only NCCL's kernels make the GPU a rank of the job and align ranks: a library's
          // (DeepEP, NVSHMEM) do not end together across ranks.
          if (a.coll != Coll::none) {
            gt.nccl_ns += static_cast<double>(a.end - a.start);
            gt.nccl = true;
            if (aligns_ranks(a.coll)) gt.seq.push_back({a.coll, a.start, a.end});
          }
        }
      } else if (a.kind == ActKind::graph) {
        push(lc.compute, a.start, a.end);  // a whole CUDA graph: busy, its kernels (NCCL ones too) not in the export
      } else {
        push(lc.copy, a.start, a.end);
        const CopyClass k = copy_class(a);
        push(gt.copies[k], a.start, a.end);
        ++d.copy_count[k];
        d.copy_bytes[k] += a.msg_bytes;
      }
      // Zero-length activities still open a busy interval (they end a gap).
      if (!busy.empty() && a.start <= busy.back().e) busy.back().e = std::max(busy.back().e, a.end);
      else {
        busy.push_back({a.start, a.end});
        starter.push_back(ai);
      }
    }
    gt.copy_bare = minus(lc.copy, kernels);
    for (std::size_t i = 1; i < busy.size(); ++i) {
      std::int64_t a = busy[i - 1].e, b = busy[i].s;
      if (b <= a) continue;
      lc.idle.push_back({a, b});
      const auto& next = p.acts[starter[i]];
      if (next.api_start >= 0 && next.api_start >= a) lc.host_idle.push_back({a, b});
    }
    // After its last activity the GPU is idle too (a last step's window may run past it); no
    // launch ends that gap, so it is not host-bound.
    lc.idle.push_back({busy.back().e, INT64_MAX / 4});
    // The compute before each collective (cross-rank figures), then compute only where it can
    // hide communication: communication minus compute is all that is asked of it later.
    gt.compute_before.reserve(gt.seq.size());
    for (std::size_t i = 0; i < gt.seq.size(); ++i) {
      const std::int64_t from = i > 0 ? gt.seq[i - 1].end : gt.first;
      gt.compute_before.push_back(measure(lc.compute, from, gt.seq[i].start));
    }
    gt.compute = intersect(lc.compute, gt.comm_all);
  }
  // Launch overhead.
  std::vector<std::int64_t> api_ns, delay_ns;
  for (const auto& a : p.acts) {
    if (a.kind != ActKind::kernel) continue;
    if (const int c = slot_of(a); c >= 0) {
      ++d.coll_kernels[c];
      d.coll_bytes[c] += a.msg_bytes;
      d.coll_ns[c] += static_cast<double>(a.end - a.start);
      if (a.group_size) d.coll_group[c] = a.group_size;
    }
    if (a.api_start < 0) continue;
    // A graph's kernels all join the one graph launch: its duration and the delay to each of
    // them say nothing about launching kernels one by one (HTA's launch statistics count only
    // cudaLaunchKernel and cudaLaunchKernelExC), so they are counted apart.
    if (a.graph_launch) {
      ++d.graph_kernels;
      continue;
    }
    ++d.launches;
    const std::int64_t api = a.api_end - a.api_start;
    api_ns.push_back(api);
    delay_ns.push_back(a.start - a.api_end);
    if (static_cast<double>(a.end - a.start) < static_cast<double>(api)) ++d.short_kernels;
  }
  d.api_ns = hist_of(api_ns);
  d.delay_ns = hist_of(delay_ns);

  // The candidate windows (analyze() chooses among them over the job): a range method this
  // profile has windows for is the one chosen, so the next ones are not looked for.
  auto choose = [&](auto pred, std::vector<bool>& chosen) {
    chosen.assign(p.names.size(), false);
    for (std::size_t i = 0; i < p.names.size(); ++i) chosen[i] = pred(p.names[i]);
    return std::any_of(p.ranges.begin(), p.ranges.end(), [&](const parsers::ProfileRange& r) { return chosen[r.name]; });
  };
  std::vector<bool> chosen;
  std::vector<std::vector<Win>> wins(G);
  auto keep = [&](Cut c) {
    for (std::size_t g = 0; g < G; ++g) d.tl[g].cuts[c].wins = std::move(wins[g]);
    wins.assign(G, {});
  };
  bool have = false;
  if (!o.iteration_range.empty()) {
    d.found[kCutRange] = choose([&](const std::string& n) { return range_named(n, o.iteration_range); }, chosen);
    if (d.found[kCutRange]) windows_from_ranges(p, acts, chosen, wins), keep(kCutRange);
  } else {
    d.found[kCutStep] = choose([](const std::string& n) { return profiler_step(n); }, chosen);
    if (d.found[kCutStep]) have = windows_from_ranges(p, acts, chosen, wins), keep(kCutStep);
    if (!have) {
      d.found[kCutStepLike] = choose([](const std::string& n) { return step_like(n); }, chosen);
      if (d.found[kCutStepLike]) {
        have = windows_from_ranges(p, acts, chosen, wins), keep(kCutStepLike);
        for (const auto& r : p.ranges)
          if (chosen[r.name] && d.shown.size() < 3 && std::find(d.shown.begin(), d.shown.end(), p.names[r.name]) == d.shown.end())
            d.shown.push_back(p.names[r.name]);
      }
    }
    if (!have) {
      std::vector<std::size_t> period(G, 0);
      windows_from_period(p, acts, d.tl, wins, period);
      keep(kCutPeriod);
      for (std::size_t g = 0; g < G; ++g) d.tl[g].period = period[g];
    }
  }
  // Each collective's step number: ranks are paired by step, not by their clocks (profile_ranks).
  for (auto& gt : d.tl) {
    const auto& steps = gt.cuts[kCutStep].wins;
    if (steps.empty()) continue;
    for (auto& c : gt.seq) {
      auto w = std::upper_bound(steps.begin(), steps.end(), c.start, [](std::int64_t x, const Win& v) { return x < v.s; });
      if (w != steps.begin() && c.start < (--w)->e) c.step = w->step;
    }
  }
  for (auto& gt : d.tl)
    if (gt.acts) gt.cuts[kCutWhole].wins.push_back({gt.first, gt.last});  // the whole profile as one window
  for (std::size_t g = 0; g < G; ++g) {
    const auto& lc = loc[g];
    for (auto& cut : d.tl[g].cuts) {
      cut.stats.reserve(cut.wins.size());
      for (const auto& w : cut.wins) {
        LocalStats s;
        s.len = static_cast<double>(w.e - w.s);
        s.compute = static_cast<double>(measure(lc.compute, w.s, w.e));
        s.copy = static_cast<double>(measure(lc.copy, w.s, w.e));
        s.idle = static_cast<double>(measure(lc.idle, w.s, w.e));
        s.host_idle = static_cast<double>(measure(lc.host_idle, w.s, w.e));
        cut.stats.push_back(s);
      }
    }
  }
  // What the job keeps of the rank, at its size (a vector grown by doubling is up to half empty).
  for (auto& gt : d.tl) {
    for (auto* v : {&gt.compute, &gt.comm_all}) v->shrink_to_fit();
    for (auto& v : gt.comm) v.shrink_to_fit();
    gt.colls.shrink_to_fit();
    gt.seq.shrink_to_fit();
    for (auto& v : gt.copies) v.shrink_to_fit();
    gt.copy_bare.shrink_to_fit();
    for (auto& c : gt.cuts) c.wins.shrink_to_fit();  // their stats were reserved
  }
  return d;
}

// Appends a rank's digest (of input `file`) to the job's, as Profile::merge appends a profile:
// its GPUs keep their identity (a key already taken gets the file's prefix).
void absorb(Digest& job, Digest&& r, std::uint32_t file) {
  for (auto& g : r.gpus) g.file = file;
  if (job.empty) {
    job = std::move(r);
    return;
  }
  std::unordered_set<std::string> keys;
  for (const auto& g : job.gpus) keys.insert(g.key);
  for (auto& g : r.gpus) {
    if (keys.count(g.key)) g.key = "file" + std::to_string(file) + "." + g.key;  // the same process/rank in two inputs
    keys.insert(g.key);
    job.gpus.push_back(std::move(g));
  }
  for (auto& t : r.tl) job.tl.push_back(std::move(t));
  job.api_calls += r.api_calls;
  job.ranges += r.ranges;
  if (job.format.empty()) job.format = r.format;
  else if (job.format.find(r.format) == std::string::npos) job.format += "; " + r.format;
  job.env_present = job.env_present || r.env_present;
  job.graphs = job.graphs || r.graphs;
  for (auto& e : r.env) job.env.push_back(std::move(e));
  for (auto& s : r.system) job.system.push_back(std::move(s));
  for (auto& n : r.notes) job.notes.push_back(std::move(n));
  for (std::size_t i = 0; i < job.found.size(); ++i) job.found[i] = job.found[i] || r.found[i];
  for (auto& n : r.shown)
    if (job.shown.size() < 3 && std::find(job.shown.begin(), job.shown.end(), n) == job.shown.end()) job.shown.push_back(std::move(n));
  hist_add(job.api_ns, r.api_ns);
  hist_add(job.delay_ns, r.delay_ns);
  job.launches += r.launches;
  job.short_kernels += r.short_kernels;
  job.graph_kernels += r.graph_kernels;
  for (int k = 0; k < kCopyClasses; ++k) job.copy_count[k] += r.copy_count[k], job.copy_bytes[k] += r.copy_bytes[k];
  for (int c = 0; c < kCommSlots; ++c) {
    job.coll_kernels[c] += r.coll_kernels[c];
    job.coll_bytes[c] += r.coll_bytes[c];
    job.coll_ns[c] += r.coll_ns[c];
    if (r.coll_group[c]) job.coll_group[c] = r.coll_group[c];
  }
}

// Bytes a digest holds (the job's memory once its ranks are read).
std::size_t digest_bytes(const Digest& d) {
  std::size_t b = sizeof(Digest) + (d.api_ns.capacity() + d.delay_ns.capacity()) * sizeof(Hist::value_type);
  for (const auto& g : d.gpus) b += sizeof(g) + g.label.capacity() + g.key.capacity() + g.host.capacity();
  for (const auto& t : d.tl) {
    b += sizeof(t) + (t.compute.capacity() + t.comm_all.capacity() + t.exposed_all.capacity() + t.wait.capacity()) * sizeof(Iv);
    for (int c = 0; c < kCommSlots; ++c) b += (t.comm[c].capacity() + t.exposed[c].capacity()) * sizeof(Iv);
    for (const auto& v : t.copies) b += v.capacity() * sizeof(Iv);
    b += t.copy_bare.capacity() * sizeof(Iv);
    b += t.colls.capacity() * sizeof(t.colls[0]) + t.seq.capacity() * sizeof(RankCollective) + t.compute_before.capacity() * sizeof(std::int64_t);
    for (const auto& c : t.cuts) b += c.wins.capacity() * sizeof(Win) + c.stats.capacity() * sizeof(LocalStats);
    b += t.wins.capacity() * sizeof(Win);
  }
  return b;
}

Analysis analyze(Digest& d, const ProfileOptions& o) {
  Analysis an;
  an.gpus = std::move(d.tl);
  // Several ranks: their clocks aligned on the collectives' ends; the time a rank's collective
  // kernel waits for a later rank is waiting, not communication (neither comm nor exposed).
  align_cross_ranks(an);
  for (auto& gt : an.gpus) {
    if (!gt.wait.empty()) {
      for (int c = 1; c < kCommSlots; ++c)
        if (!gt.comm[c].empty()) gt.comm[c] = minus(gt.comm[c], gt.wait);
      gt.comm_all = minus(gt.comm_all, gt.wait);
    }
    for (int c = 1; c < kCommSlots; ++c)
      if (!gt.comm[c].empty()) gt.exposed[c] = minus(gt.comm[c], gt.compute);
    gt.exposed_all = minus(gt.comm_all, gt.compute);
  }
  an.launches = d.launches;
  an.short_kernels = d.short_kernels;
  an.graph_kernels = d.graph_kernels;
  an.copy_count = d.copy_count;
  an.copy_bytes = d.copy_bytes;
  an.api_ns = std::move(d.api_ns);
  an.delay_ns = std::move(d.delay_ns);
  an.coll_kernels = d.coll_kernels;
  an.coll_bytes = d.coll_bytes;
  an.coll_group = d.coll_group;
  an.coll_ns = d.coll_ns;

  // Iterations: one cut for the whole job.
  auto any = [&](Cut c) { return std::any_of(an.gpus.begin(), an.gpus.end(), [&](const GpuTimeline& gt) { return !gt.cuts[c].wins.empty(); }); };
  Cut cut = kCutWhole;
  if (!o.iteration_range.empty()) {
    if (d.found[kCutRange] && any(kCutRange)) {
      cut = kCutRange;
      an.method = fmt::format("the range '{}' (--iteration-range)", o.iteration_range);
      an.method_kind = "range";
    }
  } else if (d.found[kCutStep] && any(kCutStep)) {
    cut = kCutStep;
    an.method = "ProfilerStep#N annotations";
    an.method_kind = "step";
  } else if (d.found[kCutStepLike] && any(kCutStepLike)) {
    cut = kCutStepLike;
    std::set<std::string> shown(d.shown.begin(), d.shown.end());
    std::string list;
    for (const auto& s : shown) list += (list.empty() ? "'" : ", '") + s + "'";
    an.method = "NVTX/annotation ranges named like iterations (" + list + ")";
    an.method_kind = "range";
  }
  if (an.method.empty() && o.iteration_range.empty() && any(kCutPeriod)) {
    std::size_t period = 0;
    for (const auto& gt : an.gpus)
      if (gt.period) period = gt.period;
    cut = kCutPeriod;
    an.method = fmt::format("the period of the GPU timeline (a sequence of {} kernels that repeats on the busiest stream)", period);
    an.method_kind = "period";
  }
  an.iterations = !an.method.empty();

  // Per-window figures: the local ones from the digest, communication and waiting here. Each
  // window's figures go into the means over GPUs and the GPU's totals and are not kept (a job of
  // 512 ranks of 3,500 iterations would hold 0.5 GB of them).
  auto add = [](WinStats& a, const WinStats& b, double k) {
    a.len += b.len * k, a.compute += b.compute * k, a.busy += b.busy * k, a.idle += b.idle * k, a.host_idle += b.host_idle * k;
    a.copy += b.copy * k, a.comm_all += b.comm_all * k, a.exposed_all += b.exposed_all * k, a.wait += b.wait * k;
    a.copy_bare += b.copy_bare * k;
    for (int c = 0; c < kCopyClasses; ++c) a.copy_by[c] += b.copy_by[c] * k;
    for (int c = 0; c < kCommSlots; ++c) a.comm[c] += b.comm[c] * k, a.exposed[c] += b.exposed[c] * k, a.kernels[c] += b.kernels[c] * k;
  };
  std::size_t max_wins = 0;
  for (auto& gt : an.gpus) {
    gt.wins = std::move(gt.cuts[cut].wins);
    gt.windows = gt.wins.size();
    max_wins = std::max(max_wins, gt.windows);
    if (gt.windows) ++an.gpus_with_windows;
  }
  std::vector<std::size_t> have(max_wins, 0);  // GPUs with an iteration j
  for (const auto& gt : an.gpus)
    for (std::size_t j = 0; j < gt.windows; ++j) ++have[j];
  an.by_index.resize(max_wins);
  std::vector<double> lens;
  for (auto& gt : an.gpus) {
    const auto local = std::move(gt.cuts[cut].stats);
    gt.cuts = {};
    for (std::size_t i = 0; i < gt.wins.size(); ++i) {
      const auto& w = gt.wins[i];
      WinStats s;
      s.len = local[i].len;
      s.compute = local[i].compute;
      s.copy = local[i].copy;
      s.idle = local[i].idle;
      s.host_idle = local[i].host_idle;
      s.busy = s.len - s.idle;
      s.comm_all = static_cast<double>(measure(gt.comm_all, w.s, w.e));
      s.exposed_all = static_cast<double>(measure(gt.exposed_all, w.s, w.e));
      for (int c = 1; c < kCommSlots; ++c)
        if (!gt.comm[c].empty()) {
          s.comm[c] = static_cast<double>(measure(gt.comm[c], w.s, w.e));
          s.exposed[c] = static_cast<double>(measure(gt.exposed[c], w.s, w.e));
        }
      s.wait = static_cast<double>(measure(gt.wait, w.s, w.e));
      s.copy_bare = static_cast<double>(measure(gt.copy_bare, w.s, w.e));
      for (int c = 0; c < kCopyClasses; ++c)
        if (!gt.copies[c].empty()) s.copy_by[c] = static_cast<double>(measure(gt.copies[c], w.s, w.e));
      // The collectives of the window (by start): explain's collectives per step.
      auto from = std::lower_bound(gt.colls.begin(), gt.colls.end(), w.s, [](const std::pair<std::int64_t, Coll>& k, std::int64_t t) { return k.first < t; });
      for (auto k = from; k != gt.colls.end() && k->first < w.e; ++k) s.kernels[static_cast<int>(k->second)] += 1;
      lens.push_back(s.len);
      add(gt.total, s, 1.0);
      add(an.per_iter, s, 1.0 / (static_cast<double>(gt.windows) * static_cast<double>(an.gpus_with_windows)));
      add(an.by_index[i], s, 1.0 / static_cast<double>(have[i]));
    }
    gt.colls = {};
  }
  an.iteration_ms_median = ms(median(std::move(lens)));
  an.iteration_count = max_wins;
  cross_rank_figures(an);
  return an;
}

std::string fmt_ms(double ns) { return fmt::format("{:.2f}", ms(ns)); }

double pct(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

const char* bench_of(Coll c) {
  switch (c) {
    case Coll::AllGather: return "all_gather_perf";
    case Coll::ReduceScatter: return "reduce_scatter_perf";
    case Coll::Broadcast: return "broadcast_perf";
    case Coll::Reduce: return "reduce_perf";
    case Coll::AllToAll: return "alltoall_perf";
    case Coll::SendRecv: return "sendrecv_perf";
    default: return "all_reduce_perf";
  }
}

std::string size_text(double bytes) {
  if (bytes >= 1 << 30) return fmt::format("{:.2f} GiB", bytes / (1 << 30));
  if (bytes >= 1 << 20) return fmt::format("{:.2f} MiB", bytes / (1 << 20));
  if (bytes >= 1 << 10) return fmt::format("{:.1f} KiB", bytes / (1 << 10));
  return fmt::format("{:.0f} B", bytes);
}

std::string iteration_words(const Analysis& an) {
  return an.iterations ? "per iteration" : "over the whole profile (no iterations found)";
}

std::string every(const Analysis& an) { return an.iterations ? "every iteration" : "the profile"; }

// A rank's name in the cross-rank findings: its label, and its node where the profile names it.
std::string rank_name(const Digest& p, const CrossRanks& xr, std::size_t r) {
  const auto& g = p.gpus[xr.gpu[r]];
  return g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host);
}

// What the job would save by replay (profile_ranks.hpp CollectiveReplay) if the latest ranks,
// or all ranks of a node, arrived as the median rank does: the answer to "drain which node, fix
// which rank". Only the 8 ranks and 8 nodes that arrive latest are replayed (each replay is a
// pass over every collective of every rank).
void whatif_lines(Finding& f, const Digest& p, const Analysis& an, const std::string& source) {
  const auto& xr = an.xr;
  const std::size_t n = xr.gpu.size();
  const auto& excess = xr.replayer.excess();
  const double base = static_cast<double>(xr.replay.replayed);
  auto saved_pct = [&](const std::vector<bool>& on_time) {
    return 100.0 * (base - static_cast<double>(xr.replayer.run(on_time).replayed)) / base;
  };
  constexpr std::size_t kReplayed = 8;
  std::vector<std::size_t> latest;
  for (std::size_t r = 0; r < n; ++r)
    if (excess[r] > 0) latest.push_back(r);
  std::stable_sort(latest.begin(), latest.end(), [&](std::size_t a, std::size_t b) { return excess[a] > excess[b]; });
  if (latest.size() > kReplayed) latest.resize(kReplayed);
  for (auto r : latest) {
    std::vector<bool> on_time(n, false);
    on_time[r] = true;
    const double pct_saved = saved_pct(on_time);
    f.metric("saved_ms_per_iter." + p.gpus[xr.gpu[r]].key, ms(pct_saved / 100 * xr.iteration_ns));
  }
  // Nodes: where the profiles name them (nsys Hostname).
  std::map<std::string, std::vector<std::size_t>> by_host;
  for (std::size_t r = 0; r < n; ++r)
    if (!p.gpus[xr.gpu[r]].host.empty() && xr.al.aligned[r]) by_host[p.gpus[xr.gpu[r]].host].push_back(r);
  if (by_host.size() < 2) return;
  std::vector<std::pair<std::int64_t, std::string>> nodes;
  for (const auto& [host, ranks] : by_host) {
    std::int64_t sum = 0;
    for (auto r : ranks) sum += excess[r];
    if (sum > 0) nodes.emplace_back(sum, host);
  }
  std::stable_sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (nodes.size() > kReplayed) nodes.resize(kReplayed);
  std::vector<std::pair<double, std::string>> saved;
  for (const auto& [sum, host] : nodes) {
    std::vector<bool> on_time(n, false);
    for (auto r : by_host[host]) on_time[r] = true;
    saved.emplace_back(saved_pct(on_time), host);
  }
  std::stable_sort(saved.begin(), saved.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  std::string list;
  for (const auto& [pct_saved, host] : saved) {
    f.metric("node_saved_ms_per_iter." + host, ms(pct_saved / 100 * xr.iteration_ns));
    if (list.size() < 200) list += fmt::format("{}{} {:.2f} ms ({:.1f}%)", list.empty() ? "" : ", ", host, ms(pct_saved / 100 * xr.iteration_ns), pct_saved);
  }
  if (!list.empty()) f.add(source, "replayed with all of a node's ranks arriving as the median rank does, the step would be shorter by: " + list);
}

// "ranks 2-7 were not given" / "2 traces were unreadable", for a job read in part.
std::string missing_words(const JobRanks& j) {
  std::string w;
  if (!j.missing.empty()) w = fmt::format("rank{} {} of the {} {} not among the traces", j.missing.size() == 1 ? "" : "s", rank_ranges(j.missing), j.world,
                                          j.missing.size() == 1 ? "is" : "are");
  if (!j.unreadable.empty()) w += fmt::format("{}{} trace{} could not be read", w.empty() ? "" : " and ", j.unreadable.size(), j.unreadable.size() == 1 ? "" : "s");
  return w;
}

// What a kind of communication kernel is, in a title.
std::string_view kind_words(std::string_view kind) {
  if (kind == "sendrecv") return "point-to-point send/recv";
  if (kind == "expert_parallel") return "expert-parallel dispatch and combine";
  if (kind == "one_sided") return "one-sided puts, gets and signals";
  if (kind == "copy") return "cross-device copies";
  return "collective";
}

// profile.exposed_comm's fix for what an NCCL sweep does not tune: point-to-point transfers and
// the kernels of other libraries (data/kb/comm_kernels.yaml kinds).
std::string comm_fix(std::string_view kind, const std::string& library, bool pipeline) {
  if (kind == "sendrecv" && pipeline)
    return "a send/recv kernel runs from the moment its stage posts it until the neighbouring stage's data has arrived: most of this time is the "
           "pipeline's bubble, a stage waiting for the one before it, not the transfer. Shorten the bubble first: more micro-batches per step, an "
           "interleaved 1F1B schedule (virtual pipeline stages), a zero-bubble or DualPipe schedule, stages of equal compute; then measure the "
           "transfer between two stages' GPUs with sendrecv_perf (perfgap analyze nccl-tests): point-to-point transfers have no collective "
           "algorithm to tune";
  if (kind == "sendrecv")
    return fmt::format("{} point-to-point kernels (all-to-all built from send/recv, pipeline stages) include the time they wait for their peer: "
                       "overlap them with compute (another micro-batch's work), then measure the transfer with sendrecv_perf or alltoall_perf "
                       "(perfgap analyze nccl-tests): point-to-point transfers have no collective algorithm to tune",
                       library);
  if (kind == "expert_parallel")
    return fmt::format("{}'s dispatch and combine move tokens to and from the experts' GPUs: overlap them with compute, two micro-batches that run "
                       "one's attention and experts while the other's dispatch or combine is in flight (DeepSeek-V3's DualPipe, SGLang's "
                       "two-batch overlap), or the low-latency kernels with their receive hook, which hold no SM while the data arrives; then check "
                       "the links they use: NVLink within the node (perfgap check, gpu layer), the RDMA NICs and GPUDirect RDMA between nodes "
                       "(network layer)",
                       library);
  if (kind == "one_sided")
    return fmt::format("{} kernels wait for or move one-sided transfers (puts, gets and signals on symmetric memory): run them on a stream of their "
                       "own under compute, and check the transport: GPU-initiated IB (NVSHMEM_IB_ENABLE_IBGDA=1) or the CPU proxy thread, whose "
                       "core must not be shared (perfgap check: placement), and the RDMA NICs between nodes",
                       library);
  if (kind == "copy")
    return fmt::format("{}'s cross-device copies: overlap them with compute and check the peer path between the GPUs (NVLink or PCIe P2P: "
                       "gpu.topology of perfgap analyze nvidia-smi on nvidia-smi topo -m)",
                       library);
  return fmt::format("{} runs collectives of its own, which NCCL's settings do not tune: overlap them with compute, and measure them against "
                     "NCCL's on the same ranks (nccl-tests) to see which is faster here",
                     library);
}

Finding straggler_finding(const Digest& p, const Analysis& an, const std::string& source) {
  const auto& xr = an.xr;
  const auto& al = xr.al;
  const std::size_t n = xr.gpu.size();
  Finding f = started("profile.straggler", "workload", source);
  std::vector<std::size_t> unaligned;
  for (std::size_t r = 0; r < n; ++r)
    if (!al.aligned[r]) unaligned.push_back(r);
  // A rank whose only NCCL kernels are send/recv: a pipeline stage, with no collective whose end
  // all ranks share to put its clock on the others'.
  auto p2p_only = [&](std::size_t r) {
    return r < xr.seqs.size() && xr.seqs[r].empty() && !an.gpus[xr.gpu[r]].comm[static_cast<int>(Coll::SendRecv)].empty();
  };
  auto why_not = [&](std::size_t r) {
    return p2p_only(r) ? std::string("only point-to-point send/recv (a pipeline stage): no collective to align on") : al.why_not[r];
  };
  f.metric("ranks", static_cast<double>(n));
  f.metric("ranks_aligned", static_cast<double>(xr.aligned));
  f.metric("ranks_unaligned", static_cast<double>(unaligned.size()));
  for (std::size_t i = 0; i < unaligned.size(); ++i) {
    const std::size_t r = unaligned[i];
    if (i < 16) f.add(source, fmt::format("not aligned: {}: {}", rank_name(p, xr, r), why_not(r)), "collective ends that meet the other ranks'");
    else if (i == 16) f.add(source, fmt::format("... {} more ranks not aligned", unaligned.size() - 16));
  }
  // The ranks left out, named in the title too (text shows a skip's or pass's title only).
  std::string left_out;
  for (std::size_t i = 0; i < unaligned.size() && i < 3; ++i) left_out += (i ? ", " : "") + rank_name(p, xr, unaligned[i]);
  if (unaligned.size() > 3) left_out += fmt::format(" and {} more", unaligned.size() - 3);
  const std::string not_aligned = unaligned.empty() ? "" : fmt::format("; not aligned, left out: {}", left_out);
  const std::size_t cols = xr.columns.size();
  if (xr.aligned < 2 && unaligned.size() == n && std::all_of(unaligned.begin(), unaligned.end(), p2p_only)) {
    f.status = report::Status::skip;
    f.title = fmt::format("the {} ranks ran only point-to-point send/recv (a pipeline): arrivals at collectives cannot be compared; the time "
                          "stages wait for each other is inside their send/recv kernels (profile.exposed_comm SendRecv)",
                          n);
    return f;
  }
  if (xr.aligned < 2 || cols == 0) {
    f.status = report::Status::skip;
    f.title = xr.aligned < 2 ? fmt::format("the {} ranks' profiles cannot be put on one clock: no two share collectives whose ends meet{}", n, not_aligned)
                             : "no collective matched across ranks falls inside an iteration" + not_aligned;
    return f;
  }
  const double iters = static_cast<double>(cols);
  const std::size_t ref = al.reference;
  // The others' compute before their collectives, for the straggler's comparison.
  auto per_iter_ms = [&](const std::vector<double>& v, std::size_t r) { return ms(v[r] / iters); };
  std::vector<double> skews = xr.skews;
  const double skew50 = percentile(skews, 0.5), skew_max = skews.empty() ? 0 : *std::max_element(skews.begin(), skews.end());
  f.metric("collectives_matched", static_cast<double>(al.matches.size()));
  f.metric("iterations", iters);
  f.metric("iteration_ms", ms(xr.iteration_ns));
  f.metric("skew_ms_p50", ms(skew50));
  f.metric("skew_ms_max", ms(skew_max));
  f.metric("clock_tolerance_ms", ms(static_cast<double>(al.tolerance)));
  const bool named = xr.straggler >= 0;
  const std::size_t S = named ? static_cast<std::size_t>(xr.straggler) : 0;
  const double cost_ms = named ? per_iter_ms(xr.cost, S) : 0;
  const double wait_ms = named ? per_iter_ms(xr.others_wait, S) : 0;
  const double cost_pct = xr.iteration_ns > 0 ? 100 * ms(named ? xr.cost[S] / iters : 0) / ms(xr.iteration_ns) : 0;
  f.metric("cost_ms_per_iter", cost_ms);
  f.metric("cost_pct_of_iter", cost_pct);
  f.metric("wait_ms_per_iter", wait_ms);
  std::size_t matched = 0;
  for (std::size_t k = 0; k < al.matches.size(); ++k) matched += xr.iter_of[k] >= 0;
  std::vector<double> others_compute;
  for (std::size_t r = 0; r < n; ++r)
    if (al.aligned[r] && (!named || r != S)) others_compute.push_back(per_iter_ms(xr.compute_before, r));
  const double compute_median = percentile(others_compute, 0.5);
  if (xr.straggler_warn) {
    f.status = report::Status::warn;
    f.metric("last_count", static_cast<double>(xr.last_count[S]));
    f.metric("last_pct", pct(static_cast<double>(xr.last_count[S]), static_cast<double>(matched)));
    f.title = fmt::format("{} arrives last at {} of {} collectives: the other {} rank{} wait {:.2f} ms per iteration for it, {:.2f} ms ({:.1f}%) of the "
                          "{:.2f} ms iteration lost to it",
                          rank_name(p, xr, S), xr.last_count[S], matched, xr.aligned - 1, xr.aligned == 2 ? "" : "s", wait_ms, cost_ms, cost_pct,
                          ms(xr.iteration_ns)) +
              not_aligned;
    const double own = per_iter_ms(xr.compute_before, S);
    f.add(source, fmt::format("{}: {:.2f} ms of compute per iteration before its collectives, the other ranks' median {:.2f} ms", rank_name(p, xr, S), own,
                              compute_median),
          "about the others'");
    const bool slower_gpu = own - compute_median > 0.5 * cost_ms;
    f.fix = slower_gpu ? fmt::format("{} computes longer than its peers before each collective: its GPU is slower or has more work. Check its node: "
                                     "perfgap check (gpu.clocks: throttling, power caps, thermals; a degraded GPU or PCIe link) and compare its "
                                     "nvidia-smi -q -x with a peer's (perfgap analyze nvidia-smi); uneven data or pipeline shards also do this",
                                     p.gpus[xr.gpu[S]].label)
                       : fmt::format("{} computes as long as its peers but starts its work later: its host is late. Check its node: perfgap check "
                                     "(placement.gpu_affinity, placement.shared_cores, cpu.governor), the data loader (num_workers, pin_memory) "
                                     "and the host-bound share of its profile (profile.gpu_idle)",
                                     p.gpus[xr.gpu[S]].label);
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms iteration ({:.1f}%): the step would be that much shorter if {} arrived with the next-latest rank",
                           cost_ms, ms(xr.iteration_ns), cost_pct, p.gpus[xr.gpu[S]].label);
  } else if (xr.set_warn) {
    // Several ranks late together: at each collective the last of them is only a little later
    // than the next (so no one rank "costs" much), yet all the others wait for the set.
    f.status = report::Status::warn;
    const double set_ms = ms(xr.set_saved_pct / 100 * xr.iteration_ns);
    std::string names;
    for (std::size_t i = 0; i < xr.late_set.size() && i < 4; ++i)
      names += (i == 0 ? "" : i + 1 == xr.late_set.size() ? " and " : ", ") + rank_name(p, xr, xr.late_set[i]);
    if (xr.late_set.size() > 4) names += fmt::format(" and {} more", xr.late_set.size() - 4);
    f.title = fmt::format("{} ranks arrive late together ({}): replayed with them on time the step is {:.2f} ms ({:.1f}%) shorter; alone, the latest of "
                          "them costs {:.2f} ms (the others still hold every collective)",
                          xr.late_set.size(), names, set_ms, xr.set_saved_pct, cost_ms) +
              not_aligned;
    f.metric("late_set_size", static_cast<double>(xr.late_set.size()));
    f.metric("late_set_saved_ms_per_iter", set_ms);
    // What explain budgets: the set's cost, measured by the replay, in place of one rank's.
    for (auto& [k, v] : f.metrics) {
      if (k == "cost_ms_per_iter") v = set_ms;
      if (k == "cost_pct_of_iter") v = xr.set_saved_pct;
    }
    for (auto r : xr.late_set)
      f.add(source, fmt::format("{}: {:.2f} ms of compute per iteration before its collectives, the other ranks' median {:.2f} ms", rank_name(p, xr, r),
                                per_iter_ms(xr.compute_before, r), compute_median),
            "about the others'");
    f.fix = "these ranks compute longer or start later than their peers at every step: check their nodes together (perfgap check: gpu.clocks, "
            "placement.*, cpu.governor; perfgap fleet over their reports), and look for uneven work (data or pipeline shards) given to them";
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms iteration ({:.1f}%): the step would be that much shorter if these {} ranks arrived with the median rank "
                           "(by replay of the job's collectives)",
                           set_ms, ms(xr.iteration_ns), xr.set_saved_pct, xr.late_set.size());
  } else if (p.job.partial()) {
    // Part of the job: a rank not read may be the late one.
    f.status = report::Status::skip;
    f.title = fmt::format("no straggler among the {} ranks read, but {}: one of those may be the late one (the last rank read costs at most {:.2f} ms, {:.1f}% "
                          "of the {:.2f} ms iteration)",
                          xr.aligned, missing_words(p.job), cost_ms, cost_pct, ms(xr.iteration_ns)) +
              not_aligned;
  } else {
    f.status = report::Status::pass;
    f.title = fmt::format("no straggler among {} ranks: the last rank to arrive costs at most {:.2f} ms ({:.1f}%) of the {:.2f} ms iteration "
                          "(skew p50 {:.3f} ms, max {:.3f} ms)",
                          xr.aligned, cost_ms, cost_pct, ms(xr.iteration_ns), ms(skew50), ms(skew_max)) +
              not_aligned;
  }
  if (f.status == report::Status::warn && p.job.partial()) f.title += fmt::format(" (of the ranks read: {})", missing_words(p.job));
  std::size_t by_step = 0;
  for (std::size_t r = 0; r < n; ++r) by_step += al.aligned[r] && r != ref && al.by_step[r];
  const std::string paired = by_step + 1 == xr.aligned ? "ranks paired by step number (ProfilerStep#N) and collective order"
                             : by_step == 0        ? "ranks paired where their collectives' ends meet at the smallest clock offset (no step numbers in common)"
                                                   : fmt::format("{} of the {} other ranks paired by step number, the rest where the ends meet at the smallest clock "
                                                                 "offset",
                                                                 by_step, xr.aligned - 1);
  f.metric("ranks_paired_by_step", static_cast<double>(by_step));
  if (xr.replay.intervals > 0 && xr.replay.replayed > 0) whatif_lines(f, p, an, source);
  if (xr.replay.intervals > 0) {
    f.metric("replay_measured_ms", ms(static_cast<double>(xr.replay.measured)));
    f.metric("replay_ms", ms(static_cast<double>(xr.replay.replayed)));
    f.add(source, fmt::format("the job's {} collective-to-collective steps replayed (each collective starts at its last arrival and lasts its measured "
                              "transfer): {:.2f} ms against {:.2f} ms measured ({:+.2f}%)",
                              xr.replay.intervals, ms(static_cast<double>(xr.replay.replayed)), ms(static_cast<double>(xr.replay.measured)),
                              xr.replay.measured > 0 ? 100.0 * static_cast<double>(xr.replay.replayed - xr.replay.measured) / static_cast<double>(xr.replay.measured) : 0));
  }
  f.add(source, fmt::format("{} collectives matched on {} of {} ranks over {} iteration{}: {}, clocks aligned on the collectives' ends (reference {}, "
                            "tolerance {:.2f} ms)",
                            matched, xr.aligned, n, cols, cols == 1 ? "" : "s", paired, rank_name(p, xr, ref), ms(static_cast<double>(al.tolerance))));
  // Per rank: metrics for all, the text table for the latest 16.
  std::vector<std::size_t> order;
  for (std::size_t r = 0; r < n; ++r)
    if (al.aligned[r]) order.push_back(r);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return xr.late[a] > xr.late[b]; });
  f.table.push_back({"rank", "last", "late ms/iter", "waits ms/iter", "compute before ms/iter", "clock offset ms"});
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t r = order[i];
    const auto& key = p.gpus[xr.gpu[r]].key;
    f.metric("late_ms_per_iter." + key, per_iter_ms(xr.late, r));
    f.metric("wait_ms_per_iter." + key, per_iter_ms(xr.wait, r));
    f.metric("last_count." + key, static_cast<double>(xr.last_count[r]));
    f.metric("compute_before_ms_per_iter." + key, per_iter_ms(xr.compute_before, r));
    f.metric("clock_offset_ms." + key, ms(static_cast<double>(al.offset[r])));
    if (i < 16)
      f.table.push_back({rank_name(p, xr, r), fmt::format("{}/{}", xr.last_count[r], xr.present_in[r]), fmt::format("{:.2f}", per_iter_ms(xr.late, r)),
                         fmt::format("{:.2f}", per_iter_ms(xr.wait, r)), fmt::format("{:.2f}", per_iter_ms(xr.compute_before, r)),
                         fmt::format("{:+.3f}", ms(static_cast<double>(al.offset[r])))});
    else if (i == 16)
      f.table.push_back({fmt::format("... {} more ranks (all in the JSON metrics)", order.size() - 16), "", "", "", "", ""});
  }
  f.table_always = xr.straggler_warn || xr.set_warn;
  // HTML: rank x iteration, a cell warn where the rank's lateness took >= 5% of that iteration.
  report::Chart c;
  c.kind = report::Chart::Kind::heatmap;
  c.title = fmt::format("lateness at the collectives per rank and iteration (warn: the rank arrived >= {:.0f}% of the iteration after the first)", kStragglerPct);
  for (std::size_t j = 0; j < cols; ++j) c.columns.push_back(fmt::format("iteration {}", xr.columns[j] + 1));
  for (std::size_t r : order) {
    c.rows.push_back(p.gpus[xr.gpu[r]].label);
    std::vector<std::optional<report::Status>> row;
    for (std::size_t j = 0; j < cols; ++j) {
      const double len = xr.columns[j] < an.by_index.size() ? an.by_index[xr.columns[j]].len : xr.iteration_ns;
      row.push_back(len > 0 && 100 * xr.late_iter[r][j] / len >= kStragglerPct ? report::Status::warn : report::Status::pass);
    }
    c.cells.push_back(std::move(row));
  }
  f.charts.push_back(std::move(c));
  return f;
}

}  // namespace

ProfileFigures profile_figures(const Profile& profile, const ProfileOptions& o) {
  auto d = digest(profile, o);
  auto an = analyze(d, o);
  ProfileFigures f;
  f.iterations = an.iterations;
  f.iteration_ms = ms(an.per_iter.len);  // the one iteration of every report (profile.iterations)
  f.iteration_ms_mean = ms(an.per_iter.len);
  f.compute_ms = ms(an.per_iter.compute);
  f.comm_all_ms = ms(an.per_iter.comm_all);
  f.exposed_all_ms = ms(an.per_iter.exposed_all);
  f.idle_ms = ms(an.per_iter.idle);
  for (int c = 0; c < kCommSlots; ++c) {
    f.present[c] = false;
    for (const auto& gt : an.gpus) f.present[c] = f.present[c] || (c > 0 && !gt.comm[c].empty());
    f.comm_ms[c] = ms(an.per_iter.comm[c]);
    f.exposed_ms[c] = ms(an.per_iter.exposed[c]);
  }
  return f;
}

namespace {

// What the job's files held as ranks: all of one run, or which were left out, unreadable or
// missing (job-level verdicts over part of a job cannot pass: profile.straggler).
Finding ranks_finding(const JobRanks& j, const std::string& source) {
  Finding f = started("profile.ranks", "workload", source);
  f.metric("inputs", static_cast<double>(j.inputs));
  f.metric("ranks_read", static_cast<double>(j.kept));
  f.metric("left_out", static_cast<double>(j.left_out.size()));
  f.metric("unreadable", static_cast<double>(j.unreadable.size()));
  if (j.world > 0) {
    f.metric("world_size", static_cast<double>(j.world));
    f.metric("ranks_missing", static_cast<double>(j.missing.size()));
  }
  for (const auto& [file, why] : j.left_out) f.add(file, "left out: " + why, "a rank of this run, read once");
  for (const auto& [file, why] : j.unreadable) f.add(file, "unreadable: " + why, "a readable trace");
  if (!j.missing.empty()) f.add(source, fmt::format("ranks {} of 0-{} not among the traces read", rank_ranges(j.missing), j.world - 1), "every rank's trace");
  const std::string of = j.world > 0 ? fmt::format("{} of {} ranks", j.ranks.empty() ? j.kept : j.ranks.size(), j.world) : fmt::format("{} traces", j.kept);
  std::vector<std::string> what;
  if (!j.missing.empty()) what.push_back(fmt::format("rank{} {} missing", j.missing.size() == 1 ? "" : "s", rank_ranges(j.missing)));
  if (!j.unreadable.empty()) what.push_back(fmt::format("{} unreadable", j.unreadable.size()));
  if (!j.left_out.empty()) {
    std::string names;
    for (std::size_t i = 0; i < j.left_out.size() && i < 2; ++i) names += (i ? ", " : "") + j.left_out[i].first;
    if (j.left_out.size() > 2) names += fmt::format(" and {} more", j.left_out.size() - 2);
    what.push_back(fmt::format("{} left out ({}: {})", j.left_out.size(), names, j.left_out[0].second));
  }
  if (what.empty()) {
    f.status = report::Status::pass;
    f.title = j.world > 0 ? fmt::format("{} of one run (world_size {}), each read once", of, j.world)
                          : fmt::format("{} of one run, each read once (the traces record no world size: whether ranks are missing is unknown)", of);
    return f;
  }
  f.status = report::Status::warn;
  std::string list;
  for (const auto& w : what) list += (list.empty() ? "" : "; ") + w;
  f.title = fmt::format("{} analysed as the job: {}{}", of, list, j.partial() ? "; job-level verdicts cover these ranks only and cannot pass" : "");
  f.fix = j.partial() ? "give every rank's trace (torch.profiler writes one per rank; a directory or a quoted glob takes them all) so that the job-level "
                        "verdicts cover the whole job"
                      : "give the traces of one run only, each once";
  return f;
}

// The findings of a profile's digest (one profile, or a job's ranks absorbed in order).
std::vector<Finding> digest_findings(Digest& p, const std::string& source, const ProfileOptions& o) {
  auto an = analyze(p, o);
  std::vector<Finding> out;
  const auto& it = an.per_iter;
  const CommLibraries libs(o);
  std::vector<int> colls;  // the communication slots the profile has: NCCL collectives, then libraries
  for (int c = 1; c < kCommSlots; ++c)
    for (const auto& gt : an.gpus)
      if (!gt.comm[c].empty()) {
        colls.push_back(c);
        break;
      }
  // A pipeline: NCCL's only kernels are point-to-point send/recv (its stages pass activations on).
  const bool pipeline = std::find(colls.begin(), colls.end(), static_cast<int>(Coll::SendRecv)) != colls.end() &&
                        std::none_of(colls.begin(), colls.end(), [](int c) { return c < parsers::kCollCount && c != static_cast<int>(Coll::SendRecv); });

  // ---- profile.summary
  {
    Finding f = started("profile.summary", "workload", source);
    f.status = report::Status::pass;
    std::size_t kernels = 0, devices = 0;
    double kernel_ns = 0, nccl_ns = 0, span = 0;
    for (const auto& gt : an.gpus) {
      if (gt.acts == 0) continue;
      ++devices;
      kernels += gt.kernels;
      kernel_ns += gt.kernel_ns;
      nccl_ns += gt.nccl_ns;
      span = std::max(span, static_cast<double>(gt.last - gt.first));
    }
    // The communication libraries besides NCCL whose kernels were found (comm_kernels table).
    std::string libraries;
    for (int c = parsers::kCollCount; c < kCommSlots; ++c) {
      if (an.coll_kernels[c] == 0) continue;
      const std::string name = libs.slot_name(c);
      libraries += fmt::format("{}{} {} kernel{} ({:.2f} ms)", libraries.empty() ? "" : ", ", an.coll_kernels[c], name,
                               an.coll_kernels[c] == 1 ? "" : "s", ms(an.coll_ns[c]));
      f.metric("kernels." + library_key(name), static_cast<double>(an.coll_kernels[c]));
      f.metric("kernel_ms." + library_key(name), ms(an.coll_ns[c]));
    }
    f.title = fmt::format("{}: {} kernels on {} GPU{}, {:.2f} ms of kernels ({:.2f} ms NCCL{}) over {:.2f} ms", p.format, kernels, devices,
                          devices == 1 ? "" : "s", ms(kernel_ns), ms(nccl_ns), libraries.empty() ? "" : "; communication besides NCCL: " + libraries,
                          ms(span));
    std::size_t shown = 0;
    for (std::size_t g = 0; g < an.gpus.size(); ++g) {
      const auto& gt = an.gpus[g];
      if (gt.acts == 0) continue;
      if (++shown > 16) {
        f.add(source, fmt::format("... {} more GPUs", devices - 16));
        break;
      }
      f.add(source, fmt::format("{}: {} kernels, {:.2f} ms of kernels, {:.2f} ms NCCL, {} copies/sets, span {:.2f} ms", p.gpus[g].label, gt.kernels,
                                ms(gt.kernel_ns), ms(gt.nccl_ns), gt.acts - gt.kernels, ms(static_cast<double>(gt.last - gt.first))));
    }
    for (const auto& n : p.notes) f.add(source, n);
    f.metric("kernels", static_cast<double>(kernels));
    f.metric("devices", static_cast<double>(devices));
    f.metric("gpu_kernel_ms", ms(kernel_ns));
    f.metric("nccl_kernel_ms", ms(nccl_ns));
    f.metric("span_ms", ms(span));
    f.metric("api_calls", static_cast<double>(p.api_calls));
    out.push_back(std::move(f));
  }

  // ---- profile.iterations
  {
    Finding f = started("profile.iterations", "workload", source);
    if (!an.iterations) {
      f.status = report::Status::skip;
      f.title = !o.iteration_range.empty()
                    ? fmt::format("no range named '{}' holds GPU work (--iteration-range); figures are over the whole profile", o.iteration_range)
                    : "no iterations found (no ProfilerStep#N or step-like NVTX range, no repeating kernel sequence): figures are over the whole profile";
      f.add(source, fmt::format("{} host ranges, {} GPUs", p.ranges, an.gpus_with_windows));
      f.fix = "annotate iterations (torch.profiler schedule gives ProfilerStep#N; nvtx.range_push('step') around each step) or pass --iteration-range NAME";
      f.metric("iterations", 0);
    } else {
      f.status = report::Status::pass;
      // One iteration for the whole report: the mean window over the GPUs and their iterations,
      // the one every per-iteration figure (communication, exposed, idle, the straggler's
      // share) is a part of; the median window is said beside it.
      f.title = fmt::format("{} iterations found by {}; {:.2f} ms per iteration (mean; median window {:.2f} ms)", an.iteration_count, an.method, ms(it.len),
                            an.iteration_ms_median);
      f.metric("iterations", static_cast<double>(an.iteration_count));
      f.metric("iteration_ms", ms(it.len));
      f.metric("iteration_ms_mean", ms(it.len));
      f.metric("iteration_ms_median", an.iteration_ms_median);
      f.metric("compute_ms_per_iter", ms(it.compute));
      f.metric("memcpy_ms_per_iter", ms(it.copy));
      f.metric("gpus", static_cast<double>(an.gpus_with_windows));
      for (std::size_t g = 0; g < an.gpus.size(); ++g) {
        const auto& gt = an.gpus[g];
        if (gt.windows == 0) continue;
        const double l = gt.total.len, cpt = gt.total.compute;
        double k = static_cast<double>(gt.windows);
        f.metric("iterations." + p.gpus[g].key, k);
        f.metric("iteration_ms_mean." + p.gpus[g].key, ms(l / k));
        f.metric("compute_ms_per_iter." + p.gpus[g].key, ms(cpt / k));
      }
      std::vector<std::string> head = {"iter", "ms", "compute"};
      for (int c : colls) head.emplace_back(libs.slot_name(c));
      const bool waits = an.xr.present && ms(it.wait) >= 0.005;
      head.emplace_back("exposed");
      if (waits) head.emplace_back("waiting");
      for (const char* h : {"idle", "memcpy"}) head.emplace_back(h);
      f.table.push_back(head);
      f.table_always = true;
      for (std::size_t j = 0; j < an.by_index.size(); ++j) {
        const auto& s = an.by_index[j];
        std::vector<std::string> row = {std::to_string(j + 1), fmt_ms(s.len), fmt_ms(s.compute)};
        for (int c : colls) row.push_back(fmt_ms(s.comm[c]));
        row.push_back(fmt_ms(s.exposed_all));
        if (waits) row.push_back(fmt_ms(s.wait));
        row.push_back(fmt_ms(s.idle));
        row.push_back(fmt_ms(s.copy));
        f.table.push_back(std::move(row));
      }
      f.add(source, fmt::format("the iteration of this report is the mean window over {} GPU{} and their iterations, {:.2f} ms: every per-iteration figure "
                                "(communication, exposed, idle, copies, the straggler's share) is over it; the median window is {:.2f} ms",
                                an.gpus_with_windows, an.gpus_with_windows == 1 ? "" : "s", ms(it.len), an.iteration_ms_median));
      f.add(source, fmt::format("per iteration, mean of {} GPU{}: {:.2f} ms, compute {:.2f} ms, communication {:.2f} ms ({:.2f} ms exposed), idle {:.2f} ms, memcpy/memset {:.2f} ms",
                                an.gpus_with_windows, an.gpus_with_windows == 1 ? "" : "s", ms(it.len), ms(it.compute), ms(it.comm_all),
                                ms(it.exposed_all), ms(it.idle), ms(it.copy)));
    }
    out.push_back(std::move(f));
  }

  // ---- profile.ranks (a job of several files)
  if (p.job.several) out.push_back(ranks_finding(p.job, source));

  // ---- profile.straggler (several ranks)
  if (an.xr.present) out.push_back(straggler_finding(p, an, source));

  // ---- profile.exposed_comm (one per collective, plus `all`)
  auto exposed_finding = [&](int c) {
    bool all = c == 0;
    std::string name = all ? "all" : libs.slot_name(c);
    Finding f = started("profile.exposed_comm", "network", name);
    double comm = all ? it.comm_all : it.comm[c];
    double exposed = all ? it.exposed_all : it.exposed[c];
    double share = pct(exposed, it.len);
    f.metric("comm_ms_per_iter", ms(comm));
    f.metric("exposed_ms_per_iter", ms(exposed));
    f.metric("exposed_pct_of_iter", share);
    if (!all) {
      f.metric("kernels", static_cast<double>(an.coll_kernels[c]));
      if (an.coll_bytes[c]) f.metric("msg_bytes", static_cast<double>(an.coll_bytes[c]));
      // Per GPU and iteration, only where iterations were found (else the window is the profile).
      if (an.iterations) f.metric("kernels_per_iter", it.kernels[c]);
    }
    f.status = share > 10 ? report::Status::warn : report::Status::pass;
    std::string what = all ? "communication" : name;
    if (!all && libs.slot_kind(c) != "collective")  // say what the time is where the name does not
      what += fmt::format(" ({})", c == static_cast<int>(Coll::SendRecv) && pipeline ? "point-to-point: pipeline transfers and the stages' waiting for each other"
                                                                                      : kind_words(libs.slot_kind(c)));
    else if (!all && c >= parsers::kCollCount)
      what += " (collective)";
    f.title = fmt::format("{} {:.2f} ms {}, {:.2f} ms ({:.1f}% of the {:.2f} ms iteration) not overlapped by compute{}", what, ms(comm),
                          iteration_words(an), ms(exposed), share, ms(it.len), share > 10 ? " (> 10%)" : "");
    // Several ranks: the time inside the kernels spent waiting for a later rank is left out above
    // and said apart (profile.straggler), so that waiting is not tuned as communication.
    double waiting = 0;
    if (an.xr.present) {
      double wsum = 0, wgpus = 0;
      for (const auto& gt : an.gpus) {
        if (gt.windows == 0) continue;
        wsum += gt.total.wait / static_cast<double>(gt.windows);
        ++wgpus;
      }
      waiting = wgpus > 0 && all ? wsum / wgpus : 0;
      if (!all) {
        // Per collective: the waits inside its own kernels.
        double t = 0;
        for (std::size_t k = 0; k < an.xr.al.matches.size(); ++k) {
          const auto& m = an.xr.al.matches[k];
          if (static_cast<int>(m.coll) != c || an.xr.iter_of[k] < 0) continue;
          for (std::size_t r = 0; r < an.xr.gpu.size(); ++r)
            if (m.index[r] >= 0) t += static_cast<double>(m.last - m.arrival[r]);
        }
        const double cols = static_cast<double>(std::max<std::size_t>(1, an.xr.columns.size()));
        waiting = an.xr.aligned > 0 ? t / cols / static_cast<double>(an.xr.aligned) : 0;
      }
      f.metric("waiting_ms_per_iter", ms(waiting));
      if (ms(waiting) >= 0.005)
        f.title += fmt::format("; besides, {:.2f} ms {} inside the kernels waiting for a later rank (not communication: profile.straggler)", ms(waiting),
                               iteration_words(an));
    }
    // Per GPU, worst first.
    std::vector<std::pair<double, std::size_t>> order;
    for (std::size_t g = 0; g < an.gpus.size(); ++g) {
      const auto& gt = an.gpus[g];
      if (gt.windows == 0) continue;
      const double e = all ? gt.total.exposed_all : gt.total.exposed[c], l = gt.total.len;
      order.push_back({pct(e, l), g});
      f.metric("exposed_pct_of_iter." + p.gpus[g].key, pct(e, l));
    }
    std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
    std::size_t shown = 0;
    for (const auto& [share_g, g] : order) {
      if (++shown > 8) {
        f.add(source, fmt::format("... {} more GPUs", order.size() - 8));
        break;
      }
      const auto& gt = an.gpus[g];
      const double e = all ? gt.total.exposed_all : gt.total.exposed[c], cm = all ? gt.total.comm_all : gt.total.comm[c];
      double k = static_cast<double>(gt.windows);
      f.add(source, fmt::format("{}: {:.2f} ms communication, {:.2f} ms exposed {} ({:.1f}%)", p.gpus[g].label, ms(cm / k), ms(e / k),
                                iteration_words(an), share_g),
            "<= 10% of the iteration exposed");
    }
    if (!all && an.coll_bytes[c])
      f.add(source, fmt::format("{} kernels moved {} in all (Kineto NCCL args){}", an.coll_kernels[c], size_text(static_cast<double>(an.coll_bytes[c])),
                                an.coll_group[c] ? fmt::format(", group size {}", an.coll_group[c]) : ""));
    if (f.status == report::Status::warn) {
      int slot = c;
      if (all) {  // the collective (or library) with the most exposed time says what to overlap and sweep
        slot = static_cast<int>(Coll::AllReduce);
        double most = -1;
        for (int k : colls)
          if (it.exposed[k] > most) most = it.exposed[k], slot = k;
      }
      const Coll col = slot < parsers::kCollCount ? static_cast<Coll>(slot) : Coll::none;
      // A sweep of NCCL's algorithms tunes NCCL's collectives only: not point-to-point transfers
      // (no algorithm to choose), not another library's kernels.
      const bool sweepable = col != Coll::none && col != Coll::SendRecv;
      std::string overlap = col == Coll::AllGather || col == Coll::ReduceScatter
                                ? "prefetch the next layer's parameters (FSDP forward_prefetch/backward_prefetch, ZeRO-3 prefetch bucket) so it runs under compute; "
                            : col == Coll::AllReduce ? "overlap gradient buckets with the backward pass (DDP bucket_cap_mb, no find_unused_parameters); "
                            : col == Coll::AllToAll ? "overlap expert dispatch with compute (MoE comm/compute pipelining); "
                                                    : "";
      if (!sweepable) {
        f.fix = comm_fix(libs.slot_kind(slot), libs.slot_name(slot), pipeline);
        if (an.xr.straggler_warn)
          f.fix = fmt::format("first remove the straggler (profile.straggler: the other ranks wait for {} each iteration); then: {}",
                              p.gpus[an.xr.gpu[static_cast<std::size_t>(an.xr.straggler)]].label, f.fix);
      } else if (an.xr.straggler_warn) {
        // A straggler first: tuning NCCL while the ranks wait for one of them measures the wait.
        f.fix = fmt::format("first remove the straggler (profile.straggler: the other ranks wait for {} each iteration); then {}profile again "
                            "before tuning the collective itself",
                            p.gpus[an.xr.gpu[static_cast<std::size_t>(an.xr.straggler)]].label, overlap);
      } else {
        f.fix = fmt::format("{}then tune the collective itself: perfgap sweep --env NCCL_ALGO=unset,Ring,Tree --env NCCL_MIN_NCHANNELS=unset,16,32 -- {} -b 1M -e 1G -f 2 -g 8 "
                            "(also NCCL_PROTO, NCCL_NCHANNELS_PER_NET_PEER, NCCL_IB_QPS_PER_CONNECTION; see docs/SWEEP.md) and check the fabric with perfgap analyze nccl-tests",
                            overlap, bench_of(col));
      }
      f.impact = an.iterations ? fmt::format("{:.2f} ms of every {:.2f} ms iteration the GPU waits on {}: up to {:.1f}% faster iterations if it were hidden", ms(exposed), ms(it.len), what, share)
                               : fmt::format("{:.2f} ms of the {:.2f} ms profile the GPU waits on {}", ms(exposed), ms(it.len), what);
    }
    out.push_back(std::move(f));
  };
  if (colls.empty()) {
    Finding f = started("profile.exposed_comm", "network", "all");
    f.status = report::Status::skip;
    f.title = "no communication kernels in the profile (NCCL's, or a library's of the communication-kernel table): no communication to expose";
    f.add(source, "no kernel named ncclKernel_*, ncclDevKernel_* or nccl*Kernel*, nor one the table names (data/kb/comm_kernels.yaml and --kb: DeepEP, "
                  "NVSHMEM, MSCCL++, ...)");
    f.metric("comm_ms_per_iter", 0);
    f.metric("exposed_ms_per_iter", 0);
    f.metric("exposed_pct_of_iter", 0);
    out.push_back(std::move(f));
  } else {
    for (int c : colls) exposed_finding(c);
    exposed_finding(0);
  }

  // Idle and launch shares of a handful of kernels (a startup-only capture) say nothing about
  // the job: below the floor both findings skip instead of a host-bound verdict.
  // A whole-graph execution (nsys --cuda-graph-trace=graph) holds an unknown number of kernels:
  // such a profile is judged.
  std::size_t all_kernels = 0;
  const bool graphs = p.graphs;
  for (const auto& gt : an.gpus) all_kernels += gt.kernels;
  auto too_few_kernels = [&](Finding& f) {
    if (all_kernels >= kMinKernelsToJudge || graphs) return false;
    f.status = report::Status::skip;
    f.title = fmt::format("too few kernels to judge: {} kernel{} in the profile (at least {}); profile steady-state iterations, not only the start",
                          all_kernels, all_kernels == 1 ? "" : "s", kMinKernelsToJudge);
    f.add(source, fmt::format("{} kernels, {} host API calls", all_kernels, p.api_calls), fmt::format(">= {} kernels", kMinKernelsToJudge));
    return true;
  };

  // ---- profile.gpu_idle
  if (Finding f = started("profile.gpu_idle", "workload", source); too_few_kernels(f)) {
    out.push_back(std::move(f));
  } else {
    double idle = pct(it.idle, it.len), host = pct(it.host_idle, it.len);
    f.metric("idle_pct", idle);
    f.metric("host_bound_pct", host);
    f.metric("idle_ms_per_iter", ms(it.idle));
    f.metric("memcpy_ms_per_iter", ms(it.copy));
    f.status = idle > 10 ? report::Status::warn : report::Status::pass;
    f.title = fmt::format("GPU idle {:.1f}% {} ({:.2f} ms: host-bound {:.1f}%, other {:.1f}%){}", idle, iteration_words(an), ms(it.idle), host,
                          std::max(0.0, idle - host), idle > 10 ? " (> 10%)" : "");
    if (p.api_calls == 0) f.add(source, "no host launch calls in the profile: idle cannot be split into host-bound and other (all counted as other)");
    for (std::size_t g = 0, shown = 0; g < an.gpus.size(); ++g) {
      const auto& gt = an.gpus[g];
      if (gt.windows == 0) continue;
      const double i = gt.total.idle, h = gt.total.host_idle, l = gt.total.len;
      f.metric("idle_pct." + p.gpus[g].key, pct(i, l));
      f.metric("host_bound_pct." + p.gpus[g].key, pct(h, l));
      if (++shown <= 8) f.add(source, fmt::format("{}: idle {:.1f}%, host-bound {:.1f}%", p.gpus[g].label, pct(i, l), pct(h, l)), "<= 10% idle");
    }
    if (f.status == report::Status::warn) {
      f.fix = host > idle / 2 ? "the GPU waits for the host to launch work: see profile.launch_bound"
                              : "the GPU waits on something other than launches (synchronisation, host copies, the data loader, other ranks): look at the gaps in the timeline; pin memory and prefetch data (DataLoader pin_memory, num_workers)";
      f.impact = fmt::format("{:.1f}% of {} the GPU does nothing", idle, every(an));
    }
    out.push_back(std::move(f));
  }

  // ---- profile.copies
  if (Finding f = started("profile.copies", "workload", source); too_few_kernels(f)) {
    out.push_back(std::move(f));
  } else {
    std::size_t count = 0;
    for (auto n : an.copy_count) count += n;
    const double share = pct(it.copy, it.len), bare = pct(it.copy_bare, it.len);
    f.metric("copies", static_cast<double>(count));
    f.metric("copy_ms_per_iter", ms(it.copy));
    f.metric("copy_pct_of_iter", share);
    f.metric("copy_no_kernel_pct_of_iter", bare);
    if (count == 0) {
      f.status = report::Status::pass;
      f.title = "no memory copies or memsets in the profile";
    } else {
      // The classes by time, most first (per iteration; over the profile without iterations).
      std::vector<int> order;
      for (int k = 0; k < kCopyClasses; ++k)
        if (an.copy_count[k]) order.push_back(k);
      std::stable_sort(order.begin(), order.end(), [&](int a, int b) { return it.copy_by[a] > it.copy_by[b]; });
      std::string most;
      for (std::size_t i = 0; i < order.size() && i < 3; ++i)
        most += fmt::format("{}{} {:.2f} ms", i ? ", " : "", kCopyClassName[order[i]], ms(it.copy_by[order[i]]));
      f.status = bare > 10 ? report::Status::warn : report::Status::pass;
      f.title = fmt::format("memory copies {:.1f}% {} ({:.2f} of {:.2f} ms), {:.1f}% with no kernel running{}: {}", share,
                            iteration_words(an), ms(it.copy), ms(it.len), bare, bare > 10 ? " (> 10%)" : "", most);
      for (int k : order) {
        const auto key = std::string(kCopyClassKey[k]);
        f.metric("copy_ms_per_iter." + key, ms(it.copy_by[k]));
        f.metric("copies." + key, static_cast<double>(an.copy_count[k]));
        std::string bytes;
        if (an.copy_bytes[k]) {
          bytes = fmt::format(", {} in all", size_text(static_cast<double>(an.copy_bytes[k])));
          f.metric("bytes." + key, static_cast<double>(an.copy_bytes[k]));
        }
        f.add(source,
              fmt::format("{}: {:.2f} ms {} ({:.1f}%), {} cop{} in the profile{}", kCopyClassName[k], ms(it.copy_by[k]),
                          iteration_words(an), pct(it.copy_by[k], it.len), an.copy_count[k], an.copy_count[k] == 1 ? "y" : "ies", bytes),
              "copies off the critical path");
      }
      bool host_unknown = false;
      for (int k : {kH2d, kD2h}) host_unknown = host_unknown || an.copy_count[k] > 0;
      if (host_unknown)
        f.add(
            source,
            "the profile does not say whether some host copies used pageable or pinned memory (nsys srcKind/dstKind, Kineto's memcpy names)");
      if (f.status == report::Status::warn) {
        const int top = order.front();
        switch (top) {
          case kH2dPageable:
          case kD2hPageable:
            f.fix =
                "pageable host memory: each such copy is staged through a driver buffer and holds the host until it ends. Pin the host buffers "
                "(DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True on a side stream, so copies overlap compute";
            break;
          case kD2hPinned:
          case kD2hManaged:
          case kD2h:
            f.fix =
                "device-to-host copies inside the step are most often synchronisations (.item(), .cpu(), .tolist(), logging the loss every step): "
                "keep metrics on the GPU and read them every N steps; copy what must come back with non_blocking=True into pinned memory";
            break;
          case kD2d:
            f.fix =
                "device-to-device copies are copies the model makes (.contiguous(), .clone(), torch.cat, dtype casts, copy_()): find the ops "
                "that launch them in the trace and fuse or remove them (torch.compile fuses many)";
            break;
          case kP2p:
            f.fix =
                "peer copies between GPUs (tensor.to('cuda:N')) are slow without direct P2P: check nvidia-smi topo -m / -p2p r for NVLink or P2P "
                "over PCIe, and perfgap check (pcie.link, iommu.dma_mode); between ranks use NCCL collectives instead of copies through the host";
            break;
          case kMemset:
            f.fix =
                "memsets each step (optimizer.zero_grad() without set_to_none, torch.zeros for buffers): use zero_grad(set_to_none=True) and reuse buffers";
            break;
          default:
            f.fix =
                "copy the next inputs while the current step computes: pinned host memory, non_blocking=True copies on a side stream "
                "(prefetch), and data kept on the GPU between steps";
        }
        f.impact = fmt::format("{:.1f}% of {} the GPU only copies memory, no kernel running", bare, every(an));
      }
    }
    out.push_back(std::move(f));
  }

  // ---- profile.launch_bound
  {
    Finding f = started("profile.launch_bound", "workload", source);
    if (too_few_kernels(f)) {
      // skipped: title and evidence say why
    } else if (an.launches == 0) {
      f.status = report::Status::skip;
      f.title =
          an.graph_kernels > 0
              ? fmt::format(
                    "all {} kernels joined to a launch call ran under CUDA graphs (cudaGraphLaunch): no kernel launched on its own to time",
                    an.graph_kernels)
          : p.api_calls == 0 ? "no host launch calls in the profile (nsys --trace=cuda records them; Kineto cuda_runtime events)"
                             : "no kernel could be joined to its launch call by correlation id";
      f.add(source, fmt::format("{} host API calls, {} kernels joined to their own launch call, {} to a CUDA graph launch", p.api_calls,
                                an.launches, an.graph_kernels));
    } else {
      std::size_t kernels = 0;
      for (const auto& gt : an.gpus) kernels += gt.kernels;
      double api50 = hist_percentile_us(an.api_ns, 0.5);
      double d50 = hist_percentile_us(an.delay_ns, 0.5), d99 = hist_percentile_us(an.delay_ns, 0.99);
      double short_pct = pct(static_cast<double>(an.short_kernels), static_cast<double>(an.launches));
      double host = pct(it.host_idle, it.len);
      const double graph_pct = pct(static_cast<double>(an.graph_kernels), static_cast<double>(kernels));
      f.metric("launch_api_us_p50", api50);
      f.metric("launch_delay_us_p50", d50);
      f.metric("launch_delay_us_p99", d99);
      f.metric("short_kernel_pct", short_pct);
      f.metric("host_bound_pct", host);
      f.metric("graph_kernel_pct", graph_pct);
      f.metric("kernels_per_iter", an.iterations ? static_cast<double>(kernels) / static_cast<double>(std::max<std::size_t>(1, an.gpus_with_windows)) /
                                                       static_cast<double>(std::max<std::size_t>(1, an.iteration_count))
                                                 : static_cast<double>(kernels));
      f.status = host > 10 ? report::Status::warn : report::Status::pass;
      f.title = fmt::format(
          "GPU waits on kernel launches {:.1f}% {}{}; launch call p50 {:.1f} us, launch delay p50 {:.1f} us / p99 {:.1f} us, {:.1f}% of kernels shorter than their launch call{}",
          host, iteration_words(an), host > 10 ? " (> 10%)" : "", api50, d50, d99, short_pct,
          an.graph_kernels ? fmt::format("; {:.1f}% of kernels ran under CUDA graphs (not in these launch figures)", graph_pct) : "");
      f.add(source, fmt::format("{} of {} kernels joined to their launch call by correlation id", an.launches, kernels));
      if (an.graph_kernels)
        f.add(
            source,
            fmt::format(
                "{} kernels joined to a CUDA graph launch (cudaGraphLaunch) are counted apart: one launch call starts all of a graph's kernels",
                an.graph_kernels));
      if (f.status == report::Status::warn) {
        f.fix = "The small-kernel/CPU-overhead signature: the host cannot launch kernels as fast as the GPU runs them. Fewer, larger kernels "
                "(CUDA graphs, torch.compile mode='reduce-overhead', fused optimizers, larger micro-batches); then make the launching "
                "thread fast: SMMU/IOMMU overhead (perf.smmu_cmdq, smmu.cmdqv), deep C-states and clocks (cpu.cstate.deep_idle, cpu.governor), "
                "and placement of the rank's threads (placement.gpu_affinity, placement.shared_cores): perfgap check on the node";
        f.impact = fmt::format("{:.1f}% of {} the GPU waits for the next launch", host, every(an));
      }
    }
    out.push_back(std::move(f));
  }

  // ---- profile.env
  {
    Finding f = started("profile.env", "network", source);
    if (!p.env_present) {
      f.status = report::Status::skip;
      f.title = "the profile holds no environment of the profiled job (nsys exports keep it in TARGET_INFO_SYSTEM_ENV; Kineto traces do not record it)";
    } else {
      std::map<std::string, std::string> nccl;
      for (const auto& [k, v] : p.env)
        if (k.rfind("NCCL_", 0) == 0 && k != "NCCL_VERSION" && !nccl.count(k)) nccl[k] = v;  // NCCL_VERSION: the image's label, not a setting
      auto get = [&](const char* k) -> std::optional<std::string> {
        auto i = nccl.find(k);
        if (i == nccl.end() || i->second.empty()) return std::nullopt;
        return i->second;
      };
      // The switches and their values as nccl.env.disabled_paths reads them (one table); the
      // profile cannot tell whether RDMA devices or NVSwitches were there, so each counts.
      std::vector<std::string> off, forced;
      for (const auto& sw : facts::nccl_fast_path_switches()) {
        const std::string name(sw.name);
        if (auto v = get(name.c_str()); v && sw.switches_off(*v)) off.push_back(name + "=" + report::redact(name, *v));
      }
      for (const char* k : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE"})
        if (auto v = get(k)) forced.push_back(std::string(k) + "=" + *v);
      for (const auto& [k, v] : nccl) f.add(source + " TARGET_INFO_SYSTEM_ENV", k + "=" + report::redact(k, v));
      std::string driver, sockets;
      for (const auto& [k, v] : p.system) {
        if (k == "NvDriverVersion" && driver.empty()) driver = v;
        if (k == "CpuSockets" && sockets.empty()) sockets = v;
        f.add(source + " TARGET_INFO_SYSTEM_ENV", k + "=" + v);
      }
      f.metric("nccl_settings", static_cast<double>(nccl.size()));
      if (!sockets.empty()) f.metric("cpu_sockets", std::atof(sockets.c_str()));
      std::string sys = fmt::format("driver {}, {} CPU socket{}", driver.empty() ? "unknown" : driver, sockets.empty() ? "?" : sockets,
                                    sockets == "1" ? "" : "s");
      auto join = [](const std::vector<std::string>& v) {
        std::string s;
        for (const auto& x : v) s += (s.empty() ? "" : ", ") + x;
        return s;
      };
      if (!off.empty()) {
        f.status = report::Status::warn;
        f.title = fmt::format("the profiled job ran with NCCL fast paths switched off: {} ({})", join(off), sys);
        f.fix = "remove these debugging switches from the job environment (they move traffic off NVLink, shared memory or RDMA); see nccl.env.disabled_paths";
        f.impact = "collectives over slower transports: more exposed communication";
      } else {
        f.status = report::Status::pass;
        f.title = nccl.empty() ? fmt::format("the profiled job set no NCCL_* variable ({})", sys)
                               : fmt::format("the profiled job's {} NCCL_* setting{} switch{} off no fast path{} ({})", nccl.size(), nccl.size() == 1 ? "" : "s",
                                             nccl.size() == 1 ? "es" : "", forced.empty() ? "" : "; forced tuning: " + join(forced), sys);
      }
    }
    out.push_back(std::move(f));
  }

  // ---- profile.compare
  if (o.reference) {
    const auto& r = *o.reference;
    Finding f = started("profile.compare", "workload", source);
    if (!r.iterations || !an.iterations) {
      f.status = report::Status::skip;
      f.title = fmt::format("no iterations in {}: per-iteration figures cannot be compared", !an.iterations ? source : o.reference_source);
    } else {
      f.table.push_back({"", "reference ms", "measured ms", "difference ms"});
      auto line = [&](const std::string& what, double ref, double mea) {
        f.table.push_back({what, fmt::format("{:.2f}", ref), fmt::format("{:.2f}", mea), fmt::format("{:+.2f}", mea - ref)});
        f.add(source, fmt::format("{} {:.2f} -> {:.2f} ms per iteration ({:+.2f} ms{})", what, ref, mea, mea - ref,
                                  ref > 0 ? fmt::format(", {:+.1f}%", 100.0 * (mea - ref) / ref) : ""));
      };
      double mea_iter = ms(it.len);
      line("iteration", r.iteration_ms, mea_iter);
      line("compute", r.compute_ms, ms(it.compute));
      for (int c = 1; c < kCommSlots; ++c) {
        bool here = std::find(colls.begin(), colls.end(), c) != colls.end();
        if (!here && !r.present[c]) continue;
        line(libs.slot_name(c), r.comm_ms[c], ms(it.comm[c]));
      }
      line("exposed communication", r.exposed_all_ms, ms(it.exposed_all));
      line("idle", r.idle_ms, ms(it.idle));
      double ratio = mea_iter > 0 ? r.iteration_ms / mea_iter : 0;
      f.metric("reference_iteration_ms", r.iteration_ms);
      f.metric("iteration_ms", mea_iter);
      f.metric("pct_of_reference", 100 * ratio);
      for (int c = 1; c < kCommSlots; ++c)
        if (r.present[c] || std::find(colls.begin(), colls.end(), c) != colls.end()) {
          std::string n = libs.slot_name(c);
          f.metric("reference_ms." + n, r.comm_ms[c]);
          f.metric("measured_ms." + n, ms(it.comm[c]));
        }
      f.status = ratio < o.threshold ? report::Status::fail : report::Status::pass;
      f.title = fmt::format("iteration {:.2f} ms against {:.2f} ms in {} ({:.1f}% of the reference pace{})", mea_iter, r.iteration_ms, o.reference_source,
                            100 * ratio, ratio < o.threshold ? fmt::format(", below {:.0f}%", 100 * o.threshold) : "");
      if (f.status == report::Status::fail) {
        f.fix = "the rows above say where the time went: a collective that grew points to the network (profile.exposed_comm, perfgap sweep), compute that grew to the GPUs or clocks, idle that grew to the host (profile.launch_bound)";
        f.impact = fmt::format("{:.2f} ms more per iteration than the reference", mea_iter - r.iteration_ms);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace

std::vector<Finding> analyze_profile(const Profile& p, const std::string& source, const ProfileOptions& o) {
  auto d = digest(p, o);
  return digest_findings(d, source, o);
}

namespace {

// What the rank-set check needs of a rank's digest (profile_ranks.hpp check_rank_set).
RankInput rank_input(const std::string& name, const Digest& d) {
  RankInput in;
  in.name = name;
  std::int64_t base = -1;
  for (const auto& [k, v] : d.system) {
    std::int64_t x = 0;
    auto [ptr, ec] = std::from_chars(v.data(), v.data() + v.size(), x);
    if (ec != std::errc() || ptr != v.data() + v.size()) continue;
    if (k == "rank" && in.rank < 0) in.rank = x;
    else if (k == "world_size" && in.world < 0) in.world = x;
    else if (k == "base_time_ns" && base < 0) base = x;
  }
  std::uint64_t h = 1469598103934665603ULL;  // FNV-1a over the timeline's shape
  auto mix = [&h](std::uint64_t v) {
    for (int i = 0; i < 8; ++i, v >>= 8) h = (h ^ (v & 0xff)) * 1099511628211ULL;
  };
  std::int64_t first = INT64_MAX;
  // Two ranks of a generated or perfectly even job may share a timeline: the rank and devices
  // are part of what makes a trace the same one.
  mix(static_cast<std::uint64_t>(in.rank));
  for (const auto& g : d.gpus) mix(static_cast<std::uint64_t>(g.device)), mix(g.process);
  mix(d.tl.size());
  for (const auto& gt : d.tl) {
    mix(gt.acts), mix(gt.kernels), mix(static_cast<std::uint64_t>(gt.first)), mix(static_cast<std::uint64_t>(gt.last));
    mix(static_cast<std::uint64_t>(gt.kernel_ns)), mix(static_cast<std::uint64_t>(gt.nccl_ns));
    if (gt.acts) first = std::min(first, gt.first);
    for (const auto& w : gt.cuts[kCutStep].wins)
      if (w.step >= 0) {
        in.step_lo = in.step_lo < 0 ? w.step : std::min(in.step_lo, w.step);
        in.step_hi = std::max(in.step_hi, w.step);
      }
    if (!gt.seq.empty()) in.seqs.push_back(&gt.seq);
  }
  in.fingerprint = h;
  // Kineto's ts: µs since the epoch in older traces, since baseTimeNanoseconds in newer ones
  // (1e17 ns is 1973: a smaller first timestamp without a base is a clock of its own).
  if (first != INT64_MAX && base >= 0) in.wall_start_ns = base + first;
  else if (first != INT64_MAX && first >= 100'000'000'000'000'000LL) in.wall_start_ns = first;
  return in;
}

}  // namespace

ProfileJob analyze_profile_job(const std::vector<std::string>& files, const ProfileReader& read, const ProfileOptions& o, std::size_t threads) {
  ProfileJob job;
  const std::size_t n = files.size();
  if (n == 0) return job;
  const bool several = n > 1;
  std::vector<std::optional<Digest>> ready(n);  // every rank's digest: the job is decided on all of them
  std::vector<std::string> why(n);
  std::mutex mu;
  std::size_t next = 0, held = 0;
  // Each thread takes the next file, reads it, reduces it to its digest and drops the profile.
  // An unreadable rank is said and the others are read: the rank-set check counts it missing.
  auto work = [&] {
    for (;;) {
      std::size_t i = 0;
      {
        std::lock_guard<std::mutex> lock(mu);
        if (next == n) return;
        i = next++;
        job.profiles_held_peak = std::max(job.profiles_held_peak, ++held);
      }
      std::optional<Digest> d;
      std::string err;
      std::size_t acts = 0;
      {
        auto r = read(files[i]);
        if (!r) err = r.error();
        else {
          if (several)
            for (auto& g : r->gpus) g.label = files[i] + ": " + g.label;
          acts = r->acts.size();
          d = digest(*r, o);
        }
      }
      std::lock_guard<std::mutex> lock(mu);
      --held;
      job.activities += acts;
      ready[i] = std::move(d);
      why[i] = std::move(err);
    }
  };
  std::vector<std::thread> pool;
  for (std::size_t t = 1; t < std::clamp<std::size_t>(threads, 1, n); ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();
  // The job's rank set, then its digests absorbed in the files' order (the report is the one of
  // one thread).
  JobRanks jr;
  jr.several = several;
  jr.inputs = n;
  std::vector<RankInput> inputs;
  std::vector<std::size_t> input_file;
  for (std::size_t i = 0; i < n; ++i) {
    if (!ready[i]) {
      job.unusable.emplace_back(files[i], why[i]);
      jr.unreadable.emplace_back(files[i], why[i]);
      continue;
    }
    inputs.push_back(rank_input(files[i], *ready[i]));
    input_file.push_back(i);
  }
  RankSet set;
  if (several) {
    set = check_rank_set(inputs);
    jr.world = set.world;
    jr.ranks = set.ranks;
    jr.missing = set.missing;
  } else {
    set.left_out.assign(inputs.size(), "");
  }
  Digest all;
  for (std::size_t k = 0; k < inputs.size(); ++k) {
    const std::size_t i = input_file[k];
    if (!set.left_out[k].empty()) {
      jr.left_out.emplace_back(files[i], set.left_out[k]);
      ready[i].reset();
      continue;
    }
    absorb(all, std::move(*ready[i]), static_cast<std::uint32_t>(i));
    ready[i].reset();
    job.used.push_back(files[i]);
  }
  job.digest_bytes_peak = digest_bytes(all);
  if (job.used.empty()) return job;
  jr.kept = job.used.size();
  all.job = std::move(jr);
  const std::string source = job.used.size() == 1 ? job.used[0] : fmt::format("{} profiles", job.used.size());
  job.findings = digest_findings(all, source, o);
  return job;
}

}  // namespace perfgap::analyzers
