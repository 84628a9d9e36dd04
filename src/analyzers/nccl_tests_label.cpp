// Whether an nccl-tests output can be of the collective a user's label names (whatif --nccl-tests
// all_reduce=FILE): the label says the collective where the output does not, but the output's own
// figures may still say it is another (an all_gather's redop none and busbw/algbw below 1).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

// busbw = algbw x k(n-1)/n (nccl-tests' PERFORMANCE.md); 0: no factor the ratio can be held to.
double label_bus_factor(parsers::Coll c) {
  switch (c) {
    case parsers::Coll::AllReduce: return 2;
    case parsers::Coll::AllGather:
    case parsers::Coll::ReduceScatter:
    case parsers::Coll::AllToAll: return 1;
    default: return 0;
  }
}

bool label_reduces(parsers::Coll c) { return c == parsers::Coll::AllReduce || c == parsers::Coll::ReduceScatter || c == parsers::Coll::Reduce; }

// The busbw/algbw range every printed pair allows (each figure printed to 0.01 GB/s), and the
// ratio of the largest size; nullopt where no pair has an algbw clear of the rounding, or the
// pairs disagree among themselves.
struct LabelRatio {
  double lo = 0, hi = 0, largest = 0;
};
std::optional<LabelRatio> label_ratio(const parsers::NcclTestsRun& run) {
  constexpr double kHalf = 0.005 + 1e-9;
  LabelRatio r{0, 1e300, 0};
  bool any = false;
  std::uint64_t largest = 0;
  for (const auto& row : run.rows)
    for (const auto* fig : {&row.out_of_place, &row.in_place}) {
      if (!*fig || (*fig)->algbw <= 2 * kHalf || (*fig)->busbw < 0) continue;
      const double a = (*fig)->algbw, b = (*fig)->busbw;
      r.lo = std::max(r.lo, (b - kHalf) / (a + kHalf));
      r.hi = std::min(r.hi, (b + kHalf) / (a - kHalf));
      if (fig == &row.out_of_place && row.size >= largest) largest = row.size, r.largest = b / a;
      any = true;
    }
  if (!any || r.lo > r.hi) return std::nullopt;
  return r;
}

// Whether some rank count n >= 1 gives k(n-1)/n within [lo, hi].
bool label_ratio_fits(const LabelRatio& r, double k) {
  if (r.hi >= k) return r.lo < k;  // large n come as close to k as the print tells
  const auto first = std::max(1.0, std::ceil(k / (k - r.lo) - 1e-9));
  const auto last = std::floor(k / (k - r.hi) + 1e-9);
  return first <= last;
}

}  // namespace

std::vector<std::string> nccl_tests_label_contradictions(const parsers::NcclTestsRun& run, parsers::Coll said) {
  std::vector<std::string> out;
  if (said == parsers::Coll::none || said == parsers::Coll::other) return out;
  if (const auto named = parsers::collective_named(run.collective); named != parsers::Coll::none && named != said)
    out.push_back(fmt::format("its output names {} ({})", parsers::coll_name(named), run.collective));
  std::string redop;
  for (const auto& r : run.rows)
    if (!r.redop.empty()) {
      redop = r.redop;
      break;
    }
  if (label_reduces(said) && redop == "none") out.push_back("its rows' redop is none: a collective that does not reduce");
  if (const double k = label_bus_factor(said); k > 0)
    if (const auto ratio = label_ratio(run); ratio && !label_ratio_fits(*ratio, k))
      out.push_back(fmt::format("its busbw/algbw is {:.3g}, which {}'s bus factor {}(n-1)/n gives on no rank count{}", ratio->largest,
                                parsers::coll_name(said), k == 1 ? std::string() : fmt::format("{:g}", k),
                                said == parsers::Coll::AllReduce ? " (it is 1 or more from 2 ranks on)" : " (it is below 1)"));
  return out;
}

}  // namespace perfgap::analyzers
