#include "analyzers/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/config.hpp"
#include "parsers/nccl_tests.hpp"

namespace perfgap::analyzers {
namespace {

using report::Finding;
using report::Status;

// One finding id of the reports, whatever its subjects and reports: in data-parallel training the
// slowest node sets the pace, so a finding seen on many nodes (or for many processes) costs once.
struct BudgetHit {
  std::string id;
  Status status = Status::warn;
  std::string title;
  std::vector<std::string> where;  // "REPORT" or "REPORT [subject]", in the order found
  std::set<std::string, std::less<>> where_seen;  // a fleet's reports name thousands of places
  const core::KbImpact* kb = nullptr;
  // The nodes a measurement of it ran on (nccl-tests' hosts); unknown when one did not say.
  std::set<std::string, std::less<>> nodes;
  bool nodes_unknown = false;
};

// A root cause (core::KbCause, or an id no cause names): the findings that see it count once.
struct BudgetCause {
  std::string id, title;
  const core::KbCause* kb = nullptr;
  std::vector<const BudgetHit*> hits;
  Status status = Status::warn;
  bool has_prior = false;
  double prior_low = 0, prior_high = 0;  // the union of the found estimated members' ranges
  bool measured = false;
  bool what_if = false;               // measured by replaying the job's own traces (perfgap whatif)
  std::string measured_how;           // what the measurement was and how it became the estimate
  double point = 0, low = 0, high = 0;  // the estimate and its range (measured: within the prior)
  double share = 0;                   // percent of throughput after fitting to the shortfall
  bool estimated() const { return has_prior || measured; }
  bool not_counted = false;  // every finding behind it is not_a_cause
};

// What the reports measured, whatever the status of the finding that carries it.
struct BudgetMeasure {
  double value = 0;
  std::string where;
  bool found = false;
  void more(double v, const std::string& at) {  // keep the largest
    if (!found || v > value) { value = v; where = at; found = true; }
  }
  void less(double v, const std::string& at) {  // keep the smallest
    if (!found || v < value) { value = v; where = at; found = true; }
  }
};
struct BudgetMeasures {
  BudgetMeasure tlb_times_reference;  // perf_stat.dtlb above its reference (the SMMU cause's other sign)
  BudgetMeasure smmu_pct, host_bound_pct, remote_pct, busy_ratio, exposed_pct, busbw_ratio, straggler_pct;
  // The slowest node: its step (iteration) time or throughput against the fleet's median, as a
  // share of throughput lost (fleet.pace); its collective bandwidth against the fleet's
  // (fleet.pace on nccl-tests, fanout.pairs), which costs through the exposed communication.
  BudgetMeasure slow_node_step_pct, slow_node_busbw_ratio;
  std::string slow_node_step_how, slow_node_busbw_how;
  // The nodes that fleet.pace names (its outliers and pace node) and fanout.pairs' slow node:
  // a measurement taken on these nodes alone is theirs, not a second cause.
  std::set<std::string, std::less<>> slow_nodes;
  std::set<std::string, std::less<>> busbw_nodes;  // where busbw_ratio was measured (empty: unknown)
  double straggler_ms = 0, straggler_wait_ms = 0, straggler_iter_ms = 0;
  // A late rank of NCCL's Inspector: the others' wait per operation, per collective; with a
  // profile's collectives per iteration and iteration time it is a share of the step.
  struct LateRank {
    std::string where;
    std::map<std::string, double> wait_us_per_op;
  };
  std::vector<LateRank> late_ranks;
  std::map<std::string, std::pair<double, std::string>> kernels_per_iter;  // collective -> (per GPU and iteration, where)
  BudgetMeasure profile_iter_ms;
  double busy_mhz = 0, rated_mhz = 0, exposed_ms = 0, busbw = 0, busbw_basis = 0;
  std::string busbw_basis_name;
  // perfgap whatif's changes: per id, the largest share of the step one change saves, replayed
  // on the job's own traces, and that change's title.
  std::map<std::string, BudgetMeasure, std::less<>> what_if_pct;
  std::map<std::string, std::string, std::less<>> what_if_title;
};

constexpr std::size_t kBudgetWhereShown = 3;
constexpr int kBudgetBarWidth = 40;
// A suspicion from configuration alone ranks as if half its size against a measured cause: the
// measured one is what the run shows, the suspected one what it may show.
constexpr double kPriorRankWeight = 0.5;
// A measured estimate's own band: the measurement is one run, the sensitivity one public case.
constexpr double kMeasuredBand = 0.25;

bool budget_problem(Status s) { return s == Status::fail || s == Status::warn; }

// compare.regressed/new/unchanged stand for the finding their subject names: "id" or "id (subject)".
std::pair<std::string, std::string> budget_compare_target(const std::string& subject) {
  auto p = subject.find(" (");
  if (p == std::string::npos || subject.back() != ')') return {subject, ""};
  return {subject.substr(0, p), subject.substr(p + 2, subject.size() - p - 3)};
}

// fleet.node_failures: one evidence line per group of nodes, observed "id, id (N nodes)".
std::vector<std::string> budget_fleet_ids(const std::string& observed) {
  std::vector<std::string> out;
  auto end = observed.rfind(" (");
  std::string_view list(observed.data(), end == std::string::npos ? observed.size() : end);
  while (!list.empty()) {
    auto comma = list.find(", ");
    auto item = list.substr(0, comma);
    if (!item.empty()) out.emplace_back(item);
    if (comma == std::string_view::npos) break;
    list.remove_prefix(comma + 2);
  }
  return out;
}

bool budget_same_report(const compare::ReportView& a, const compare::ReportView& b) {
  if (a.kind != b.kind || a.node != b.node || a.generated_at != b.generated_at || a.generated_at.empty() ||
      a.findings.size() != b.findings.size())
    return false;
  for (std::size_t i = 0; i < a.findings.size(); ++i)
    if (a.findings[i].id != b.findings[i].id || a.findings[i].subject != b.findings[i].subject || a.findings[i].status != b.findings[i].status)
      return false;
  return true;
}

std::string budget_pct(double v) { return fmt::format("{:.1f}", v); }
std::string budget_range(double lo, double hi) { return lo == hi ? fmt::format("{:g}%", lo) : fmt::format("{:g}-{:g}%", lo, hi); }

std::string budget_where(const BudgetHit& c) {
  std::string out;
  for (std::size_t i = 0; i < c.where.size() && i < kBudgetWhereShown; ++i) out += (i ? ", " : "") + c.where[i];
  if (c.where.size() > kBudgetWhereShown) out += fmt::format(" and {} more", c.where.size() - kBudgetWhereShown);
  return out;
}

std::string budget_conditions(const core::KbImpact& k) {
  std::string out;
  for (auto [name, v] : {std::pair<const char*, const std::string*>{"workload", &k.workload}, {"layer", &k.layer}, {"scale", &k.scale}})
    if (!v->empty()) out += fmt::format("{}{}: {}", out.empty() ? "" : "; ", name, *v);
  return out;
}

std::string budget_source(const core::KbSource& s) {
  std::string out = s.kind;
  if (!s.cite.empty()) out += ": " + s.cite;
  if (!s.url.empty()) out += " <" + s.url + ">";
  return out;
}

// A segment of the waterfall: the drop from `from` to `to` points below the reference, on a
// scale of `total` points.
std::string budget_bar(double from, double to, double total, char mark) {
  std::string bar(kBudgetBarWidth, ' ');
  if (total > 0 && to > from) {
    int a = static_cast<int>(std::lround(from / total * kBudgetBarWidth));
    int b = static_cast<int>(std::lround(to / total * kBudgetBarWidth));
    a = std::clamp(a, 0, kBudgetBarWidth);
    b = std::clamp(std::max(b, a + 1), 0, kBudgetBarWidth);
    if (a == kBudgetBarWidth) a = kBudgetBarWidth - 1;
    for (int i = a; i < b; ++i) bar[static_cast<std::size_t>(i)] = mark;
  }
  return "[" + bar + "]";
}

std::optional<double> budget_metric(const compare::ReportFinding& f, std::string_view name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name && std::isfinite(v)) return v;
  return std::nullopt;
}

// A host as fleet and nccl-tests meet on it: the short name (before the first '.').
std::string budget_short_node(std::string_view name) {
  auto dot = name.find('.');
  return std::string(dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot));
}

// The nodes an nccl-tests measurement ran on, as its report says them ("nccl-tests hosts"
// evidence); empty when it does not say.
std::set<std::string, std::less<>> budget_measured_nodes(const compare::ReportFinding& x) {
  std::set<std::string, std::less<>> nodes;
  for (const auto& [source, observed] : x.evidence) {
    if (source != parsers::kNcclTestsHostsEvidence) continue;
    std::string_view list = observed;
    while (!list.empty()) {
      auto comma = list.find(',');
      if (auto item = list.substr(0, comma); !item.empty()) nodes.insert(budget_short_node(item));
      if (comma == std::string_view::npos) break;
      list.remove_prefix(comma + 1);
    }
  }
  return nodes;
}

// The measurements of one finding, any status but skip and error (they measured nothing).
void budget_measure(const compare::ReportFinding& x, const std::string& at, BudgetMeasures& m) {
  if (x.status == Status::skip || x.status == Status::error) return;
  if (x.id == "perf.smmu_cmdq")
    if (auto v = budget_metric(x, "smmu_cmdq_pct")) m.smmu_pct.more(*v, at);
  if (x.id == "perf_stat.dtlb" && (x.status == Status::fail || x.status == Status::warn))
    if (auto v = budget_metric(x, "times_reference")) m.tlb_times_reference.more(*v, at);
  if (x.id == "profile.gpu_idle" || x.id == "profile.launch_bound")
    if (auto v = budget_metric(x, "host_bound_pct")) m.host_bound_pct.more(*v, at);
  if (x.id == "numa.remote_memory" || x.id == "numastat.remote") {
    if (auto v = budget_metric(x, "remote_pct")) m.remote_pct.more(*v, at);
    if (auto v = budget_metric(x, "other_node_pct")) m.remote_pct.more(*v, at);
  }
  if (x.id == "turbostat.busy_mhz" || x.id == "live.busy_mhz" || x.id == "probe.cpu_busy_mhz") {
    auto busy = budget_metric(x, "busy_mhz"), rated = budget_metric(x, "rated_mhz");
    if (busy && rated && *rated > 0 && *busy > 0) {
      const double ratio = std::min(1.0, *busy / *rated);
      if (!m.busy_ratio.found || ratio < m.busy_ratio.value) {
        m.busy_ratio.less(ratio, at);
        m.busy_mhz = *busy;
        m.rated_mhz = *rated;
      }
    }
  }
  if (x.id == "profile.exposed_comm" && x.subject == "all") {
    auto pct = budget_metric(x, "exposed_pct_of_iter");
    if (pct && (!m.exposed_pct.found || *pct > m.exposed_pct.value)) {
      m.exposed_pct.more(*pct, at);
      m.exposed_ms = budget_metric(x, "exposed_ms_per_iter").value_or(0);
    }
  }
  if (x.id == "fleet.pace" && x.status == Status::warn) {
    for (const auto& [k, v] : x.metrics)
      if (k.starts_with("node.")) m.slow_nodes.insert(budget_short_node(k.substr(5)));
    auto pace = budget_metric(x, "pace"), median = budget_metric(x, "median");
    if (pace && median && *pace > 0 && *median > 0) {
      const bool time = x.subject.ends_with("_ms");
      const bool busbw = x.subject.starts_with("nccl_tests.");
      if (busbw && *pace < *median) {
        if (!m.slow_node_busbw_ratio.found || *pace / *median < m.slow_node_busbw_ratio.value) {
          m.slow_node_busbw_ratio.less(*pace / *median, at);
          m.slow_node_busbw_how = fmt::format("the slowest node's peak busbw {:.1f} GB/s against the fleet's median {:.1f}", *pace, *median);
        }
      } else if (!busbw) {
        // Every data-parallel step waits for the slowest node: the job runs at its pace.
        const double lost = 100 * (time ? 1 - *median / *pace : 1 - *pace / *median);
        if (lost > 0 && (!m.slow_node_step_pct.found || lost > m.slow_node_step_pct.value)) {
          m.slow_node_step_pct.more(lost, at);
          m.slow_node_step_how = fmt::format("the slowest node's {} {:.1f} against the fleet's median {:.1f}",
                                             time ? "time per step" : "throughput", *pace, *median);
        }
      }
    }
  }
  if (x.id == "fanout.pairs" && x.status == Status::fail) {
    if (!x.subject.empty()) m.slow_nodes.insert(budget_short_node(x.subject));
    auto ref = budget_metric(x, "reference_busbw_gbps");
    std::optional<double> worst;
    for (const auto& [k, v] : x.metrics)
      if (k.starts_with("best_busbw_gbps.") && std::isfinite(v)) worst = std::min(worst.value_or(v), v);
    if (ref && worst && *ref > 0 && *worst < *ref && (!m.slow_node_busbw_ratio.found || *worst / *ref < m.slow_node_busbw_ratio.value)) {
      m.slow_node_busbw_ratio.less(*worst / *ref, at);
      m.slow_node_busbw_how = fmt::format("the slowest node's best pair at {:.1f} GB/s against the fleet's {:.1f}", *worst, *ref);
    }
  }
  // A change replayed on the job's own traces: what it saves of the step, measured.
  if (x.id.starts_with("whatif.") && budget_problem(x.status))
    if (auto pct = budget_metric(x, "saved_pct_of_step"); pct && *pct > 0) {
      auto& w = m.what_if_pct[x.id];
      if (!w.found || *pct > w.value) m.what_if_title[x.id] = x.subject.empty() ? x.title : x.subject + ": " + x.title;
      w.more(*pct, at);
    }
  // The step time lost to the last rank (measured on the job's rank profiles); of several
  // reports the largest, as the slowest node sets the pace.
  if (x.id == "profile.straggler")
    if (auto pct = budget_metric(x, "cost_pct_of_iter"); pct && *pct > 0 && (!m.straggler_pct.found || *pct > m.straggler_pct.value)) {
      m.straggler_pct.more(*pct, at);
      m.straggler_ms = budget_metric(x, "cost_ms_per_iter").value_or(0);
      m.straggler_wait_ms = budget_metric(x, "wait_ms_per_iter").value_or(0);
      m.straggler_iter_ms = budget_metric(x, "iteration_ms").value_or(0);
    }
  if (x.id == "nccl_inspector.late_rank" && budget_problem(x.status)) {
    BudgetMeasures::LateRank lr;
    lr.where = at;
    for (const auto& [k, v] : x.metrics)
      if (k.starts_with("wait_us_per_op.") && std::isfinite(v) && v > 0) lr.wait_us_per_op[k.substr(15)] = v;
    if (!lr.wait_us_per_op.empty()) m.late_ranks.push_back(std::move(lr));
  }
  if (x.id == "profile.exposed_comm" && x.subject != "all")
    if (auto k = budget_metric(x, "kernels_per_iter"); k && *k > 0 && !m.kernels_per_iter.count(x.subject))
      m.kernels_per_iter[x.subject] = {*k, at};
  if (x.id == "profile.iterations" && !m.profile_iter_ms.found)
    if (auto v = budget_metric(x, "iteration_ms"); v && *v > 0 && budget_metric(x, "iterations").value_or(0) >= 1) m.profile_iter_ms.more(*v, at);
  if (x.id == "nccl_tests.busbw" || x.id == "nccl_inspector.busbw")
    if (auto r = budget_metric(x, "peak_ratio"); r && *r > 0) {
      if (!m.busbw_ratio.found || *r < m.busbw_ratio.value) {
        m.busbw_ratio.less(std::min(1.0, *r), at);
        m.busbw_nodes = budget_measured_nodes(x);
        m.busbw = budget_metric(x, "max_busbw_gbps").value_or(0);
        if (auto ref = budget_metric(x, "reference_peak_busbw_gbps")) {
          m.busbw_basis = *ref;
          m.busbw_basis_name = "the reference";
        } else if (auto exp = budget_metric(x, "expected_busbw_gbps")) {
          m.busbw_basis = *exp;
          m.busbw_basis_name = "the expected";
        }
      }
    }
}

// A late rank of NCCL's Inspector as a share of the step: the others' wait per operation x the
// operations per iteration (a profile of the job counts them) over the profile's iteration
// time; of several late ranks the costliest (the job waits for the latest). False when no
// collective the rank is late in is counted by the profile.
bool budget_late_rank(const BudgetMeasures& m, double& e, std::string& how) {
  bool any = false;
  for (const auto& lr : m.late_ranks) {
    double wait_ms = 0;
    std::string parts, uncounted;
    for (const auto& [coll, us] : lr.wait_us_per_op) {
      auto k = m.kernels_per_iter.find(coll);
      if (k == m.kernels_per_iter.end()) {
        uncounted += (uncounted.empty() ? "" : ", ") + coll;
        continue;
      }
      wait_ms += us * k->second.first / 1000;
      parts += fmt::format("{}{:.0f} us per {} x {:.1f} per iteration ({})", parts.empty() ? "" : " + ", us, coll, k->second.first, k->second.second);
    }
    if (parts.empty()) continue;
    const double pct = 100 * wait_ms / m.profile_iter_ms.value;
    if (any && pct <= e) continue;
    any = true;
    e = pct;
    how = fmt::format("NCCL's Inspector: the other ranks wait for the late rank ({}) {} = {:.2f} ms per iteration, {:.1f}% of the {:.2f} ms iteration "
                      "({}): {:.1f} points",
                      lr.where, parts, wait_ms, pct, m.profile_iter_ms.value, m.profile_iter_ms.where, pct);
    if (!uncounted.empty()) how += fmt::format(" (its wait in {} is not counted: the profile has no such collective per iteration)", uncounted);
  }
  return any;
}

std::string fmt_residual(double lo, double hi) { return std::fabs(hi - lo) < 0.05 ? "" : fmt::format("{:.1f}-{:.1f}", lo, hi); }

double budget_clamp(double v, double lo, double hi) { return std::clamp(v, lo, hi); }

// The cause's largest saving replayed on the job's traces (a whatif.* finding among its hits):
// the job's own measurement, before any other and any prior.
bool budget_what_if(const BudgetCause& c, const BudgetMeasures& m, double& e, std::string& how) {
  const BudgetMeasure* best = nullptr;
  std::string id;
  for (const auto* h : c.hits)
    if (auto it = m.what_if_pct.find(h->id); it != m.what_if_pct.end() && (!best || it->second.value > best->value)) best = &it->second, id = h->id;
  if (!best) return false;
  e = best->value;
  how = fmt::format("the job's traces replayed ({} in {}): {}: {:.1f} points", id, best->where, m.what_if_title.at(id), e);
  return true;
}

// The cause's estimate from the reports' measurements of its kind (causes.yaml estimate:).
bool budget_estimate_kind(BudgetCause& c, const BudgetMeasures& m, double bound_low, double bound_high) {
  const auto& k = *c.kb;
  double e = 0;
  std::string how;
  if (k.estimate == "smmu_share" && m.smmu_pct.found) {
    if (m.host_bound_pct.found) {
      e = m.host_bound_pct.value * m.smmu_pct.value / 100;
      how = fmt::format("SMMU command-queue frames hold {:.1f}% of CPU samples ({}) and the GPU waits on the host {:.1f}% of the iteration ({}): "
                        "{:.1f} x {:.2f} = {:.1f} points",
                        m.smmu_pct.value, m.smmu_pct.where, m.host_bound_pct.value, m.host_bound_pct.where, m.host_bound_pct.value,
                        m.smmu_pct.value / 100, e);
    } else {
      e = k.case_cost * m.smmu_pct.value / k.case_measured;
      how = fmt::format("SMMU command-queue frames hold {:.1f}% of CPU samples ({}); scaled by the public case ({:g}% of cycles cost {:g} points): "
                        "{:.1f} points (a profile's host-bound share would decide it for this job)",
                        m.smmu_pct.value, m.smmu_pct.where, k.case_measured, k.case_cost, e);
    }
    // The dTLB ratio against the reference is evidence of the same cause, not a second cost.
    if (m.tlb_times_reference.found)
      how += fmt::format("; the dTLB miss ratio is {:.2f}x the reference's ({}): the same cause seen from the TLB, counted once", m.tlb_times_reference.value,
                         m.tlb_times_reference.where);
  } else if (k.estimate == "cpu_frequency" && m.busy_ratio.found) {
    const double deficit = 100 * (1 - m.busy_ratio.value);
    if (m.host_bound_pct.found) {
      e = m.host_bound_pct.value * deficit / 100;
      how = fmt::format("busy cores at {:.0f} of {:.0f} MHz ({:.1f}% below the rated turbo, {}) and the GPU waits on the host {:.1f}% of the "
                        "iteration ({}): {:.1f} points",
                        m.busy_mhz, m.rated_mhz, deficit, m.busy_ratio.where, m.host_bound_pct.value, m.host_bound_pct.where, e);
    } else {
      e = k.case_cost * deficit / k.case_measured;
      how = fmt::format("busy cores at {:.0f} of {:.0f} MHz, {:.1f}% below the rated turbo ({}); scaled by the public case ({:g}% below cost {:g} "
                        "points): {:.1f} points",
                        m.busy_mhz, m.rated_mhz, deficit, m.busy_ratio.where, k.case_measured, k.case_cost, e);
    }
  } else if (k.estimate == "remote_numa" && m.remote_pct.found) {
    e = k.case_cost * m.remote_pct.value / k.case_measured;
    how = fmt::format("{:.1f}% of memory remote ({}); scaled by the public case ({:g}% remote cost {:g} points): {:.1f} points", m.remote_pct.value,
                      m.remote_pct.where, k.case_measured, k.case_cost, e);
  } else if (k.estimate == "collective" && m.exposed_pct.found && m.busbw_ratio.found) {
    const double r = m.busbw_ratio.value;
    e = m.exposed_pct.value * (1 - r);
    const double iter_ms = m.exposed_pct.value > 0 ? m.exposed_ms * 100 / m.exposed_pct.value : 0;
    how = fmt::format("communication not overlapped by compute: {:.1f} ms, {:.1f}% of the {:.1f} ms iteration ({}); busbw {:.1f} GB/s, {:.1f}% of {} "
                      "{:.1f} GB/s ({}): at that bandwidth the exposed time would be {:.1f} ms, {:.1f} ms less per iteration: {:.1f} points",
                      m.exposed_ms, m.exposed_pct.value, iter_ms, m.exposed_pct.where, m.busbw, 100 * r, m.busbw_basis_name, m.busbw_basis,
                      m.busbw_ratio.where, m.exposed_ms * r, m.exposed_ms * (1 - r), e);
  } else if (k.estimate == "slowest_node" && m.slow_node_step_pct.found) {
    e = m.slow_node_step_pct.value;
    how = fmt::format("{} ({}): every step waits for it, so the job runs {:.1f}% below the fleet's median pace", m.slow_node_step_how,
                      m.slow_node_step_pct.where, e);
  } else if (k.estimate == "slowest_node" && m.slow_node_busbw_ratio.found && m.exposed_pct.found) {
    const double r = m.slow_node_busbw_ratio.value;
    e = m.exposed_pct.value * (1 - r);
    how = fmt::format("{} ({}), {:.1f}% of it; communication not overlapped is {:.1f}% of the iteration ({}): {:.1f} points", m.slow_node_busbw_how,
                      m.slow_node_busbw_ratio.where, 100 * r, m.exposed_pct.value, m.exposed_pct.where, e);
  } else if ((k.estimate == "waiting" || k.estimate == "slowest_node") && m.straggler_pct.found) {
    // slowest_node without a fleet measure of its own: the straggler it absorbed measures it.
    e = m.straggler_pct.value;
    how = fmt::format("the other ranks wait {:.2f} ms per iteration for the last one; it arrives {:.2f} ms after the next-latest, {:.1f}% of the {:.2f} ms "
                      "iteration ({}): {:.1f} points",
                      m.straggler_wait_ms, m.straggler_ms, m.straggler_pct.value, m.straggler_iter_ms, m.straggler_pct.where, e);
  } else if ((k.estimate == "waiting" || k.estimate == "slowest_node") && !m.late_ranks.empty() && m.profile_iter_ms.found &&
             budget_late_rank(m, e, how)) {
    // computed by budget_late_rank
  } else {
    return false;
  }
  c.measured = true;
  c.point = budget_clamp(e, bound_low, bound_high);
  c.low = budget_clamp(e * (1 - kMeasuredBand), bound_low, bound_high);
  c.high = budget_clamp(e * (1 + kMeasuredBand), bound_low, bound_high);
  if (c.point != e)
    how += fmt::format("; held to the knowledge base's {} for this cause: {:.1f}", budget_range(bound_low, bound_high), c.point);
  c.measured_how = std::move(how);
  return true;
}

// A measured estimate for the cause, if the reports hold one: replayed first, then of its kind.
bool budget_estimate(BudgetCause& c, const BudgetMeasures& m, double bound_low, double bound_high) {
  double e = 0;
  std::string how;
  if (!budget_what_if(c, m, e, how)) return c.kb && !c.kb->estimate.empty() && budget_estimate_kind(c, m, bound_low, bound_high);
  c.what_if = true;
  c.measured = true;
  c.point = budget_clamp(e, bound_low, bound_high);
  c.low = budget_clamp(e * (1 - kMeasuredBand), bound_low, bound_high);
  c.high = budget_clamp(e * (1 + kMeasuredBand), bound_low, bound_high);
  if (c.point != e) how += fmt::format("; held to the knowledge base's {} for this cause: {:.1f}", budget_range(bound_low, bound_high), c.point);
  c.measured_how = std::move(how);
  return true;
}

// What the causes explain together: they stack as throughput factors.
double budget_explained(const std::vector<BudgetCause*>& cs, const std::vector<double>& shares) {
  double keep = 1;
  for (std::size_t i = 0; i < cs.size(); ++i) keep *= 1 - shares[i] / 100;
  return 100 * (1 - keep);
}

// One place, one cause: a collective measured only on the nodes the fleet names slowest (fleet.pace,
// fanout.pairs) is those nodes' slowness seen again, not a second cause beside them. Such
// findings move to the slowest-node cause, and what stays in their cause (a queue-pair setting)
// is not priced with that measurement.
void budget_one_place_one_cause(std::map<std::string, BudgetCause, std::less<>>& causes, const std::vector<std::string>& cause_order,
                                BudgetMeasures& meas, std::vector<std::string>& notes) {
  if (meas.slow_nodes.empty()) return;
  BudgetCause* slowest = nullptr;
  for (const auto& cid : cause_order)
    if (auto& c = causes.at(cid); c.kb && c.kb->estimate == "slowest_node" && !c.hits.empty()) slowest = &c;
  if (!slowest) return;
  auto on_slow_nodes = [&](const std::set<std::string, std::less<>>& nodes) {
    return !nodes.empty() && std::includes(meas.slow_nodes.begin(), meas.slow_nodes.end(), nodes.begin(), nodes.end());
  };
  for (const auto& cid : cause_order) {
    auto& c = causes.at(cid);
    if (&c == slowest) continue;
    for (auto it = c.hits.begin(); it != c.hits.end();) {
      const BudgetHit* h = *it;
      if (h->nodes_unknown || !on_slow_nodes(h->nodes)) {
        ++it;
        continue;
      }
      notes.push_back(fmt::format("{} was measured on {} only, the node{} the fleet names slowest: one cause ({}), counted once", h->id,
                                  fmt::join(h->nodes, ","), h->nodes.size() == 1 ? "" : "s", slowest->id));
      if (report::severity(h->status) > report::severity(slowest->status)) slowest->status = h->status;
      slowest->hits.push_back(h);
      it = c.hits.erase(it);
    }
  }
  if (on_slow_nodes(meas.busbw_nodes)) meas.busbw_ratio = BudgetMeasure{};
}

}  // namespace

report::Finding explain_budget(const std::vector<BudgetInput>& reports, const core::Kb& kb, const BudgetOptions& o) {
  Finding f;
  f.id = "gap.budget";
  f.layer = "workload";
  f.table_always = true;
  const double measured = o.measured_pct;
  const double shortfall = std::max(0.0, 100.0 - measured);

  std::map<std::string, BudgetHit, std::less<>> hits;
  std::vector<std::string> order;  // ids in the order the reports give them
  std::set<std::string, std::less<>> seen_ids;  // every id of the reports, any status: what was measured
  BudgetMeasures meas;
  std::size_t undecided = 0, used = 0;
  std::vector<std::string> notes;
  auto attribute = [&](const std::string& id, Status st, const std::string& title, std::string where) {
    auto [it, fresh] = hits.try_emplace(id);
    auto& c = it->second;
    if (fresh) {
      c.id = id;
      c.status = st;
      c.title = title;
      c.kb = kb.find(id);
      order.push_back(id);
    } else if (report::severity(st) > report::severity(c.status)) {
      c.status = st;
      c.title = title;
    }
    if (c.where_seen.insert(where).second) c.where.push_back(std::move(where));
  };
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& in = reports[i];
    std::optional<std::size_t> dup;
    for (std::size_t j = 0; j < i && !dup; ++j)
      if (reports[j].name == in.name || budget_same_report(reports[j].report, in.report)) dup = j;
    if (dup) {
      notes.push_back(fmt::format("{}: the same report as {}: counted once", in.name, reports[*dup].name));
      continue;
    }
    ++used;
    for (const auto& x : in.report.findings) {
      seen_ids.insert(x.id);
      const std::string at = x.subject.empty() ? in.name : fmt::format("{} [{}]", in.name, x.subject);
      if (x.id == "compare.regressed" || x.id == "compare.new" || x.id == "compare.unchanged") {
        auto [target, subject] = budget_compare_target(x.subject);
        seen_ids.insert(target);
        if (budget_problem(x.status))
          attribute(target, x.status, x.title, subject.empty() ? in.name : fmt::format("{} [{}]", in.name, subject));
        continue;
      }
      if (x.id == "fleet.node_failures") {
        for (const auto& [nodes, observed] : x.evidence)
          for (const auto& id : budget_fleet_ids(observed)) {
            seen_ids.insert(id);
            if (x.status == Status::fail) attribute(id, Status::fail, "fails on " + nodes, fmt::format("{} [{}]", in.name, nodes));
          }
        continue;
      }
      budget_measure(x, at, meas);
      if (x.status == Status::skip || x.status == Status::error) ++undecided;
      if (budget_problem(x.status)) {
        attribute(x.id, x.status, x.title, at);
        if (x.id == "nccl_tests.busbw") {
          auto& h = hits.at(x.id);
          auto nodes = budget_measured_nodes(x);
          if (nodes.empty()) h.nodes_unknown = true;
          h.nodes.insert(nodes.begin(), nodes.end());
        }
      }
    }
  }

  // Ids into causes: the knowledge base's grouping, else each id its own cause.
  std::map<std::string, BudgetCause, std::less<>> causes;
  std::vector<std::string> cause_order;
  for (const auto& id : order) {
    const auto& h = hits.at(id);
    const core::KbCause* kc = kb.cause_of(id);
    const std::string cid = kc ? kc->id : id;
    auto [it, fresh] = causes.try_emplace(cid);
    auto& c = it->second;
    if (fresh) {
      c.id = cid;
      c.kb = kc;
      c.title = kc ? kc->title : h.title;
      c.status = h.status;
      cause_order.push_back(cid);
    } else if (report::severity(h.status) > report::severity(c.status)) {
      c.status = h.status;
    }
    c.hits.push_back(&h);
  }
  // A cause that absorbs another takes its findings (and so its measurement) when both are found:
  // a missing topology file is why the collectives are slow, not a second cause beside them.
  for (const auto& cid : cause_order) {
    auto& c = causes.at(cid);
    if (!c.kb || c.kb->absorbs.empty()) continue;
    auto other = causes.find(c.kb->absorbs);
    if (other == causes.end() || other->second.hits.empty() || other->first == cid) continue;
    for (const auto* h : other->second.hits) c.hits.push_back(h);
    if (report::severity(other->second.status) > report::severity(c.status)) c.status = other->second.status;
    other->second.hits.clear();
  }

  budget_one_place_one_cause(causes, cause_order, meas, notes);

  std::vector<BudgetCause*> steps, unestimated, not_counted;
  for (const auto& cid : cause_order) {
    auto& c = causes.at(cid);
    if (c.hits.empty()) continue;  // absorbed
    bool all_not_a_cause = true;
    for (const auto* h : c.hits) {
      if (!h->kb || h->kb->kind != core::KbImpact::Kind::not_a_cause) all_not_a_cause = false;
      if (h->kb && h->kb->kind == core::KbImpact::Kind::estimated) {
        c.prior_low = c.has_prior ? std::min(c.prior_low, h->kb->low_pct) : h->kb->low_pct;
        c.prior_high = c.has_prior ? std::max(c.prior_high, h->kb->high_pct) : h->kb->high_pct;
        c.has_prior = true;
      }
    }
    if (all_not_a_cause) {
      c.not_counted = true;
      not_counted.push_back(&c);
      continue;
    }
    // A measurement is held to the found members' range, else to the range any member of the
    // cause has in the knowledge base (a live finding with no entry of its own), else to 0-99.
    double bl = c.prior_low, bh = c.prior_high;
    bool bound = c.has_prior;
    if (!bound && c.kb)
      for (const auto& m : c.kb->members)
        if (const auto* e = kb.find(m); e && e->kind == core::KbImpact::Kind::estimated) {
          bl = bound ? std::min(bl, e->low_pct) : e->low_pct;
          bh = bound ? std::max(bh, e->high_pct) : e->high_pct;
          bound = true;
        }
    if (!bound) bl = 0, bh = 99;
    if (!budget_estimate(c, meas, bl, bh) && c.has_prior) {
      c.point = (c.prior_low + c.prior_high) / 2;
      c.low = c.prior_low;
      c.high = c.prior_high;
    }
    (c.estimated() ? steps : unestimated).push_back(&c);
  }
  // Ranked: measured causes by their estimate, suspected ones at half theirs (ties by id).
  auto rank_key = [](const BudgetCause* c) { return c->measured ? c->point : kPriorRankWeight * c->point; };
  std::stable_sort(steps.begin(), steps.end(), [&](auto* a, auto* b) { return rank_key(a) != rank_key(b) ? rank_key(a) > rank_key(b) : a->id < b->id; });

  // Never more than the gap: when the estimates explain more than the shortfall, the suspected
  // causes go toward the low ends of their ranges first, then the measured ones, then (when even
  // the low ends overshoot) every share is scaled below its range. The same lambda moves each.
  std::vector<double> points(steps.size()), lows(steps.size()), shares(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) points[i] = steps[i]->point, lows[i] = steps[i]->low;
  const double explained_est = budget_explained(steps, points);
  int fit_stage = 0;  // 0: fits as estimated; 1: priors lowered; 2: measured too; 3: below the ranges
  shares = points;
  if (explained_est > shortfall + 1e-9) {
    auto with = [&](int stage, double lambda) {
      std::vector<double> s(steps.size());
      for (std::size_t i = 0; i < steps.size(); ++i) {
        const bool prior = !steps[i]->measured;
        if (stage == 1) s[i] = prior ? lows[i] + lambda * (points[i] - lows[i]) : points[i];
        else if (stage == 2) s[i] = prior ? lows[i] : lows[i] + lambda * (points[i] - lows[i]);
        else s[i] = lambda * lows[i];
      }
      return s;
    };
    for (int stage = 1; stage <= 3; ++stage) {
      if (budget_explained(steps, with(stage, 0)) > shortfall + 1e-9 && stage < 3) continue;
      double lo = 0, hi = 1;  // explained grows with lambda: the largest lambda that fits
      for (int it = 0; it < 60; ++it) {
        const double mid = (lo + hi) / 2;
        (budget_explained(steps, with(stage, mid)) <= shortfall ? lo : hi) = mid;
      }
      shares = with(stage, lo);
      fit_stage = stage;
      break;
    }
  }
  for (std::size_t i = 0; i < steps.size(); ++i) steps[i]->share = shares[i];

  auto explained_at = [&](auto pick) {
    double keep = 1;
    for (const auto* c : steps) keep *= 1 - pick(c) / 100;
    return std::min(shortfall, 100 * (1 - keep));
  };
  // Fitted shares meet the shortfall to the bisection's precision: exactly, then.
  const double explained = fit_stage > 0 ? shortfall : std::min(shortfall, budget_explained(steps, shares));
  const double explained_low = std::min(explained, explained_at([](const BudgetCause* c) { return c->low; }));
  const double explained_high = std::max(explained, explained_at([](const BudgetCause* c) { return c->high; }));
  const double unexplained = std::max(0.0, shortfall - explained);
  const double unexplained_low = shortfall - explained_high, unexplained_high = shortfall - explained_low;

  // The waterfall, in points of the reference: each cause takes its share of what is left, and the
  // residual takes the level to the measured one exactly.
  const double scale = shortfall;
  f.table = {{"step", "basis", "estimate", "points", "level", "waterfall (points below the reference)"}};
  f.table.push_back({"reference", "", "", "", "100.0%", budget_bar(0, 0, scale, '#')});
  double level = 100;
  std::vector<std::pair<std::string, double>> step_metrics;
  report::Chart chart;
  chart.kind = report::Chart::Kind::waterfall;
  chart.title = "the gap, explained: the estimated share of each cause (fitted to the shortfall), then what is left";
  chart.y_label = "% of reference";
  chart.reference_y = 100 * o.threshold;
  chart.reference_label = fmt::format("{:.0f}% bar", 100 * o.threshold);
  chart.steps.push_back({"reference", 0, 100, false});
  for (auto* c : steps) {
    const double drop = level * c->share / 100;
    chart.steps.push_back({c->id, level, level - drop, false});
    std::string est = c->measured ? fmt::format("{:.1f}%", c->point) : budget_range(c->low, c->high);
    f.table.push_back({c->id, c->what_if ? "what-if" : c->measured ? "measured" : "prior", est, fmt::format("-{:.1f}", drop), budget_pct(level - drop) + "%",
                       budget_bar(100 - level, 100 - level + drop, scale, '#')});
    step_metrics.emplace_back("step." + c->id + ".low_pct", c->low);
    step_metrics.emplace_back("step." + c->id + ".high_pct", c->high);
    step_metrics.emplace_back("step." + c->id + ".estimate_pct", c->point);
    step_metrics.emplace_back("step." + c->id + ".points", drop);
    step_metrics.emplace_back("step." + c->id + ".measured", c->measured ? 1 : 0);
    if (c->what_if) step_metrics.emplace_back("step." + c->id + ".what_if", 1);
    step_metrics.emplace_back("step." + c->id + ".findings", static_cast<double>(c->hits.size()));
    level -= drop;
  }
  const double residual_points = fit_stage > 0 || level - measured < 1e-9 ? 0.0 : level - measured;
  f.table.push_back({"unexplained", "", fmt_residual(unexplained_low, unexplained_high), fmt::format("-{:.1f}", residual_points),
                     budget_pct(level - residual_points) + "%", budget_bar(100 - level, 100 - level + residual_points, scale, '?')});
  f.table.push_back({"measured", "", "", "", budget_pct(measured) + "%",
                     fmt::format("explained {:.1f} + unexplained {:.1f} = shortfall {:.1f}", explained, unexplained, shortfall)});
  step_metrics.emplace_back("step.unexplained.points", residual_points);
  if (residual_points > 0) chart.steps.push_back({"unexplained", level, level - residual_points, true});
  chart.steps.push_back({"measured", 0, measured, false});
  f.charts.push_back(std::move(chart));

  f.metric("measured_pct_of_reference", measured);
  f.metric("shortfall_pct", shortfall);
  f.metric("explained_pct.low", explained_low);
  f.metric("explained_pct.high", explained_high);
  f.metric("explained_pct", explained);
  f.metric("explained_pct.as_estimated", explained_est);
  f.metric("unexplained_pct", unexplained);
  f.metric("unexplained_pct.low", unexplained_low);
  f.metric("unexplained_pct.high", unexplained_high);
  f.metric("fitted", fit_stage);
  f.metric("causes", static_cast<double>(steps.size()));
  f.metric("measured_causes", static_cast<double>(std::count_if(steps.begin(), steps.end(), [](auto* c) { return c->measured; })));
  std::size_t estimated_findings = 0;
  for (const auto* c : steps) estimated_findings += c->hits.size();
  f.metric("estimated_findings", static_cast<double>(estimated_findings));
  f.metric("unestimated_findings", static_cast<double>(unestimated.size()));
  f.metric("reports", static_cast<double>(used));
  for (auto& m : step_metrics) f.metrics.push_back(std::move(m));

  // Each cause: its findings (where, title), its basis, its range and source, its share.
  for (const auto* c : steps) {
    std::string members;
    for (const auto* h : c->hits) members += fmt::format("{}{} ({} in {}: {})", members.empty() ? "" : "; ", h->id, report::to_string(h->status), budget_where(*h), h->title);
    std::string basis;
    if (c->measured) {
      basis = (c->what_if ? "basis: what-if: " : "basis: measured: ") + c->measured_how;
    } else {
      const core::KbImpact* k = nullptr;
      for (const auto* h : c->hits)
        if (h->kb && h->kb->kind == core::KbImpact::Kind::estimated && (!k || h->kb->high_pct > k->high_pct)) k = h->kb;
      std::string cond = k ? budget_conditions(*k) : "";
      basis = fmt::format("basis: prior (configuration only, nothing in the reports measures it): estimated {} of throughput{}{}{}",
                          budget_range(c->low, c->high), cond.empty() ? "" : " where " + cond, k && !k->note.empty() ? "; assumes " + k->note : "",
                          k ? " (source: " + budget_source(k->source) + ")" : "");
    }
    std::string share = std::fabs(c->share - c->point) > 0.05
                            ? fmt::format("{:.1f} of throughput after fitting to the shortfall (estimated {:.1f})", c->share, c->point)
                            : fmt::format("{:.1f}% of throughput", c->share);
    f.add(c->id, fmt::format("{}: {}; {}; share {}", c->title, members, basis, share));
  }
  // The next measurement: the first in the knowledge base's order that no report covers.
  std::vector<const core::KbMeasurement*> missing;
  for (const auto& m : kb.measurements) {
    bool covered = false;
    for (const auto& id : seen_ids)
      for (const auto& p : m.covered_by) covered = covered || core::id_matches(p, id);
    if (!covered) missing.push_back(&m);
  }
  std::string next;
  if (shortfall <= 0) {
    f.add("unexplained", "no shortfall to explain");
  } else if (fit_stage > 0) {
    f.add("unexplained", fmt::format("none left once the estimates are fitted: as estimated they explain {:.1f} points of a {:.1f}-point shortfall",
                                     explained_est, shortfall));
  } else if (unexplained <= 0.05) {
    f.add("unexplained", fmt::format("none: the estimates ({:.1f} points) cover the {:.1f}-point shortfall", explained, shortfall));
  } else if (!missing.empty()) {
    next = missing.front()->name;
    f.add("unexplained", fmt::format("{:.1f} points ({:.1f}-{:.1f}); next measurement: {}: {}", unexplained, unexplained_low, unexplained_high, next,
                                     missing.front()->take));
    std::string rest;
    for (std::size_t i = 1; i < missing.size(); ++i) rest += (rest.empty() ? "" : ", ") + missing[i]->name;
    if (!rest.empty()) f.add("not measured", rest);
  } else {
    f.add("unexplained", fmt::format("{:.1f} points ({:.1f}-{:.1f}); every measurement the knowledge base lists was given: the rest is outside what "
                                     "perfgap measures (model, software versions, input pipeline) or in the unestimated findings listed",
                                     unexplained, unexplained_low, unexplained_high));
  }
  for (const auto* c : unestimated)
    for (const auto* h : c->hits) {
      const std::string why = h->kb ? h->kb->note
                                    : "no knowledge-base entry for this id (a newer perfgap's or a site's own: add one with --kb DIR)";
      f.add(h->id, fmt::format("{} in {}: {}; unestimated: {}{}", report::to_string(h->status), budget_where(*h), h->title, why,
                               c->id != h->id ? " (cause: " + c->id + ")" : ""));
    }
  for (const auto* c : not_counted)
    for (const auto* h : c->hits) f.add(h->id, fmt::format("{} in {}: not counted: {}", report::to_string(h->status), budget_where(*h), h->title, h->kb->note));

  if (fit_stage > 0 && shortfall > 0) {
    static const char* const kHow[] = {"", "the suspected (prior) causes are taken toward the low ends of their ranges",
                                       "the suspected causes sit at their low ends and the measured ones are scaled within their ranges",
                                       "even the low ends exceed it: every share is scaled below its range"};
    f.add("estimates", fmt::format("the estimates overlap or sit high for this run: they add up to {:.1f} points, more than the {:.1f}-point shortfall; "
                                   "to fit, {} (the shares shown)",
                                   explained_est, shortfall, kHow[fit_stage]));
  }
  if (undecided)
    f.add("undecided", fmt::format("{} finding{} of the reports could not decide (skip or error): what they would find is not in the budget", undecided,
                                   undecided == 1 ? "" : "s"));
  for (auto& n : notes) f.add("reports", std::move(n));
  f.add("arithmetic", fmt::format("explained {:.1f} + unexplained {:.1f} = shortfall {:.1f} points of the reference", explained, unexplained, shortfall));
  // What the figure came from last: the title and the table already say it.
  for (const auto& e : o.measured_evidence) f.evidence.push_back(e);

  const bool below = measured < 100 * o.threshold;
  f.status = below ? Status::fail : Status::pass;
  std::string head = below ? fmt::format("{:.1f}% of reference, {:.1f} points short (bar {:.0f}%)", measured, shortfall, 100 * o.threshold)
                           : fmt::format("{:.1f}% of reference, at or above the {:.0f}% bar", measured, 100 * o.threshold);
  const std::size_t n_measured = static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](auto* c) { return c->measured; }));
  const std::string counted =
      fmt::format("{} cause{} ({} measured)", steps.size(), steps.size() == 1 ? "" : "s", n_measured);
  if (steps.empty())
    f.title = fmt::format("{}: no estimated cause in {} report{}{}", head, used, used == 1 ? "" : "s",
                          shortfall > 0 ? fmt::format(", {:.1f} points unexplained", unexplained) : "");
  else if (fit_stage > 0 && shortfall > 0)
    f.title = fmt::format("{}: {} account for all {:.1f} points only once fitted (as estimated they add up to {:.1f}: they overlap or sit high); "
                          "largest: {}, {:.1f} points",
                          head, counted, shortfall, explained_est, steps.front()->id, steps.front()->share);
  else
    f.title = fmt::format("{}: {} explain {:.1f} points ({:.1f}-{:.1f}), {:.1f} unexplained", head, counted, explained, explained_low, explained_high,
                          unexplained);
  if (!next.empty()) f.title += "; next: " + next;
  if (below) {
    if (!steps.empty()) {
      const auto* top = steps.front();
      f.fix = fmt::format("First {} ({:.1f} points, {}): {}. ", top->id, top->share,
                          top->measured ? "measured" : "suspected from configuration only: measure it before counting on it",
                          top->kb && !top->kb->next.empty() ? top->kb->next : top->title);
      f.fix += "Then the other causes by their measured share; measure again and run explain on the new reports. ";
    }
    f.fix += next.empty() ? "Compare the run with the reference step by step (profile.compare) for the rest." : "For the rest, measure " + next + ".";
    f.impact = fmt::format("{:.1f}% of the reference throughput lost: {:.1f} points explained by {}, {:.1f} not explained", shortfall, explained,
                           counted, unexplained);
  }
  return f;
}

}  // namespace perfgap::analyzers
