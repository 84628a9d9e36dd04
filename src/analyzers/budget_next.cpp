// gap.budget's next measurement: of the knowledge base's measurements no report covers, the one
// the reports point at. Where the GPUs wait on their host (a profile's host-bound share, or the
// replayed launch wait) more than on exposed communication, the host's measurements come first;
// where a profile shows no communication kernel at all and nothing measured any, measuring the
// collectives is not indicated: not taken next, said why.
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <vector>

#include "analyzers/budget_model.hpp"
#include "core/config.hpp"

namespace perfgap::analyzers::budget_model {

namespace {

// profile.launch_bound's bar: a GPU that waits on its host longer than this share of the step is
// host-bound.
constexpr double kHostSideFirstPct = 10;

}  // namespace

BudgetNext budget_next_measurements(const core::Kb& kb, const std::set<std::string, std::less<>>& seen_ids, const BudgetMeasures& m) {
  BudgetNext out;
  std::vector<const core::KbMeasurement*> missing;
  for (const auto& km : kb.measurements) {
    bool covered = false;
    for (const auto& id : seen_ids)
      for (const auto& p : km.covered_by) covered = covered || core::id_matches(p, id);
    if (!covered) missing.push_back(&km);
  }
  const BudgetMeasure* host = m.host_bound_pct.found ? &m.host_bound_pct : m.host_wait_pct.found ? &m.host_wait_pct : nullptr;
  const double exposed = m.exposed_pct.found ? m.exposed_pct.value : 0;
  if (host && host->value >= kHostSideFirstPct && host->value > exposed) {
    out.host_first = host == &m.host_bound_pct
                         ? fmt::format("the GPU waits on its host {:.1f}% of the time (in {})", host->value, host->where)
                         : fmt::format("the GPUs wait for their host's launches {:.1f}% of the step (whatif.launch in {})", host->value, host->where);
    std::stable_partition(missing.begin(), missing.end(), [](const auto* km) { return km->side == "host"; });
  }
  const bool comm_seen = m.exposed_pct.found || !m.exposed_by_coll.empty() || !m.kernels_per_iter.empty();
  if (!m.no_comm_where.empty() && !comm_seen) out.no_comm = fmt::format("the profile in {} shows no communication kernel", m.no_comm_where);
  for (const auto* km : missing) (!out.no_comm.empty() && km->side == "communication" ? out.not_indicated : out.order).push_back(km);
  return out;
}

std::string budget_next_said(report::Finding& f, const BudgetNext& todo, const std::string& unexplained,
                             const std::map<std::string, std::string, std::less<>>& other_scale_seen) {
  const auto named = [&](const core::KbMeasurement* km) { return budget_measurement_named(*km, other_scale_seen); };
  std::string next;
  if (!todo.order.empty()) {
    next = todo.order.front()->name;
    const bool host_first = !todo.host_first.empty() && todo.order.front()->side == "host";
    f.add("unexplained", fmt::format("{}; next measurement: {}: {}{}", unexplained, named(todo.order.front()), todo.order.front()->take,
                                     host_first ? fmt::format(" ({}: the host's side first)", todo.host_first) : ""));
  } else {
    f.add("unexplained", fmt::format("{}; no measurement the reports point at is left to take", unexplained));
  }
  std::vector<std::string> rest;
  for (std::size_t i = 1; i < todo.order.size(); ++i) rest.push_back(named(todo.order[i]));
  if (!rest.empty()) f.add("not measured", fmt::format("{}", fmt::join(rest, ", ")));
  std::vector<std::string> moot;
  for (const auto* km : todo.not_indicated) moot.push_back(named(km));
  if (!moot.empty())
    f.add("not indicated", fmt::format("{}: {}: no collective of the job's to measure (a profile of steps that communicate would "
                                       "say otherwise)",
                                       fmt::join(moot, ", "), todo.no_comm));
  return next;
}

}  // namespace perfgap::analyzers::budget_model
