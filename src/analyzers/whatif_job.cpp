// perfgap whatif's job: what is replayed, from a job's digest and analysis (whatif_job.hpp).
#include "analyzers/whatif_job.hpp"

#include <algorithm>
#include <string>
#include <set>

#include <fmt/format.h>

namespace perfgap::analyzers::profile_model {

namespace {

// Collectives starting before the previous one ended, in this share of the steps or more: not
// one chain of collectives, and the overlap change is not replayed.
constexpr double kConcurrentPct = 5;

// One rank's collectives as an alignment of one: each matched with itself, its arrival its start.
RankAlignment alone(const std::vector<RankCollective>& seq) {
  RankAlignment al;
  al.aligned = {true};
  al.offset = {0};
  al.end_spread = {0};
  al.why_not = {""};
  al.by_step = {false};
  for (std::size_t i = 0; i < seq.size(); ++i) {
    MatchedCollective m;
    m.coll = seq[i].coll;
    m.ref_index = i;
    m.end = seq[i].end;
    m.index = {static_cast<std::int32_t>(i)};
    m.arrival = {seq[i].start};
    m.first = m.last = m.second = seq[i].start;
    al.matches.push_back(std::move(m));
  }
  return al;
}


// A job whose NCCL kernels are send/recv only: its pipeline paired and replayed.
void pipeline_job(const Digest& d, const Analysis& an, Job& j) {
  j.pipeline = true;
  std::vector<std::vector<P2pOp>> ops;
  std::vector<std::int64_t> rank;
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    if (an.gpus[g].p2p.empty()) continue;
    j.gpu.push_back(g);
    j.name.push_back(gpu_name(d, g));
    ops.push_back(an.gpus[g].p2p);
    rank.push_back(an.gpus[g].rank);
  }
  j.rank = rank;
  j.pipe = PipelineReplay(ops, rank);
  if (!j.pipe.why_not().empty()) {
    j.why_not = "the NCCL kernels are point-to-point send/recv only (a pipeline, or an all-to-all of send/recv), and " + j.pipe.why_not();
    return;
  }
  j.base = j.pipe.run(PipelineChange{});
  // Notable as the analysis's: 1% of the step and 0.1 ms, per iteration of the measured step.
  if (j.base.measured > 0 && j.step_ns > 0) {
    j.slow = slow_copies(j.pipe, std::max(0.01 * j.step_ns, 100'000.0) * static_cast<double>(j.base.measured) / j.step_ns);
    j.slow_set = slow_set(j.pipe, j.slow, kSlowSubjects);
  }
}

// Per match, the window of `wins` its collective starts in (as the cross-rank figures number
// them); -1 outside every window.
std::vector<std::int32_t> windows_of(const RankAlignment& al, const std::vector<RankCollective>& ref, const std::vector<Win>& wins) {
  std::vector<std::int32_t> out(al.matches.size(), -1);
  for (std::size_t k = 0; k < al.matches.size(); ++k) {
    const auto t = ref[al.matches[k].ref_index].start;
    auto w = std::upper_bound(wins.begin(), wins.end(), t, [](std::int64_t x, const Win& v) { return x < v.s; });
    if (w == wins.begin() || t >= (w - 1)->e) continue;
    out[k] = static_cast<std::int32_t>(w - 1 - wins.begin());
  }
  return out;
}

// Reads what the overlap change needs (CollectiveReplay::overlap): the iterations the replay's
// collectives lie in, and per rank the time its compute was held by its collectives (their
// kernels with no compute kernel beside them: the digest keeps compute where communication runs).
void overlap_input(const Analysis& an, const RankAlignment& al, const std::vector<std::vector<RankCollective>>& seqs, Job& j) {
  if (!an.iterations || (an.method_kind != "step" && an.method_kind != "range")) {
    j.overlap_why = an.iterations ? "the iterations are " + an.method +
                                        ", not the job's own step annotations: where a step ends, and so which collectives its end waits for, is unknown"
                                  : "no iterations found (profile.iterations): where a step ends, and so which collectives its end waits for, is unknown";
    return;
  }
  std::vector<Ivs> held(seqs.size());
  for (std::size_t r = 0; r < seqs.size(); ++r) {
    Ivs colls;
    for (const auto& c : seqs[r]) push(colls, c.start, c.end);
    held[r] = minus(colls, an.gpus[j.gpu[r]].compute);
  }
  OverlapInput in;
  in.iter_of = windows_of(al, seqs[al.reference], an.gpus[j.gpu[al.reference]].wins);
  in.held = [&held](std::size_t r, std::int64_t from, std::int64_t to) { return measure(held[r], from, to); };
  j.replayer.overlap(al, seqs, in);
  // The change chains the collectives on one stream in issue order; where a notable share run
  // beside each other (several communicators' streams: TorchRec's sparse and dense groups), that
  // chain is not the job's and the saving would be the model's, not the job's.
  const std::size_t c = j.replayer.concurrent(), steps = j.replayer.steps();
  if (steps > 0 && 100.0 * static_cast<double>(c) / static_cast<double>(steps) >= kConcurrentPct)
    j.overlap_why = fmt::format("{} of the {} collective-to-collective steps start a collective before the previous one has ended (the "
                                "collectives of several communicators running at once on their own streams): the change's one chain of "
                                "collectives in issue order is not this job's",
                                c, steps);
}

}  // namespace

std::string gpu_name(const Digest& d, std::size_t g) {
  return d.gpus[g].host.empty() ? d.gpus[g].label : fmt::format("{} on {}", d.gpus[g].label, d.gpus[g].host);
}

// The changes sorted by what they save, each node after the ranks whose saving it is: a node's
// change holds its late ranks', so it saves at least as much as they do, and one late GPU read as
// "a node whose ranks are all late ... drain it" (node1 19.96 ms before rank 11's 19.95 ms, the
// only late one of its 8). Where one late rank or a late set within the node saves nearly all the
// node saves (node_saving_is_its_ranks), the node passes after them, saying whose saving it is. A
// late set that is most of a node's ranks is the node (what they share): the node comes first.
void place_nodes(std::vector<Finding>& tried, const std::vector<std::vector<std::size_t>>& moved) {
  const std::size_t n = tried.size();
  std::vector<double> key(n);
  std::vector<int> after(n, 0);  // 1: placed after the finding whose key it takes
  for (std::size_t i = 0; i < n; ++i) key[i] = tried[i].metrics[0].second;
  auto within = [&](std::size_t part, std::size_t whole) {
    return !moved[part].empty() &&
           std::all_of(moved[part].begin(), moved[part].end(), [&](std::size_t r) { return std::find(moved[whole].begin(), moved[whole].end(), r) != moved[whole].end(); });
  };
  for (std::size_t i = 0; i < n; ++i) {
    if (tried[i].id != "whatif.node" || moved[i].empty()) continue;
    const double node_saved = tried[i].metrics[0].second;
    std::size_t best = n;
    for (std::size_t k = 0; k < n; ++k) {
      if ((tried[k].id != "whatif.rank" && tried[k].id != "whatif.late_set") || !within(k, i)) continue;
      const double part_saved = tried[k].metrics[0].second;
      if (node_saving_is_its_ranks(moved[i].size(), moved[k].size(), node_saved, part_saved) && (best == n || part_saved > key[best])) best = k;
      // A late set of most of the node's ranks: the node says what they share.
      if (tried[k].id == "whatif.late_set" && 2 * moved[k].size() > moved[i].size() && node_saved >= kNodeSavingOfItsRanks * part_saved) {
        key[k] = std::min(key[k], node_saved), after[k] = 1;
        tried[k].add(tried[i].evidence.empty() ? tried[i].subject : tried[i].evidence.front().source,
                     fmt::format("these {} ranks are {} of {}'s {}: whatif.node {} says what they share", moved[k].size(),
                                 moved[k].size() == moved[i].size() ? "all" : "most", tried[i].subject, moved[i].size(), tried[i].subject));
      }
    }
    if (best == n) continue;
    auto& f = tried[i];
    const auto& part = tried[best];
    const double part_saved = part.metrics[0].second;
    const bool one = part.id == "whatif.rank";
    f.status = report::Status::pass;
    f.metric("its_ranks_saved_ms_per_iter", part_saved);
    const std::size_t late = moved[best].size();
    f.title += fmt::format("; but {:.2f} of its {:.2f} ms are {} alone, {} of its {} ranks (whatif.{}: {}): the saving is {}, not the node's", part_saved,
                           node_saved, one ? "one late rank's" : "its late set's", late, moved[i].size(), one ? "rank" : "late_set", part.subject,
                           one ? "that rank's" : "those ranks'");
    f.fix = fmt::format("{} first (whatif.{}: {}); {} late rank{} of {}'s {} {} no node to drain", one ? "the late rank" : "the late ranks",
                        one ? "rank" : "late_set", part.subject, late, late == 1 ? "" : "s", f.subject, moved[i].size(), late == 1 ? "is" : "are");
    key[i] = std::min(key[i], key[best]), after[i] = 1;
  }
  std::vector<std::size_t> order(n);
  for (std::size_t i = 0; i < n; ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return key[a] != key[b] ? key[a] > key[b] : after[a] < after[b]; });
  std::vector<Finding> sorted;
  sorted.reserve(order.size());
  for (auto i : order) sorted.push_back(std::move(tried[i]));
  tried = std::move(sorted);
}

std::vector<std::size_t> on_time_ranks(const ReplayChange& c) {
  std::vector<std::size_t> out;
  for (std::size_t r = 0; r < c.on_time.size(); ++r)
    if (c.on_time[r]) out.push_back(r);
  return out;
}

Job replayable(const Digest& d, Analysis& an) {
  Job j;
  j.world = recorded_world(d);
  j.step_ns = an.per_iter.len;
  j.exposed_ns = an.per_iter.exposed_all;
  j.wait_ns = an.per_iter.wait;
  j.iterations = an.iteration_count;
  const auto& xr = an.xr;
  bool collectives = false, p2p = false;
  for (const auto& s : xr.seqs) collectives = collectives || !s.empty();
  for (const auto& gt : an.gpus) collectives = collectives || !gt.seq.empty(), p2p = p2p || !gt.p2p.empty();
  if (p2p && !collectives) {
    pipeline_job(d, an, j);
    return j;
  }
  if (p2p) {
    // Send/recv and collectives: a pipeline with data-parallel copies, replayed as the one graph
    // the analysis built where its stages and groups can be told (the graph profile.straggler
    // reads); else collective to collective, saying why.
    auto& pp = an.pp;
    j.mixed_why = pp.why_not;
    if (pp.built()) {
      j.pipeline = true;
      j.pipe = std::move(pp.pipe);
      j.gpu = pp.gpu;
      for (auto g : j.gpu) j.name.push_back(gpu_name(d, g));
      j.rank = pp.rank;
      j.base = pp.base;
      j.slow = std::move(pp.slow);
      j.slow_set = std::move(pp.slow_set);
      j.slow_nodes = std::move(pp.slow_nodes);
      return j;
    }
  }
  if (xr.present) {
    j.replayer = xr.replayer;
    j.base = xr.replay;
    j.gpu = xr.gpu;
    j.late_set = xr.late_set;
    for (std::size_t r = 0; r < xr.gpu.size(); ++r) j.name.push_back(rank_name(d, xr, r));
    if (j.base.intervals == 0) j.why_not = "the ranks' collectives could not be put on one clock (analyze kineto's profile.straggler says why)";
    else overlap_input(an, xr.al, xr.seqs, j);
    return j;
  }
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    const auto& seq = an.gpus[g].seq;
    if (seq.size() < 2) continue;
    const RankAlignment al = alone(seq);
    j.replayer = CollectiveReplay(al, {seq});
    j.base = j.replayer.run(ReplayChange{});
    j.gpu = {g};
    j.name = {gpu_name(d, g)};
    overlap_input(an, al, {seq}, j);
    return j;
  }
  j.why_not = "no NCCL collectives or send/recv: nothing ties the step to other ranks, so the step is the GPU's own timeline (profile.gpu_idle "
              "and profile.launch_bound say what its idle costs)";
  return j;
}

}  // namespace perfgap::analyzers::profile_model
