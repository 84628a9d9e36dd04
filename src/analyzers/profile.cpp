// Profiles (nsys, Kineto): the findings of a job's digest (profile_model.hpp) per GPU and per
// iteration: compute, communication per collective, exposed communication, GPU idle
// (host-bound or not), copies, launch overhead, the ranks and who holds them back.
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
#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers {

using namespace profile_model;

namespace {

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

ProfileJob analyze_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, std::size_t threads) {
  auto jd = read_profile_job(files, read, o, threads);
  if (!jd.job.used.empty()) jd.job.findings = digest_findings(jd.all, jd.source, o);
  return std::move(jd.job);
}

}  // namespace perfgap::analyzers
