#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <map>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {

double max_error_tolerance(const std::string& type) {
  // 1e-3, or 8 units of the type's precision (machine epsilon) where that is coarser;
  // integer types are exact.
  static const std::pair<const char*, double> kEps[] = {
      {"half", 0x1p-10},    {"float16", 0x1p-10}, {"fp16", 0x1p-10},   {"bfloat16", 0x1p-7}, {"bf16", 0x1p-7},
      {"f8e4m3", 0x1p-3},   {"fp8_e4m3", 0x1p-3}, {"f8e5m2", 0x1p-2},  {"fp8_e5m2", 0x1p-2},
      {"float", 0x1p-23},   {"float32", 0x1p-23}, {"double", 0x1p-52}, {"float64", 0x1p-52},
  };
  static const char* kInts[] = {"int8", "uint8", "char", "int32", "uint32", "int", "int64", "uint64"};
  for (const char* t : kInts)
    if (type == t) return 0;
  for (const auto& [t, eps] : kEps)
    if (type == t) return std::max(1e-3, 8 * eps);
  return 1e-3;
}

namespace {

using parsers::format_size;
using NcclTestsBySize = std::map<std::uint64_t, const parsers::NcclTestsRow*>;

std::string nccl_tests_where(const std::string& source, const parsers::NcclTestsRow& r) { return r.line > 0 ? fmt::format("{}:{}", source, r.line) : source; }

// The decisive numbers for text output (the same figures are metrics in JSON).
std::string nccl_tests_gbps(double v) { return fmt::format("{:.2f}", v); }

// #wrong: out-of-place and in-place counts. The old layout's `error` column is a max
// absolute error: above the type's tolerance it is wrong, unless the run's "Out of bounds
// values" line (a count over all sizes) says none was.
struct NcclTestsWrong {
  double wrong_total = 0;
  std::vector<const parsers::NcclTestsRow*> wrong_rows;
  std::vector<const parsers::NcclTestsRow*> rounding_rows;   // old error > 0 within the tolerance
  std::vector<const parsers::NcclTestsRow*> overruled_rows;  // above it, but the out-of-bounds count says none wrong
};

NcclTestsWrong nccl_tests_wrong(const parsers::NcclTestsRun& run) {
  NcclTestsWrong x;
  auto& wrong_total = x.wrong_total;
  for (const auto& r : run.rows) {
    double w = 0;
    bool over = false, rounding = false, over_but_counted_ok = false;
    for (const auto* fig : {&r.out_of_place, &r.in_place}) {
      if (!*fig) continue;
      if ((*fig)->wrong) w += *(*fig)->wrong;
      if (auto e = (*fig)->max_error; e && *e > 0) {
        if (*e <= max_error_tolerance(r.type)) rounding = true;
        else if (run.out_of_bounds) over_but_counted_ok = true;
        else over = true;
      }
    }
    if (w > 0 || over) {
      wrong_total += w > 0 ? w : 1;
      x.wrong_rows.push_back(&r);
    } else if (over_but_counted_ok) {
      x.overruled_rows.push_back(&r);
    } else if (rounding) {
      x.rounding_rows.push_back(&r);
    }
  }
  if (run.out_of_bounds && *run.out_of_bounds > 0) wrong_total = std::max(wrong_total, *run.out_of_bounds);
  return x;
}

// The busbw of every size, with its in-place/out-of-place spread; returns the peak.
double nccl_tests_busbw_metrics(Finding& f, const parsers::NcclTestsRun& run, const NcclTestsBySize& rows, double wrong_total) {
  double max_busbw = 0;
  for (const auto& [s, r] : rows) {
    max_busbw = std::max(max_busbw, r->out_of_place->busbw);
    f.metric(fmt::format("busbw_gbps.{}", s), r->out_of_place->busbw);
    // In-place and out-of-place are two measurements of one bandwidth: their difference is the
    // run's own spread, compare's noise floor for this size.
    if (r->in_place && r->in_place->busbw > 0)
      f.metric(fmt::format("busbw_gbps.{}.spread", s), std::fabs(r->out_of_place->busbw - r->in_place->busbw));
  }
  f.metric("max_busbw_gbps", max_busbw);
  f.metric("sizes", static_cast<double>(rows.size()));
  f.metric("wrong", wrong_total);
  if (run.avg_busbw) f.metric("avg_busbw_gbps", *run.avg_busbw);
  return max_busbw;
}

// What the verdict weighs: the run's scale in words, its peak, and how its sizes compare.
struct NcclTestsJudged {
  std::string what;
  double max_busbw = 0;
  std::vector<std::uint64_t> sizes;  // the sizes that matter
  std::vector<std::string> below;    // sizes below the reference's threshold
  std::size_t compared = 0;
  double worst_ratio = 1e9;
  // Of the sizes below the threshold: the worst and the mildest, to say the range of the loss.
  std::string worst_size, mildest_size;
  double mildest_ratio = 0;
  double expected = 0;               // the NICs' line rate, GB/s; 0: no such basis
  std::optional<long> nodes;         // the nodes that ran it, where known exactly
  std::optional<long> ranks;         // the ranks, where known
  std::string basis_refused;         // why the given NIC basis is not this run's (its report's node is not among the run's hosts)
  // With a reference of another kind (collective, ranks, nodes): each difference; the shapes in words.
  std::vector<std::string> unlike;
  std::string shape, reference_shape;
};

// Each size that matters against the same size of the reference run: table, evidence, ratios.
void nccl_tests_against_reference(Finding& f, NcclTestsJudged& j, const NcclTestsBySize& rows, const NcclTestsBySize& ref, const std::string& source,
                                  const NcclTestsOptions& o) {
  auto& below = j.below;
  auto& compared = j.compared;
  auto& worst_ratio = j.worst_ratio;
  const double max_busbw = j.max_busbw;
  auto gbps = nccl_tests_gbps;
  for (auto s : j.sizes) {
    const auto* r = rows.at(s);
    auto it = ref.find(s);
    if (it == ref.end() || it->second->out_of_place->busbw <= 0)
      f.table.push_back({format_size(s), gbps(r->out_of_place->busbw), it == ref.end() ? "-" : gbps(it->second->out_of_place->busbw), "-"});
    else
      f.table.push_back({format_size(s), gbps(r->out_of_place->busbw), gbps(it->second->out_of_place->busbw),
                         fmt::format("{:.1f}%", 100 * r->out_of_place->busbw / it->second->out_of_place->busbw)});
    if (it == ref.end()) {
      f.add(nccl_tests_where(source, *r), fmt::format("{:>9}  busbw {:8.2f} GB/s  reference: size not in {}", format_size(s), r->out_of_place->busbw, o.reference_source));
      continue;
    }
    double rb = it->second->out_of_place->busbw;
    if (rb <= 0) continue;
    ++compared;
    double ratio = r->out_of_place->busbw / rb;
    if (ratio < worst_ratio) j.worst_size = format_size(s);
    worst_ratio = std::min(worst_ratio, ratio);
    f.metric(fmt::format("ratio.{}", s), ratio);
    std::string line = fmt::format("{:>9}  busbw {:8.2f} GB/s  reference {:8.2f}  {:6.1f}%", format_size(s), r->out_of_place->busbw, rb, 100 * ratio);
    if (ratio < o.threshold) {
      below.push_back(format_size(s));
      if (ratio > j.mildest_ratio) {
        j.mildest_ratio = ratio;
        j.mildest_size = format_size(s);
      }
    }
    f.add(nccl_tests_where(source, *r), line, fmt::format(">= {:.0f}% of reference", 100 * o.threshold));
  }
  if (compared) f.metric("min_ratio", worst_ratio);
  double ref_peak = 0;
  for (const auto& [sz, r] : ref) ref_peak = std::max(ref_peak, r->out_of_place->busbw);
  if (ref_peak > 0 && max_busbw > 0) {
    f.metric("reference_peak_busbw_gbps", ref_peak);
    f.metric("peak_ratio", max_busbw / ref_peak);
  }
}

// What a run is, so that a reference of another kind is said to be one, and every title says
// the scale it ran at: the collective (its binary's name, or reducing or not by the redop
// column), the ranks (printed; else the launcher command line the output quotes; else read from
// busbw/algbw where the collective's bus factor says it) and the nodes (printed or counted from
// the NCCL INFO lines; else the launcher command line).
struct NcclTestsShape {
  std::string collective;  // "all_reduce" (the name's key); empty: not named
  std::string redop;       // the rows' redop ("sum", "none"); empty: not printed
  std::optional<long> ranks, nodes;
  // How the ranks were known: empty where the output says it (Rank lines, NCCL INFO nRanks),
  // else "busbw/algbw" or "the mpirun command line"; `ranks_detail` says what with.
  std::string ranks_by, ranks_detail;
  parsers::NcclNodes nodes_shown;  // count 0: not shown; basis: how, where not said outright
  std::string nodes_words;         // "2 nodes", "at least 2 nodes (by ...)", "nodes not shown"
  std::string launch_refused;      // why the quoted launcher command is not this run's (it disagrees)
  // Where busbw/algbw leaves several rank counts: the range they lie in (1404 to 1472 for a
  // 1440-rank all_reduce printed to 0.01 GB/s): not a count, but enough to tell it is not 72.
  std::optional<std::pair<long, long>> ranks_range;
  // An output that names no collective, told by its figures: "all_reduce" where busbw/algbw is
  // 2(n-1)/n for 3 or more ranks (only all_reduce's bus factor exceeds 1), "reduce_scatter" where
  // it is (n-1)/n with a reducing redop; both with root -1. Empty: named, or not told.
  std::string collective_by_ratio;
  // The Rank lines name fewer ranks than busbw/algbw shows (a list cut without '...'): the factor
  // is taken, the lines' hosts are not the nodes; why, in words (empty: not so).
  std::string rank_lines_short;
  std::optional<long> nodes_given;  // --nodes
};

// busbw = algbw x k(n-1)/n (nccl-tests' PERFORMANCE.md); k 0: the factor does not depend on n
// the way the formula can invert (or is not known here).
struct NcclBusFactor {
  const char* key;
  double k;
  bool reduces;
};
constexpr NcclBusFactor kNcclBusFactors[] = {
    {"all_reduce", 2, true}, {"all_gather", 1, false}, {"reduce_scatter", 1, true}, {"alltoall", 1, false}, {"broadcast", 0, false},
    {"reduce", 0, true},     {"sendrecv", 0, false},   {"gather", 0, false},        {"scatter", 0, false},  {"hypercube", 0, false},
};

// "all_reduce_perf", "/opt/nccl-tests/build/all_reduce_perf_mpi", "allreduce": "all_reduce".
std::string nccl_tests_collective_key(std::string name) {
  if (auto p = name.find("_perf"); p != std::string::npos) name.resize(p);
  std::string bare;
  for (char c : name)
    if (c != '_' && c != '-') bare += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  for (const auto& f : kNcclBusFactors) {
    std::string k = f.key;
    k.erase(std::remove(k.begin(), k.end(), '_'), k.end());
    if (bare == k) return f.key;
  }
  return name;
}

const NcclBusFactor* nccl_bus_factor(const std::string& key) {
  for (const auto& f : kNcclBusFactors)
    if (key == f.key) return &f;
  return nullptr;
}

// The rank counts n for which every printed busbw/algbw pair is k(n-1)/n, each figure printed
// to 0.01 GB/s: [first, last]; nullopt when none fits or the figures bound n from below only.
std::optional<std::pair<long, long>> nccl_ranks_from_busbw(const parsers::NcclTestsRun& run, double k) {
  constexpr double kHalf = 0.005 + 1e-9;
  double lo = 0, hi = 1e300;
  bool any = false;
  for (const auto& r : run.rows)
    for (const auto* fig : {&r.out_of_place, &r.in_place}) {
      if (!*fig || (*fig)->algbw <= 2 * kHalf || (*fig)->busbw < 0) continue;
      const double a = (*fig)->algbw, b = (*fig)->busbw;
      lo = std::max(lo, (b - kHalf) / (a + kHalf));
      hi = std::min(hi, (b + kHalf) / (a - kHalf));
      any = true;
    }
  if (!any || lo > hi || hi >= k) return std::nullopt;
  // k(n-1)/n in [lo, hi]  <=>  n in [k/(k-lo), k/(k-hi)]
  const auto first = std::max(1L, static_cast<long>(std::ceil(k / (k - lo) - 1e-9)));
  const auto last = static_cast<long>(std::floor(k / (k - hi) + 1e-9));
  if (first > last) return std::nullopt;
  return std::make_pair(first, last);
}

// The bus factor's collective in words, for the evidence: the named one, else what root -1 and
// the redop leave.
std::string nccl_tests_factor_words(const NcclTestsShape& s, double k) {
  if (!s.collective.empty()) return s.collective;
  if (k == 2) return "all_reduce, the only collective whose factor exceeds 1";
  return s.redop == "none" ? "all_gather or alltoall" : "reduce_scatter";
}

// The quoted launcher command as the run's scale, where nothing the output prints says it and it
// agrees with what does (the Rank lines' count, the busbw/algbw range).
void nccl_tests_shape_launch(NcclTestsShape& s, const parsers::NcclTestsRun& run, const std::optional<std::pair<long, long>>& by_ratio) {
  const auto launched = run.launch ? run.launch->ranks() : std::nullopt;  // processes x the benchmark's -t threads x -g GPUs
  if (!launched) return;
  const auto& c = *run.launch;
  const std::string cmd = fmt::format("the {} command line", c.launcher);
  if (s.ranks && *s.ranks != *launched) {
    s.launch_refused = fmt::format("{} (line {}: {}) starts {} ranks, the output shows {}: not this run's, not used", cmd, c.line, c.said,
                                   *launched, *s.ranks);
    return;
  }
  if (!s.ranks && by_ratio && (*launched < by_ratio->first || *launched > by_ratio->second)) {
    s.launch_refused =
        fmt::format("{} (line {}: {}) starts {} ranks, busbw/algbw fits {}: not this run's, not used", cmd, c.line, c.said, *launched,
                    by_ratio->first == by_ratio->second ? fmt::format("{} alone", by_ratio->first)
                                                        : fmt::format("{} to {}", by_ratio->first, by_ratio->second));
    return;
  }
  if (!s.ranks) {
    s.ranks = launched;
    s.ranks_by = cmd;
    s.ranks_detail = fmt::format("{} by {} (line {}: {})", *launched, cmd, c.line, c.said);
  }
  // Its nodes where the output's own lines do not count them exactly.
  if (const auto n = c.node_count(); n && (s.nodes_shown.count <= 0 || s.nodes_shown.at_least) && *n >= s.nodes_shown.count)
    s.nodes_shown = {*n, false, cmd, c.said};
}

NcclTestsShape nccl_tests_shape(const parsers::NcclTestsRun& run, std::optional<long> nodes_given = std::nullopt) {
  NcclTestsShape s;
  s.ranks = run.ranks();
  s.nodes_shown = run.nodes_shown();
  s.nodes_given = nodes_given;
  if (!run.collective.empty()) s.collective = nccl_tests_collective_key(run.collective);
  std::optional<long> root;
  for (const auto& r : run.rows)
    if (!r.redop.empty()) {
      s.redop = r.redop;
      root = r.root;
      break;
    }
  const bool reducing_no_root = s.collective.empty() && root && *root == -1 && !s.redop.empty() && s.redop != "none";
  // The bus factors the collective may have: its own where named; else, with root -1 (no root),
  // all_reduce (ratio 1 or more) or reduce_scatter (below 1) for a reducing redop, and
  // all_gather or alltoall (the same factor) for redop none.
  std::vector<double> ks;
  if (const auto* f = nccl_bus_factor(s.collective)) {
    if (f->k > 0) ks.push_back(f->k);
  } else if (s.collective.empty() && root && *root == -1) {
    if (s.redop == "none") ks = {1};
    else ks = {2, 1};
  }
  std::optional<std::pair<long, long>> n;
  double fitted = 0;
  for (double k : ks)
    if (auto m = nccl_ranks_from_busbw(run, k)) {
      if (n) {  // two collectives fit: no reading
        n.reset();
        break;
      }
      n = m;
      fitted = k;
    }
  if (s.ranks && !run.info_ranks && n && *s.ranks < n->first) {
    s.rank_lines_short = fmt::format("the '# Rank' lines name {} rank{}, busbw/algbw fits {:g}(n-1)/n, the bus factor of {}, for n = {}: the "
                                     "list is cut, its ranks and hosts are some of the job's",
                                     *s.ranks, *s.ranks == 1 ? "" : "s", fitted, nccl_tests_factor_words(s, fitted),
                                     n->first == n->second ? std::to_string(n->first) : fmt::format("{} to {}", n->first, n->second));
    s.ranks.reset();
    if (!run.info_nodes) s.nodes_shown = parsers::nccl_nodes(run.info_nodes_signs);
  }
  nccl_tests_shape_launch(s, run, n);
  if (s.ranks) {
    // Counted ranks: the collective is the factor whose rank range holds them.
    if (reducing_no_root && *s.ranks >= 3)
      for (const auto& [k, key] : {std::pair<double, const char*>{2, "all_reduce"}, {1, "reduce_scatter"}})
        if (auto m = nccl_ranks_from_busbw(run, k); m && m->first <= *s.ranks && *s.ranks <= m->second) s.collective_by_ratio = key;
  } else {
    // Two ranks give all_reduce the factor 1 that sendrecv (redop sum, root -1 too) has on any
    // count: an unnamed run's ratio of 1 is no count; told from 3 on.
    if (n && reducing_no_root && ks.size() == 2 && (fitted == 1 || n->first >= 3))
      s.collective_by_ratio = fitted == 2 ? "all_reduce" : "reduce_scatter";
    const bool sendrecv_too = n && s.collective.empty() && fitted == 2 && n->first <= 2;
    if (n && n->first == n->second && !sendrecv_too) {
      s.ranks = n->first;
      s.ranks_by = "busbw/algbw";
      s.ranks_detail = fmt::format("{} by busbw/algbw: every printed pair fits {:g}(n-1)/n, the bus factor of {}, for n = {} alone",
                                   *s.ranks, fitted, nccl_tests_factor_words(s, fitted), *s.ranks);
    } else if (n && !sendrecv_too) {
      s.ranks_range = n;
    }
  }
  // --nodes where the output shows none, or a lower bound it does not contradict.
  if (s.nodes_given && (s.nodes_shown.count <= 0 || (s.nodes_shown.at_least && *s.nodes_given >= s.nodes_shown.count)))
    s.nodes_shown = {*s.nodes_given, false, "--nodes", ""};
  if (s.nodes_shown.count > 0 && !s.nodes_shown.at_least) s.nodes = s.nodes_shown.count;
  if (s.nodes_shown.count <= 0) s.nodes_words = "nodes not shown";
  else {
    const auto words = parsers::nccl_nodes_count_words(s.nodes_shown);
    s.nodes_words = s.nodes_shown.basis.empty() ? words : fmt::format("{} (by {})", words, s.nodes_shown.basis);
  }
  return s;
}

// "16 ranks", "16 ranks (by busbw/algbw)", "1404 to 1472 ranks (by busbw/algbw)"; empty: unknown.
std::string nccl_tests_ranks_words(const NcclTestsShape& s) {
  if (s.ranks) return fmt::format("{} rank{}{}", *s.ranks, *s.ranks == 1 ? "" : "s", s.ranks_by.empty() ? "" : " (by " + s.ranks_by + ")");
  if (s.ranks_range) return fmt::format("{} to {} ranks (by busbw/algbw)", s.ranks_range->first, s.ranks_range->second);
  return {};
}

// "16 ranks, 2 nodes", "16 ranks (by busbw/algbw), nodes not shown", "256 ranks, 16 nodes (by the
// mpirun command line)": the ranks and the nodes, the basis said once where both share it.
std::string nccl_tests_scale_words(const NcclTestsShape& s) {
  if (s.ranks && !s.ranks_by.empty() && s.ranks_by == s.nodes_shown.basis && s.nodes_shown.count > 0)
    return fmt::format("{} rank{}, {} (by {})", *s.ranks, *s.ranks == 1 ? "" : "s", parsers::nccl_nodes_count_words(s.nodes_shown),
                       s.ranks_by);
  const auto ranks = nccl_tests_ranks_words(s);
  return fmt::format("{}, {}", ranks.empty() ? "ranks not shown" : ranks, s.nodes_words);
}

std::string nccl_tests_shape_words(const NcclTestsShape& s) {
  std::string what = !s.collective.empty() ? s.collective : !s.redop.empty() ? fmt::format("collective not named (redop {})", s.redop) : "collective not named";
  return what + ", " + nccl_tests_scale_words(s);
}

// How the reference differs in kind from the run, where both say: each difference in words.
std::vector<std::string> nccl_tests_unlike(const NcclTestsShape& a, const NcclTestsShape& b) {
  std::vector<std::string> out;
  auto reduces = [](const NcclTestsShape& s) -> std::optional<bool> {
    if (!s.redop.empty()) return s.redop != "none";
    if (const auto* f = nccl_bus_factor(s.collective)) return f->reduces;
    return std::nullopt;
  };
  const auto ra = reduces(a), rb = reduces(b);
  if (nccl_bus_factor(a.collective) && nccl_bus_factor(b.collective) && a.collective != b.collective)
    out.push_back(fmt::format("collective {} here, {} in the reference", a.collective, b.collective));
  else if (ra && rb && *ra != *rb)
    out.push_back(fmt::format("{} here, {} in the reference", *ra ? "a reducing collective" : "a collective that does not reduce",
                              *rb ? "a reducing one" : "one that does not reduce") +
                  fmt::format(" (redop {} and {})", a.redop.empty() ? a.collective : a.redop, b.redop.empty() ? b.collective : b.redop));
  // Counts, or ranges of counts, that cannot be the same.
  auto span = [](const NcclTestsShape& s) -> std::optional<std::pair<long, long>> {
    if (s.ranks) return std::make_pair(*s.ranks, *s.ranks);
    return s.ranks_range;
  };
  const auto na = span(a), nb = span(b);
  // The counts alone ("16 ranks here, 8 in the reference"): how each was read is in the shapes' evidence.
  auto count = [](const std::pair<long, long>& n) { return n.first == n.second ? std::to_string(n.first) : fmt::format("{} to {}", n.first, n.second); };
  if (na && nb && (na->second < nb->first || nb->second < na->first))
    out.push_back(fmt::format("{} rank{} here, {} in the reference", count(*na), *na == std::pair{1L, 1L} ? "" : "s", count(*nb)));
  if (a.nodes && b.nodes && *a.nodes != *b.nodes) out.push_back(fmt::format("{} node{} here, {} in the reference", *a.nodes, *a.nodes == 1 ? "" : "s", *b.nodes));
  return out;
}

// Wrong results first in the evidence: they decide.
std::string nccl_tests_cell(const std::optional<parsers::NcclTestsFigures>& fig) {
  if (!fig) return std::string("-");
  if (fig->max_error) return fmt::format("max error {:g}", *fig->max_error);
  return fig->wrong ? fmt::format("#wrong {:g}", *fig->wrong) : std::string("N/A");
}

void nccl_tests_wrong_evidence(Finding& f, const parsers::NcclTestsRun& run, const std::string& source, const NcclTestsWrong& x) {
  auto cell = nccl_tests_cell;
  const auto& wrong_rows = x.wrong_rows;
  const auto& rounding_rows = x.rounding_rows;
  const auto& overruled_rows = x.overruled_rows;
  std::vector<report::Evidence> ev;
  if (run.out_of_bounds)
    ev.push_back({run.out_of_bounds_line > 0 ? fmt::format("{}:{}", source, run.out_of_bounds_line) : source,
                  fmt::format("Out of bounds values: {:g}", *run.out_of_bounds), std::string("0")});
  for (const auto* r : wrong_rows)
    ev.push_back({nccl_tests_where(source, *r),
                  fmt::format("{:>9}  out-of-place {}, in-place {}", format_size(r->size), cell(r->out_of_place), cell(r->in_place)),
                  r->out_of_place && r->out_of_place->max_error
                      ? fmt::format("max error <= {:g} ({})", max_error_tolerance(r->type), r->type)
                      : std::string("0")});
  if (!rounding_rows.empty()) {
    const auto* r = rounding_rows.front();
    ev.push_back({nccl_tests_where(source, *r),
                  fmt::format("old layout: the error column is a max absolute error, not a count; {} size(s) with errors of rounding size "
                              "(first {}: out-of-place {}, in-place {}){}",
                              rounding_rows.size(), format_size(r->size), cell(r->out_of_place), cell(r->in_place),
                              run.out_of_bounds ? "; the out-of-bounds count decides"
                                                : fmt::format("; within the tolerance {:g} for {}", max_error_tolerance(r->type), r->type)),
                  std::nullopt});
  }
  for (std::size_t i = 0; i < overruled_rows.size() && i < 3; ++i) {
    const auto* r = overruled_rows[i];
    ev.push_back({nccl_tests_where(source, *r),
                  fmt::format("{:>9}  out-of-place {}, in-place {}: above the {} tolerance {:g}, but nccl-tests' own check counted no "
                              "out-of-bounds value (its tolerance grows with the rank count; an unsupported in-place mode also shows here)",
                              format_size(r->size), cell(r->out_of_place), cell(r->in_place), r->type, max_error_tolerance(r->type)),
                  std::nullopt});
  }
  f.evidence.insert(f.evidence.begin(), ev.begin(), ev.end());
}

report::Chart nccl_tests_chart(const std::string& what, const NcclTestsBySize& rows, const NcclTestsBySize& ref, const NcclTestsOptions& o) {
  report::Chart c;
  c.title = fmt::format("{} bus bandwidth by message size", what);
  c.x_label = "message size";
  c.y_label = "busbw GB/s (out of place)";
  c.log_x = c.x_bytes = true;
  report::ChartSeries measured{"this run", {}};
  for (const auto& [s, r] : rows) measured.points.push_back({static_cast<double>(s), r->out_of_place->busbw, std::nullopt, std::nullopt});
  c.series.push_back(std::move(measured));
  if (o.reference) {
    report::ChartSeries reference{"reference", {}};
    for (const auto& [s, r] : ref) reference.points.push_back({static_cast<double>(s), r->out_of_place->busbw, std::nullopt, std::nullopt});
    c.series.push_back(std::move(reference));
  }
  return c;
}

// The status, title, fix and impact: wrong results, then the reference, then the NICs' line
// rate; without a basis a busbw alone cannot pass.
// The node report's node is not among the hosts the run's Rank lines name (each compared by its
// short name: gpu01 and gpu01.cluster are one host): its NICs are another machine's, no basis
// for this run. Empty when they match, or either side does not say.
std::string nccl_tests_foreign_basis(const parsers::NcclTestsRun& run, const NcclTestsOptions& o) {
  // Every rank's host, as the hosts evidence requires (an excerpt names some hosts of many).
  const bool every_rank = run.every_rank_line();
  if (o.reference || o.nic_basis_node.empty() || o.nic_gbps_total <= 0 || run.hosts.empty() || !every_rank) return {};
  auto short_name = [](std::string_view h) { return h.substr(0, h.find('.')); };
  for (const auto& h : run.hosts)
    if (short_name(h) == short_name(o.nic_basis_node)) return {};
  return fmt::format("the node report is of {}, which is not among the hosts that ran this ({}): its RDMA ports are another machine's, no "
                     "basis for this run; give --node-report with a perfgap check report of one of those hosts, or --nics N --link-gbps G",
                     o.nic_basis_node, fmt::join(run.hosts, ", "));
}

void nccl_tests_verdict(Finding& f, const NcclTestsJudged& j, const NcclTestsWrong& x, const parsers::NcclTestsRun& run, std::size_t sizes_printed,
                        const std::string& source, const NcclTestsOptions& o) {
  const auto& what = j.what;
  const auto& below = j.below;
  const auto& sizes = j.sizes;
  const auto nodes = j.nodes;
  const double wrong_total = x.wrong_total, max_busbw = j.max_busbw, worst_ratio = j.worst_ratio, expected = j.expected;
  const auto& wrong_rows = x.wrong_rows;
  const std::size_t compared = j.compared;
  if (wrong_total > 0) {
    f.status = report::Status::fail;
    if (run.out_of_bounds && *run.out_of_bounds > 0 && wrong_rows.empty())
      f.title = fmt::format("{}: wrong results ({:g} out-of-bounds values)", what, *run.out_of_bounds);
    else
      f.title = fmt::format("{}: wrong results (#wrong > 0, or an old-layout error above the tolerance) at {} size(s)", what, wrong_rows.size());
    f.fix = "data corruption or a broken transport: rerun with -c 1 and NCCL_DEBUG=WARN; check GPU/NIC health (XID errors, link errors) and the NCCL version across ranks";
    f.impact = "collective results are not trustworthy";
  } else if (o.reference && !j.unlike.empty()) {
    // A reference of another collective or job shape says how two setups differ, not that this
    // run is slow: no verdict, the rows and ratios kept (as profile.compare's "another job").
    f.status = report::Status::skip;
    // The differences once, briefly; both runs' whole shapes are in the evidence.
    f.title = fmt::format("{}: the reference is another kind of run ({}): busbw against it{} compares two setups, not a regression; pass a "
                          "reference of the same collective on as many ranks and nodes",
                          what, fmt::join(j.unlike, "; "), compared ? fmt::format(" (worst {:.1f}%)", 100 * worst_ratio) : "");
  } else if (o.reference && !below.empty()) {
    f.status = report::Status::fail;
    std::string list;
    for (std::size_t i = 0; i < below.size() && i < 6; ++i) list += (i ? ", " : "") + below[i];
    if (below.size() > 6) list += fmt::format(" (+{} more)", below.size() - 6);
    f.title = fmt::format("{}: busbw below {:.0f}% of the reference at {} (worst {:.1f}%)", what, 100 * o.threshold, list, 100 * worst_ratio);
    f.fix = "compare the NCCL log of both runs (perfgap analyze nccl-log): transport (Socket vs IB), GDRDMA, channel count, topology file; then sweep NCCL_IB_QPS_PER_CONNECTION etc. with perfgap sweep";
    // The range, not the worst size alone: a user pricing the loss needs the size their job moves.
    f.impact = below.size() > 1 && j.mildest_ratio > worst_ratio
                   ? fmt::format("bus bandwidth at {:.1f}% ({}) to {:.1f}% ({}) of the reference: collectives of these sizes take {:.2f}x to {:.2f}x as long",
                                 100 * worst_ratio, j.worst_size, 100 * j.mildest_ratio, j.mildest_size, 1 / j.mildest_ratio, 1 / worst_ratio)
                   : fmt::format("bus bandwidth down to {:.1f}% of the reference at {}: collectives of that size take {:.2f}x as long", 100 * worst_ratio,
                                 j.worst_size, 1 / worst_ratio);
  } else if (o.reference && compared == 0) {
    f.status = report::Status::skip;
    f.title = fmt::format("{}: no size of {} and the reference {} in common{}", what, source, o.reference_source,
                          o.sizes.empty() ? " at 1 MiB or more" : " among --sizes");
  } else if (!o.sizes.empty() && sizes.empty()) {
    f.status = report::Status::skip;
    f.title = fmt::format("{}: none of the --sizes is in this run", what);
  } else if (o.reference) {
    f.status = report::Status::pass;
    f.title = fmt::format("{}: busbw at {:.0f}% of the reference or better at {} size(s) (worst {:.1f}%), no wrong results", what,
                          100 * o.threshold, compared, 100 * worst_ratio);
  } else if (expected > 0 && max_busbw / expected > kNcclBasisExceeded) {
    // Faster than the basis allows: the basis is wrong for this run, so it decides nothing.
    f.status = report::Status::skip;
    f.title = fmt::format("{}: peak busbw {:.2f} GB/s is {:.0f}% of the {:.1f} GB/s the NICs allow ({}): that rate does not bound this run "
                          "(a tree or NVLS algorithm over few nodes moves less over the NICs than busbw's ring formula counts, NVLink or SHARP "
                          "carries part of it, or --nics/--link-gbps is below the node's NICs); pass --reference with a run of the same "
                          "collective on known-good nodes to judge it",
                          what, max_busbw, 100 * max_busbw / expected, expected, o.nic_basis);
  } else if (expected > 0) {
    // No reference: judged against what the NICs allow, and the title says that basis.
    const double share = max_busbw / expected;
    f.status = share < kNcclExpectedFail ? report::Status::fail : share < kNcclExpectedWarn ? report::Status::warn : report::Status::pass;
    f.title = fmt::format("{}: peak busbw {:.2f} GB/s, {:.1f}% of the {:.1f} GB/s the NICs allow ({}){}{}", what, max_busbw, 100 * share, expected,
                          o.nic_basis, f.status == report::Status::pass ? ", no wrong results" : "",
                          run.rows.empty() || run.results_checked ? "" : " (results not checked: -c 0)");
    if (f.status != report::Status::pass) {
      f.fix = "compare the NCCL log with a good run (perfgap analyze nccl-log): transport (Socket vs IB), GDRDMA, channel count, topology file; "
              "then sweep NCCL_IB_QPS_PER_CONNECTION and NCCL_NCHANNELS_PER_NET_PEER (perfgap sweep); a run of the same collective on known-good "
              "nodes (--reference) decides more precisely than the line rate";
      f.impact = fmt::format("collectives across nodes move {:.1f}% of what the NICs carry", 100 * share);
    }
  } else {
    // No basis: a busbw alone cannot pass (docs/ANALYZE.md): say what would decide.
    f.status = report::Status::skip;
    std::string why;
    if (j.ranks && *j.ranks == 1)
      why = "with 1 rank nothing crosses a link, so busbw is 0 by definition (busbw = algbw x the collective's factor of (n-1)/n); run it on 2 or "
            "more GPUs (-g N, or one process per GPU under mpirun or srun) at the job's scale";
    else if (!j.basis_refused.empty())
      why = j.basis_refused;
    else if (nodes && *nodes == 1)
      why = "a single node's busbw is bounded by NVLink/PCIe, not the NICs: pass --reference with a run of the same collective on a known-good node";
    else if (!nodes && o.nic_gbps_total > 0)
      why =
          "the output does not show how many nodes ran it (no complete '# Rank' lines, no NCCL INFO nNodes, no NCCL INFO hostnames or bootstrap "
          "addresses of two nodes): pass --reference, or the whole output";
    else
      why = "pass --reference with a run of the same collective on known-good nodes, or the NICs' line rate (--nics N --link-gbps G, or --node-report "
            "with a perfgap check report of a node) for a run across nodes";
    f.title = fmt::format("{}: peak busbw {:.2f} GB/s over {} size{}{}{}, no basis to judge it: {}", what, max_busbw, sizes_printed, sizes_printed == 1 ? "" : "s",
                          run.elided.empty() ? " printed" : " printed (rows elided)",
                          run.rows.empty() || run.results_checked || wrong_total > 0 ? "" : " (results not checked: -c 0)", why);
  }
}

// "the run ended at 128 MiB of the 8 GiB its header asked for, no '# Avg bus bandwidth' line: it
// stopped early or the capture is cut" (`whose`: "the run", "the reference").
std::string nccl_tests_stop_words(const parsers::NcclTestsStop& st, const char* whose) {
  return fmt::format("{} {} of the {} its header asked for, no '# Avg bus bandwidth' line: it stopped early or the capture is cut", whose,
                     st.last_line ? "ended at " + format_size(st.reached) : std::string("printed no size"), format_size(st.max_bytes));
}

// A run (or reference) that stopped early is said, and no comparison on it passes: its sizes
// beyond the stop were never measured (a crash, a hang, a job killed, a capture cut). The busbw
// verdict is at least `warn`; against the NICs' rate, a peak of the sizes it reached says
// nothing of the NICs, so no `fail` on that basis either. Wrong results, and sizes measured
// below the reference, still fail.
void nccl_tests_stopped_early(Finding& f, const NcclTestsJudged& j, const NcclTestsWrong& x, const parsers::NcclTestsRun& run,
                              const NcclTestsBySize& ref, const std::string& source, const NcclTestsOptions& o) {
  const parsers::NcclTestsStop* stop = run.stopped_early.empty() ? nullptr : &run.stopped_early.back();
  const parsers::NcclTestsStop* ref_stop = o.reference && !o.reference->stopped_early.empty() ? &o.reference->stopped_early.back() : nullptr;
  if (!stop && !ref_stop) return;
  auto where = [](const std::string& file, int line) { return line > 0 ? fmt::format("{}:{}", file, line) : file; };
  std::vector<std::string> words;
  for (const auto& st : run.stopped_early) {
    f.add(where(source, st.last_line ? st.last_line : st.header_line), nccl_tests_stop_words(st, "the run"),
          fmt::format("sizes up to {} (header at line {}), then '# Avg bus bandwidth'", format_size(st.max_bytes), st.header_line));
  }
  if (stop) {
    words.push_back(nccl_tests_stop_words(*stop, "the run"));
    f.metric("stopped_at_bytes", static_cast<double>(stop->reached));
    f.metric("header_max_bytes", static_cast<double>(stop->max_bytes));
    // The reference's sizes that matter beyond where the run stopped: never compared.
    std::vector<std::uint64_t> unreached;
    for (const auto& [sz, r] : ref)
      if (sz > stop->reached && sz <= stop->max_bytes && (o.sizes.empty() ? sz >= (1ull << 20) : std::find(o.sizes.begin(), o.sizes.end(), sz) != o.sizes.end()))
        unreached.push_back(sz);
    if (!unreached.empty()) {
      std::vector<std::string> names;
      names.reserve(unreached.size());
      for (auto sz : unreached) names.push_back(format_size(sz));
      f.add(o.reference_source, fmt::format("reference sizes the run never reached, not compared: {}", fmt::join(names, ", ")), std::string("compared"));
      words.push_back(unreached.size() == 1 ? fmt::format("the reference's {} never compared", names.front())
                                            : fmt::format("the reference's {} to {} ({} sizes) never compared", names.front(), names.back(), names.size()));
      f.metric("reference_sizes_not_reached", static_cast<double>(unreached.size()));
    }
  }
  if (ref_stop) {
    f.add(where(o.reference_source, ref_stop->last_line ? ref_stop->last_line : ref_stop->header_line), nccl_tests_stop_words(*ref_stop, "the reference"),
          fmt::format("sizes up to {}, then '# Avg bus bandwidth'", format_size(ref_stop->max_bytes)));
    words.push_back(nccl_tests_stop_words(*ref_stop, "the reference"));
  }
  const bool nic_verdict = !o.reference && j.expected > 0 && x.wrong_total <= 0;
  if (f.status == report::Status::fail && !nic_verdict) return;  // wrong results, or sizes below the reference: they stand
  // The title keeps what the verdict said, after the stop.
  std::string rest = f.title;
  if (rest.starts_with(j.what + ": ")) rest = rest.substr(j.what.size() + 2);
  if (nic_verdict && stop)
    rest = fmt::format("the peak busbw {:.2f} GB/s ({:.1f}% of the {:.1f} GB/s the NICs allow) is of the sizes it reached, not the run's: no verdict "
                       "on the NICs",
                       j.max_busbw, 100 * j.max_busbw / j.expected, j.expected);
  f.status = report::Status::warn;
  f.title = fmt::format("{}: {}; {}", j.what, fmt::join(words, "; "), rest);
  f.fix = "rerun nccl-tests to its end (or give the whole capture): a sweep prints '# Avg bus bandwidth' when it ends. If it stopped by itself, find "
          "why in the job's stderr and the nodes' kernel log (NCCL WARN lines, Xid errors, the scheduler's time limit, a timeout)";
  f.impact = "busbw at the sizes it never reached is unknown: the largest, which bound a training job's collectives, are missing";
}

}  // namespace

std::vector<Finding> analyze_nccl_tests(const parsers::NcclTestsRun& run, const std::string& source, const NcclTestsOptions& o) {
  std::vector<Finding> out;
  Finding f;
  f.id = "nccl_tests.busbw";
  f.layer = "network";
  f.subject = source;

  // Per size, the last row wins (a file may hold several runs of the same sizes).
  std::map<std::uint64_t, const parsers::NcclTestsRow*> rows;
  for (const auto& r : run.rows)
    if (r.out_of_place) rows[r.size] = &r;
  std::map<std::uint64_t, const parsers::NcclTestsRow*> ref;
  if (o.reference)
    for (const auto& r : o.reference->rows)
      if (r.out_of_place) ref[r.size] = &r;

  const NcclTestsWrong x = nccl_tests_wrong(run);
  NcclTestsJudged j;
  auto& sizes = j.sizes;
  // The sizes that matter.
  std::vector<std::uint64_t> missing;
  if (!o.sizes.empty()) {
    for (auto s : o.sizes) (rows.count(s) ? sizes : missing).push_back(s);
  } else {
    for (const auto& [s, r] : rows)
      if (s >= (1ull << 20)) sizes.push_back(s);
  }

  const double max_busbw = j.max_busbw = nccl_tests_busbw_metrics(f, run, rows, x.wrong_total);
  // Every title names the collective and the scale it ran at: a busbw means nothing without them.
  const auto shape = nccl_tests_shape(run, o.nodes);
  std::string& what = j.what;
  what = fmt::format("{} on {}", run.collective.empty() ? "nccl-tests" : run.collective, nccl_tests_scale_words(shape));
  const auto& shown = shape.nodes_shown;
  j.nodes = shape.nodes;
  j.ranks = shape.ranks;
  if (shape.ranks) f.metric("ranks", static_cast<double>(*shape.ranks));
  if (shape.nodes) f.metric("nodes", static_cast<double>(*shape.nodes));
  // How the ranks were known where the output does not print them, and a quoted launcher
  // command that is not this run's.
  if (!shape.ranks_detail.empty()) f.add("ranks", shape.ranks_detail);
  if (!shape.launch_refused.empty()) f.add("ranks", shape.launch_refused);
  if (!shape.rank_lines_short.empty()) f.add("ranks", shape.rank_lines_short);
  if (shape.nodes_given && shape.nodes && *shape.nodes != *shape.nodes_given)
    f.add("nodes", fmt::format("--nodes {}: the output shows {}: not used", *shape.nodes_given, shape.nodes_words));
  if (run.rank_lines_cut)
    f.add("ranks", fmt::format("the '# Rank' list is cut ('...' after {} of its lines): its ranks and hosts are some of the job's, not counted", run.rank_lines));

  if (o.reference) f.table.push_back({"size", "busbw GB/s", "reference GB/s", "ratio"});
  else f.table.push_back({"size", "busbw GB/s", "algbw GB/s", "time us"});
  if (o.reference) {
    nccl_tests_against_reference(f, j, rows, ref, source, o);
    const auto there = nccl_tests_shape(*o.reference);
    j.unlike = nccl_tests_unlike(shape, there);
    j.shape = nccl_tests_shape_words(shape);
    j.reference_shape = nccl_tests_shape_words(there);
    for (const auto& w : j.unlike) f.add(o.reference_source, w, std::string("the same collective, ranks and nodes"));
    if (!j.unlike.empty()) {
      f.add(source, "this run: " + j.shape);
      f.add(o.reference_source, "the reference: " + j.reference_shape);
    }
  } else {
    for (auto s : sizes) {
      const auto* r = rows[s];
      f.table.push_back({format_size(s), nccl_tests_gbps(r->out_of_place->busbw), nccl_tests_gbps(r->out_of_place->algbw), fmt::format("{:.1f}", r->out_of_place->time_us)});
      f.add(nccl_tests_where(source, *r), fmt::format("{:>9}  busbw {:8.2f} GB/s  algbw {:8.2f} GB/s  time {:.1f} us", format_size(s),
                                                      r->out_of_place->busbw, r->out_of_place->algbw, r->out_of_place->time_us));
    }
  }
  for (auto s : missing) f.add(source, fmt::format("{}: size not in this run", format_size(s)));
  // The collective measured, as explain matches it with the job's collectives: the output's
  // name of it, else its file's name (as whatif --nccl-tests reads it).
  const auto slash = source.rfind('/');
  const std::string_view base = std::string_view(source).substr(slash == std::string::npos ? 0 : slash + 1);
  const auto named = parsers::collective_named(run.collective);
  const auto by_file = run.collective.empty() ? parsers::collective_named(base) : parsers::Coll::none;
  if (named != parsers::Coll::none) f.add(std::string(parsers::kCollectiveMeasuredEvidence), std::string(parsers::coll_name(named)));
  else if (by_file != parsers::Coll::none)
    f.add(std::string(parsers::kCollectiveMeasuredEvidence),
          fmt::format("{} (by the file's name, {}: the output names no collective)", parsers::coll_name(by_file), base));
  else if (const auto coll = parsers::collective_named(shape.collective_by_ratio); coll != parsers::Coll::none)
    f.add(std::string(parsers::kCollectiveMeasuredEvidence),
          fmt::format("{} (by busbw/algbw {}, redop {} and root -1: the output names no collective)", parsers::coll_name(coll),
                      coll == parsers::Coll::AllReduce ? "= 2(n-1)/n, a factor above 1 only all_reduce has" : "= (n-1)/n", shape.redop));
  // The hosts of the run, when the log shows every rank's: fleet names the measurement's node by them.
  if (!run.hosts.empty() && run.every_rank_line() && shape.rank_lines_short.empty())
    f.add(std::string(parsers::kNcclTestsHostsEvidence), fmt::format("{}", fmt::join(run.hosts, ",")));
  // The GPUs the Rank lines name: explain and compare tell a run of another GPU from the job's by them.
  if (!run.gpu_models.empty()) f.add(std::string(parsers::kNcclTestsGpusEvidence), fmt::format("{}", fmt::join(run.gpu_models, " + ")));
  if (!run.elided.empty())
    f.add(fmt::format("{}:{}", source, run.elided.front()),
          fmt::format("rows cut out of the table ('...' on {} line{}): only the {} printed sizes are judged", run.elided.size(),
                      run.elided.size() == 1 ? "" : "s", rows.size()));
  if (!run.row_kinds.empty())
    f.add(source, fmt::format("rows of {} kinds in one table ({}: -d all or -o all): each size is judged by its last row, whatever its kind; run "
                              "one type and one op (-d float -o sum) to judge them apart",
                              run.row_kinds.size(), fmt::join(run.row_kinds, ", ")));
  if (f.table.size() == 1) f.table.clear();  // no size to show
  f.charts.push_back(nccl_tests_chart(what, rows, ref, o));
  nccl_tests_wrong_evidence(f, run, source, x);

  // How the nodes were counted where the output does not say it outright (NCCL INFO lines'
  // hostnames or addresses), or what it shows where that is not enough.
  if (!shown.basis.empty())
    f.add("nodes",
          fmt::format("{} by {}{}", parsers::nccl_nodes_count_words(shown), shown.basis, shown.detail.empty() ? "" : ": " + shown.detail));
  else if (shown.count <= 0 && !shown.detail.empty()) f.add("nodes", "not shown: " + shown.detail);
  // Without a reference: the line rate of the node's NICs is the basis, for a run across nodes
  // (at least two shown is enough).
  const bool multi_node = shown.count >= 2;
  // (Rank lines of fewer ranks than the factor fits name some of the hosts: no test of the node report.)
  if (!o.reference && multi_node && shape.rank_lines_short.empty()) j.basis_refused = nccl_tests_foreign_basis(run, o);
  const double expected = j.expected = !o.reference && multi_node && o.nic_gbps_total > 0 && j.basis_refused.empty() ? o.nic_gbps_total / 8 : 0;
  if (!j.basis_refused.empty()) f.add(o.nic_basis, j.basis_refused, fmt::format("a report of one of the run's hosts ({})", fmt::join(run.hosts, ", ")));
  if (expected > 0) {
    f.metric("expected_busbw_gbps", expected);
    if (max_busbw > 0) f.metric("peak_ratio", max_busbw / expected);
    f.add(o.nic_basis,
          fmt::format("expected busbw {:.1f} GB/s: the node's RDMA line rate ({:g} Gb/s / 8) bounds a collective across {}; "
                      "peak busbw {:.2f} GB/s is {:.1f}% of it",
                      expected, o.nic_gbps_total, parsers::nccl_nodes_count_words(shown), max_busbw, 100 * max_busbw / expected),
          fmt::format(">= {:.0f}% of it", 100 * kNcclExpectedWarn));
  }
  nccl_tests_verdict(f, j, x, run, rows.size(), source, o);
  if (!run.row_kinds.empty())
    f.title += fmt::format(" (rows of {} kinds, {}, taken together: each size's last row is judged)", run.row_kinds.size(), fmt::join(run.row_kinds, ", "));
  // Decided on a reference, the NICs' rate or wrong results: the verdict itself, before a run that
  // stopped early turns a skip for want of a basis into a warn.
  const bool judged = f.status != report::Status::skip;
  nccl_tests_stopped_early(f, j, x, run, ref, source, o);
  if (!run.nccl_version.empty()) {
    unsigned a = 0, b = 0, c = 0;
    if (std::sscanf(run.nccl_version.c_str(), "%u.%u.%u", &a, &b, &c) == 3) f.metric("nccl_version", a * 10000.0 + b * 100.0 + c);
  }
  // The collapse finding where a fall was seen, or where the bandwidth was judged on a basis: a
  // pass of its own would make a report that judged no bandwidth read OK. A run that stopped
  // short of its sizes gets no pass (skip, saying the sizes that could show a fall are missing).
  bool fell = false;
  const parsers::NcclTestsStop* stop = run.stopped_early.empty() ? nullptr : &run.stopped_early.back();
  auto collapse = nccl_tests_collapse(rows, source, j.what, fell, stop);
  const bool cut = stop && !fell && collapse.status == report::Status::skip;
  out.push_back(std::move(f));
  if (fell || judged || cut) out.push_back(std::move(collapse));
  for (auto& d : damaged_lines("nccl_tests.busbw", "network", source, run.damaged)) out.push_back(std::move(d));
  return out;
}

std::optional<long> nccl_tests_inferred_ranks(const parsers::NcclTestsRun& run) {
  const auto shape = nccl_tests_shape(run);
  if (shape.ranks && shape.ranks_by == "busbw/algbw") return shape.ranks;
  return std::nullopt;
}

}  // namespace perfgap::analyzers