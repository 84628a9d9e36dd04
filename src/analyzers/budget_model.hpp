// What gap.budget's parts share (budget.cpp: the reports' findings into causes and the fitted
// waterfall; budget_measures.cpp: what the reports measured and the estimate each cause takes
// from it): a finding id's hits, a cause, the reports' measures. Internal to src/analyzers.
#pragma once

#include <map>
#include <optional>
#include <set>
#include <string>
#include <utility>
#include <vector>

#include "compare/compare.hpp"
#include "core/kb.hpp"
#include "report/model.hpp"

namespace perfgap::analyzers::budget_model {

// One finding id of the reports, whatever its subjects and reports: in data-parallel training the
// slowest node sets the pace, so a finding seen on many nodes (or for many processes) costs once.
struct BudgetHit {
  std::string id;
  report::Status status = report::Status::warn;
  std::string title;
  std::vector<std::string> where;  // "REPORT" or "REPORT [subject]", in the order found
  // Each place's own status and title, beside `where`: two reports' findings of one id are two
  // findings (a fail in one report and a warn with another title in the other), said each.
  std::vector<std::pair<report::Status, std::string>> said;
  std::set<std::string, std::less<>> where_seen;  // a fleet's reports name thousands of places
  const core::KbImpact* kb = nullptr;
  // The nodes a measurement of it ran on (nccl-tests' hosts); unknown when one did not say.
  std::set<std::string, std::less<>> nodes;
  bool nodes_unknown = false;
  // The places that are turbostat captures with no busy core (metric busy_rows 0): taken while
  // nothing ran, they measure no busy clock and price nothing (budget_no_busy_why).
  std::size_t no_busy_places = 0;
  bool no_busy_only() const { return no_busy_places > 0 && no_busy_places == where.size(); }
  // What a failing place measured, for the line that says it is not priced ("busbw down to 17.6%
  // of the reference"): the worst of its places; empty where the finding has no such figure.
  std::string figure;
  double figure_ratio = 0;
};

// A root cause (core::KbCause, or an id no cause names): the findings that see it count once.
struct BudgetCause {
  std::string id, title;
  const core::KbCause* kb = nullptr;
  std::vector<const BudgetHit*> hits;
  report::Status status = report::Status::warn;
  bool has_prior = false;
  double prior_low = 0, prior_high = 0;  // the union of the found estimated members' ranges
  bool measured = false;
  bool what_if = false;               // measured by replaying the job's own traces (perfgap whatif)
  // A what-if at a value the user assumed (whatif --busbw): the replay is the job's, the bandwidth
  // a hypothesis; not measured, ranked and fitted as a prior (docs/EXPLAIN.md).
  bool hypothetical = false;
  std::string measured_how;           // what the measurement was and how it became the estimate
  double point = 0, low = 0, high = 0;  // the estimate and its range (measured: within the prior)
  double share = 0;                   // percent of throughput after fitting to the shortfall
  bool estimated() const { return has_prior || measured || hypothetical; }
  bool not_counted = false;  // every finding behind it is not_a_cause
  // A host cause held with the others to the time the GPUs wait for their host (whatif.launch):
  // how, for its evidence; empty where it was not lowered.
  std::string bounded_how;
  // Collective bandwidth: the exposed time of the collectives no bandwidth measurement of their
  // kind prices (an all_reduce_perf run says nothing of an AllToAll): what and why, for its
  // evidence, and its share of the iteration; empty and 0 where every exposed collective is priced.
  std::string unpriced_how;
  double unpriced_pct = 0;
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
  BudgetMeasure smmu_pct, host_bound_pct, remote_pct, busy_ratio, exposed_pct, straggler_pct;
  // The slowest node: its step (iteration) time or throughput against the fleet's median, as a
  // share of throughput lost (fleet.pace); its collective bandwidth against the fleet's
  // (fleet.pace on nccl-tests, fanout.pairs: slow_node_busbw_by_coll, below), which costs
  // through the exposed communication of the collective it measured.
  BudgetMeasure slow_node_step_pct;
  std::string slow_node_step_how;
  // The nodes that fleet.pace names (its outliers and pace node) and fanout.pairs' slow node:
  // a measurement taken on these nodes alone is theirs, not a second cause.
  std::set<std::string, std::less<>> slow_nodes;
  double straggler_ms = 0, straggler_wait_ms = 0, straggler_iter_ms = 0;
  // The straggler was named by the replay of a job's sends, receives and collectives as one graph
  // (pipeline and data parallel): its cost is what that replay saves, no wait at a collective.
  bool straggler_by_graph = false;
  // A late rank of NCCL's Inspector: the others' wait per operation, per collective; with a
  // profile's collectives per iteration and iteration time it is a share of the step.
  struct LateRank {
    std::string where;
    std::map<std::string, double> wait_us_per_op;
  };
  std::vector<LateRank> late_ranks;
  std::map<std::string, std::pair<double, std::string>> kernels_per_iter;  // collective -> (per GPU and iteration, where)
  BudgetMeasure profile_iter_ms;
  // The collectives' bandwidth measured (nccl-tests, NCCL's Inspector), per collective as the
  // profile names it ("AllReduce", "AllToAll"; "" where the report does not say which): the
  // lowest ratio to its basis of its runs, where it ran (empty: unknown), its ratio and busbw by
  // size where it has them, and its basis. Each prices its own collective's exposed time only.
  struct SizeRatio {
    double bytes = 0, ratio = 0, busbw_gbps = 0;  // busbw_gbps 0: not given
  };
  // `ratio` is taken at one size in both runs: the measurement's peak size among those with a
  // ratio (peak_bytes, its busbw and the basis there), else, for a report without ratios per size,
  // peak_ratio (its peak against the basis' peak, peak_bytes 0).
  struct CollectiveBusbw {
    BudgetMeasure ratio;
    std::set<std::string, std::less<>> nodes;
    std::vector<SizeRatio> by_size;
    double busbw = 0, basis = 0;
    double peak_bytes = 0, peak_busbw = 0, basis_at_peak = 0;
    std::string basis_name;
    // The measurement in words where it is no busbw against a basis (a slow node's against the
    // fleet's: "the slowest node's best pair at 20.0 GB/s against the fleet's 180.0"); empty: busbw.
    std::string said;
  };
  std::map<std::string, CollectiveBusbw, std::less<>> busbw_by_coll;
  // The slowest node's busbw against the fleet's (fleet.pace on nccl-tests, fanout.pairs), per
  // collective its benchmark ran ("" where the finding does not say which): ratio and said only.
  std::map<std::string, CollectiveBusbw, std::less<>> slow_node_busbw_by_coll;
  // Bandwidths measured on another job or machine than the profiled one (nccl-tests at other
  // ranks or nodes than the job's world size, or on another GPU: compare's different_jobs), each
  // in words: they price nothing of this job, and say why where its collectives go unpriced.
  std::vector<std::string> busbw_foreign;
  // The job's communication not overlapped by compute per collective (profile.exposed_comm
  // [COLL], the largest of the reports), with its mean message size (msg_bytes / kernels; 0: not
  // given): the ratio is taken at the job's size, not the peak's.
  struct CollectiveExposure {
    BudgetMeasure pct;
    double ms = 0, msg_bytes = 0;
  };
  std::map<std::string, CollectiveExposure, std::less<>> exposed_by_coll;
  double busy_mhz = 0, rated_mhz = 0, exposed_ms = 0;
  // perfgap whatif's changes: per id, the largest share of the step one change saves, replayed
  // on the job's own traces, and that change's title.
  std::map<std::string, BudgetMeasure, std::less<>> what_if_pct;
  std::map<std::string, std::string, std::less<>> what_if_title;
  // The share of the step the GPUs wait for their host's launches, replayed (whatif.launch, any
  // status that measured, 0 included): the most the host's causes can save together.
  BudgetMeasure host_wait_pct;
  // Of that wait, the share of the step in host stalls (whatif.launch's host-bound gaps of 1 ms or
  // more, replayed apart: the host busy elsewhere, which fewer launches do not shorten).
  double host_stall_pct = 0;
  // whatif.overlap's held time (the ranks' compute waiting for collectives within iterations, ms
  // per iteration) and its parts by collective ("AllToAll" -> ms), read from its evidence, of the
  // replay that saved most: an all-to-all's share is what no bucket setting hides (the next
  // layer computes on its result).
  double overlap_held_ms = 0, overlap_saved = -1;
  std::map<std::string, double, std::less<>> overlap_held_by_coll;
  // The framework the profile and whatif findings name in their "framework: NAME (why)" evidence
  // ("PyTorch", "JAX/XLA", "OpenMP offload"; "unknown" where they say none or differ; "" where no
  // finding says): the job's own launching is fixed in its words.
  std::string framework;
  // Where a profile shows no communication kernel at all (profile.exposed_comm skips with
  // comm_ms_per_iter 0): the first such place; empty where none says so.
  std::string no_comm_where;
};

// A finding that is a problem: fail or warn.
inline bool budget_problem(report::Status s) { return s == report::Status::fail || s == report::Status::warn; }
// A replay of a cause's change on the job's traces (whatif.rank, whatif.node, whatif.nccl_tests,
// ...: not the bounds whatif.launch and whatif.overlap, nor whatif.replay) that passes with the
// share of the step it saves: a measurement of its cause, small, counted as one as a warning is.
bool budget_what_if_cause(const compare::ReportFinding& x);
// A whatif.nccl_tests replayed at the bandwidth of nccl-tests of another scale than the job's
// (its other_scale metric): a hypothesis, not the job's measurement.
bool budget_what_if_other_scale(const compare::ReportFinding& x);
// A cause measured (or replayed at an assumed value) at under this many points is ruled out: listed
// so, never the fix's first step (a straggler the replay found on time read "First straggler_rank
// (0.0 points, measured)").
inline constexpr double kRuledOutPoints = 0.5;
inline bool budget_ruled_out(const BudgetCause& c) { return (c.measured || c.hypothetical) && c.point < kRuledOutPoints; }
// The fix's words for the causes ruled out ("straggler_rank (0.0 points, whatif.rank replayed)"),
// said in the evidence ("ruled out"); empty where none is.
std::string budget_ruled_out_said(report::Finding& f, const std::vector<BudgetCause*>& steps);
// Exposed communication that could hide under compute (whatif.overlap warns), where it is larger
// than every counted cause (`top`, the first step's share): said in the evidence and returned for
// the fix; empty when there is nothing to say. `all_to_all`: all-to-all holds half or more of the
// time it hides, so the bound is furthest from what the program can reach: the fix's words are
// the all-to-all's, and it follows a measured lever rather than leading.
std::string budget_overlap_bound_said(report::Finding& f, const BudgetMeasures& meas, double top, bool& all_to_all);

// A measurement the reports do not cover, by name; where a replay at another scale's bandwidth
// matches it (`other_scale_seen`: id -> where, whatif.nccl_tests with other_scale), named as
// the job's scale's with that replay: "collective bandwidth at the job's scale (the nccl-tests
// run replayed in wn.json [nccl-tests] (whatif.nccl_tests) is of another scale ...)".
std::string budget_measurement_named(const core::KbMeasurement& m, const std::map<std::string, std::string, std::less<>>& other_scale_seen);

// The measurements no report covers, in the order the reports point at (budget_next.cpp): the
// host's first where the GPUs wait on their host (host_first says so), the communication ones
// apart (not_indicated) where a profile shows no communication kernel and nothing measured any
// (no_comm says where).
struct BudgetNext {
  std::vector<const core::KbMeasurement*> order, not_indicated;
  std::string host_first, no_comm;
};
BudgetNext budget_next_measurements(const core::Kb& kb, const std::set<std::string, std::less<>>& seen_ids, const BudgetMeasures& m);
// The residual's evidence ("unexplained": `unexplained` and the next measurement; "not measured";
// "not indicated"): returns the next measurement's name, empty where none is left to take.
std::string budget_next_said(report::Finding& f, const BudgetNext& todo, const std::string& unexplained,
                             const std::map<std::string, std::string, std::less<>>& other_scale_seen);

// A report's steps.gap that scored another log than explain's --measured one (`measured`, its
// steps.gap subject; a path given another way, "./a.log" and "a.log", is the same log): another
// run's gap, said in words for the budget's notes ("gap80.json: steps.gap of b.log is another run's
// gap ..."); empty where the finding is no such gap.
std::string budget_other_runs_gap(const compare::ReportFinding& x, const std::string& report, const std::string& measured);

// "5%" or "2-8%".
std::string budget_range(double lo, double hi);

// The nodes an nccl-tests measurement ran on, as its report says them ("nccl-tests hosts"
// evidence); empty when it does not say.
std::set<std::string, std::less<>> budget_measured_nodes(const compare::ReportFinding& x);

// A turbostat capture with no busy core (busy_rows 0; an older perfgap's turbostat.busy_mhz skip
// "no busy cores"): what a report's finding of that subject measured is of a machine at rest.
bool budget_no_busy_capture(const compare::ReportFinding& x);
// Why such a capture's findings price nothing, for the evidence.
std::string budget_no_busy_why(const BudgetHit& h);

// What a failing finding measured, said beside "not priced" ("busbw down to 17.6% of the
// reference at 1 GiB"), with its ratio (lower is worse); empty where it has none.
std::pair<std::string, double> budget_fail_figure(const compare::ReportFinding& x);

// The measurements of one finding, any status but skip and error (they measured nothing).
void budget_measure(const compare::ReportFinding& x, const std::string& at, BudgetMeasures& m);

// What the reports said of one id, each place with its own status and title
// ("fail in a.json, b.json: ...; warn in c.json: ...").
std::string budget_said(const BudgetHit& h);

// A failing finding the budget could not price (its cause has neither a measurement nor a
// prior): why, and what would price it (for the fix).
struct BudgetUnpricedFail {
  const BudgetHit* hit = nullptr;
  const BudgetCause* cause = nullptr;
  std::string why, action;
};
// A finding of an unestimated cause that the budget says first as not priced: a fail whose
// entry is not not_a_cause, of a capture of the running job (an idle turbostat capture's says
// nothing of what the job loses: said as pricing nothing, after the causes).
inline bool budget_unpriced_fail(const BudgetHit& h) {
  return h.status == report::Status::fail && !(h.kb && h.kb->kind == core::KbImpact::Kind::not_a_cause) && !h.no_busy_only();
}
// The unestimated causes' failing findings (not those whose entry is not_a_cause), the worst
// figure first.
std::vector<BudgetUnpricedFail> budget_unpriced_fails(const std::vector<BudgetCause*>& unestimated, const BudgetMeasures& m);
// One "not priced" evidence line each (the budget puts them first).
void budget_unpriced_fail_evidence(report::Finding& f, const std::vector<BudgetUnpricedFail>& fails);
// The title's clause ("; not priced: ID FAIL (...), which may cost more ..."), the fix's sentence
// beside the first cause (top: null where no cause is priced); empty without such findings.
std::string budget_unpriced_fail_title(const std::vector<BudgetUnpricedFail>& fails, bool any_priced);
std::string budget_unpriced_fail_fix(const std::vector<BudgetUnpricedFail>& fails, const BudgetCause* top);

// A measured estimate for the cause, if the reports hold one: replayed first, then of its kind,
// held to [bound_low, bound_high]. False when nothing measures it.
bool budget_estimate(BudgetCause& c, const BudgetMeasures& m, double bound_low, double bound_high);

}  // namespace perfgap::analyzers::budget_model
