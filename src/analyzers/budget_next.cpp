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

std::string budget_ruled_out_said(report::Finding& f, const std::vector<BudgetCause*>& steps) {
  std::vector<std::string> out;
  for (const auto* c : steps) {
    if (!budget_ruled_out(*c)) continue;
    f.add("ruled out", fmt::format("{}: {} at {:.1f} points, under {:g}: not where the gap is (its basis above); not the fix's first step", c->id,
                                   c->hypothetical ? "replayed at an assumed value" : c->what_if ? "replayed on the job's traces" : "measured",
                                   c->point, kRuledOutPoints));
    out.push_back(fmt::format("{} ({:.1f} points, {})", c->id, c->point, c->hypothetical ? "assumed" : c->what_if ? "replayed" : "measured"));
  }
  return fmt::format("{}", fmt::join(out, ", "));
}

std::string budget_overlap_bound_said(report::Finding& f, const BudgetMeasures& meas, double top, bool& all_to_all) {
  all_to_all = false;
  const auto it = meas.what_if_pct.find("whatif.overlap");
  if (it == meas.what_if_pct.end() || !it->second.found) return {};
  // Where it is at least kLaunchRestFirst's 5% of the step and more than the largest cause.
  if (it->second.value < 5 || it->second.value <= top) return {};
  const auto a2a = meas.overlap_held_by_coll.find("AllToAll");
  all_to_all = a2a != meas.overlap_held_by_coll.end() && meas.overlap_held_ms > 0 && 2 * a2a->second >= meas.overlap_held_ms;
  if (!all_to_all) {
    f.add("whatif.overlap", fmt::format("the collectives' exposed time could hide under compute: up to {:.1f}% of the step (in {}), an upper bound "
                                        "that shares its time with faster collectives and on-time ranks, more than any cause counted",
                                        it->second.value, it->second.where));
    return fmt::format("Up to {:.1f}% of the step is communication that could run under compute (whatif.overlap, an upper bound): overlap it "
                       "(DDP bucket sizes and gradient-as-bucket-view, FSDP forward/backward prefetch, no synchronisation that waits for a "
                       "collective before the step's end), or make the collectives shorter (profile.exposed_comm names them).",
                       it->second.value);
  }
  const std::string held = fmt::format("AllToAll holds {:.2f} of the {:.2f} ms per iteration it hides", a2a->second, meas.overlap_held_ms);
  f.add("whatif.overlap", fmt::format("the collectives' exposed time could hide under compute: up to {:.1f}% of the step (in {}), an upper bound "
                                      "that shares its time with faster collectives and on-time ranks, more than any cause counted; {}: an "
                                      "all-to-all's result is what the next layer computes on, so the bound is furthest from what the program "
                                      "can reach, and it follows a measured lever in the fix",
                                      it->second.value, it->second.where, held));
  return fmt::format("Up to {:.1f}% of the step is communication that could run under compute (whatif.overlap, an upper bound furthest from "
                     "reach here: {}, and an all-to-all's result is what the next layer computes on, so it hides only where it is issued "
                     "ahead): overlap the all-to-all with other compute (pipeline the input so that the next batch's sparse-feature all-to-all "
                     "(TorchRec's input_dist) runs under this batch's compute, as its TrainPipelineSparseDist does; for MoE, split the batch into chunks "
                     "whose dispatch and combine run under another chunk's expert compute), or make it shorter (fewer or smaller "
                     "embeddings or tokens sent; profile.exposed_comm names its time); bucket and prefetch settings do not hide an "
                     "all-to-all.",
                     it->second.value, held);
}

}  // namespace perfgap::analyzers::budget_model
