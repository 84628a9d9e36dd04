#include "analyzers/profile_ranks.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cstdlib>
#include <numeric>

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

// The pairing of `r` with `ref` whose offset is the smallest that fits, or why none does.
RanksFit ranks_fit(const std::vector<RankCollective>& ref, const std::vector<RankCollective>& r, std::int64_t tol, std::string& why) {
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
                                 "the same steps)",
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
    std::vector<std::int64_t> durs;
    for (const auto& c : ranks[ref]) durs.push_back(c.end - c.start);
    al.tolerance = std::clamp<std::int64_t>(ranks_median(durs) / 20, kRanksMinTolerance, kRanksMaxTolerance);
    std::vector<long> shift(n, 0);
    std::size_t count = 0;
    for (std::size_t r = 0; r < n; ++r) {
      if (r == ref) {
        al.aligned[r] = true;
        ++count;
        continue;
      }
      if (ranks[r].empty()) {
        al.why_not[r] = "no NCCL collective kernels (AllReduce, AllGather, ReduceScatter, ...) to align on";
        continue;
      }
      std::string why;
      auto f = ranks_fit(ranks[ref], ranks[r], al.tolerance, why);
      if (!f.ok) {
        al.why_not[r] = why;
        continue;
      }
      al.aligned[r] = true;
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
  }
  return best;
}

}  // namespace perfgap::analyzers
