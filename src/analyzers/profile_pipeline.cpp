#include "analyzers/profile_pipeline.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdlib>
#include <map>
#include <set>
#include <tuple>

namespace perfgap::analyzers {

using parsers::Coll;
using parsers::P2pDir;

namespace {

// The two ends of a pair meet within this of one clock offset (as a collective's ends do,
// profile_ranks.cpp): a few µs within a node, tens across nodes, plus two clocks' drift.
constexpr std::int64_t kPairMinTolerance = 100'000;   // 100 µs
constexpr std::int64_t kPairMaxTolerance = 1'000'000;  // 1 ms

std::int64_t median_of(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

}  // namespace

PipelineReplay::PipelineReplay(const std::vector<std::vector<P2pOp>>& p2p, const std::vector<std::int64_t>& rank,
                               const std::vector<std::vector<RankCollective>>& colls) {
  const std::size_t n = p2p.size();
  // Each rank's sends, receives and collectives in one list by start (a send/recv first of a tie);
  // a collective as an op with no peer.
  std::vector<std::vector<P2pOp>> merged;
  std::vector<std::vector<std::pair<Coll, std::uint32_t>>> kind(n);  // per merged op: its collective and group size
  const bool any_coll = std::any_of(colls.begin(), colls.end(), [](const auto& c) { return !c.empty(); });
  if (any_coll) {
    merged.resize(n);
    for (std::size_t r = 0; r < n; ++r) {
      std::vector<std::tuple<std::int64_t, int, std::size_t>> order;
      for (std::size_t i = 0; i < p2p[r].size(); ++i) order.emplace_back(p2p[r][i].start, 0, i);
      if (r < colls.size())
        for (std::size_t i = 0; i < colls[r].size(); ++i) order.emplace_back(colls[r][i].start, 1, i);
      std::stable_sort(order.begin(), order.end());
      for (const auto& [start, is_coll, i] : order) {
        if (is_coll == 0) {
          merged[r].push_back(p2p[r][i]);
          kind[r].emplace_back(Coll::none, 0);
          continue;
        }
        const auto& c = colls[r][i];
        merged[r].push_back({.start = c.start, .end = c.end, .step = c.step, .host_wait = c.host_wait, .bytes = c.bytes, .host_stall = c.host_stall});
        kind[r].emplace_back(c.coll, c.group);
      }
    }
  }
  const auto& ops = *(any_coll ? &merged : &p2p);
  first_op_.assign(n + 1, 0);
  for (std::size_t r = 0; r < n; ++r) first_op_[r + 1] = first_op_[r] + ops[r].size();
  ops_.resize(first_op_[n]);
  std::vector<std::uint32_t> group(ops_.size(), 0);
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = first_op_[r]; i < first_op_[r + 1]; ++i) {
      ops_[i].rank = r;
      if (any_coll) ops_[i].coll = kind[r][i - first_op_[r]].first, group[i] = kind[r][i - first_op_[r]].second;
    }
  own_.assign(n, 0), waiting_.assign(n, 0), transfer_.assign(n, 0), host_.assign(n, 0), stall_.assign(n, 0);
  coll_waiting_.assign(n, 0), coll_transfer_.assign(n, 0);
  offset_.assign(n, 0);
  component_.assign(n, -1);
  stage_.assign(n, -1);
  pair(ops, rank);
  if (!why_not_.empty()) return;
  if (any_coll) {
    // The stages first: a collective's group is read from them.
    find_stages(ops);
    join_collectives(ops, group);
    if (!why_not_.empty()) return;
  }
  if (!clocks(ops)) return;
  build(ops);
  if (!any_coll) find_stages(ops);
  if (run(PipelineChange{}).intervals == 0 && why_not_.empty())
    why_not_ = instances_.empty()
                   ? "the sends and receives wait on each other in a cycle (sends and receives of one rank on concurrent streams): not replayed"
                   : "the sends, receives and collectives wait on each other in a cycle (ops of one rank on concurrent streams, or a collective "
                     "joined to ranks that are not its group): not replayed";
}

// Every op's partner: the n-th op of its channel (sender, receiver) in its step on the other side.
void PipelineReplay::pair(const std::vector<std::vector<P2pOp>>& ops, const std::vector<std::int64_t>& rank) {
  const std::size_t n = ops.size();
  std::map<std::int64_t, std::size_t> index_of;
  for (std::size_t r = 0; r < n; ++r)
    if (rank[r] >= 0 && !ops[r].empty()) index_of.emplace(rank[r], r);
  bool any_peer = false;
  std::vector<std::size_t> with_ops;  // the ranks with sends or receives
  std::size_t p2p = 0;
  auto is_p2p = [&](std::size_t r, std::size_t i) { return ops_[first_op_[r] + i].coll == Coll::none; };
  for (std::size_t r = 0; r < n; ++r) {
    bool any = false;
    for (std::size_t i = 0; i < ops[r].size(); ++i)
      if (is_p2p(r, i)) any = true, ++p2p, any_peer = any_peer || ops[r][i].peer >= 0;
    if (any) with_ops.push_back(r);
  }
  // Per op, the peer's index among the ranks; -1 where unknown or not among the traces.
  auto peer_of = [&](std::size_t r, const P2pOp& o) -> std::int64_t {
    if (!any_peer) return static_cast<std::int64_t>(with_ops[0] == r ? with_ops[1] : with_ops[0]);
    if (o.peer < 0) return -1;
    auto it = index_of.find(o.peer);
    return it == index_of.end() || it->second == r ? -1 : static_cast<std::int64_t>(it->second);
  };
  if (with_ops.size() < 2) {
    why_not_ = "only one rank's trace holds send/recv: the peers' traces are not among the inputs (give every stage's trace)";
    return;
  }
  if (!any_peer) {
    if (with_ops.size() != 2) {
      why_not_ = fmt::format(
          "the traces name no send's or receive's peer (Kineto's \"Dst Rank\"/\"Src Rank\", on the kernel since 2024; nsys kernel names never do), and "
          "among {} ranks with send/recv which rank each one pairs with is ambiguous: capture with a newer PyTorch profiler",
          with_ops.size());
      return;
    }
    peers_from_ = "inferred: the traces name no peer (no \"Dst Rank\"/\"Src Rank\"), and in a job of two ranks each one's only peer is the other";
  } else {
    peers_from_ = "each send's \"Dst Rank\" and each receive's \"Src Rank\" (PyTorch's record_param_comms metadata on the kernel)";
  }
  // (sender, receiver, step) -> the ops of each side, in order. A side whose direction the trace
  // does not say is the lower or higher rank of the pair.
  std::map<std::tuple<std::int64_t, std::int64_t, std::int64_t>, std::array<std::vector<std::size_t>, 2>> channel;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < ops[r].size(); ++i) {
      if (!is_p2p(r, i)) continue;
      const auto& o = ops[r][i];
      const std::int64_t p = peer_of(r, o), me = static_cast<std::int64_t>(r);
      if (p < 0) continue;
      std::int64_t src = me, dst = p;
      int side = 0;
      if (o.dir == P2pDir::recv) src = p, dst = me, side = 1;
      else if (o.dir == P2pDir::unknown) src = std::min(me, p), dst = std::max(me, p), side = me == src ? 0 : 1;
      channel[{src, dst, o.step}][static_cast<std::size_t>(side)].push_back(first_op_[r] + i);
    }
  for (const auto& [key, sides] : channel) {
    if (sides[0].size() != sides[1].size()) continue;  // a step the capture cut on one side
    for (std::size_t k = 0; k < sides[0].size(); ++k) {
      ops_[sides[0][k]].partner = static_cast<std::int64_t>(sides[1][k]);
      ops_[sides[1][k]].partner = static_cast<std::int64_t>(sides[0][k]);
      ++pairs_;
    }
  }
  unpaired_ = p2p - 2 * pairs_;
  if (pairs_ == 0)
    why_not_ = "no send is paired with a receive of another trace (each rank's peers are not among the traces, or their steps do not meet)";
}

// The ranks on one clock per set of ranks joined by pairs (and collectives): offsets from the
// pairs' and the instances' ends.
bool PipelineReplay::clocks(const std::vector<std::vector<P2pOp>>& ops) {
  const std::size_t n = ops.size();
  auto at = [&](std::size_t k) -> const P2pOp& { return ops[ops_[k].rank][k - first_op_[ops_[k].rank]]; };
  struct Edge {
    std::vector<std::int64_t> diffs;  // end_a - end_b
    bool coll = false;                // of collectives (else of pairs)
  };
  std::map<std::pair<std::size_t, std::size_t>, Edge> diffs;  // (a, b)
  std::vector<std::int64_t> durs;
  for (std::size_t k = 0; k < ops_.size(); ++k) {
    durs.push_back(at(k).end - at(k).start);
    const auto p = ops_[k].partner;
    if (p < 0 || static_cast<std::size_t>(p) < k) continue;
    diffs[{ops_[k].rank, ops_[static_cast<std::size_t>(p)].rank}].diffs.push_back(at(k).end - at(static_cast<std::size_t>(p)).end);
  }
  // An instance's ends against its first rank's.
  for (const auto& inst : instances_)
    for (std::size_t i = 1; i < inst.size(); ++i) {
      auto& e = diffs[{ops_[inst[0]].rank, ops_[inst[i]].rank}];
      e.diffs.push_back(at(inst[0]).end - at(inst[i]).end);
      e.coll = true;
    }
  const std::int64_t tol = std::clamp<std::int64_t>(median_of(durs) / 20, kPairMinTolerance, kPairMaxTolerance);
  std::vector<std::vector<std::pair<std::size_t, std::int64_t>>> adj(n);  // neighbour, offset(neighbour) - offset(me)
  for (const auto& [ab, e] : diffs) {
    const auto& d = e.diffs;
    const std::int64_t m = median_of(d);
    std::size_t near = 0;
    for (auto x : d) near += std::llabs(x - m) <= tol;
    if (near * 10 < d.size() * 9) {
      why_not_ = e.coll ? fmt::format("the ends of the collectives joining two ranks of one stage do not meet at one clock offset (within {:.2f} ms for "
                                      "90% of {}): the collectives' group is not the stage's copies",
                                      static_cast<double>(tol) / 1e6, d.size())
                        : fmt::format("the ends of the sends and receives between two ranks do not meet at one clock offset (within {:.2f} ms for 90% of {} pairs): "
                                      "a send that returns before its receive ends (small messages NCCL buffers) leaves the pair's end unknown",
                                      static_cast<double>(tol) / 1e6, d.size());
      return false;
    }
    adj[ab.first].emplace_back(ab.second, m);
    adj[ab.second].emplace_back(ab.first, -m);
  }
  int comps = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (component_[s] >= 0 || ops[s].empty()) continue;
    std::vector<std::size_t> todo{s};
    component_[s] = comps;
    while (!todo.empty()) {
      const auto a = todo.back();
      todo.pop_back();
      for (const auto& [b, m] : adj[a])
        if (component_[b] < 0) component_[b] = comps, offset_[b] = offset_[a] + m, todo.push_back(b);
    }
    ++comps;
  }
  // Pairs and collectives make loops of ranks (two copies' chains joined at every stage): each
  // join must agree with the offsets found along the others.
  for (std::size_t a = 0; a < n; ++a)
    for (const auto& [b, m] : adj[a])
      if (std::llabs(offset_[b] - offset_[a] - m) > tol) {
        why_not_ = fmt::format("the ends of the sends, receives and collectives do not meet at one clock offset around a loop of ranks (off by "
                               "{:.2f} ms): a collective's group is not the ranks assumed (the stage's copies)",
                               static_cast<double>(std::llabs(offset_[b] - offset_[a] - m)) / 1e6);
        return false;
      }
  measured_.assign(static_cast<std::size_t>(comps), 0);
  return true;
}

// Each op's own time before it, its transfer, and the ranks' totals of waiting and transfer.
void PipelineReplay::build(const std::vector<std::vector<P2pOp>>& ops) {
  const std::size_t n = ops.size();
  std::vector<std::int64_t> arrival(ops_.size());
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t i = 0; i < ops[r].size(); ++i) arrival[first_op_[r] + i] = ops[r][i].start + offset_[r];
  std::vector<std::int64_t> lo(measured_.size(), INT64_MAX), hi(measured_.size(), INT64_MIN);
  for (std::size_t r = 0; r < n; ++r) {
    if (ops[r].empty()) continue;
    for (std::size_t i = 0; i < ops[r].size(); ++i) {
      const auto& o = ops[r][i];
      auto& op = ops_[first_op_[r] + i];
      const std::int64_t arr = arrival[first_op_[r] + i], end = o.end + offset_[r];
      if (i == 0) op.gap = arr;
      else {
        op.gap = std::max<std::int64_t>(0, o.start - ops[r][i - 1].end);
        const std::int64_t all = std::clamp<std::int64_t>(o.host_wait, 0, op.gap);
        op.stall = std::clamp<std::int64_t>(o.host_stall, 0, all);
        op.host = all - op.stall;
        own_[r] += op.gap;
        host_[r] += op.host;
        stall_[r] += op.stall;
      }
      if (op.instance >= 0) {
        // A collective: from the group's last arrival to its own end.
        std::int64_t last = arr;
        for (auto m : instances_[static_cast<std::size_t>(op.instance)]) last = std::max(last, arrival[m]);
        op.transfer = std::max<std::int64_t>(0, end - last);
        coll_waiting_[r] += last - arr;
        coll_transfer_[r] += op.transfer;
        continue;
      }
      if (op.partner >= 0) {
        const std::int64_t other = arrival[static_cast<std::size_t>(op.partner)];
        op.transfer = std::max<std::int64_t>(0, end - std::max(arr, other));
        waiting_[r] += std::max<std::int64_t>(0, other - arr);
      } else {
        op.transfer = o.end - o.start;
      }
      if (op.coll != Coll::none) coll_transfer_[r] += op.transfer;  // a collective not joined: its whole length
      else transfer_[r] += op.transfer;
    }
    const auto c = static_cast<std::size_t>(component_[r]);
    lo[c] = std::min(lo[c], arrival[first_op_[r]]);
    hi[c] = std::max(hi[c], ops[r].back().end + offset_[r]);
  }
  for (std::size_t c = 0; c < measured_.size(); ++c) measured_[c] = hi[c] > lo[c] ? hi[c] - lo[c] : 0;
}

Replay PipelineReplay::run(const PipelineChange& change) const {
  Replay out;
  if (!why_not_.empty() || ops_.empty()) return out;
  const std::size_t n = first_op_.size() - 1;
  std::vector<std::int64_t> arr(ops_.size(), -1), end(ops_.size(), 0);
  std::vector<bool> arrived(ops_.size(), false);
  std::vector<std::size_t> next(n);
  for (std::size_t r = 0; r < n; ++r) next[r] = first_op_[r];
  for (bool progress = true; progress;) {
    progress = false;
    for (std::size_t r = 0; r < n; ++r)
      while (next[r] < first_op_[r + 1]) {
        const std::size_t k = next[r];
        const auto& op = ops_[k];
        if (!arrived[k]) {
          double g = static_cast<double>(op.gap - (change.no_host_wait ? op.host : 0) - (change.no_host_stall ? op.stall : 0));
          if (k != first_op_[r] && r < change.scale.size()) g *= change.scale[r];
          arr[k] = k == first_op_[r] ? op.gap : end[k - 1] + static_cast<std::int64_t>(g);
          arrived[k] = true;
        }
        std::int64_t start = arr[k];
        if (op.partner >= 0) {
          const auto p = static_cast<std::size_t>(op.partner);
          if (!arrived[p]) break;  // the peer has not arrived yet: another rank first
          start = std::max(start, arr[p]);
        } else if (op.instance >= 0) {
          bool all = true;
          for (auto m : instances_[static_cast<std::size_t>(op.instance)]) {
            all = all && arrived[m];
            start = std::max(start, arr[m]);
          }
          if (!all) break;  // a rank of its group has not arrived yet
        }
        end[k] = start + op.transfer;
        ++next[r];
        progress = true;
      }
  }
  for (std::size_t r = 0; r < n; ++r)
    if (next[r] != first_op_[r + 1]) return out;  // a cycle: nothing replayed
  std::vector<std::int64_t> lo(measured_.size(), INT64_MAX), hi(measured_.size(), INT64_MIN);
  for (std::size_t r = 0; r < n; ++r) {
    if (first_op_[r] == first_op_[r + 1]) continue;
    const auto c = static_cast<std::size_t>(component_[r]);
    lo[c] = std::min(lo[c], arr[first_op_[r]]);
    hi[c] = std::max(hi[c], end[first_op_[r + 1] - 1]);
  }
  for (std::size_t c = 0; c < measured_.size(); ++c) {
    out.measured += measured_[c];
    out.replayed += hi[c] > lo[c] ? hi[c] - lo[c] : 0;
  }
  out.intervals = pairs_ + instances_.size();
  return out;
}

// Stages: each set of ranks joined by pairs is a chain (every rank paired with at most two
// others, no loop); its first stage is the end whose first op sends (activations go forward),
// else the end of the lower rank number. Chains of one length number their stages alike.
void PipelineReplay::find_stages(const std::vector<std::vector<P2pOp>>& ops) {
  const std::size_t n = ops.size();
  std::vector<std::set<std::size_t>> adj(n);
  for (const auto& op : ops_)
    if (op.partner >= 0) adj[op.rank].insert(ops_[static_cast<std::size_t>(op.partner)].rank);
  // The sets of ranks joined by pairs (collectives join the chains to each other, not into one).
  std::vector<int> chain_of(n, -1);
  int chains = 0;
  for (std::size_t s = 0; s < n; ++s) {
    if (chain_of[s] >= 0 || ops[s].empty()) continue;
    std::vector<std::size_t> todo{s};
    chain_of[s] = chains;
    while (!todo.empty()) {
      const auto a = todo.back();
      todo.pop_back();
      for (auto b : adj[a])
        if (chain_of[b] < 0) chain_of[b] = chains, todo.push_back(b);
    }
    ++chains;
  }
  std::map<int, std::vector<std::size_t>> members;
  for (std::size_t r = 0; r < n; ++r)
    if (chain_of[r] >= 0) members[chain_of[r]].push_back(r);
  std::size_t length = 0;
  std::vector<int> stage(n, -1);
  for (const auto& [c, rs] : members) {
    if (rs.size() < 2) continue;
    std::size_t edges = 0;
    std::vector<std::size_t> ends;
    bool chain = true;
    for (auto r : rs) {
      edges += adj[r].size();
      chain = chain && adj[r].size() <= 2;
      if (adj[r].size() == 1) ends.push_back(r);
    }
    if (!chain || edges / 2 + 1 != rs.size() || ends.size() != 2) {
      stages_why_ = "the sends and receives do not join the ranks in a chain of stages (an interleaved schedule's last stage sends back to the first, "
                    "or a rank exchanges with more than two others)";
      return;
    }
    auto sends_first = [&](std::size_t r) {
      for (std::size_t i = 0; i < ops[r].size(); ++i)
        if (ops_[first_op_[r] + i].coll == Coll::none) return ops[r][i].dir == P2pDir::send;
      return false;
    };
    std::size_t head = ends[0] < ends[1] ? ends[0] : ends[1];
    if (sends_first(ends[0]) != sends_first(ends[1])) head = sends_first(ends[0]) ? ends[0] : ends[1];
    if (length != 0 && length != rs.size()) {
      stages_why_ = "the chains of stages differ in length";
      return;
    }
    length = rs.size();
    std::size_t prev = n, at = head;
    for (int s = 0; at < n; ++s) {
      stage[at] = s;
      std::size_t nxt = n;
      for (auto b : adj[at])
        if (b != prev) nxt = b;
      prev = at, at = nxt;
    }
  }
  if (length < 2) {
    stages_why_ = "no two ranks exchange sends and receives";
    return;
  }
  stage_ = std::move(stage);
  stages_ = length;
}

// Collectives joined to their groups: the traces name no communicator's ranks, only its size
// (Kineto's "Group size"), so a collective's group is read from the stages: the ranks of its
// rank's stage (its data-parallel copies), or every rank where its size is the job's. A size that
// is neither (tensor- or expert-parallel groups) cannot be placed: not replayed, saying so.
void PipelineReplay::join_collectives(const std::vector<std::vector<P2pOp>>& ops, const std::vector<std::uint32_t>& group) {
  const std::size_t n = ops.size();
  std::vector<std::size_t> all;  // the ranks with any op
  std::vector<std::vector<std::size_t>> stage_ranks(stages_);
  for (std::size_t r = 0; r < n; ++r) {
    if (ops[r].empty()) continue;
    all.push_back(r);
    if (stage_[r] >= 0) stage_ranks[static_cast<std::size_t>(stage_[r])].push_back(r);
  }
  bool sized = false, assumed = false, world = false;
  // (group: a stage, or -1 for every rank; step) -> per rank of the group, its ops in order.
  std::map<std::pair<int, std::int64_t>, std::vector<std::vector<std::size_t>>> lists;
  for (std::size_t r = 0; r < n; ++r)
    for (std::size_t k = first_op_[r]; k < first_op_[r + 1]; ++k) {
      if (ops_[k].coll == Coll::none) continue;
      if (stage_[r] < 0) {
        why_not_ = stages_ == 0 ? "the job has collectives too, and its sends and receives do not join the ranks in a chain of stages (" + stages_why_ +
                                      "): which ranks each collective joins is unknown"
                                : "a rank with collectives has no send or receive paired with another rank's: its stage, and so which ranks its "
                                  "collectives join, is unknown";
        return;
      }
      const auto& mine = stage_ranks[static_cast<std::size_t>(stage_[r])];
      const std::uint32_t g = group[k];
      int key = stage_[r];
      if (g == 0 && mine.size() < 2) {
        why_not_ = "the traces record no collective's group size, and a stage of one rank has collectives: whether they join the pipeline's "
                   "other stages or ranks outside the traces is unknown";
        return;
      }
      if (g != 0 && g != mine.size()) {
        if (g != all.size()) {
          why_not_ = fmt::format("a {} of {} ranks on a rank of stage {}, whose stage holds {} of the {} ranks: which ranks it joins is not in the "
                                 "traces (its group is neither the stage's data-parallel copies nor the whole job: a rank's trace is missing, or "
                                 "tensor- or expert-parallel groups, which are not told apart)",
                                 parsers::coll_name(ops_[k].coll), g, stage_[r], mine.size(), all.size());
          return;
        }
        key = -1, world = true;
      }
      (g != 0 ? sized : assumed) = true;
      const auto& members = key < 0 ? all : mine;
      auto& per = lists[{key, ops[r][k - first_op_[r]].step}];
      per.resize(members.size());
      per[static_cast<std::size_t>(std::find(members.begin(), members.end(), r) - members.begin())].push_back(k);
    }
  for (const auto& [key, per] : lists) {
    const std::size_t count = per[0].size();
    bool same = true;
    for (const auto& v : per) same = same && v.size() == count;
    if (!same) {  // a step the capture cut on some rank: each keeps its measured length
      for (const auto& v : per) unjoined_ += v.size();
      continue;
    }
    for (std::size_t i = 0; i < count; ++i) {
      std::vector<std::size_t> inst;
      for (const auto& v : per) {
        if (ops_[v[i]].coll != ops_[per[0][i]].coll) {
          why_not_ = fmt::format("collective {} of step {} is a {} on one rank of its group and a {} on another: the ranks' collectives do "
                                 "not pair by step and order",
                                 i + 1, key.second, parsers::coll_name(ops_[per[0][i]].coll), parsers::coll_name(ops_[v[i]].coll));
          return;
        }
        inst.push_back(v[i]);
      }
      for (auto k : inst) ops_[k].instance = static_cast<std::int64_t>(instances_.size());
      instances_.push_back(std::move(inst));
    }
  }
  groups_from_ = sized && !assumed ? "their recorded group size (Kineto's \"Group size\"): each stage's copies"
                 : sized          ? "their recorded group size where recorded, else assumed the stage's copies"
                                  : "assumed each stage's copies (the traces record no group size)";
  if (world) groups_from_ += ", or every rank where the size is the job's";
}

std::vector<SlowCopy> slow_copies(const PipelineReplay& p, double notable_ns) {
  std::vector<SlowCopy> out;
  const std::size_t n = p.stage().size();
  std::vector<std::vector<std::size_t>> ranks(p.stages());
  for (std::size_t r = 0; r < n; ++r)
    if (p.stage()[r] >= 0 && static_cast<std::size_t>(p.stage()[r]) < ranks.size()) ranks[static_cast<std::size_t>(p.stage()[r])].push_back(r);
  const Replay base = p.run(PipelineChange{});
  for (std::size_t s = 0; s < ranks.size(); ++s) {
    if (ranks[s].size() < 2) continue;
    for (auto r : ranks[s]) {
      // The median of the stage's other ranks (of an even count, halfway between the middle two):
      // a stage's median with the rank in it is pulled up by it (of two copies, halfway).
      std::vector<std::int64_t> own;
      for (auto o : ranks[s])
        if (o != r) own.push_back(p.own()[o]);
      std::sort(own.begin(), own.end());
      const double m = own.size() % 2 ? static_cast<double>(own[own.size() / 2])
                                      : (static_cast<double>(own[own.size() / 2 - 1]) + static_cast<double>(own[own.size() / 2])) / 2;
      const double mine = static_cast<double>(p.own()[r]);
      if (mine <= 0 || mine - m < notable_ns) continue;
      SlowCopy c;
      c.rank = r, c.stage = s, c.own = mine, c.median = m;
      c.change.scale.assign(n, 1.0);
      c.change.scale[r] = m / mine;
      c.saved = std::max<std::int64_t>(0, base.replayed - p.run(c.change).replayed);
      out.push_back(std::move(c));
    }
  }
  std::stable_sort(out.begin(), out.end(), [](const SlowCopy& a, const SlowCopy& b) { return a.saved > b.saved; });
  return out;
}

SlowSet slow_set(const PipelineReplay& p, const std::vector<SlowCopy>& slow, std::size_t most) {
  SlowSet out;
  if (slow.size() < 2) return out;
  std::vector<std::size_t> order(slow.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slow[a].own - slow[a].median > slow[b].own - slow[b].median; });
  if (order.size() > most) order.resize(most);
  std::sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return slow[a].rank < slow[b].rank; });
  const std::size_t n = p.stage().size();
  std::vector<bool> in_set(n, false);
  for (auto i : order) in_set[slow[i].rank] = true;
  out.change.scale.assign(n, 1.0);
  for (auto i : order) {
    const auto& c = slow[i];
    // The median of the stage's ranks outside the set: the stage median with the set's own ranks
    // in it is pulled up by them (two slow copies of four: halfway).
    std::vector<double> other;
    for (std::size_t r = 0; r < n; ++r)
      if (!in_set[r] && p.stage()[r] == static_cast<int>(c.stage)) other.push_back(static_cast<double>(p.own()[r]));
    std::sort(other.begin(), other.end());
    const std::size_t k = other.size();
    const double m = k == 0 ? c.median : k % 2 ? other[k / 2] : (other[k / 2 - 1] + other[k / 2]) / 2;
    out.ranks.push_back(c.rank);
    out.own.push_back(c.own);
    out.target.push_back(std::min(m, c.own));
    out.change.scale[c.rank] = std::min(m, c.own) / c.own;
  }
  out.saved = std::max<std::int64_t>(0, p.run(PipelineChange{}).replayed - p.run(out.change).replayed);
  return out;
}

std::vector<double> stage_own(const PipelineReplay& p) {
  std::vector<std::vector<double>> own(p.stages());
  for (std::size_t r = 0; r < p.stage().size(); ++r)
    if (p.stage()[r] >= 0 && static_cast<std::size_t>(p.stage()[r]) < own.size()) own[static_cast<std::size_t>(p.stage()[r])].push_back(static_cast<double>(p.own()[r]));
  std::vector<double> out(own.size(), 0);
  for (std::size_t s = 0; s < own.size(); ++s) {
    std::sort(own[s].begin(), own[s].end());
    if (!own[s].empty()) out[s] = own[s][(own[s].size() - 1) / 2];
  }
  return out;
}

std::vector<SlowNode> slow_nodes(const PipelineReplay& p, const std::vector<std::string>& host, double notable_ns, std::size_t most) {
  const std::size_t n = p.stage().size();
  std::map<std::string, std::vector<std::size_t>> by_host;
  std::vector<std::vector<std::size_t>> stage_ranks(p.stages());
  for (std::size_t r = 0; r < n && r < host.size(); ++r) {
    if (p.stage()[r] < 0 || static_cast<std::size_t>(p.stage()[r]) >= stage_ranks.size()) continue;
    stage_ranks[static_cast<std::size_t>(p.stage()[r])].push_back(r);
    if (!host[r].empty()) by_host[host[r]].push_back(r);
  }
  std::vector<SlowNode> out;
  if (by_host.size() < 2) return out;
  std::vector<double> excess;
  for (const auto& [h, ranks] : by_host) {
    SlowNode c;
    c.host = h;
    c.ranks = ranks;
    c.change.scale.assign(n, 1.0);
    double above = 0;
    for (auto r : ranks) {
      std::vector<double> other;
      for (auto o : stage_ranks[static_cast<std::size_t>(p.stage()[r])])
        if (host[o] != h) other.push_back(static_cast<double>(p.own()[o]));
      const double mine = static_cast<double>(p.own()[r]);
      if (other.empty() || mine <= 0) continue;
      std::sort(other.begin(), other.end());
      const std::size_t k = other.size();
      const double m = k % 2 ? other[k / 2] : (other[k / 2 - 1] + other[k / 2]) / 2;
      c.own += mine, c.elsewhere += std::min(mine, m);
      if (mine > m) above += mine - m, c.change.scale[r] = m / mine;
    }
    if (above >= notable_ns) out.push_back(std::move(c)), excess.push_back(above);
  }
  // The `most` nodes above by most are replayed.
  std::vector<std::size_t> order(out.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return excess[a] > excess[b]; });
  if (order.size() > most) order.resize(most);
  std::vector<SlowNode> kept;
  const Replay base = p.run(PipelineChange{});
  for (auto i : order) {
    out[i].saved = std::max<std::int64_t>(0, base.replayed - p.run(out[i].change).replayed);
    kept.push_back(std::move(out[i]));
  }
  std::stable_sort(kept.begin(), kept.end(), [](const SlowNode& a, const SlowNode& b) { return a.saved > b.saved; });
  return kept;
}

}  // namespace perfgap::analyzers
