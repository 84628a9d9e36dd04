#include "analyzers/budget.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <set>

#include "core/config.hpp"

namespace perfgap::analyzers {
namespace {

using report::Finding;
using report::Status;

// One finding id of the reports, whatever its subjects and reports: in data-parallel training the
// slowest node sets the pace, so a cause found on many nodes (or for many processes) costs once.
struct BudgetCause {
  std::string id;
  Status status = Status::warn;
  std::string title;
  std::vector<std::string> where;  // "REPORT" or "REPORT [subject]", in the order found
  std::set<std::string, std::less<>> where_seen;  // a fleet's reports name thousands of places
  const core::KbImpact* kb = nullptr;
};

constexpr std::size_t kBudgetWhereShown = 3;
constexpr int kBudgetBarWidth = 40;

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

std::string budget_where(const BudgetCause& c) {
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

}  // namespace

report::Finding explain_budget(const std::vector<BudgetInput>& reports, const core::Kb& kb, const BudgetOptions& o) {
  Finding f;
  f.id = "gap.budget";
  f.layer = "workload";
  f.table_always = true;
  const double measured = o.measured_pct;
  const double shortfall = std::max(0.0, 100.0 - measured);

  std::map<std::string, BudgetCause, std::less<>> causes;
  std::vector<std::string> order;  // ids in the order the reports give them
  std::set<std::string, std::less<>> seen_ids;  // every id of the reports, any status: what was measured
  std::size_t undecided = 0, used = 0;
  std::vector<std::string> notes;
  auto attribute = [&](const std::string& id, Status st, const std::string& title, std::string where) {
    auto [it, fresh] = causes.try_emplace(id);
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
      if (x.status == Status::skip || x.status == Status::error) ++undecided;
      if (budget_problem(x.status)) attribute(x.id, x.status, x.title, at);
    }
  }

  std::vector<const BudgetCause*> steps, unestimated, unknown, not_counted;
  for (const auto& id : order) {
    const auto& c = causes.at(id);
    if (!c.kb) unknown.push_back(&c);
    else if (c.kb->kind == core::KbImpact::Kind::estimated) steps.push_back(&c);
    else if (c.kb->kind == core::KbImpact::Kind::unestimated) unestimated.push_back(&c);
    else not_counted.push_back(&c);
  }
  auto mid = [](const BudgetCause* c) { return (c->kb->low_pct + c->kb->high_pct) / 2; };
  // Ranked: the largest estimated share first (ties by id, so the order is stable).
  std::stable_sort(steps.begin(), steps.end(), [&](auto* a, auto* b) { return mid(a) != mid(b) ? mid(a) > mid(b) : a->id < b->id; });

  double keep_low = 1, keep_high = 1, keep_mid = 1;  // the share of the reference the causes leave
  for (const auto* c : steps) {
    keep_low *= 1 - c->kb->low_pct / 100;
    keep_high *= 1 - c->kb->high_pct / 100;
    keep_mid *= 1 - mid(c) / 100;
  }
  const double explained_low = 100 * (1 - keep_low), explained_high = 100 * (1 - keep_high), explained_mid = 100 * (1 - keep_mid);
  const double unexplained = std::max(0.0, shortfall - explained_mid);
  const double unexplained_low = std::max(0.0, shortfall - explained_high), unexplained_high = std::max(0.0, shortfall - explained_low);

  // The waterfall, in points of the reference: each cause takes its share of what is left.
  const double scale = std::max(shortfall, explained_mid);
  f.table = {{"step", "estimate", "points", "level", "waterfall (points below the reference)"}};
  f.table.push_back({"reference", "", "", "100.0%", budget_bar(0, 0, scale, '#')});
  double level = 100;
  std::vector<std::pair<std::string, double>> step_metrics;
  // The same waterfall for the HTML page, in percent of the reference.
  report::Chart chart;
  chart.kind = report::Chart::Kind::waterfall;
  chart.title = "the gap, explained: estimated cost of each finding (mid-range), then what is left";
  chart.y_label = "% of reference";
  chart.reference_y = 100 * o.threshold;
  chart.reference_label = fmt::format("{:.0f}% bar", 100 * o.threshold);
  chart.steps.push_back({"reference", 0, 100, false});
  for (const auto* c : steps) {
    const double drop = level * mid(c) / 100;
    chart.steps.push_back({c->id, level, level - drop, false});
    f.table.push_back({c->id, budget_range(c->kb->low_pct, c->kb->high_pct), fmt::format("-{:.1f}", drop), budget_pct(level - drop) + "%",
                       budget_bar(100 - level, 100 - level + drop, scale, '#')});
    step_metrics.emplace_back("step." + c->id + ".low_pct", c->kb->low_pct);
    step_metrics.emplace_back("step." + c->id + ".high_pct", c->kb->high_pct);
    step_metrics.emplace_back("step." + c->id + ".points", drop);
    level -= drop;
  }
  const double residual_points = std::max(0.0, level - measured);
  f.table.push_back({"unexplained", unexplained_low == unexplained_high ? "" : fmt::format("{:.1f}-{:.1f}", unexplained_low, unexplained_high),
                     fmt::format("-{:.1f}", residual_points), budget_pct(std::min(level, std::max(measured, 0.0))) + "%",
                     budget_bar(100 - level, 100 - level + residual_points, scale, '?')});
  f.table.push_back({"measured", "", "", budget_pct(measured) + "%", ""});
  step_metrics.emplace_back("step.unexplained.points", residual_points);
  if (residual_points > 0) chart.steps.push_back({"unexplained", level, level - residual_points, true});
  chart.steps.push_back({"measured", 0, measured, false});
  f.charts.push_back(std::move(chart));

  f.metric("measured_pct_of_reference", measured);
  f.metric("shortfall_pct", shortfall);
  f.metric("explained_pct.low", explained_low);
  f.metric("explained_pct.high", explained_high);
  f.metric("explained_pct", explained_mid);
  f.metric("unexplained_pct", unexplained);
  f.metric("unexplained_pct.low", unexplained_low);
  f.metric("unexplained_pct.high", unexplained_high);
  f.metric("estimated_findings", static_cast<double>(steps.size()));
  f.metric("unestimated_findings", static_cast<double>(unestimated.size() + unknown.size()));
  f.metric("reports", static_cast<double>(used));
  for (auto& m : step_metrics) f.metrics.push_back(std::move(m));

  for (const auto* c : steps) {
    std::string cond = budget_conditions(*c->kb);
    f.add(c->id, fmt::format("{} in {}: {}; estimated {} of throughput{}{} (source: {})", report::to_string(c->status), budget_where(*c), c->title,
                             budget_range(c->kb->low_pct, c->kb->high_pct), cond.empty() ? "" : " where " + cond,
                             c->kb->note.empty() ? "" : "; assumes " + c->kb->note, budget_source(c->kb->source)));
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
  } else if (unexplained_high <= 0) {
    f.add("unexplained", fmt::format("none: the estimates ({:.1f}-{:.1f} points) cover the {:.1f}-point shortfall", explained_low, explained_high, shortfall));
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
    f.add(c->id, fmt::format("{} in {}: {}; unestimated: {}", report::to_string(c->status), budget_where(*c), c->title, c->kb->note));
  for (const auto* c : unknown)
    f.add(c->id, fmt::format("{} in {}: {}; unestimated: no knowledge-base entry for this id (a newer perfgap's or a site's own: add one with --kb DIR)",
                             report::to_string(c->status), budget_where(*c), c->title));
  for (const auto* c : not_counted)
    f.add(c->id, fmt::format("{} in {}: not counted: {}", report::to_string(c->status), budget_where(*c), c->kb->note));

  if (explained_mid > shortfall && !steps.empty())
    f.add("estimates", fmt::format("the estimates ({:.1f} points at mid-range) exceed the {:.1f}-point shortfall: this workload sits at the low end of "
                                   "their ranges, or the causes overlap",
                                   explained_mid, shortfall));
  if (undecided)
    f.add("undecided", fmt::format("{} finding{} of the reports could not decide (skip or error): what they would find is not in the budget", undecided,
                                   undecided == 1 ? "" : "s"));
  for (auto& n : notes) f.add("reports", std::move(n));
  // What the figure came from last: the title and the table already say it.
  for (const auto& e : o.measured_evidence) f.evidence.push_back(e);

  const bool below = measured < 100 * o.threshold;
  f.status = below ? Status::fail : Status::pass;
  std::string head = below ? fmt::format("{:.1f}% of reference, {:.1f} points short (bar {:.0f}%)", measured, shortfall, 100 * o.threshold)
                           : fmt::format("{:.1f}% of reference, at or above the {:.0f}% bar", measured, 100 * o.threshold);
  if (steps.empty())
    f.title = fmt::format("{}: no estimated finding in {} report{}{}", head, used, used == 1 ? "" : "s",
                          shortfall > 0 ? fmt::format(", {:.1f} points unexplained", unexplained) : "");
  else
    f.title = fmt::format("{}: {} finding{} explain {:.1f}-{:.1f} points, {:.1f} unexplained", head, steps.size(), steps.size() == 1 ? "" : "s",
                          explained_low, explained_high, unexplained);
  if (!next.empty()) f.title += "; next: " + next;
  if (below) {
    f.fix = steps.empty() ? "" : "Fix the findings in the waterfall's order (the largest estimated share first), measure again and run explain on the new reports. ";
    f.fix += next.empty() ? "Compare the run with the reference step by step (profile.compare) for the rest." : "For the rest, measure " + next + ".";
    f.impact = fmt::format("{:.1f}% of the reference throughput lost: {:.1f}-{:.1f} points estimated from findings, {:.1f} not explained", shortfall,
                           explained_low, explained_high, unexplained);
  }
  return f;
}

}  // namespace perfgap::analyzers
