#include "analyzers/profile_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <map>
#include <numeric>
#include <optional>
#include <set>

namespace perfgap::analyzers {

using parsers::Coll;

namespace {

// The ends of one collective on two ranks: a few µs apart within a node, tens across nodes,
// plus the drift of two clocks over a profile; a share of the collective's own length above that.
constexpr std::int64_t kRanksMinTolerance = 100'000;   // 100 µs
constexpr std::int64_t kRanksMaxTolerance = 1'000'000;  // 1 ms
// A rank is "last" only when it arrives this much after the next-latest (ties are nobody's).
constexpr std::int64_t kRanksTieMargin = 20'000;        // 20 µs
// Pairs checked per candidate offset before the whole sequence is.
constexpr std::size_t kRanksSample = 64;
// Reference candidates tried (the ranks with the most collectives first).
constexpr std::size_t kRanksReferenceTries = 4;

std::int64_t ranks_median(std::vector<std::int64_t> v) {
  if (v.empty()) return 0;
  auto mid = v.begin() + static_cast<long>(v.size() / 2);
  std::nth_element(v.begin(), mid, v.end());
  return *mid;
}

struct RanksFit {
  bool ok = false;
  long shift = 0;  // rank index i pairs with reference index i + shift
  std::int64_t offset = 0, spread = 0;
};

// Checks the pairing ref[i + shift] ~ r[i]: 90% of the pairs (a sample first, then all) are the
// same collective with ends within `tol` of one offset.
RanksFit ranks_try(const std::vector<RankCollective>& ref, const std::vector<RankCollective>& r, long shift, std::int64_t tol) {
  const long lo = std::max(0L, -shift), hi = std::min(static_cast<long>(r.size()), static_cast<long>(ref.size()) - shift);
  RanksFit fit;
  if (hi <= lo) return fit;
  const auto n = static_cast<std::size_t>(hi - lo);
  auto check = [&](std::size_t step, std::int64_t& offset, std::int64_t& spread) {
    std::vector<std::int64_t> diffs;
    std::size_t count = 0;
    for (long i = lo; i < hi; i += static_cast<long>(step)) {
      ++count;
      const auto& a = ref[static_cast<std::size_t>(i + shift)];
      const auto& b = r[static_cast<std::size_t>(i)];
      if (a.coll == b.coll) diffs.push_back(a.end - b.end);
    }
    if (diffs.size() * 10 < count * 9) return false;
    offset = ranks_median(diffs);
    std::vector<std::int64_t> dev;
    for (auto d : diffs)
      if (std::llabs(d - offset) <= tol) dev.push_back(std::llabs(d - offset));
    if (dev.size() * 10 < count * 9) return false;
    spread = ranks_median(dev);
    return true;
  };
  std::int64_t off = 0, spread = 0;
  if (!check(std::max<std::size_t>(1, n / kRanksSample), off, spread)) return fit;
  if (n > kRanksSample && !check(1, off, spread)) return fit;
  fit.ok = true;
  fit.shift = shift;
  fit.offset = off;
  fit.spread = spread;
  return fit;
}

// The pairing that step numbers give: the first step both sequences hold, its first collective
// on each; nullopt where either carries no step numbers or they share none.
std::optional<long> step_shift(const std::vector<RankCollective>& ref, const std::vector<RankCollective>& r) {
  std::map<std::int64_t, std::size_t> first_in_ref;
  for (std::size_t i = 0; i < ref.size(); ++i)
    if (ref[i].step >= 0) first_in_ref.emplace(ref[i].step, i);
  if (first_in_ref.empty()) return std::nullopt;
  // The first collective of each step of `r`, checked in order: a step whose count of
  // collectives differs (a capture cut inside it) is passed over for the next.
  for (std::size_t i = 0; i < r.size(); ++i) {
    if (r[i].step < 0 || (i > 0 && r[i - 1].step == r[i].step)) continue;
    auto it = first_in_ref.find(r[i].step);
    if (it == first_in_ref.end()) continue;
    std::size_t nr = 0, nf = 0;
    while (i + nr < r.size() && r[i + nr].step == r[i].step) ++nr;
    while (it->second + nf < ref.size() && ref[it->second + nf].step == r[i].step) ++nf;
    if (nr != nf) continue;
    return static_cast<long>(it->second) - static_cast<long>(i);
  }
  return std::nullopt;
}

// The pairing of `r` with `ref`: by step numbers where both have them and it fits, else the one
// whose offset is the smallest that fits; or why none does.
RanksFit ranks_fit(const std::vector<RankCollective>& ref, const std::vector<RankCollective>& r, std::int64_t tol, std::string& why, bool& by_step) {
  by_step = false;
  if (auto shift = step_shift(ref, r))
    if (auto f = ranks_try(ref, r, *shift, tol); f.ok) {
      by_step = true;
      return f;
    }
  const std::size_t need = std::max<std::size_t>(2, (std::min(ref.size(), r.size()) + 1) / 2);
  struct Cand {
    std::int64_t mag;
    long shift;
  };
  std::vector<Cand> cands;
  const long nr = static_cast<long>(r.size()), nf = static_cast<long>(ref.size());
  bool same_kind = false;
  for (long shift = -(nr - 1); shift <= nf - 1; ++shift) {
    const long lo = std::max(0L, -shift), hi = std::min(nr, nf - shift);
    if (hi - lo < static_cast<long>(need)) continue;
    const auto& a = ref[static_cast<std::size_t>(lo + shift)];
    const auto& b = r[static_cast<std::size_t>(lo)];
    if (a.coll != b.coll) continue;
    same_kind = true;
    cands.push_back({std::llabs(a.end - b.end), shift});
  }
  std::sort(cands.begin(), cands.end(), [](const Cand& x, const Cand& y) { return x.mag != y.mag ? x.mag < y.mag : x.shift < y.shift; });
  for (const auto& c : cands)
    if (auto f = ranks_try(ref, r, c.shift, tol); f.ok) return f;
  why = !same_kind ? fmt::format("its {} collectives match the reference rank's {} in no order (not the same job, or another communicator)", r.size(), ref.size())
                   : fmt::format("at no clock offset do the ends of its {} collectives meet the reference rank's {} within {:.2f} ms (not the same job or "
                                 "the same steps, or traces missing some of their collectives: sampled or filtered)",
                                 r.size(), ref.size(), static_cast<double>(tol) / 1e6);
  return {};
}

}  // namespace

bool aligns_ranks(Coll c) { return c != Coll::none && c != Coll::SendRecv; }

RankAlignment align_ranks(const std::vector<std::vector<RankCollective>>& ranks) {
  const std::size_t n = ranks.size();
  RankAlignment best;
  std::vector<std::size_t> order(n);
  std::iota(order.begin(), order.end(), 0);
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return ranks[a].size() > ranks[b].size(); });
  std::size_t best_count = 0;
  bool have = false;
  for (std::size_t t = 0; t < std::min(n, kRanksReferenceTries); ++t) {
    const std::size_t ref = order[t];
    if (ranks[ref].empty()) break;
    RankAlignment al;
    al.reference = ref;
    al.aligned.assign(n, false);
    al.offset.assign(n, 0);
    al.end_spread.assign(n, 0);
    al.why_not.assign(n, "");
    al.by_step.assign(n, false);
    std::vector<std::int64_t> durs;
    for (const auto& c : ranks[ref]) durs.push_back(c.end - c.start);
    al.tolerance = std::clamp<std::int64_t>(ranks_median(durs) / 20, kRanksMinTolerance, kRanksMaxTolerance);
    std::vector<long> shift(n, 0);
    std::size_t count = 0;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == ref) {
        al.aligned[r] = true;
        al.by_step[r] = ranks[r].front().step >= 0;
        ++count;
        continue;
      }
      if (ranks[r].empty()) {
        al.why_not[r] = "no NCCL collective kernels (AllReduce, AllGather, ReduceScatter, ...) to align on";
        continue;
      }
      std::string why;
      bool by_step = false;
      auto f = ranks_fit(ranks[ref], ranks[r], al.tolerance, why, by_step);
      if (!f.ok) {
        al.why_not[r] = why;
        continue;
      }
      al.aligned[r] = true;
      al.by_step[r] = by_step;
      al.offset[r] = f.offset;
      al.end_spread[r] = f.spread;
      shift[r] = f.shift;
      ++count;
    }
    if (!have || count > best_count) {
      // The matched collectives on the reference's clock.
      const auto& R = ranks[ref];
      for (std::size_t k = 0; k < R.size(); ++k) {
        MatchedCollective m;
        m.coll = R[k].coll;
        m.ref_index = k;
        m.end = R[k].end;
        m.index.assign(n, -1);
        m.arrival.assign(n, 0);
        std::size_t present = 0;
        for (std::size_t r = 0; r < n; ++r) {
          if (!al.aligned[r]) continue;
          const long i = static_cast<long>(k) - shift[r];
          if (i < 0 || i >= static_cast<long>(ranks[r].size())) continue;
          const auto& c = ranks[r][static_cast<std::size_t>(i)];
          if (c.coll != m.coll || std::llabs(c.end + al.offset[r] - m.end) > al.tolerance) continue;
          m.index[r] = static_cast<std::int32_t>(i);
          m.arrival[r] = c.start + al.offset[r];
          ++present;
        }
        if (present < 2) continue;
        bool first = true;
        std::int32_t last_r = -1;
        for (std::size_t r = 0; r < n; ++r) {
          if (m.index[r] < 0) continue;
          const std::int64_t a = m.arrival[r];
          if (first) {
            m.first = m.last = a;
            m.second = INT64_MIN;
            last_r = static_cast<std::int32_t>(r);
            first = false;
            continue;
          }
          m.first = std::min(m.first, a);
          if (a > m.last) {
            m.second = m.last;
            m.last = a;
            last_r = static_cast<std::int32_t>(r);
          } else {
            m.second = std::max(m.second, a);
          }
        }
        m.last_rank = m.last - m.second > kRanksTieMargin ? last_r : -1;
        al.matches.push_back(std::move(m));
      }
      best = std::move(al);
      best_count = count;
      have = true;
    }
    if (best_count == n) break;
  }
  if (!have) {
    best.aligned.assign(n, false);
    best.offset.assign(n, 0);
    best.end_spread.assign(n, 0);
    best.why_not.assign(n, "no NCCL collective kernels (AllReduce, AllGather, ReduceScatter, ...) to align on");
    best.by_step.assign(n, false);
  }
  return best;
}

namespace {

std::int64_t median_gap(const std::vector<std::int64_t>& gap) {
  std::vector<std::int64_t> v;
  for (auto g : gap)
    if (g >= 0) v.push_back(g);
  return ranks_median(std::move(v));
}

// Adds to each rank's excess its gap beyond the median of the other ranks' gaps at this step
// (the median run() paces a changed rank to: the element at half the others' count, sorted).
// The others' median is the sorted gaps' element at that index, or the next one where the rank's
// own gap lies at or before it.
void add_excess(const std::vector<std::int64_t>& gap, std::vector<std::int64_t>& sorted, std::vector<std::int64_t>& excess) {
  sorted.clear();
  for (auto g : gap)
    if (g >= 0) sorted.push_back(g);
  if (sorted.size() < 2) return;
  std::sort(sorted.begin(), sorted.end());
  const std::size_t mid = (sorted.size() - 1) / 2;
  for (std::size_t r = 0; r < gap.size(); ++r) {
    if (gap[r] < 0) continue;
    const auto own = static_cast<std::size_t>(std::lower_bound(sorted.begin(), sorted.end(), gap[r]) - sorted.begin());
    const std::int64_t others = own <= mid ? sorted[mid + 1] : sorted[mid];
    if (gap[r] > others) excess[r] += gap[r] - others;
  }
}

}  // namespace

double busbw_factor(parsers::Coll c, std::uint32_t ranks) {
  using parsers::Coll;
  if (ranks < 2) return 1;
  const double n = ranks;
  switch (c) {
    case Coll::AllReduce: return 2 * (n - 1) / n;
    case Coll::AllGather:
    case Coll::ReduceScatter:
    case Coll::AllToAll: return (n - 1) / n;
    default: return 1;
  }
}

// Per consecutive pair of matched collectives (k-1, k) both seen by at least two ranks (by the
// one rank of a job of one): each rank's own time from the end of k-1 (on the reference clock)
// to its arrival at k.
CollectiveReplay::CollectiveReplay(const RankAlignment& al, const std::vector<std::vector<RankCollective>>& ranks) {
  const std::size_t n = ranks.size();
  excess_.assign(n, 0);
  host_wait_.assign(n, 0);
  host_stall_.assign(n, 0);
  arriving_.assign(n, 0);
  const std::size_t need = std::min<std::size_t>(2, n);
  std::vector<std::int64_t> sorted;
  for (std::size_t k = 1; k < al.matches.size(); ++k) {
    const auto& a = al.matches[k - 1];
    const auto& b = al.matches[k];
    if (b.ref_index != a.ref_index + 1) continue;  // a collective no other rank saw lies between
    Step st;
    st.gap.assign(n, -1);
    st.host.assign(n, 0);
    st.stall.assign(n, 0);
    std::size_t both = 0;
    for (std::size_t r = 0; r < n; ++r) {
      if (a.index[r] < 0 || b.index[r] < 0) continue;
      const std::int64_t prev_end = ranks[r][static_cast<std::size_t>(a.index[r])].end + al.offset[r];
      st.gap[r] = std::max<std::int64_t>(0, b.arrival[r] - prev_end);
      // Host-bound idle counts since the rank's own previous collective: the same one here.
      if (b.index[r] == a.index[r] + 1) {
        const auto& c = ranks[r][static_cast<std::size_t>(b.index[r])];
        const std::int64_t all = std::clamp<std::int64_t>(c.host_wait, 0, st.gap[r]);
        st.stall[r] = std::clamp<std::int64_t>(c.host_stall, 0, all);
        st.host[r] = all - st.stall[r];
      }
      ++both;
    }
    if (both < need) continue;
    st.median = median_gap(st.gap);
    st.transfer = std::max<std::int64_t>(0, b.end - b.last);
    st.measured = b.end - a.end;
    st.match = k;
    const auto& c = ranks[al.reference][b.ref_index];
    st.coll = c.coll;
    st.bytes = c.bytes;
    // ns at 1 GB/s; a size beyond any message (a damaged trace's) is no size.
    const double at_1gbps = static_cast<double>(c.bytes) * busbw_factor(c.coll, c.group ? c.group : static_cast<std::uint32_t>(both));
    if (c.bytes > 0 && at_1gbps < 1e18) st.at_busbw = static_cast<std::int64_t>(at_1gbps);
    add_excess(st.gap, sorted, excess_);
    for (std::size_t r = 0; r < n; ++r) {
      host_wait_[r] += st.host[r];
      host_stall_[r] += st.stall[r];
      arriving_[r] += std::max<std::int64_t>(0, st.gap[r]);
    }
    steps_.push_back(std::move(st));
  }
}

Replay CollectiveReplay::run(const ReplayChange& change) const {
  Replay out;
  // Overlapped: per rank, where it issued the previous collective, from that collective's end
  // in the replay (negative: before it ended).
  constexpr std::int64_t kNone = INT64_MIN;
  std::vector<std::int64_t> issued(change.overlap ? excess_.size() : 0, kNone);
  const auto& on_time = change.on_time;
  auto in_set = [&](std::size_t r) { return r < on_time.size() && on_time[r]; };
  const bool any = std::find(on_time.begin(), on_time.end(), true) != on_time.end();
  std::vector<std::int64_t> others;
  for (const auto& st : steps_) {
    // The ranks changed arrive as the median of the others does (of every rank where none is left:
    // half a job late, its other half is the pace to compare with, not a late median).
    std::int64_t pace = st.median;
    if (any) {
      others.clear();
      for (std::size_t r = 0; r < st.gap.size(); ++r)
        if (st.gap[r] >= 0 && !in_set(r)) others.push_back(st.gap[r]);
      if (!others.empty()) {
        auto mid = others.begin() + static_cast<long>(others.size() / 2);
        std::nth_element(others.begin(), mid, others.end());
        pace = *mid;
      }
    }
    std::int64_t last = 0;
    for (std::size_t r = 0; r < st.gap.size(); ++r) {
      if (st.gap[r] < 0) {
        if (change.overlap) issued[r] = kNone;  // not at this collective: its next waits as measured
        continue;
      }
      std::int64_t g = st.gap[r];
      if (change.no_host_wait) g -= st.host[r];
      if (change.no_host_stall) g -= st.stall[r];
      if (in_set(r)) g = std::min(g, pace);
      if (change.overlap) {
        // Overlapped: the rank issues this collective its own time after it issued the previous
        // one (never later than waiting for it, as measured); `last` counts from the chain's end.
        if (st.within && issued[r] != kNone) g = std::min(g, issued[r] + st.own[r]);
        issued[r] = g;
      }
      last = std::max(last, g);
    }
    std::int64_t transfer = st.transfer;
    if (st.at_busbw >= 0) {
      ++out.sized;
      out.sized_transfer += static_cast<double>(st.transfer);
      out.sized_at_1gbps += static_cast<double>(st.at_busbw);
      double gbps = change.busbw_gbps;
      if (gbps <= 0 && change.busbw_at) gbps = change.busbw_at(st.coll, st.bytes);
      if (gbps > 0) {
        // Compared as doubles: a tiny bandwidth's time is beyond any int64 and never the shorter one.
        if (const double t = static_cast<double>(st.at_busbw) / gbps; t < static_cast<double>(transfer)) transfer = static_cast<std::int64_t>(t);
        ++out.at_known_busbw;
      }
    }
    out.measured += st.measured;
    out.replayed += last + transfer;
    ++out.intervals;
    if (const auto i = static_cast<std::size_t>(&st - steps_.data()); i >= whole_lo_ && i < whole_hi_) {
      out.whole_measured += st.measured;
      out.whole_replayed += last + transfer;
      out.whole_iterations = whole_iterations_;
    }
    // The issue points, from the new chain end: a rank ahead of the chain is still ahead.
    if (change.overlap)
      for (auto& t : issued)
        if (t != kNone) t -= last + transfer;
  }
  return out;
}

void CollectiveReplay::overlap(const RankAlignment& al, const std::vector<std::vector<RankCollective>>& ranks, const OverlapInput& in) {
  const std::size_t n = ranks.size();
  held_.assign(n, 0);
  held_by_coll_.fill(0);
  chained_ = held_iterations_ = concurrent_ = 0;
  for (const auto& st : steps_) {
    const auto& a = al.matches[st.match - 1];
    const auto& b = al.matches[st.match];
    for (std::size_t r = 0; r < n; ++r)
      if (st.gap[r] >= 0 && ranks[r][static_cast<std::size_t>(b.index[r])].start < ranks[r][static_cast<std::size_t>(a.index[r])].end) {
        ++concurrent_;
        break;
      }
  }
  auto iter = [&](std::size_t k) { return k < in.iter_of.size() ? in.iter_of[k] : -1; };
  // A step that starts an iteration: its previous collective is the last of the iteration before.
  // The steps from the first such one to the last one cover whole iterations.
  std::vector<std::size_t> starts;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    const std::size_t k = steps_[i].match;
    if (iter(k) >= 0 && iter(k - 1) >= 0 && iter(k) != iter(k - 1)) starts.push_back(i);
  }
  whole_lo_ = whole_hi_ = whole_iterations_ = 0;
  whole_host_wait_.clear();
  whole_host_stall_.clear();
  if (starts.size() >= 2) {
    whole_lo_ = starts.front(), whole_hi_ = starts.back();
    // The iterations the span crosses: by the windows' numbers, so that an iteration holding no
    // collective of the replay still counts.
    const std::int32_t crossed = iter(steps_[whole_hi_].match) - iter(steps_[whole_lo_].match);
    whole_iterations_ = crossed > 0 ? static_cast<std::size_t>(crossed) : starts.size() - 1;
    held_iterations_ = whole_iterations_;
    whole_host_wait_.assign(n, 0);
    whole_host_stall_.assign(n, 0);
    for (std::size_t i = whole_lo_; i < whole_hi_; ++i)
      for (std::size_t r = 0; r < n; ++r) whole_host_wait_[r] += steps_[i].host[r], whole_host_stall_[r] += steps_[i].stall[r];
  }
  std::set<std::int32_t> iterations;
  for (std::size_t i = 0; i < steps_.size(); ++i) {
    auto& st = steps_[i];
    st.own.clear();
    const std::size_t k = st.match;
    // Chained to the step before only where that step ends at this one's previous collective and
    // both collectives lie in one iteration: the first collective of an iteration waits for the
    // previous iteration's whole chain (its optimizer needs every collective's result).
    st.within = i > 0 && steps_[i - 1].match + 1 == k && iter(k) >= 0 && iter(k) == iter(k - 1);
    if (!st.within) continue;
    st.own.assign(n, 0);  // only where run() reads it: a job of thousands of ranks holds a vector per step
    ++chained_;
    const bool counted = whole_hi_ > whole_lo_ ? i >= whole_lo_ && i < whole_hi_ : true;
    if (counted) iterations.insert(iter(k));
    const auto& a = al.matches[k - 1];
    const auto& b = al.matches[k];
    for (std::size_t r = 0; r < n; ++r) {
      if (st.gap[r] < 0) continue;
      const auto ia = static_cast<std::size_t>(a.index[r]), ib = static_cast<std::size_t>(b.index[r]);
      const std::int64_t between = std::max<std::int64_t>(0, b.arrival[r] - a.arrival[r]);
      const std::int64_t held = std::clamp<std::int64_t>(in.held(r, ranks[r][ia].start, ranks[r][ib].start), 0, between);
      st.own[r] = between - held;
      if (!counted) continue;
      held_[r] += held;
      held_by_coll_[static_cast<std::size_t>(ranks[r][ia].coll)] += held;
    }
  }
  if (whole_hi_ == whole_lo_) held_iterations_ = iterations.size();
}

namespace {

// Captures of one job start within seconds of each other (the same steps of one run); a trace
// captured this far from the others' middle is of another run.
constexpr std::int64_t kRunApartNs = 3600LL * 1'000'000'000;

std::string duration_words(std::int64_t ns) {
  const double h = static_cast<double>(ns) / 3.6e12;
  if (h >= 48) return fmt::format("{:.0f} days", h / 24);
  return fmt::format("{:.1f} hours", h);
}

// Who the input is, in a sentence: its rank where it records one, else "this trace".
std::string rank_words(const RankInput& in) { return in.rank >= 0 ? fmt::format("rank {}", in.rank) : std::string("this trace"); }

}  // namespace

std::string rank_ranges(const std::vector<std::int64_t>& v) {
  std::string out;
  for (std::size_t i = 0; i < v.size();) {
    std::size_t j = i;
    while (j + 1 < v.size() && v[j + 1] == v[j] + 1) ++j;
    out += (out.empty() ? "" : ", ") + (j == i ? std::to_string(v[i]) : fmt::format("{}-{}", v[i], v[j]));
    i = j + 1;
  }
  return out;
}

RankSet check_rank_set(const std::vector<RankInput>& in) {
  const std::size_t n = in.size();
  RankSet out;
  out.left_out.assign(n, "");
  auto kept = [&](std::size_t i) { return out.left_out[i].empty(); };
  // A copy of a trace read before.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i && kept(i); ++j)
      if (kept(j) && in[i].fingerprint == in[j].fingerprint) out.left_out[i] = fmt::format("the same trace as {}: read once", in[j].name);
  // The job's size: the one most traces record (of a tie, the first file's).
  std::map<std::int64_t, std::size_t> worlds;
  std::int64_t first_world = -1;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i) && in[i].world > 0) {
      ++worlds[in[i].world];
      if (first_world < 0) first_world = in[i].world;
    }
  if (!worlds.empty()) {
    out.world = first_world;
    for (const auto& [w, c] : worlds)
      if (c > worlds[out.world]) out.world = w;
    for (std::size_t i = 0; i < n; ++i)
      if (kept(i) && in[i].world > 0 && in[i].world != out.world)
        out.left_out[i] = fmt::format("{} of a {}-rank job, not of this {}-rank job (world_size): another run", rank_words(in[i]), in[i].world, out.world);
  }
  // A rank number read before: another run or a restart of that rank.
  for (std::size_t i = 0; i < n; ++i)
    for (std::size_t j = 0; j < i && kept(i); ++j)
      if (kept(j) && in[i].rank >= 0 && in[i].rank == in[j].rank)
        out.left_out[i] = fmt::format("rank {} again (also {}): another run or a restart of that rank; the first is kept", in[i].rank, in[j].name);
  // Captured far from the others: the middle of the kept traces' wall-clock starts.
  std::vector<std::int64_t> walls;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i) && in[i].wall_start_ns >= 0) walls.push_back(in[i].wall_start_ns);
  if (walls.size() >= 2) {
    std::nth_element(walls.begin(), walls.begin() + static_cast<long>((walls.size() - 1) / 2), walls.end());
    const std::int64_t mid = walls[(walls.size() - 1) / 2];
    for (std::size_t i = 0; i < n; ++i)
      if (kept(i) && in[i].wall_start_ns >= 0 && std::llabs(in[i].wall_start_ns - mid) > kRunApartNs)
        out.left_out[i] = fmt::format("{} was captured {} {} the other traces: another run", rank_words(in[i]),
                                      duration_words(std::llabs(in[i].wall_start_ns - mid)), in[i].wall_start_ns < mid ? "before" : "after");
  }
  // Steps none of the others ran, where at least two others share theirs.
  auto overlap = [&](std::size_t a, std::size_t b) { return in[a].step_lo <= in[b].step_hi && in[b].step_lo <= in[a].step_hi; };
  std::vector<std::size_t> stepped;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i) && in[i].step_lo >= 0) stepped.push_back(i);
  std::vector<std::size_t> shares(n, 0);
  for (auto a : stepped)
    for (auto b : stepped)
      if (a != b && overlap(a, b)) ++shares[a];
  const bool others_share = std::any_of(stepped.begin(), stepped.end(), [&](std::size_t i) { return shares[i] > 0; });
  for (auto i : stepped)
    if (others_share && shares[i] == 0)
      out.left_out[i] = fmt::format("{} holds steps {}-{}, none of which the other traces ran: another run", rank_words(in[i]), in[i].step_lo, in[i].step_hi);
  // Collectives that meet none of the others', where most ranks' meet: another job, or a
  // communicator no other trace shares (pipeline stages, tensor-parallel groups of equal size
  // never make such a minority, so they are kept).
  std::vector<std::vector<RankCollective>> seqs;
  std::vector<std::size_t> owner;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i))
      for (const auto* q : in[i].seqs)
        if (q && !q->empty()) seqs.push_back(*q), owner.push_back(i);
  if (seqs.size() >= 3) {
    const auto al = align_ranks(seqs);
    std::vector<int> state(n, 0);  // 1: a GPU of it aligned; 2: it has collectives, none aligned
    for (std::size_t k = 0; k < seqs.size(); ++k) state[owner[k]] = al.aligned[k] ? 1 : std::max(state[owner[k]], 2);
    std::size_t aligned = 0, apart = 0;
    for (std::size_t i = 0; i < n; ++i) aligned += state[i] == 1, apart += state[i] == 2;
    if (aligned >= 2 && apart > 0 && apart * 3 <= aligned)
      for (std::size_t i = 0; i < n; ++i)
        if (state[i] == 2)
          out.left_out[i] = fmt::format("{}'s collectives meet none of the other {} ranks' at any clock offset: another job, or a communicator no other "
                                        "trace shares (analyze it with its own group)",
                                        rank_words(in[i]), aligned);
  }
  std::set<std::int64_t> ranks;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i) && in[i].rank >= 0) ranks.insert(in[i].rank);
  std::vector<std::size_t> kept_inputs;
  for (std::size_t i = 0; i < n; ++i)
    if (kept(i)) kept_inputs.push_back(i);
  if (kept_inputs.size() >= 2)
    for (auto i : kept_inputs)
      if (in[i].rank < 0 && in[i].wall_start_ns < 0) out.untied.push_back(i);
  out.ranks.assign(ranks.begin(), ranks.end());
  if (out.world > 0 && !ranks.empty())
    for (std::int64_t r = 0; r < out.world; ++r)
      if (!ranks.count(r)) out.missing.push_back(r);
  return out;
}

}  // namespace perfgap::analyzers
