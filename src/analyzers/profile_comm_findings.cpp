// Profiles (nsys, Kineto): the findings of a job's digest about its communication: the ranks'
// arrivals at the collectives (profile.straggler, with the what-if replays of the latest ranks
// and nodes) and the communication not hidden under compute (profile.exposed_comm), with what
// to do about each kind of communication kernel. The other findings are profile.cpp's.
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "analyzers/profile_model.hpp"
#include "analyzers/profile_ranks.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

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
  std::map<std::size_t, double> rank_pct;  // per rank replayed: what it alone saves (% of the step)
  for (auto r : latest) {
    std::vector<bool> on_time(n, false);
    on_time[r] = true;
    const double pct_saved = saved_pct(on_time);
    rank_pct[r] = pct_saved;
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
    // A node's saving that is one late rank's alone (node_saving_is_its_ranks) is said so: one late
    // GPU is no node to drain.
    std::string whose;
    for (auto r : by_host[host])
      if (auto it = rank_pct.find(r); it != rank_pct.end() && node_saving_is_its_ranks(by_host[host].size(), 1, pct_saved, it->second))
        whose = fmt::format(", {}'s alone {:.2f} ms: not the node's", p.gpus[xr.gpu[r]].key, ms(it->second / 100 * xr.iteration_ns));
    if (list.size() < 200)
      list += fmt::format("{}{} {:.2f} ms ({:.1f}%{})", list.empty() ? "" : ", ", host, ms(pct_saved / 100 * xr.iteration_ns), pct_saved, whose);
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

// The straggler's figures per iteration, shared by its verdict and its evidence.
struct StragglerFigures {
  double iters = 0;             // the iterations holding matched collectives
  bool named = false;           // a rank costs the most (xr.straggler)
  std::size_t S = 0;            // that rank
  double cost_ms = 0, wait_ms = 0, cost_pct = 0;
  double skew50 = 0, skew_max = 0;
  std::size_t matched = 0;      // matched collectives inside an iteration
  double compute_median = 0;    // the other aligned ranks' compute before their collectives
  std::string not_aligned;      // "; not aligned, left out: ..." or empty
};

double straggler_per_iter_ms(const std::vector<double>& v, std::size_t r, double iters) { return ms(v[r] / iters); }

// The figures over the matched collectives, with their metrics (in the report's order).
StragglerFigures straggler_figures(Finding& f, const Analysis& an, std::string not_aligned) {
  const auto& xr = an.xr;
  const auto& al = xr.al;
  const std::size_t n = xr.gpu.size();
  StragglerFigures s;
  s.not_aligned = std::move(not_aligned);
  s.iters = static_cast<double>(xr.columns.size());
  std::vector<double> skews = xr.skews;
  s.skew50 = percentile(skews, 0.5);
  s.skew_max = skews.empty() ? 0 : *std::max_element(skews.begin(), skews.end());
  f.metric("collectives_matched", static_cast<double>(al.matches.size()));
  f.metric("iterations", s.iters);
  f.metric("iteration_ms", ms(xr.iteration_ns));
  f.metric("skew_ms_p50", ms(s.skew50));
  f.metric("skew_ms_max", ms(s.skew_max));
  f.metric("clock_tolerance_ms", ms(static_cast<double>(al.tolerance)));
  s.named = xr.straggler >= 0;
  s.S = s.named ? static_cast<std::size_t>(xr.straggler) : 0;
  s.cost_ms = s.named ? straggler_per_iter_ms(xr.cost, s.S, s.iters) : 0;
  s.wait_ms = s.named ? straggler_per_iter_ms(xr.others_wait, s.S, s.iters) : 0;
  s.cost_pct = xr.iteration_ns > 0 ? 100 * ms(s.named ? xr.cost[s.S] / s.iters : 0) / ms(xr.iteration_ns) : 0;
  f.metric("cost_ms_per_iter", s.cost_ms);
  f.metric("cost_pct_of_iter", s.cost_pct);
  f.metric("wait_ms_per_iter", s.wait_ms);
  for (std::size_t k = 0; k < al.matches.size(); ++k) s.matched += xr.iter_of[k] >= 0;
  // The others' compute before their collectives, for the straggler's comparison.
  std::vector<double> others_compute;
  for (std::size_t r = 0; r < n; ++r)
    if (al.aligned[r] && (!s.named || r != s.S)) others_compute.push_back(straggler_per_iter_ms(xr.compute_before, r, s.iters));
  s.compute_median = percentile(others_compute, 0.5);
  return s;
}

// One rank late: its status, title, evidence, fix and impact.
void straggler_one_rank_verdict(Finding& f, const Digest& p, const CrossRanks& xr, const std::string& source, const StragglerFigures& s) {
  const std::size_t S = s.S;
  f.status = report::Status::warn;
  f.metric("last_count", static_cast<double>(xr.last_count[S]));
  f.metric("last_pct", pct(static_cast<double>(xr.last_count[S]), static_cast<double>(s.matched)));
  f.title = fmt::format("{} arrives last at {} of {} collectives: the other {} rank{} wait {:.2f} ms per iteration for it, {:.2f} ms ({:.1f}%) of the "
                        "{:.2f} ms iteration lost to it",
                        rank_name(p, xr, S), xr.last_count[S], s.matched, xr.aligned - 1, xr.aligned == 2 ? "" : "s", s.wait_ms, s.cost_ms, s.cost_pct,
                        ms(xr.iteration_ns)) +
            s.not_aligned;
  const double own = straggler_per_iter_ms(xr.compute_before, S, s.iters);
  f.add(source, fmt::format("{}: {:.2f} ms of compute per iteration before its collectives, the other ranks' median {:.2f} ms", rank_name(p, xr, S), own,
                            s.compute_median),
        "about the others'");
  const bool slower_gpu = own - s.compute_median > 0.5 * s.cost_ms;
  f.fix = slower_gpu ? fmt::format("{} computes longer than its peers before each collective: its GPU is slower or has more work. Check its node: "
                                   "perfgap check (gpu.clocks: throttling, power caps, thermals; a degraded GPU or PCIe link) and compare its "
                                   "nvidia-smi -q -x with a peer's (perfgap analyze nvidia-smi); uneven data or pipeline shards also do this",
                                   p.gpus[xr.gpu[S]].label)
                     : fmt::format("{} computes as long as its peers but starts its work later: its host is late. Check its node: perfgap check "
                                   "(placement.gpu_affinity, placement.shared_cores, cpu.governor), {} "
                                   "and the host-bound share of its profile (profile.gpu_idle)",
                                   p.gpus[xr.gpu[S]].label, framework_fix(p.framework.framework, FixTopic::straggler_host));
  if (!slower_gpu) f.add(source, framework_evidence(p.framework));
  f.impact = fmt::format("{:.2f} ms of every {:.2f} ms iteration ({:.1f}%): the step would be that much shorter if {} arrived with the next-latest rank",
                         s.cost_ms, ms(xr.iteration_ns), s.cost_pct, p.gpus[xr.gpu[S]].label);
}

// Several ranks late together: at each collective the last of them is only a little later
// than the next (so no one rank "costs" much), yet all the others wait for the set.
void straggler_late_set_verdict(Finding& f, const Digest& p, const CrossRanks& xr, const std::string& source, const StragglerFigures& s) {
  f.status = report::Status::warn;
  const double set_ms = ms(xr.set_saved_pct / 100 * xr.iteration_ns);
  std::string names;
  for (std::size_t i = 0; i < xr.late_set.size() && i < 4; ++i)
    names += (i == 0 ? "" : i + 1 == xr.late_set.size() ? " and " : ", ") + rank_name(p, xr, xr.late_set[i]);
  if (xr.late_set.size() > 4) names += fmt::format(" and {} more", xr.late_set.size() - 4);
  f.title = fmt::format("{} ranks arrive late together ({}): replayed with them on time the step is {:.2f} ms ({:.1f}%) shorter; alone, the latest of "
                        "them costs {:.2f} ms (the others still hold every collective)",
                        xr.late_set.size(), names, set_ms, xr.set_saved_pct, s.cost_ms) +
            s.not_aligned;
  f.metric("late_set_size", static_cast<double>(xr.late_set.size()));
  f.metric("late_set_saved_ms_per_iter", set_ms);
  // What explain budgets: the set's cost, measured by the replay, in place of one rank's.
  for (auto& [k, v] : f.metrics) {
    if (k == "cost_ms_per_iter") v = set_ms;
    if (k == "cost_pct_of_iter") v = xr.set_saved_pct;
  }
  for (auto r : xr.late_set)
    f.add(source, fmt::format("{}: {:.2f} ms of compute per iteration before its collectives, the other ranks' median {:.2f} ms", rank_name(p, xr, r),
                              straggler_per_iter_ms(xr.compute_before, r, s.iters), s.compute_median),
          "about the others'");
  f.fix = "these ranks compute longer or start later than their peers at every step: check their nodes together (perfgap check: gpu.clocks, "
          "placement.*, cpu.governor; perfgap fleet over their reports), and look for uneven work (data or pipeline shards) given to them";
  f.impact = fmt::format("{:.2f} ms of every {:.2f} ms iteration ({:.1f}%): the step would be that much shorter if these {} ranks arrived with the median rank "
                         "(by replay of the job's collectives)",
                         set_ms, ms(xr.iteration_ns), xr.set_saved_pct, xr.late_set.size());
}

// The verdict: one rank late, several late together, none among part of a job, or none.
void straggler_verdict(Finding& f, const Digest& p, const CrossRanks& xr, const std::string& source, const StragglerFigures& s) {
  if (xr.straggler_warn) {
    straggler_one_rank_verdict(f, p, xr, source, s);
  } else if (xr.set_warn) {
    straggler_late_set_verdict(f, p, xr, source, s);
  } else if (p.job.partial()) {
    // Part of the job: a rank not read may be the late one.
    f.status = report::Status::skip;
    f.title = fmt::format("no straggler among the {} ranks read, but {}: one of those may be the late one (the last rank read costs at most {:.2f} ms, {:.1f}% "
                          "of the {:.2f} ms iteration)",
                          xr.aligned, missing_words(p.job), s.cost_ms, s.cost_pct, ms(xr.iteration_ns)) +
              s.not_aligned;
  } else {
    f.status = report::Status::pass;
    f.title = fmt::format("no straggler among {} ranks: the last rank to arrive costs at most {:.2f} ms ({:.1f}%) of the {:.2f} ms iteration "
                          "(skew p50 {:.3f} ms, max {:.3f} ms)",
                          xr.aligned, s.cost_ms, s.cost_pct, ms(xr.iteration_ns), ms(s.skew50), ms(s.skew_max)) +
              s.not_aligned;
  }
  if (f.status == report::Status::warn && p.job.partial()) f.title += fmt::format(" (of the ranks read: {})", missing_words(p.job));
}

// How the ranks were put on one clock, and the replay of the job's collectives against the measure.
void straggler_alignment_evidence(Finding& f, const Digest& p, const Analysis& an, const std::string& source, std::size_t matched) {
  const auto& xr = an.xr;
  const auto& al = xr.al;
  const std::size_t n = xr.gpu.size(), cols = xr.columns.size(), ref = al.reference;
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
  // A rank whose trace holds fewer steps sees fewer of them: how many every aligned rank saw.
  std::size_t on_all = 0;
  for (std::size_t k = 0; k < al.matches.size(); ++k) {
    if (k >= xr.iter_of.size() || xr.iter_of[k] < 0) continue;  // as `matched`: inside an iteration
    const auto& m = al.matches[k];
    bool all = true;
    for (std::size_t r = 0; r < n && all; ++r) all = !al.aligned[r] || (r < m.index.size() && m.index[r] >= 0);
    on_all += all;
  }
  const std::string fewer = on_all < matched && xr.aligned > 2
                                ? fmt::format(" ({} of them on all {}: the others seen by fewer ranks, whose traces hold fewer steps)", on_all, xr.aligned)
                                : "";
  f.add(source, fmt::format("{} collectives matched on {} of {} ranks{} over {} iteration{}: {}, clocks aligned on the collectives' ends (reference {}, "
                            "tolerance {:.2f} ms)",
                            matched, xr.aligned, n, fewer, cols, cols == 1 ? "" : "s", paired, rank_name(p, xr, ref), ms(static_cast<double>(al.tolerance))));
}

// Per rank: metrics for all, the text table for the latest 16. Returns the aligned ranks, latest first.
std::vector<std::size_t> straggler_rank_table(Finding& f, const Digest& p, const CrossRanks& xr, double iters) {
  const auto& al = xr.al;
  const std::size_t n = xr.gpu.size();
  auto per_iter_ms = [&](const std::vector<double>& v, std::size_t r) { return straggler_per_iter_ms(v, r, iters); };
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
  return order;
}

// HTML: rank x iteration, a cell warn where the rank's lateness took >= 5% of that iteration.
report::Chart straggler_heatmap(const Digest& p, const Analysis& an, const std::vector<std::size_t>& order) {
  const auto& xr = an.xr;
  const std::size_t cols = xr.columns.size();
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
  return c;
}

// A replay of the graph further than this from the measured step misses a dependency: no rank is
// named from it (whatif's bound).
constexpr double kPipelineReplayTolerancePct = 5;

// The graph of a job of send/recv and collectives, replayed within its bound.
bool ppdp_trusted(const Analysis& an) {
  const auto& b = an.pp.base;
  return an.pp.built() && b.measured > 0 && b.replayed > 0 && an.per_iter.len > 0 &&
         std::abs(pct(static_cast<double>(b.replayed - b.measured), static_cast<double>(b.measured))) <= kPipelineReplayTolerancePct;
}

// The label of the rank profile.straggler warns about, or "" where it names none: on a job of
// send/recv and collectives the graph's (Analysis::pp), else the collectives' straggler.
std::string straggler_named(const Digest& p, const Analysis& an) {
  if (an.pp.mixed) {
    if (!ppdp_trusted(an) || an.pp.slow.empty()) return "";
    const auto& top = an.pp.slow.front();
    const bool warns = 100 * static_cast<double>(top.saved) / static_cast<double>(an.pp.base.replayed) >= kStragglerPct;
    return warns ? p.gpus[an.pp.gpu[top.rank]].label : "";
  }
  return an.xr.straggler_warn ? p.gpus[an.xr.gpu[static_cast<std::size_t>(an.xr.straggler)]].label : "";
}

// Per rank of the graph, its stage's median rank's own time (ns over the replay); 0 for a rank
// of no stage.
std::vector<double> ppdp_stage_medians(const PipelineReplay& pipe) {
  const std::size_t n = pipe.stage().size();
  std::vector<std::vector<double>> by(pipe.stages());
  for (std::size_t r = 0; r < n; ++r)
    if (pipe.stage()[r] >= 0) by[static_cast<std::size_t>(pipe.stage()[r])].push_back(static_cast<double>(pipe.own()[r]));
  std::vector<double> out(n, 0);
  for (std::size_t r = 0; r < n; ++r)
    if (pipe.stage()[r] >= 0) out[r] = median(by[static_cast<std::size_t>(pipe.stage()[r])]);
  return out;
}

// Per rank: what it spends between its ops, against its stage's median rank, what it waits in its
// sends and receives and in its collectives, and what its change saves where it is one of `slow`;
// the text table for the 16 that compute longest against their stage.
void ppdp_rank_table(Finding& f, const Digest& p, const Analysis& an, double per_it_ns, double step_ns) {
  const auto& pp = an.pp;
  const auto& pipe = pp.pipe;
  const std::size_t n = pp.gpu.size();
  const auto med = ppdp_stage_medians(pipe);
  auto per_it = [&](double ns) { return ms(ns * per_it_ns); };
  std::vector<double> saved(n, -1);
  for (const auto& c : pp.slow) saved[c.rank] = ms(static_cast<double>(c.saved) / static_cast<double>(pp.base.replayed) * step_ns);
  std::vector<std::size_t> order(n);
  for (std::size_t r = 0; r < n; ++r) order[r] = r;
  auto over = [&](std::size_t r) { return static_cast<double>(pipe.own()[r]) - med[r]; };
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return over(a) > over(b); });
  f.table.push_back({"rank", "stage", "own ms/iter", "stage median ms/iter", "waits in send/recv ms/iter", "waits in collectives ms/iter", "saves ms/iter"});
  for (std::size_t i = 0; i < order.size(); ++i) {
    const std::size_t r = order[i];
    const auto& key = p.gpus[pp.gpu[r]].key;
    const double own = static_cast<double>(pipe.own()[r]);
    f.metric("own_ms_per_iter." + key, per_it(own));
    f.metric("stage_median_ms_per_iter." + key, per_it(med[r]));
    f.metric("stage." + key, static_cast<double>(pipe.stage()[r]));
    if (saved[r] >= 0) f.metric("saved_ms_per_iter." + key, saved[r]);
    const auto& g = p.gpus[pp.gpu[r]];
    if (i < 16)
      f.table.push_back({g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host), fmt::format("{}", pipe.stage()[r]),
                         fmt::format("{:.2f}", per_it(own)), fmt::format("{:.2f}", per_it(med[r])),
                         fmt::format("{:.2f}", per_it(static_cast<double>(pipe.waiting()[r]))),
                         fmt::format("{:.2f}", per_it(static_cast<double>(pipe.coll_waiting()[r]))), saved[r] >= 0 ? fmt::format("{:.2f}", saved[r]) : "-"});
    else if (i == 16)
      f.table.push_back({fmt::format("... {} more ranks (all in the JSON metrics)", order.size() - 16), "", "", "", "", "", ""});
  }
}

// A job of send/recv and collectives (pipeline and data parallel): the rank its graph of sends,
// receives and collectives names (Analysis::pp, the graph whatif replays), never one that only
// waited in a receive or a collective; no rank where the graph cannot be built or does not
// reproduce the step.
Finding straggler_pipeline_finding(const Digest& p, const Analysis& an, const std::string& source, Finding f) {
  const auto& pp = an.pp;
  const double step_ns = an.per_iter.len;
  const double err = pp.built() && pp.base.measured > 0 ? pct(static_cast<double>(pp.base.replayed - pp.base.measured), static_cast<double>(pp.base.measured)) : 0;
  f.metric("pipeline_graph", pp.built() ? 1 : 0);
  if (!ppdp_trusted(an)) {
    f.status = report::Status::skip;
    const std::string why = !pp.why_not.empty() ? pp.why_not
                            : std::abs(err) > kPipelineReplayTolerancePct
                                ? fmt::format("replayed as one graph it is {:+.1f}% off the measured step (a dependency the traces do not show)", err)
                                : std::string("no iteration of the job to replay");
    f.title = "no rank named: the ranks run send/recv beside their collectives (pipeline and data parallel), and their sends, receives and "
              "collectives could not be replayed as one graph: " +
              why + "; compared at the collectives alone, a rank waiting in a receive for its pipeline peer would read as the late one";
    f.add(source, f.title, "every rank's trace, with each send's and receive's peer (Kineto's \"Dst Rank\"/\"Src Rank\")");
    return f;
  }
  const auto& pipe = pp.pipe;
  const double per_it_ns = step_ns / static_cast<double>(pp.base.measured);  // ns of an iteration per ns of the replay
  const double step = step_ns * static_cast<double>(pp.base.replayed) / static_cast<double>(pp.base.measured);  // as replayed (whatif's)
  const std::size_t n = pp.gpu.size();
  f.metric("ranks", static_cast<double>(n));
  f.metric("stages", static_cast<double>(pipe.stages()));
  f.metric("iteration_ms", ms(step_ns));
  f.metric("replay_error_pct", err);
  const bool named = !pp.slow.empty();
  const SlowCopy top = named ? pp.slow.front() : SlowCopy{};
  const double rank_frac = named ? static_cast<double>(top.saved) / static_cast<double>(pp.base.replayed) : 0;
  // A node whose ranks all compute long (a node of slow GPUs) saves more than any one of them, and
  // its stages' medians may be its own ranks: the node is named.
  const SlowNode* node = pp.slow_nodes.empty() ? nullptr : &pp.slow_nodes.front();
  const double node_frac = node ? static_cast<double>(node->saved) / static_cast<double>(pp.base.replayed) : 0;
  // Slow copies in different stages or copies hold the job each while another is slow: the set
  // saves what none of them does alone, and is named where it saves more (and the node does not).
  const SlowSet& set = pp.slow_set;
  const double set_frac = set.ranks.size() >= 2 ? static_cast<double>(set.saved) / static_cast<double>(pp.base.replayed) : 0;
  // Not the node where its saving is one late rank's or a late set's within it (one late GPU is
  // no node to drain: node_saving_is_its_ranks); a late set of most of its ranks is the node.
  if (node) {
    auto on_node = [&](std::size_t r) { return std::find(node->ranks.begin(), node->ranks.end(), r) != node->ranks.end(); };
    const bool set_on_node = set.ranks.size() >= 2 && std::all_of(set.ranks.begin(), set.ranks.end(), on_node);
    const bool set_is_node = set_on_node && 2 * set.ranks.size() > node->ranks.size();
    if ((named && on_node(top.rank) && node_saving_is_its_ranks(node->ranks.size(), 1, node_frac, rank_frac)) ||
        (set_on_node && node_saving_is_its_ranks(node->ranks.size(), set.ranks.size(), node_frac, set_frac)) || node_frac <= rank_frac ||
        (node_frac < set_frac && !set_is_node) || (node_frac == set_frac && !set_on_node))
      node = nullptr;
  }
  if (node && 100 * node_frac < kStragglerPct) node = nullptr;
  const bool by_set = !node && set_frac > rank_frac && 100 * set_frac >= kStragglerPct;
  const double frac = node ? node_frac : by_set ? set_frac : rank_frac;
  f.metric("cost_ms_per_iter", ms(frac * step));
  f.metric("cost_pct_of_iter", 100 * frac);
  f.add(source, fmt::format("the {} ranks' sends and receives paired and collectives joined as one graph ({} stages; peers from {}; groups from {}): "
                            "replayed, the step is {:.2f} ms against {:.2f} ms measured ({:+.1f}%)",
                            n, pipe.stages(), pipe.peers_from(), pipe.groups_from(), ms(step), ms(step_ns), err));
  auto per_it = [&](double ns) { return ms(ns * per_it_ns); };
  if (node) {
    f.status = report::Status::warn;
    f.metric("node_ranks", static_cast<double>(node->ranks.size()));
    f.title = fmt::format("node {}: its {} ranks compute {:.2f} ms per iteration together between their sends, receives and collectives, their "
                          "stages' ranks on the other nodes {:.2f} ms: replayed computing like those (sends, receives and collectives as one "
                          "graph), the step {:.2f} ms ({:.1f}%) shorter, {:.2f} ms instead of {:.2f} ms; no one rank of it saves as much (of "
                          "its ranks alone, {:.2f} ms at most)",
                          node->host, node->ranks.size(), per_it(node->own), per_it(node->elsewhere), ms(frac * step), 100 * frac,
                          ms(step - frac * step), ms(step), ms(rank_frac * step));
    for (std::size_t i = 1; i < pp.slow_nodes.size() && i < 4; ++i) {
      const auto& o = pp.slow_nodes[i];
      f.add(source, fmt::format("node {}: its {} ranks {:.2f} ms per iteration, their stages' ranks elsewhere {:.2f} ms: {:.2f} ms of the step alone",
                                o.host, o.ranks.size(), per_it(o.own), per_it(o.elsewhere),
                                ms(static_cast<double>(o.saved) / static_cast<double>(pp.base.replayed) * step)));
    }
    f.fix = fmt::format("the ranks of {} compute longer than their stages' copies on the other nodes: perfgap check on {} (gpu.clocks, "
                        "placement.*, cpu.governor) and perfgap fleet against its peers; drain it if the check finds a cause",
                        node->host, node->host);
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms step ({:.1f}%): the step would be that much shorter if {}'s ranks computed like "
                           "their stages' ranks on the other nodes (by replay of the job's sends, receives and collectives)",
                           ms(frac * step), ms(step), 100 * frac, node->host);
  } else if (by_set) {
    f.status = report::Status::warn;
    std::vector<std::string> names;
    for (auto r : set.ranks) {
      const auto& g = p.gpus[pp.gpu[r]];
      names.push_back(g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host));
    }
    f.metric("late_set_size", static_cast<double>(set.ranks.size()));
    f.metric("late_set_saved_ms_per_iter", ms(frac * step));
    f.title = fmt::format("{} ranks compute longer than the median rank of their stages together ({}): replayed computing like their stages' other ranks "
                          "(sends, receives and collectives as one graph), the step {:.2f} ms ({:.1f}%) shorter, {:.2f} ms instead of {:.2f} ms; "
                          "each alone saves {:.2f} ms at most, as the others still hold the job",
                          set.ranks.size(), fmt::join(names, ", "), ms(frac * step), 100 * frac, ms(step - frac * step), ms(step), ms(rank_frac * step));
    for (std::size_t i = 0; i < set.ranks.size(); ++i)
      f.add(source, fmt::format("{}: {:.2f} ms per iteration between its ops, the median of its stage {}'s ranks outside the set {:.2f} ms",
                                p.gpus[pp.gpu[set.ranks[i]]].label, per_it(set.own[i]), pipe.stage()[set.ranks[i]], per_it(set.target[i])));
    f.fix = "these ranks compute longer than their stages' other copies, together: look for what they share (a node, a switch, a data shard: "
            "perfgap check on their nodes) before any one of them; the ranks that wait for them in their receives and collectives are not the cause";
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms step ({:.1f}%): the step would be that much shorter if these {} ranks computed like their "
                           "stages' median ranks (by replay of the job's sends, receives and collectives)",
                           ms(frac * step), ms(step), 100 * frac, set.ranks.size());
  } else if (named && 100 * frac < kStragglerPct) {
    const auto& g = p.gpus[pp.gpu[top.rank]];
    f.status = report::Status::pass;
    f.title = fmt::format("no straggler among {} ranks: the rank computing longest against the median rank of its stage, {}, costs {:.2f} ms ({:.1f}%) "
                          "of the {:.2f} ms step (sends, receives and collectives replayed as one graph, {} stages)",
                          n, g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host), ms(frac * step), 100 * frac, ms(step), pipe.stages());
  } else if (named) {
    const auto& g = p.gpus[pp.gpu[top.rank]];
    const std::string name = g.host.empty() ? g.label : fmt::format("{} on {}", g.label, g.host);
    f.status = report::Status::warn;
    f.title = fmt::format("{} computes {:.2f} ms per iteration between its sends, receives and collectives, the median of its stage {}'s other ranks {:.2f} "
                          "ms: replayed computing like them (sends, receives and collectives as one graph), the step {:.2f} ms ({:.1f}%) shorter, "
                          "{:.2f} ms instead of {:.2f} ms; its pipeline peers wait for it in their receives and its stage's copies in their "
                          "collectives",
                          name, per_it(top.own), top.stage, per_it(top.median), ms(frac * step), 100 * frac, ms(step - frac * step), ms(step));
    for (std::size_t i = 1; i < pp.slow.size() && i < 4; ++i) {
      const auto& c = pp.slow[i];
      const auto& o = p.gpus[pp.gpu[c.rank]];
      f.add(source, fmt::format("{}: {:.2f} ms per iteration between its ops, the median of its stage {}'s other ranks {:.2f} ms: {:.2f} ms of the step alone", o.label,
                                per_it(c.own), c.stage, per_it(c.median), ms(static_cast<double>(c.saved) / static_cast<double>(pp.base.replayed) * step)));
    }
    f.fix = fmt::format("{} computes longer than the other copies of its stage: see why (its data shard; perfgap check on its node: gpu.clocks, "
                        "placement.*, cpu.governor); the ranks that wait for it in their receives and collectives are not the cause",
                        g.label);
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms step ({:.1f}%): the step would be that much shorter if {} computed like its stage's median "
                           "rank (by replay of the job's sends, receives and collectives)",
                           ms(frac * step), ms(step), 100 * frac, g.label);
  } else {
    f.status = report::Status::pass;
    f.title = fmt::format("no straggler among {} ranks: none computes longer than the median rank of its stage by 1% of the step and 0.1 ms (sends, "
                          "receives and collectives replayed as one graph, {} stages); a stage slower than the others is the pipeline's balance "
                          "(perfgap whatif prices each stage: whatif.stage)",
                          n, pipe.stages());
  }
  ppdp_rank_table(f, p, an, per_it_ns, step);
  f.table_always = f.status == report::Status::warn;
  return f;
}

}  // namespace

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
  // Send/recv beside collectives (pipeline and data parallel): the graph of both names the rank,
  // never the collectives alone (a rank waiting in a receive for its peer would read as late).
  if (an.pp.mixed) return straggler_pipeline_finding(p, an, source, std::move(f));
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
  std::string not_aligned = unaligned.empty() ? "" : fmt::format("; not aligned, left out: {}", left_out);
  const std::size_t cols = xr.columns.size();
  if (xr.aligned < 2 && unaligned.size() == n && std::all_of(unaligned.begin(), unaligned.end(), p2p_only)) {
    f.status = report::Status::skip;
    f.title = fmt::format("the {} ranks ran only point-to-point send/recv (a pipeline): arrivals at collectives cannot be compared; the time "
                          "stages wait for each other is inside their send/recv kernels (profile.exposed_comm SendRecv; perfgap whatif pairs them and prices each stage, whatif.stage)",
                          n);
    return f;
  }
  if (xr.aligned < 2 || cols == 0) {
    f.status = report::Status::skip;
    f.title = xr.aligned < 2 ? fmt::format("the {} ranks' profiles cannot be put on one clock: no two share collectives whose ends meet{}", n, not_aligned)
                             : "no collective matched across ranks falls inside an iteration" + not_aligned;
    return f;
  }
  const StragglerFigures s = straggler_figures(f, an, std::move(not_aligned));
  straggler_verdict(f, p, xr, source, s);
  straggler_alignment_evidence(f, p, an, source, s.matched);
  const auto order = straggler_rank_table(f, p, xr, s.iters);
  f.charts.push_back(straggler_heatmap(p, an, order));
  return f;
}

namespace {

// Several ranks: the time inside the kernels spent waiting for a later rank, per iteration, of
// all communication (c == 0) or of one collective's own kernels.
double exposed_comm_waiting(const Analysis& an, int c) {
  const bool all = c == 0;
  double wsum = 0, wgpus = 0;
  for (const auto& gt : an.gpus) {
    if (gt.windows == 0) continue;
    wsum += gt.total.wait / static_cast<double>(gt.windows);
    ++wgpus;
  }
  double waiting = wgpus > 0 && all ? wsum / wgpus : 0;
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
  return waiting;
}

// Per GPU, worst first: the metric for each, the evidence for the 8 worst.
void exposed_comm_per_gpu(Finding& f, const DigestFindingInputs& in, int c) {
  const bool all = c == 0;
  const auto& an = in.an;
  std::vector<std::pair<double, std::size_t>> order;
  for (std::size_t g = 0; g < an.gpus.size(); ++g) {
    const auto& gt = an.gpus[g];
    if (gt.windows == 0) continue;
    const double e = all ? gt.total.exposed_all : gt.total.exposed[c], l = gt.total.len;
    order.push_back({pct(e, l), g});
    f.metric("exposed_pct_of_iter." + in.p.gpus[g].key, pct(e, l));
  }
  std::sort(order.begin(), order.end(), [](auto& a, auto& b) { return a.first > b.first; });
  std::size_t shown = 0;
  for (const auto& [share_g, g] : order) {
    if (++shown > 8) {
      f.add(in.source, fmt::format("... {} more GPUs", order.size() - 8));
      break;
    }
    const auto& gt = an.gpus[g];
    const double e = all ? gt.total.exposed_all : gt.total.exposed[c], cm = all ? gt.total.comm_all : gt.total.comm[c];
    double k = static_cast<double>(gt.windows);
    f.add(in.source, fmt::format("{}: {:.2f} ms communication, {:.2f} ms exposed {} ({:.1f}%)", in.p.gpus[g].label, ms(cm / k), ms(e / k),
                                 iteration_words(an), share_g),
          fmt::format("<= 10% of the {} exposed", window_noun(an)));
  }
}

// A warning's fix and impact: the straggler first, then overlap, then the collective's own
// tuning (an NCCL sweep) or what suits the kind of kernel an NCCL sweep does not tune.
void exposed_comm_fix(Finding& f, const DigestFindingInputs& in, int c, const std::string& what, double exposed, double share) {
  const auto& an = in.an;
  const auto& it = an.per_iter;
  int slot = c;
  if (c == 0) {  // the collective (or library) with the most exposed time says what to overlap and sweep
    slot = static_cast<int>(Coll::AllReduce);
    double most = -1;
    for (int k : in.colls)
      if (it.exposed[k] > most) most = it.exposed[k], slot = k;
  }
  const Coll col = slot < parsers::kCollCount ? static_cast<Coll>(slot) : Coll::none;
  // A sweep of NCCL's algorithms tunes NCCL's collectives only: not point-to-point transfers
  // (no algorithm to choose), not another library's kernels.
  const bool sweepable = col != Coll::none && col != Coll::SendRecv;
  const parsers::Framework fw = in.p.framework.framework;
  std::string overlap = col == Coll::AllGather || col == Coll::ReduceScatter ? framework_fix(fw, FixTopic::exposed_gather)
                        : col == Coll::AllReduce                             ? framework_fix(fw, FixTopic::exposed_allreduce)
                        : col == Coll::AllToAll                              ? framework_fix(fw, FixTopic::exposed_alltoall)
                                                                             : "";
  const std::string straggler = straggler_named(in.p, an);
  if (!sweepable) {
    f.fix = comm_fix(in.libs.slot_kind(slot), in.libs.slot_name(slot), in.pipeline);
    if (!straggler.empty())
      f.fix = fmt::format("first remove the straggler (profile.straggler: the other ranks wait for {} each iteration); then: {}", straggler, f.fix);
  } else if (!straggler.empty()) {
    // A straggler first: tuning NCCL while the ranks wait for one of them measures the wait.
    f.fix = fmt::format("first remove the straggler (profile.straggler: the other ranks wait for {} each iteration); then {}profile again "
                        "before tuning the collective itself",
                        straggler, overlap);
  } else {
    f.fix = fmt::format("{}then tune the collective itself: perfgap sweep --env NCCL_ALGO=unset,Ring,Tree --env NCCL_MIN_NCHANNELS=unset,16,32 -- {} -b 1M -e 1G -f 2 -g 8 "
                        "(also NCCL_PROTO, NCCL_NCHANNELS_PER_NET_PEER, NCCL_IB_QPS_PER_CONNECTION; see docs/SWEEP.md) and check the fabric with perfgap analyze nccl-tests",
                        overlap, bench_of(col));
  }
  if (!overlap.empty()) f.add(in.source, framework_evidence(in.p.framework));
  f.impact = an.iterations ? fmt::format("{:.2f} ms of every {:.2f} ms iteration the GPU waits on {}: up to {:.1f}% faster iterations if it were hidden", ms(exposed), ms(it.len), what, share)
                           : fmt::format("{:.2f} ms of the {:.2f} ms profile the GPU waits on {}", ms(exposed), ms(it.len), what);
  // A pipeline's send/recv time is mostly its bubble, which no transfer makes shorter: no
  // "faster if hidden" bound is offered for it (a balanced pipeline saves nothing).
  if (col == Coll::SendRecv && in.pipeline)
    f.impact = fmt::format("{:.2f} ms of every {:.2f} ms the GPU sits in send/recv kernels, mostly the pipeline's bubble and the stages waiting for each "
                           "other rather than transfer: what balancing the stages saves is perfgap whatif's whatif.stage; what a shorter bubble saves "
                           "depends on the schedule",
                           ms(exposed), ms(it.len));
}

// profile.exposed_comm of one communication slot, or of all communication (c == 0).
Finding exposed_comm_finding(const DigestFindingInputs& in, int c) {
  const auto& an = in.an;
  const auto& it = an.per_iter;
  bool all = c == 0;
  std::string name = all ? "all" : in.libs.slot_name(c);
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
  if (!all && in.libs.slot_kind(c) != "collective")  // say what the time is where the name does not
    what += fmt::format(" ({})", c == static_cast<int>(Coll::SendRecv) && in.pipeline ? "point-to-point: pipeline transfers and the stages' waiting for each other"
                                                                                       : kind_words(in.libs.slot_kind(c)));
  else if (!all && c >= parsers::kCollCount)
    what += " (collective)";
  else if (!all && c == static_cast<int>(Coll::other))
    what += " (NCCL kernels whose collective the trace does not name)";
  f.title = fmt::format("{} {:.2f} ms {}, {:.2f} ms ({:.1f}% of the {:.2f} ms {}) not overlapped by compute{}", what, ms(comm),
                        iteration_words(an), ms(exposed), share, ms(it.len), window_noun(an), share > 10 ? " (> 10%)" : "");
  // Several ranks: the time inside the kernels spent waiting for a later rank is left out above
  // and said apart (profile.straggler), so that waiting is not tuned as communication.
  if (an.xr.present) {
    const double waiting = exposed_comm_waiting(an, c);
    f.metric("waiting_ms_per_iter", ms(waiting));
    if (ms(waiting) >= 0.005)
      f.title += fmt::format("; besides, {:.2f} ms {} inside the kernels waiting for a later rank (not communication: profile.straggler)", ms(waiting),
                             iteration_words(an));
  }
  exposed_comm_per_gpu(f, in, c);
  if (!all && an.coll_bytes[c])
    f.add(in.source, fmt::format("{} kernels moved {} in all (Kineto NCCL args){}", an.coll_kernels[c], size_text(static_cast<double>(an.coll_bytes[c])),
                                 an.coll_group[c] ? fmt::format(", group size {}", an.coll_group[c]) : ""));
  // A filtered or sampled trace: the compute left out of it reads as communication not overlapped.
  double held = 0;
  if (const std::string sampled = f.status == report::Status::warn ? sampled_trace_evidence(in.p, &held) : std::string(); !sampled.empty()) {
    f.status = report::Status::skip;
    f.title += fmt::format(": not judged, a filtered or sampled trace ({:.1f}% of the host calls its correlation ids number are in it): compute "
                           "left out of it reads as communication not overlapped",
                           held);
    f.add(in.source, sampled, "a complete trace (every host call and GPU activity of the capture)");
    return f;
  }
  if (f.status == report::Status::warn) exposed_comm_fix(f, in, c, what, exposed, share);
  return f;
}

}  // namespace

std::vector<Finding> exposed_comm_findings(const DigestFindingInputs& in) {
  std::vector<Finding> out;
  if (in.colls.empty()) {
    Finding f = started("profile.exposed_comm", "network", "all");
    f.status = report::Status::skip;
    f.title = "no communication kernels in the profile (NCCL's, or a library's of the communication-kernel table): no communication to expose";
    f.add(in.source, "no kernel named ncclKernel_*, ncclDevKernel_* or nccl*Kernel*, nor one the table names (data/kb/comm_kernels.yaml and --kb: DeepEP, "
                     "NVSHMEM, MSCCL++, ...)");
    f.metric("comm_ms_per_iter", 0);
    f.metric("exposed_ms_per_iter", 0);
    f.metric("exposed_pct_of_iter", 0);
    out.push_back(std::move(f));
  } else {
    for (int c : in.colls) out.push_back(exposed_comm_finding(in, c));
    if (in.colls.size() == 1) {
      // One kind is all the communication: its finding is the total too (all_communication 1),
      // not a second one with the same figures and warning.
      out.back().metric("all_communication", 1);
      out.back().title += " (all the communication)";
    } else {
      out.push_back(exposed_comm_finding(in, 0));
    }
  }
  return out;
}

}  // namespace perfgap::analyzers::profile_model
