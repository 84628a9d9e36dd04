// A rank's profile reduced to its digest (profile_model.hpp): per GPU its intervals, collectives
// and candidate iteration windows by every cut, read once from its activities.
#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>
#include <set>
#include <unordered_set>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

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

// A GPU's own intervals, kept while its digest is made (the window statistics measure them).
struct DigestLocalIvs {
  Ivs compute, copy, idle, host_idle;
  Ivs host_stall;  // the host-bound gaps of kHostStallNs or longer
};

// The part of the host stall [a, b) that `thread` (0: any) of input `file` spent inside slow host
// calls (Profile::slow_calls, sorted by start; none longer than `longest`): added to the sums by
// name, the union returned.
std::int64_t stall_in_calls(const Profile& p, Iv gap, std::uint32_t thread, std::uint32_t file, std::int64_t longest,
                            std::map<std::uint32_t, std::int64_t>& by_name) {
  const auto& calls = p.slow_calls;
  auto c = std::lower_bound(calls.begin(), calls.end(), gap.s - longest, [](const parsers::SlowHostCall& x, std::int64_t t) { return x.start < t; });
  Ivs in;
  for (; c != calls.end() && c->start < gap.e; ++c) {
    if (c->file != file || (thread != 0 && c->thread != thread)) continue;
    const std::int64_t s = std::max(c->start, gap.s), e = std::min(c->end, gap.e);
    if (s >= e) continue;
    by_name[c->name] += e - s;
    in.push_back({s, e});
  }
  std::sort(in.begin(), in.end(), [](const Iv& x, const Iv& y) { return x.s < y.s; });
  Ivs u;
  for (const auto& i : in) push(u, i.s, i.e);
  return measure(u, gap.s, gap.e);
}

// One GPU's timeline from its activities (sorted here by start): its kernels, communication,
// copies, busy and idle intervals, and the compute before each collective.
template <class SlotOf>
void digest_gpu_timeline(const Profile& p, std::vector<std::uint32_t>& v, GpuTimeline& gt, DigestLocalIvs& lc, Digest& d, SlotOf& slot_of,
                         std::int64_t longest_call) {
  auto earlier = [&](std::uint32_t a, std::uint32_t b) {
    const auto& x = p.acts[a];
    const auto& y = p.acts[b];
    return x.start != y.start ? x.start < y.start : x.end < y.end;
  };
  if (!std::is_sorted(v.begin(), v.end(), earlier)) std::stable_sort(v.begin(), v.end(), earlier);
  gt.acts = v.size();
  if (v.empty()) return;
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
          // An NCCL kernel of unknown collective launched before the capture began (its launch
          // call absent where the trace has launches: parsers::name_sendrecv_collectives) is
          // the tail of a collective the capture cut: no rank's sequence holds its start.
          const bool cut_at_start = a.coll == Coll::other && a.api_start < 0 && p.api_calls > 0;
          if (aligns_ranks(a.coll) && !cut_at_start) gt.seq.push_back({.coll = a.coll, .start = a.start, .end = a.end, .bytes = a.msg_bytes, .group = a.group_size});
          else if (a.coll == Coll::SendRecv) gt.p2p.push_back({.start = a.start, .end = a.end, .bytes = a.msg_bytes, .peer = a.peer, .dir = a.p2p});
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
  std::map<std::uint32_t, std::int64_t> stall_by_call;  // name -> ns inside stalls
  const std::uint32_t file = p.gpus[p.acts[v.front()].gpu].file;
  for (std::size_t i = 1; i < busy.size(); ++i) {
    std::int64_t a = busy[i - 1].e, b = busy[i].s;
    if (b <= a) continue;
    lc.idle.push_back({a, b});
    const auto& next = p.acts[starter[i]];
    if (next.api_start >= 0 && next.api_start >= a) {
      lc.host_idle.push_back({a, b});
      if (b - a >= kHostStallNs) {
        lc.host_stall.push_back({a, b});
        ++gt.host_stalls;
        gt.host_stall_longest = std::max(gt.host_stall_longest, b - a);
        gt.stall_ns += b - a;
        if (!p.slow_calls.empty()) gt.stall_in_calls += stall_in_calls(p, {a, b}, next.api_thread, file, longest_call, stall_by_call);
      }
    }
  }
  for (const auto& [name, ns] : stall_by_call) gt.stall_calls.emplace_back(p.call_names[name], ns);
  std::stable_sort(gt.stall_calls.begin(), gt.stall_calls.end(), [](const auto& x, const auto& y) { return x.second > y.second; });
  if (gt.stall_calls.size() > 8) gt.stall_calls.resize(8);
  // After its last activity the GPU is idle too (a last step's window may run past it); no
  // launch ends that gap, so it is not host-bound.
  lc.idle.push_back({busy.back().e, INT64_MAX / 4});
  // The compute before each collective (cross-rank figures), then compute only where it can
  // hide communication: communication minus compute is all that is asked of it later.
  gt.compute_before.reserve(gt.seq.size());
  for (std::size_t i = 0; i < gt.seq.size(); ++i) {
    const std::int64_t from = i > 0 ? gt.seq[i - 1].end : gt.first;
    gt.compute_before.push_back(measure(lc.compute, from, gt.seq[i].start));
    gt.seq[i].host_wait = measure(lc.host_idle, from, gt.seq[i].start);
    gt.seq[i].host_stall = measure(lc.host_stall, from, gt.seq[i].start);
  }
  for (std::size_t i = 0; i < gt.p2p.size(); ++i) {
    const std::int64_t from = i > 0 ? gt.p2p[i - 1].end : gt.first;
    gt.p2p[i].host_wait = gt.p2p[i].start > from ? measure(lc.host_idle, from, gt.p2p[i].start) : 0;
    gt.p2p[i].host_stall = gt.p2p[i].start > from ? measure(lc.host_stall, from, gt.p2p[i].start) : 0;
  }
  gt.compute = intersect(lc.compute, gt.comm_all);
}

// Launch overhead, and each communication slot's kernels, bytes and time.
template <class SlotOf>
void digest_launches(const Profile& p, Digest& d, SlotOf& slot_of) {
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
}

void digest_windows(const Profile& p, const ProfileOptions& o, const std::vector<std::vector<std::uint32_t>>& acts, Digest& d) {
  const std::size_t G = p.gpus.size();
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
    // Ranges of exactly the name given, where the profile has them: the name's prefix rule
    // ("step" finds "step 3") would also take a range enclosing them ("test_outer" for "test").
    d.found[kCutRange] = choose([&](const std::string& n) { return n == o.iteration_range; }, chosen) ||
                         choose([&](const std::string& n) { return range_named(n, o.iteration_range); }, chosen);
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
}

}  // namespace

Digest digest(const Profile& p, const ProfileOptions& o) {
  Digest d;
  d.format = p.format;
  d.gpus = p.gpus;
  d.api_calls = p.api_calls;
  d.sync_calls = p.sync_calls;
  d.sync_ns = p.sync_ns;
  d.ranges = p.ranges.size();
  d.env_present = p.env_present;
  d.env = p.env;
  d.system = p.system;
  d.notes = p.notes;
  d.framework = p.framework;
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
  std::vector<DigestLocalIvs> loc(G);
  std::int64_t longest_call = 0;
  for (const auto& c : p.slow_calls) longest_call = std::max(longest_call, c.end - c.start);
  for (std::size_t g = 0; g < G; ++g) digest_gpu_timeline(p, acts[g], d.tl[g], loc[g], d, slot_of, longest_call);
  digest_launches(p, d, slot_of);

  digest_windows(p, o, acts, d);
  // Each collective's and send/recv's step number: ranks are paired by step, not by their
  // clocks (profile_ranks, profile_pipeline).
  std::int64_t rank = -1;
  for (const auto& [k, v] : p.system)
    if (k == "rank" && rank < 0 && !v.empty() && v.size() < 10 && std::all_of(v.begin(), v.end(), [](char c) { return c >= '0' && c <= '9'; }))
      rank = std::stoll(v);
  for (auto& gt : d.tl) {
    if (gt.nccl) gt.rank = rank;
    const auto& steps = gt.cuts[kCutStep].wins;
    if (steps.empty()) continue;
    auto step_of = [&](std::int64_t start) {
      auto w = std::upper_bound(steps.begin(), steps.end(), start, [](std::int64_t x, const Win& v) { return x < v.s; });
      return w != steps.begin() && start < (w - 1)->e ? (w - 1)->step : std::int64_t{-1};
    };
    for (auto& c : gt.seq) c.step = step_of(c.start);
    for (auto& c : gt.p2p) c.step = step_of(c.start);
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
        s.host_stall = static_cast<double>(measure(lc.host_stall, w.s, w.e));
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
  job.sync_calls += r.sync_calls;
  job.sync_ns += r.sync_ns;
  job.ranges += r.ranges;
  if (job.format.empty()) job.format = r.format;
  else if (job.format.find(r.format) == std::string::npos) job.format += "; " + r.format;
  job.env_present = job.env_present || r.env_present;
  job.graphs = job.graphs || r.graphs;
  job.framework = parsers::framework_joined(job.framework, r.framework);
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
    b += t.colls.capacity() * sizeof(t.colls[0]) + t.seq.capacity() * sizeof(RankCollective) + t.p2p.capacity() * sizeof(P2pOp) + t.compute_before.capacity() * sizeof(std::int64_t);
    for (const auto& c : t.cuts) b += c.wins.capacity() * sizeof(Win) + c.stats.capacity() * sizeof(LocalStats);
    b += t.wins.capacity() * sizeof(Win);
  }
  return b;
}


}  // namespace perfgap::analyzers::profile_model
