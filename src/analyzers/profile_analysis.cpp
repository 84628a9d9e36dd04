// The job's analysis of its digest: the iterations chosen over the whole job, per-iteration
// figures, the ranks on one clock (profile_ranks.hpp) and who holds the others back.
#include <algorithm>
#include <cmath>
#include <map>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

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
  xr.replay = xr.replayer.run(ReplayChange{});
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

// A job of send/recv and collectives as one graph (PipelineWithCollectives), where every rank's
// trace is there and its stages and groups can be told; its ranks that compute long, by replay.
void ppdp_graph(const Digest& d, Analysis& an) {
  const auto& xr = an.xr;
  auto& pp = an.pp;
  bool collectives = false, p2p = false;
  for (const auto& s : xr.seqs) collectives = collectives || !s.empty();
  for (const auto& gt : an.gpus) collectives = collectives || !gt.seq.empty(), p2p = p2p || !gt.p2p.empty();
  if (!p2p || !collectives) return;
  pp.mixed = true;
  std::size_t p2p_ranks = 0, ranks = 0;
  for (const auto& gt : an.gpus) p2p_ranks += !gt.p2p.empty(), ranks += gt.nccl;
  const std::int64_t world = recorded_world(d);
  if (p2p_ranks < 2) {
    pp.why_not = "only one rank's trace holds send/recv: its peers' traces are not among the inputs";
    return;
  }
  if (d.job.partial() || (world > 0 && world > static_cast<std::int64_t>(ranks))) {
    pp.why_not = fmt::format("{} of the job's {} ranks are in the traces, and a pipeline's stages and its collectives' groups cannot be told from "
                             "part of it (give every rank's trace)",
                             ranks, world > 0 ? std::to_string(world) : std::string("unknown number of"));
    return;
  }
  std::vector<std::vector<P2pOp>> ops;
  std::vector<std::vector<RankCollective>> colls;
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    // The cross-rank analysis holds the collectives of the GPUs it aligned (moved there).
    const auto in_xr = std::find(xr.gpu.begin(), xr.gpu.end(), g);
    const auto& seq = in_xr != xr.gpu.end() ? xr.seqs[static_cast<std::size_t>(in_xr - xr.gpu.begin())] : an.gpus[g].seq;
    if (an.gpus[g].p2p.empty() && seq.empty()) continue;
    pp.gpu.push_back(g);
    ops.push_back(an.gpus[g].p2p);
    colls.push_back(seq);
    pp.rank.push_back(an.gpus[g].rank);
  }
  pp.pipe = PipelineReplay(ops, pp.rank, colls);
  pp.why_not = pp.pipe.why_not();
  if (!pp.why_not.empty()) return;
  pp.base = pp.pipe.run(PipelineChange{});
  // Notable as whatif's: 1% of the step and 0.1 ms, per iteration of the measured step.
  const double step = an.per_iter.len;
  if (pp.base.measured > 0 && step > 0) {
    const double notable = std::max(0.01 * step, 100'000.0) * static_cast<double>(pp.base.measured) / step;
    pp.slow = slow_copies(pp.pipe, notable);
    pp.slow_set = slow_set(pp.pipe, pp.slow, kSlowSubjects);
    std::vector<std::string> host(pp.gpu.size());
    for (std::size_t r = 0; r < pp.gpu.size(); ++r) host[r] = d.gpus[pp.gpu[r]].host;
    pp.slow_nodes = slow_nodes(pp.pipe, host, notable, kSlowSubjects);
  }
}

}  // namespace

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
    a.copy_bare += b.copy_bare * k, a.host_stall += b.host_stall * k;
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
      s.host_stall = local[i].host_stall;
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
  ppdp_graph(d, an);
  return an;
}

// A rank's name in the cross-rank findings: its label, and its node where the profile names it.
std::string rank_name(const Digest& p, const CrossRanks& xr, std::size_t r) {
  const auto& g = p.gpus[xr.gpu[r]];
  return g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host);
}

}  // namespace perfgap::analyzers::profile_model
