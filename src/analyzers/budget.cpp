#include "analyzers/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "analyzers/budget_model.hpp"
#include "compare/same_job.hpp"
#include "core/config.hpp"

namespace perfgap::analyzers {

using namespace budget_model;

namespace {

using report::Finding;
using report::Status;

constexpr int kBudgetBarWidth = 40;
// A suspicion from configuration alone ranks as if half its size against a measured cause: the
// measured one is what the run shows, the suspected one what it may show.
constexpr double kPriorRankWeight = 0.5;
// Points of the host's launch wait that the host's causes found do not explain: from this much,
// where it is more than the largest cause, the fix opens with the job's own launching.
constexpr double kLaunchRestFirst = 5;

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

std::string fmt_residual(double lo, double hi) { return std::fabs(hi - lo) < 0.05 ? "" : fmt::format("{:.1f}-{:.1f}", lo, hi); }

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
  for (auto it = meas.busbw_by_coll.begin(); it != meas.busbw_by_coll.end();)
    it = on_slow_nodes(it->second.nodes) ? meas.busbw_by_coll.erase(it) : std::next(it);
}

// What the reports hold, each report once: the findings that are problems by id (the budget's
// hits), every id seen (what was measured), the measures, and notes on what was counted once.
struct BudgetCollected {
  std::map<std::string, BudgetHit, std::less<>> hits;
  std::vector<std::string> order;  // ids in the order the reports give them
  std::set<std::string, std::less<>> seen_ids;  // every id of the reports, any status: what was measured
  std::map<std::string, std::string, std::less<>> other_scale_seen;  // budget_measurement_named
  BudgetMeasures meas;
  std::size_t undecided = 0, used = 0;
  std::vector<std::string> notes;
  std::string measured_source;  // the --measured log (steps.gap's subject): another log's steps.gap is another run's gap
  // Something shows InfiniBand in use: an RDMA port or NCCL's IB settings judged (net.ib.*,
  // nccl.ib.*, not skipped), or nccl-tests run across nodes.
  bool ib_seen = false;

  void attribute(const core::Kb& kb, const std::string& id, Status st, const std::string& title, std::string where, bool no_busy = false) {
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
    if (c.where_seen.insert(where).second) {
      c.where.push_back(std::move(where));
      c.said.emplace_back(st, title);
      if (no_busy) ++c.no_busy_places;
    } else if (auto at = std::find(c.where.begin(), c.where.end(), where); at != c.where.end()) {
      auto& [was, was_title] = c.said[static_cast<std::size_t>(at - c.where.begin())];
      if (report::severity(st) > report::severity(was)) was = st, was_title = title;
    }
  }

  // One report's findings: compare.* stand for the finding they name, fleet.node_failures for
  // the ids it lists, the rest for themselves.
  // foreign: how the report is of another job than the profiled one (empty: the same, or not
  // said); its bandwidths then price nothing of the job.
  void add_report(const BudgetInput& in, const core::Kb& kb, const std::string& foreign = {}) {
    // The turbostat captures of this report with no busy core: their findings price nothing.
    std::set<std::string, std::less<>> no_busy;
    for (const auto& x : in.report.findings)
      if (budget_no_busy_capture(x)) no_busy.insert(x.subject);
    for (const auto& x : in.report.findings) {
      // A node whose replayed saving is one late rank's or a late set's within it (whatif.node's
      // its_ranks_saved_ms_per_iter) is no node to drain: the rank's finding is the cause, once.
      if (x.id == "whatif.node" &&
          std::any_of(x.metrics.begin(), x.metrics.end(), [](const auto& m) { return m.first == "its_ranks_saved_ms_per_iter"; })) {
        notes.push_back(fmt::format("{} [{}]: its saving is its late ranks' (whatif.rank, whatif.late_set), not the node's: counted there", in.name,
                                    x.subject));
        continue;
      }
      if (auto other = budget_other_runs_gap(x, in.name, measured_source); !other.empty()) {
        notes.push_back(std::move(other));
        continue;
      }
      // Another run's bandwidth measures nothing of the job: its measurement is still to take.
      const bool foreign_busbw = !foreign.empty() && (x.id == "nccl_tests.busbw" || x.id == "nccl_inspector.busbw");
      const std::string at = x.subject.empty() ? in.name : fmt::format("{} [{}]", in.name, x.subject);
      if (x.id == "whatif.nccl_tests" && budget_what_if_other_scale(x)) other_scale_seen.try_emplace(x.id, at);
      // A bandwidth replay that skips (the runs measured no collective of the job's kinds, or another
      // GPU) measured nothing of the job: collective bandwidth is still to measure.
      else if (!foreign_busbw && !(x.id == "whatif.nccl_tests" && (x.status == Status::skip || x.status == Status::error))) seen_ids.insert(x.id);
      // A metric of a finding compared (busbw by size of nccl_tests.busbw): that finding was
      // measured (the metric itself stays a finding of its own).
      if (x.id == "compare.metric") seen_ids.insert(budget_compare_target(x.subject).first);
      if (x.id == "compare.regressed" || x.id == "compare.new" || x.id == "compare.unchanged") {
        auto [target, subject] = budget_compare_target(x.subject);
        seen_ids.insert(target);
        if (budget_problem(x.status))
          attribute(kb, target, x.status, x.title, subject.empty() ? in.name : fmt::format("{} [{}]", in.name, subject));
        continue;
      }
      if (x.id == "fleet.node_failures") {
        for (const auto& [nodes, observed] : x.evidence)
          for (const auto& id : budget_fleet_ids(observed)) {
            seen_ids.insert(id);
            if (x.status == Status::fail) attribute(kb, id, Status::fail, "fails on " + nodes, fmt::format("{} [{}]", in.name, nodes));
          }
        continue;
      }
      if (foreign_busbw) {
        const std::string said = fmt::format("the busbw measured in {} is of another run than the profiled job ({}): a bandwidth of "
                                             "another scale or GPU is no measured cost of this job (nccl-tests at the job's ranks and "
                                             "nodes, on its GPUs, would price it)",
                                             at, foreign);
        if (std::find(meas.busbw_foreign.begin(), meas.busbw_foreign.end(), said) == meas.busbw_foreign.end()) meas.busbw_foreign.push_back(said);
      } else {
        budget_measure(x, at, meas);
      }
      if ((x.id.starts_with("net.ib.") || x.id.starts_with("nccl.ib.")) && x.status != Status::skip && x.status != Status::error) ib_seen = true;
      if (x.id == "nccl_tests.busbw" && budget_measured_nodes(x).size() > 1) ib_seen = true;
      if (x.status == Status::skip || x.status == Status::error) ++undecided;
      // A cause's replay that passes measured it small: a member of its cause as a warning is.
      if (budget_problem(x.status) || budget_what_if_cause(x)) {
        attribute(kb, x.id, x.status, x.title, at, x.id.starts_with("turbostat.") && no_busy.count(x.subject));
        if (auto [figure, ratio] = budget_fail_figure(x); x.status == Status::fail && !figure.empty()) {
          auto& h = hits.at(x.id);
          if (h.figure.empty() || ratio < h.figure_ratio) h.figure = figure, h.figure_ratio = ratio;
        }
        if (x.id == "nccl_tests.busbw") {
          auto& h = hits.at(x.id);
          auto nodes = budget_measured_nodes(x);
          if (nodes.empty()) h.nodes_unknown = true;
          h.nodes.insert(nodes.begin(), nodes.end());
        }
      }
    }
  }
};

// A report that holds the job's profile (profile.summary, whatif.replay): what the job is.
bool budget_profiles_job(const compare::ReportView& r) {
  return std::any_of(r.findings.begin(), r.findings.end(), [](const auto& x) { return x.id == "profile.summary" || x.id == "whatif.replay"; });
}

// How a report is of another job than the profiled one (compare's different_jobs against each
// report holding the job's profile: world size against an nccl-tests run's ranks, GPU models);
// empty where it is the same or nothing says.
std::string budget_other_job(const BudgetInput& in, const std::vector<BudgetInput>& reports) {
  if (budget_profiles_job(in.report)) return {};
  std::vector<std::string> said;
  for (const auto& p : reports) {
    if (&p == &in || !budget_profiles_job(p.report)) continue;
    for (auto& d : compare::different_jobs(p.report, p.name, in.report, in.name))
      if (std::find(said.begin(), said.end(), d) == said.end()) said.push_back(std::move(d));
  }
  return fmt::format("{}", fmt::join(said, "; "));
}

void budget_collect(BudgetCollected& got, const std::vector<BudgetInput>& reports, const core::Kb& kb, const std::string& measured_source) {
  got.measured_source = measured_source;
  for (std::size_t i = 0; i < reports.size(); ++i) {
    const auto& in = reports[i];
    std::optional<std::size_t> dup;
    for (std::size_t j = 0; j < i && !dup; ++j)
      if (reports[j].name == in.name || budget_same_report(reports[j].report, in.report)) dup = j;
    if (dup) {
      got.notes.push_back(fmt::format("{}: the same report as {}: counted once", in.name, reports[*dup].name));
      continue;
    }
    ++got.used;
    got.add_report(in, kb, budget_other_job(in, reports));
  }
}

// Ids into causes: the knowledge base's grouping, else each id its own cause; a cause that
// absorbs another takes its findings.
void budget_group_causes(const BudgetCollected& got, const core::Kb& kb, std::map<std::string, BudgetCause, std::less<>>& causes,
                         std::vector<std::string>& cause_order) {
  for (const auto& id : got.order) {
    const auto& h = got.hits.at(id);
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
}

// The causes by what the budget can say of them: estimated (the waterfall's steps, ranked),
// unestimated, and not counted (every finding behind it is not a cause).
struct BudgetSorted {
  std::vector<BudgetCause*> steps, unestimated, not_counted;
  std::vector<BudgetCause*> host_held_out;  // host causes of a job whose GPUs do not wait for their host (budget_host_bound)
};

// Ranked: measured causes by their estimate, suspected ones at half theirs (ties by id).
void budget_rank(std::vector<BudgetCause*>& steps) {
  auto rank_key = [](const BudgetCause* c) { return c->measured ? c->point : kPriorRankWeight * c->point; };
  std::stable_sort(steps.begin(), steps.end(), [&](auto* a, auto* b) { return rank_key(a) != rank_key(b) ? rank_key(a) > rank_key(b) : a->id < b->id; });
}

// Each cause's estimate: measured where the reports hold a measure, else its prior range.
BudgetSorted budget_estimate_causes(std::map<std::string, BudgetCause, std::less<>>& causes, const std::vector<std::string>& cause_order,
                                    const BudgetMeasures& meas, const core::Kb& kb) {
  BudgetSorted sorted;
  for (const auto& cid : cause_order) {
    auto& c = causes.at(cid);
    if (c.hits.empty()) continue;  // absorbed
    bool all_not_a_cause = true;
    for (const auto* h : c.hits) {
      if (!h->kb || h->kb->kind != core::KbImpact::Kind::not_a_cause) all_not_a_cause = false;
      if (h->kb && h->kb->kind == core::KbImpact::Kind::estimated && !h->no_busy_only()) {
        c.prior_low = c.has_prior ? std::min(c.prior_low, h->kb->low_pct) : h->kb->low_pct;
        c.prior_high = c.has_prior ? std::max(c.prior_high, h->kb->high_pct) : h->kb->high_pct;
        c.has_prior = true;
      }
    }
    if (all_not_a_cause) {
      c.not_counted = true;
      sorted.not_counted.push_back(&c);
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
    (c.estimated() ? sorted.steps : sorted.unestimated).push_back(&c);
  }
  budget_rank(sorted.steps);
  return sorted;
}

// The host's causes (causes.yaml `host: true`) cost the step only where the GPUs wait for their
// host. Where the job's traces were replayed without that wait (whatif.launch), what it saves
// bounds them together: estimates adding up to more are lowered by one factor (a prior's range
// with it), and where the GPUs do not wait at all they are taken out of the steps.
struct BudgetHostBound {
  bool found = false;  // whatif.launch measured the wait
  double bound = 0;    // its share of the step
  std::string where;
  double estimated = 0, held = 0;  // the host causes' points together, as estimated and as held
  std::vector<std::string> ids;    // the host causes found with an estimate
  std::vector<std::string> unestimated;  // found, no estimate ("cpu_cstates_turbo (cpu.turbo)")
  bool any() const { return !ids.empty() || !unestimated.empty(); }
};
constexpr double kNothingMeasurable = 0.05;  // points: below this a share prints as 0.0
BudgetHostBound budget_host_bound(BudgetSorted& sorted, const BudgetMeasures& meas) {
  BudgetHostBound hb;
  std::vector<BudgetCause*> host;
  for (auto* c : sorted.steps)
    if (c->kb && c->kb->host) host.push_back(c), hb.ids.push_back(c->id), hb.estimated += c->point;
  for (const auto* c : sorted.unestimated)
    if (c->kb && c->kb->host) {
      std::vector<std::string_view> members;
      for (const auto* h : c->hits) members.emplace_back(h->id);
      hb.unestimated.push_back(fmt::format("{} ({})", c->id, fmt::join(members, ", ")));
    }
  hb.held = hb.estimated;
  if (!meas.host_wait_pct.found) return hb;
  hb.found = true;
  hb.bound = meas.host_wait_pct.value;
  hb.where = meas.host_wait_pct.where;
  if (host.empty() || hb.estimated <= hb.bound + kNothingMeasurable) return hb;
  hb.held = hb.bound;
  if (hb.bound < kNothingMeasurable) {
    for (auto* c : host) {
      sorted.host_held_out.push_back(c);
      std::erase(sorted.steps, c);
    }
    return hb;
  }
  const double k = hb.bound / hb.estimated;
  const std::string others = host.size() > 1 ? fmt::format(" with the host's other causes found ({})", fmt::join(hb.ids, ", ")) : "";
  for (auto* c : host) {
    c->bounded_how = fmt::format("held{} to the {:.1f}% of the step the GPUs wait for their host (whatif.launch in {}): {:.1f} estimated together, "
                                 "each x {:.2f}: {:.1f} points",
                                 others, hb.bound, hb.where, hb.estimated, k, c->point * k);
    c->point *= k;
    // A range prints with %g: kept to a tenth of a point.
    c->low = std::round(c->low * k * 10) / 10;
    c->high = std::max(c->low, std::round(c->high * k * 10) / 10);
  }
  budget_rank(sorted.steps);
  return hb;
}

// What the estimates explain of the shortfall, fitted never to exceed it, and what is left.
struct BudgetTotals {
  double measured = 0, shortfall = 0;
  double explained_est = 0;  // the estimates as they are, before fitting
  int fit_stage = 0;         // 0: fits as estimated; 1: priors lowered; 2: measured too; 3: below the ranges
  double explained = 0, explained_low = 0, explained_high = 0;
  double unexplained = 0, unexplained_low = 0, unexplained_high = 0;
};

// Never more than the gap: when the estimates explain more than the shortfall, the suspected
// causes go toward the low ends of their ranges first, then the measured ones, then (when even
// the low ends overshoot) every share is scaled below its range. The same lambda moves each.
// Sets each step's share; returns the totals.
BudgetTotals budget_fit(const std::vector<BudgetCause*>& steps, double measured) {
  BudgetTotals t;
  t.measured = measured;
  t.shortfall = std::max(0.0, 100.0 - measured);
  const double shortfall = t.shortfall;
  std::vector<double> points(steps.size()), lows(steps.size()), shares(steps.size());
  for (std::size_t i = 0; i < steps.size(); ++i) points[i] = steps[i]->point, lows[i] = steps[i]->low;
  t.explained_est = budget_explained(steps, points);
  shares = points;
  if (t.explained_est > shortfall + 1e-9) {
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
      t.fit_stage = stage;
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
  t.explained = t.fit_stage > 0 ? shortfall : std::min(shortfall, budget_explained(steps, shares));
  t.explained_low = std::min(t.explained, explained_at([](const BudgetCause* c) { return c->low; }));
  t.explained_high = std::max(t.explained, explained_at([](const BudgetCause* c) { return c->high; }));
  t.unexplained = std::max(0.0, shortfall - t.explained);
  t.unexplained_low = shortfall - t.explained_high, t.unexplained_high = shortfall - t.explained_low;
  return t;
}

// The waterfall, in points of the reference: each cause takes its share of what is left, and the
// residual takes the level to the measured one exactly. The table and chart into f; returns the
// steps' metrics (they follow the budget's own).
std::vector<std::pair<std::string, double>> budget_waterfall(Finding& f, const std::vector<BudgetCause*>& steps, const BudgetTotals& t,
                                                             const BudgetOptions& o) {
  const double measured = t.measured;
  const double scale = t.shortfall;
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
    if (c->hypothetical) est = fmt::format("{:.1f}%?", c->point);
    f.table.push_back({c->id, c->hypothetical ? "assumed" : c->what_if ? "what-if" : c->measured ? "measured" : "prior", est, fmt::format("-{:.1f}", drop), budget_pct(level - drop) + "%",
                       budget_bar(100 - level, 100 - level + drop, scale, '#')});
    step_metrics.emplace_back("step." + c->id + ".low_pct", c->low);
    step_metrics.emplace_back("step." + c->id + ".high_pct", c->high);
    step_metrics.emplace_back("step." + c->id + ".estimate_pct", c->point);
    step_metrics.emplace_back("step." + c->id + ".points", drop);
    step_metrics.emplace_back("step." + c->id + ".measured", c->measured ? 1 : 0);
    if (c->what_if) step_metrics.emplace_back("step." + c->id + ".what_if", 1);
    if (c->hypothetical) step_metrics.emplace_back("step." + c->id + ".hypothetical", 1);
    step_metrics.emplace_back("step." + c->id + ".findings", static_cast<double>(c->hits.size()));
    level -= drop;
  }
  const double residual_points = t.fit_stage > 0 || level - measured < 1e-9 ? 0.0 : level - measured;
  f.table.push_back({"unexplained", "", fmt_residual(t.unexplained_low, t.unexplained_high), fmt::format("-{:.1f}", residual_points),
                     budget_pct(level - residual_points) + "%", budget_bar(100 - level, 100 - level + residual_points, scale, '?')});
  f.table.push_back({"measured", "", "", "", budget_pct(measured) + "%",
                     fmt::format("explained {:.1f} + unexplained {:.1f} = shortfall {:.1f}", t.explained, t.unexplained, t.shortfall)});
  step_metrics.emplace_back("step.unexplained.points", residual_points);
  if (residual_points > 0) chart.steps.push_back({"unexplained", level, level - residual_points, true});
  chart.steps.push_back({"measured", 0, measured, false});
  f.charts.push_back(std::move(chart));
  return step_metrics;
}

void budget_metrics(Finding& f, const BudgetTotals& t, const BudgetSorted& sorted, std::size_t used, std::size_t unpriced_fails,
                    std::vector<std::pair<std::string, double>> step_metrics) {
  const auto& steps = sorted.steps;
  f.metric("measured_pct_of_reference", t.measured);
  f.metric("shortfall_pct", t.shortfall);
  f.metric("explained_pct.low", t.explained_low);
  f.metric("explained_pct.high", t.explained_high);
  f.metric("explained_pct", t.explained);
  f.metric("explained_pct.as_estimated", t.explained_est);
  f.metric("unexplained_pct", t.unexplained);
  f.metric("unexplained_pct.low", t.unexplained_low);
  f.metric("unexplained_pct.high", t.unexplained_high);
  f.metric("fitted", t.fit_stage);
  f.metric("causes", static_cast<double>(steps.size()));
  f.metric("measured_causes", static_cast<double>(std::count_if(steps.begin(), steps.end(), [](auto* c) { return c->measured; })));
  std::size_t estimated_findings = 0;
  for (const auto* c : steps) estimated_findings += c->hits.size();
  f.metric("estimated_findings", static_cast<double>(estimated_findings));
  f.metric("unestimated_findings", static_cast<double>(sorted.unestimated.size()));
  // Failing findings not priced (said first, in the title and the fix): the figures are of the
  // priced causes only.
  f.metric("unpriced_fail_findings", static_cast<double>(unpriced_fails));
  f.metric("reports", static_cast<double>(used));
  // The exposed communication no bandwidth of its collective's kind prices (of the collective
  // causes, the largest), only where there is some.
  double unpriced = 0;
  for (const auto* list : {&sorted.steps, &sorted.unestimated})
    for (const auto* c : *list) unpriced = std::max(unpriced, c->unpriced_pct);
  if (unpriced > 0) f.metric("unpriced_exposed_pct", unpriced);
  for (auto& m : step_metrics) f.metrics.push_back(std::move(m));
}

// Each cause: its findings (where, title), its basis, its range and source, its share.
// A cause's findings, each with where and what it said: "id (fail in report: title); ...".
std::string budget_members(const BudgetCause& c) {
  std::string members;
  for (const auto* h : c.hits) members += fmt::format("{}{} ({})", members.empty() ? "" : "; ", h->id, budget_said(*h));
  return members;
}

void budget_cause_evidence(Finding& f, const std::vector<BudgetCause*>& steps) {
  for (const auto* c : steps) {
    const std::string members = budget_members(*c);
    std::string basis;
    if (c->hypothetical) {
      basis = "basis: hypothetical: " + c->measured_how;
    } else if (c->measured) {
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
    if (!c->bounded_how.empty()) basis += "; " + c->bounded_how;
    for (const auto* h : c->hits)
      if (h->no_busy_only()) basis += fmt::format("; {} prices nothing: {}", h->id, budget_no_busy_why(*h));
    if (!c->measured && !c->unpriced_how.empty()) basis += "; not measured by the bandwidth given (not priced, below)";
    std::string share = std::fabs(c->share - c->point) > 0.05
                            ? fmt::format("{:.1f} of throughput after fitting to the shortfall (estimated {:.1f})", c->share, c->point)
                            : fmt::format("{:.1f}% of throughput", c->share);
    f.add(c->id, fmt::format("{}: {}; {}; share {}", c->title, members, basis, share));
  }
}

// The exposed communication no bandwidth of its collective's kind prices (an all_reduce_perf run
// says nothing of an AllToAll), said beside the causes rather than priced at another kind's ratio.
void budget_unpriced_evidence(Finding& f, const BudgetSorted& sorted) {
  for (const auto* c : sorted.steps)
    if (!c->unpriced_how.empty()) f.add("not priced", fmt::format("{}: {}", c->id, c->unpriced_how));
  for (const auto* c : sorted.unestimated) {
    if (!c->unpriced_how.empty() && std::none_of(c->hits.begin(), c->hits.end(), [](const BudgetHit* h) { return budget_unpriced_fail(*h); }))
      f.add("not priced", fmt::format("{}: {}; nothing else measures it: not estimated", c->id, c->unpriced_how));
    for (const auto* h : c->hits)
      if (h->no_busy_only()) f.add("not priced", fmt::format("{} ({}): {}", h->id, budget_said(*h), budget_no_busy_why(*h)));
  }
}

// How the job's own launching is shortened, in the words of the framework its profile findings
// name (BudgetMeasures::framework): CUDA's own where none is named.
std::string budget_launching_words(std::string_view framework) {
  if (framework == "PyTorch") return "fewer and larger kernels (CUDA graphs, torch.compile) and no per-step host synchronisation shorten it";
  if (framework == "JAX/XLA")
    return "fewer and larger kernels (whole steps jitted, XLA's command buffers: CUDA graphs) and no per-step host synchronisation "
           "(jax.block_until_ready, device_get) shorten it";
  if (framework == "OpenMP offload")
    return "fewer and larger target regions launched with nowait, data mapped once with target data and no per-step taskwait or "
           "target update shorten it";
  return "fewer and larger kernels (CUDA graphs) and no per-step host synchronisation (cudaStreamSynchronize, synchronous cudaMemcpy) shorten it";
}

// The job's GPUs waiting for their host's launches (whatif.launch warns): not a cause of its own
// but the bound of the host's causes (budget_host_bound). Where none of those is among the reports
// the largest measured lever would sit folded among "not counted", and where those found explain
// little of it the rest is the job's own launching: said before what is unexplained, and returned
// for the fix when it is the largest lever; empty when there is nothing to say.
std::string budget_launch_bound_said(Finding& f, const BudgetMeasures& meas, const BudgetHostBound& hb, const BudgetSorted& sorted) {
  for (const auto* c : sorted.host_held_out)
    f.add(c->id, fmt::format("{}: {}; not counted: the GPUs do not wait for their host's launches ({:.1f}% of the step, whatif.launch in {}), "
                             "so the host's causes cost this job's step nothing measurable",
                             c->title, budget_members(*c), hb.bound, hb.where));
  std::string launching = budget_launching_words(meas.framework);
  // Host stalls (the host busy elsewhere a millisecond or more before a launch) are part of the
  // wait that fewer launches do not shorten: said first where they are most of it.
  if (meas.host_stall_pct >= kNothingMeasurable) {
    const std::string stalls = fmt::format(
        "host stalls of 1 ms or more before a launch, {:.1f}% of the step, are the host busy elsewhere (input, compilation, Python between "
        "steps; a CPU profile of the training process names it), which fewer launches do not shorten",
        meas.host_stall_pct);
    launching = 2 * meas.host_stall_pct >= meas.host_wait_pct.value ? stalls + "; " + launching : launching + "; " + stalls;
  }
  // With host causes found, the wait bounds them whatever whatif.launch's status.
  if (hb.any() && hb.found && sorted.host_held_out.empty()) {
    const std::string pct = fmt::format("{:.1f}%", hb.bound);
    const double rest = hb.bound - hb.held;
    std::string said = fmt::format("the GPUs wait for their host's launches: up to {} of the step (in {}); the host's causes found are part of it: ", pct, hb.where);
    if (!hb.ids.empty()) {
      said += fmt::format("{}", fmt::join(hb.ids, ", "));
      if (hb.held < hb.estimated)
        said += fmt::format(", estimated at {:.1f} points together, more than the wait: held to it", hb.estimated);
      else
        said += fmt::format(", {:.1f} points of it together", hb.held);
    }
    const std::string unestimated = fmt::format("{}", fmt::join(hb.unestimated, ", "));
    if (!hb.unestimated.empty()) said += fmt::format("{}{}, found and not estimated", hb.ids.empty() ? "" : "; ", unestimated);
    if (rest >= kNothingMeasurable)
      said += fmt::format("; the other {:.1f}% of the step is {}the job's own launching or host causes the reports do not measure", rest,
                          hb.unestimated.empty() ? "" : "theirs, ");
    f.add("whatif.launch", said);
    const double top = sorted.steps.empty() ? 0 : sorted.steps.front()->share;
    if (rest < kLaunchRestFirst || rest <= top) return {};
    const std::string explained =
        hb.ids.empty() ? ": it is " : fmt::format(", of which the host's causes found explain {:.1f} points: the other {:.1f}% of the step is ", hb.held, rest);
    return fmt::format("The GPUs wait for their host's launches (whatif.launch: up to {} of the step){}{}the job's own launching or host causes not "
                       "measured: {}{}.",
                       pct, explained, hb.unestimated.empty() ? "" : "the causes found and not estimated (" + unestimated + "), ", launching,
                       hb.unestimated.empty() ? "; perfgap check on the job's nodes names the host's other causes" : "; fix those and measure again");
  }
  const auto it = meas.what_if_pct.find("whatif.launch");
  if (hb.any() || it == meas.what_if_pct.end() || !it->second.found) return {};
  const std::string pct = fmt::format("{:.1f}%", it->second.value);
  f.add("whatif.launch", fmt::format("the GPUs wait for their host's launches: up to {} of the step (in {}), a bound on the host's causes (SMMU "
                                     "command queue, C-states and turbo, NUMA placement, housekeeping threads, the input pipeline), none of "
                                     "which the reports measure: perfgap check on the job's nodes names them",
                                     pct, it->second.where));
  return fmt::format("The GPUs wait for their host's launches (whatif.launch: up to {} of the step): measure the host first (perfgap check "
                     "--format json on the job's nodes, then explain with those reports); in the job, {}.",
                     pct, launching);
}

// What is left unexplained, and the next measurement: of those no report covers, the one the
// reports point at (budget_next_measurements). Returns that measurement's name; empty when none is named.
std::string budget_unexplained_evidence(Finding& f, const core::Kb& kb, const BudgetCollected& got, const BudgetTotals& t) {
  const BudgetNext todo = budget_next_measurements(kb, got.seen_ids, got.meas);
  std::string next;
  if (t.shortfall <= 0) {
    f.add("unexplained", "no shortfall to explain");
  } else if (t.fit_stage > 0) {
    f.add("unexplained", fmt::format("none left once the estimates are fitted: as estimated they explain {:.1f} points of a {:.1f}-point shortfall",
                                     t.explained_est, t.shortfall));
  } else if (t.unexplained <= 0.05) {
    f.add("unexplained", fmt::format("none: the estimates ({:.1f} points) cover the {:.1f}-point shortfall", t.explained, t.shortfall));
  } else if (!todo.order.empty() || !todo.not_indicated.empty()) {
    next = budget_next_said(f, todo, fmt::format("{:.1f} points ({:.1f}-{:.1f})", t.unexplained, t.unexplained_low, t.unexplained_high),
                            got.other_scale_seen);
  } else {
    f.add("unexplained", fmt::format("{:.1f} points ({:.1f}-{:.1f}); every measurement the knowledge base lists was given: the rest is outside what "
                                     "perfgap measures (model, software versions, input pipeline) or in the unestimated findings listed",
                                     t.unexplained, t.unexplained_low, t.unexplained_high));
  }
  return next;
}

// The findings not in the waterfall, how the estimates were fitted, what could not decide, the
// reports' notes, the arithmetic, and where the measured figure came from.
void budget_rest_evidence(Finding& f, const BudgetSorted& sorted, const BudgetTotals& t, BudgetCollected& got, const BudgetOptions& o,
                          std::size_t unpriced_fails) {
  for (const auto* c : sorted.unestimated) {
    for (const auto* h : c->hits) {
      if (budget_unpriced_fail(*h) || h->no_busy_only()) continue;  // said as not priced
      const std::string why = h->kb ? h->kb->note
                                    : "no knowledge-base entry for this id (a newer perfgap's or a site's own: add one with --kb DIR)";
      f.add(h->id, fmt::format("{}; unestimated: {}{}", budget_said(*h), why,
                               c->id != h->id ? " (cause: " + c->id + ")" : ""));
    }
  }
  for (const auto* c : sorted.not_counted)
    for (const auto* h : c->hits) f.add(h->id, fmt::format("{}; not counted: {}", budget_said(*h), h->kb->note));

  if (t.fit_stage > 0 && t.shortfall > 0) {
    static const char* const kHow[] = {"", "the suspected (prior) causes are taken toward the low ends of their ranges",
                                       "the suspected causes sit at their low ends and the measured ones are scaled within their ranges",
                                       "even the low ends exceed it: every share is scaled below its range"};
    f.add("estimates", fmt::format("the estimates overlap or sit high for this run: they add up to {:.1f} points, more than the {:.1f}-point shortfall; "
                                   "to fit, {} (the shares shown)",
                                   t.explained_est, t.shortfall, kHow[t.fit_stage]));
  }
  if (got.undecided)
    f.add("undecided", fmt::format("{} finding{} of the reports could not decide (skip or error): what they would find is not in the budget", got.undecided,
                                   got.undecided == 1 ? "" : "s"));
  for (auto& n : got.notes) f.add("reports", std::move(n));
  f.add("arithmetic", fmt::format("explained {:.1f} + unexplained {:.1f} = shortfall {:.1f} points of the reference{}", t.explained, t.unexplained, t.shortfall,
                                  unpriced_fails ? fmt::format(" (the priced causes only: {} failing finding{} not priced, first above)", unpriced_fails,
                                                               unpriced_fails == 1 ? " is" : "s are")
                                                 : ""));
  // What the figure came from last: the title and the table already say it.
  for (const auto& e : o.measured_evidence) f.evidence.push_back(e);
}

// The status against the bar, the title, and below it the fix (the largest cause first) and impact.
// The top cause's next step: the knowledge base's, except a step that tunes InfiniBand
// (NCCL_IB_*) where no report shows the job or its nodes use InfiniBand (two ranks on one node
// talk over NVLink or PCIe): then measure the bandwidth first.
std::string budget_next_step(const BudgetCause& c, bool ib_seen) {
  if (!c.kb || c.kb->next.empty()) return c.title;
  if (ib_seen || c.kb->next.find("NCCL_IB_") == std::string::npos) return c.kb->next;
  return "measure the bandwidth the job's collectives can reach where the job runs (nccl-tests at the job's ranks and nodes: perfgap analyze "
         "nccl-tests, then perfgap whatif --nccl-tests REPORT replays the job at it); nothing in the reports shows the job uses InfiniBand, "
         "so tune the transport it does use (perfgap sweep over its NCCL settings)";
}

void budget_verdict(Finding& f, const std::vector<BudgetCause*>& steps, const BudgetTotals& t, const BudgetOptions& o, std::size_t used,
                    const std::string& next, bool ib_seen, const std::vector<BudgetUnpricedFail>& unpriced, const std::string& ruled_out) {
  const double measured = t.measured, shortfall = t.shortfall;
  const bool below = measured < 100 * o.threshold;
  f.status = below ? Status::fail : Status::pass;
  std::string head = below ? fmt::format("{:.1f}% of reference, {:.1f} points short (bar {:.0f}%)", measured, shortfall, 100 * o.threshold)
                           : fmt::format("{:.1f}% of reference, at or above the {:.0f}% bar", measured, 100 * o.threshold);
  const std::size_t n_measured = static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](auto* c) { return c->measured; }));
  const std::size_t n_assumed = static_cast<std::size_t>(std::count_if(steps.begin(), steps.end(), [](auto* c) { return c->hypothetical; }));
  const std::string counted = fmt::format("{} {}cause{} ({} measured{})", steps.size(), unpriced.empty() ? "" : "priced ", steps.size() == 1 ? "" : "s", n_measured,
                                          n_assumed ? fmt::format(", {} a what-if at an assumed value", n_assumed) : "");
  if (steps.empty())
    f.title = fmt::format("{}: no estimated cause in {} report{}{}", head, used, used == 1 ? "" : "s",
                          shortfall > 0 ? fmt::format(", {:.1f} points unexplained", t.unexplained) : "");
  else if (t.fit_stage > 0 && shortfall > 0)
    f.title = fmt::format("{}: {} account for all {:.1f} points only once fitted (as estimated they add up to {:.1f}: they overlap or sit high); "
                          "largest: {}, {:.1f} points",
                          head, counted, shortfall, t.explained_est, steps.front()->id, steps.front()->share);
  else
    f.title = fmt::format("{}: {} explain {:.1f} points ({:.1f}-{:.1f}), {:.1f} unexplained", head, counted, t.explained, t.explained_low, t.explained_high,
                          t.unexplained);
  f.title += budget_unpriced_fail_title(unpriced, !steps.empty());
  if (!next.empty()) f.title += "; next: " + next;
  if (below) {
    // The first step worth acting on: a cause measured at about nothing is ruled out, never first.
    const auto worth = std::find_if(steps.begin(), steps.end(), [](const BudgetCause* c) { return !budget_ruled_out(*c); });
    const BudgetCause* top = worth == steps.end() ? nullptr : *worth;
    if (top) {
      f.fix = fmt::format("First {} ({:.1f} points, {}): {}. ", top->id, top->share,
                          top->hypothetical ? "a what-if at an assumed value, not measured: measure it before counting on it"
                          : top->measured   ? "measured"
                                            : "suspected from configuration only: measure it before counting on it",
                          budget_next_step(*top, ib_seen));
      f.fix += budget_unpriced_fail_fix(unpriced, top);
      f.fix += "Then the other causes by their measured share; measure again and run explain on the new reports. ";
    }
    if (!ruled_out.empty()) f.fix += fmt::format("Ruled out (under {:g} points each): {}. ", kRuledOutPoints, ruled_out);
    if (!top) f.fix += budget_unpriced_fail_fix(unpriced, nullptr);
    const std::string rest = top || ruled_out.empty() ? "For the rest" : fmt::format("For the {:.1f} points unexplained", t.unexplained);
    f.fix += next.empty() ? "Compare the run with the reference step by step (profile.compare) for the rest." : rest + ", measure " + next + ".";
    f.impact = fmt::format("{:.1f}% of the reference throughput lost: {:.1f} points explained by {}, {:.1f} not explained", shortfall, t.explained,
                           counted, t.unexplained);
    if (!unpriced.empty())
      f.impact += fmt::format("; {} failing finding{} not priced, which may cost more", unpriced.size(), unpriced.size() == 1 ? "" : "s");
  }
}

}  // namespace

// Reports of different nodes or machines (empty when they are of one node, or do not say): a gap
// is one job's, and findings of a node that did not run it, or of another kind of machine, explain
// nothing of it. The node names; and, against the first report, each difference of GPU and CPU
// models and world size where both reports say them (compare's different_jobs).
struct BudgetMachines {
  std::vector<std::string> nodes, hardware;
};
BudgetMachines budget_other_machines(const std::vector<BudgetInput>& reports) {
  BudgetMachines out;
  const BudgetInput* first = nullptr;
  for (const auto& in : reports) {
    if (!in.report.node.empty() && std::find(out.nodes.begin(), out.nodes.end(), in.report.node) == out.nodes.end()) out.nodes.push_back(in.report.node);
    if (!first) {
      first = &in;
      continue;
    }
    for (auto& d : compare::different_jobs(first->report, first->name, in.report, in.name))
      if (std::find(out.hardware.begin(), out.hardware.end(), d) == out.hardware.end()) out.hardware.push_back(std::move(d));
  }
  if (out.nodes.size() < 2) out.nodes.clear();
  return out;
}

// Said first in the evidence (and, for different machines, in the title).
void budget_machines_said(Finding& f, const BudgetMachines& m) {
  std::vector<report::Evidence> said;
  if (!m.hardware.empty()) {
    said.push_back({"machines", fmt::format("of different machines: {}", fmt::join(m.hardware, "; ")),
                    "the reports of the machines that ran the measured job: a finding of another kind of machine explains nothing of this gap"});
    f.title += fmt::format("; the reports are of different machines ({}{})", m.hardware.front(),
                           m.hardware.size() > 1 ? fmt::format(" and {} more difference{}", m.hardware.size() - 1, m.hardware.size() == 2 ? "" : "s") : "");
  }
  if (!m.nodes.empty())
    said.push_back({"machines", fmt::format("of {} nodes ({}): their findings are counted as one job's", m.nodes.size(), fmt::join(m.nodes, ", ")),
                    "only the nodes that ran the measured job: a node that did not explains nothing of this gap"});
  f.evidence.insert(f.evidence.begin(), said.begin(), said.end());
}

report::Finding explain_budget(const std::vector<BudgetInput>& reports, const core::Kb& kb, const BudgetOptions& o) {
  Finding f;
  f.id = "gap.budget";
  f.layer = "workload";
  f.table_always = true;

  BudgetCollected got;
  budget_collect(got, reports, kb, o.measured_source);
  std::map<std::string, BudgetCause, std::less<>> causes;
  std::vector<std::string> cause_order;
  budget_group_causes(got, kb, causes, cause_order);
  budget_one_place_one_cause(causes, cause_order, got.meas, got.notes);
  BudgetSorted sorted = budget_estimate_causes(causes, cause_order, got.meas, kb);
  const BudgetHostBound host_bound = budget_host_bound(sorted, got.meas);
  const BudgetTotals t = budget_fit(sorted.steps, o.measured_pct);

  const auto unpriced = budget_unpriced_fails(sorted.unestimated, got.meas);
  budget_metrics(f, t, sorted, got.used, unpriced.size(), budget_waterfall(f, sorted.steps, t, o));
  budget_unpriced_fail_evidence(f, unpriced);
  budget_cause_evidence(f, sorted.steps);
  budget_unpriced_evidence(f, sorted);
  const std::string host_first = budget_launch_bound_said(f, got.meas, host_bound, sorted);
  bool all_to_all = false;
  const std::string overlap_first = budget_overlap_bound_said(f, got.meas, sorted.steps.empty() ? 0 : sorted.steps.front()->share, all_to_all);
  const std::string ruled_out = budget_ruled_out_said(f, sorted.steps);
  const std::string next = budget_unexplained_evidence(f, kb, got, t);
  budget_rest_evidence(f, sorted, t, got, o, unpriced.size());
  budget_verdict(f, sorted.steps, t, o, got.used, next, got.ib_seen, unpriced, ruled_out);
  // The larger of the two bounds opens the fix (both are the job's own replays).
  auto bound_of = [&](const char* id) {
    auto it = got.meas.what_if_pct.find(id);
    return it == got.meas.what_if_pct.end() ? 0.0 : it->second.value;
  };
  std::vector<std::pair<double, std::string>> first;
  if (!host_first.empty()) first.emplace_back(std::max(bound_of("whatif.launch"), host_bound.bound), host_first);
  // An overlap bound held mostly by all-to-all is furthest from reach: after the launch wait, and
  // at the end after a measured cause worth acting on; first only where neither is (its words say why).
  const bool measured_top = std::any_of(sorted.steps.begin(), sorted.steps.end(), [](const BudgetCause* c) { return c->measured && !budget_ruled_out(*c); });
  const bool overlap_last = all_to_all && measured_top;
  if (!overlap_first.empty() && !overlap_last) first.emplace_back(all_to_all ? -1 : bound_of("whatif.overlap"), overlap_first);
  std::stable_sort(first.begin(), first.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  for (auto i = first.rbegin(); i != first.rend(); ++i) f.fix = i->second + (f.fix.empty() ? "" : " " + f.fix);
  if (!overlap_first.empty() && overlap_last) f.fix += (f.fix.empty() ? "" : " ") + overlap_first;
  budget_machines_said(f, budget_other_machines(reports));
  return f;
}

}  // namespace perfgap::analyzers
