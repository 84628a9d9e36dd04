// `perfgap whatif`: the job's own timeline replayed with one thing changed (profile_ranks.hpp
// CollectiveReplay), and what each change would save per step (docs/WHATIF.md). The replay is
// first held against the measured step: a replay that does not reproduce it offers nothing.
#include <algorithm>
#include <cmath>
#include <cstdlib>
#include <map>
#include <set>
#include <string_view>
#include <tuple>

#include "analyzers/profile_model.hpp"
#include "analyzers/whatif_changes.hpp"
#include "analyzers/whatif_job.hpp"
#include "compare/same_job.hpp"
#include "parsers/nccl_tests.hpp"

namespace perfgap::analyzers {

using namespace profile_model;
using namespace whatif_detail;

namespace {

// A replay further than this from the measured step misses a dependency the trace does not
// show: no change is replayed on it.
constexpr double kReplayTolerancePct = 5;
// The ranks and nodes replayed one by one: those arriving latest (a replay is a pass over every
// collective of every rank).
constexpr std::size_t kSubjectsReplayed = 8;


double pct_of(double part, double whole) { return whole > 0 ? 100.0 * part / whole : 0; }

// The ranks whose collectives could not be put on the others' clock (another job's traces, or
// other steps): "NAME: why" each; the replay and every change hold the others only.
std::vector<std::string> unaligned_ranks(const Digest& d, const Analysis& an, const Job& j) {
  std::vector<std::string> out;
  const auto& xr = an.xr;
  if (j.pipeline || !xr.present || j.gpu.size() < 2) return out;
  for (std::size_t r = 0; r < xr.gpu.size() && r < xr.al.aligned.size(); ++r)
    if (!xr.al.aligned[r]) out.push_back(fmt::format("{}: {}", rank_name(d, xr, r), r < xr.al.why_not.size() ? xr.al.why_not[r] : std::string()));
  return out;
}

// The replay held against the measured step.
Finding replay_finding(const Job& j, const std::string& source, bool partial, const std::vector<std::string>& unaligned, bool& trusted) {
  Finding f = started("whatif.replay", "workload", source);
  trusted = false;
  if (!j.why_not.empty() || j.base.measured <= 0 || j.step_ns <= 0) {
    f.title = "nothing to replay: " + (j.why_not.empty() ? std::string("no iteration of the job holds two collectives") : j.why_not);
    // Why the ranks are not on one clock, in the title (text shows a skip's title only).
    if (!unaligned.empty() && j.base.intervals == 0)
      f.title = fmt::format("nothing to replay: the ranks' collectives could not be put on one clock: not aligned: {}{}", unaligned[0],
                            unaligned.size() > 1 ? fmt::format(" (and {} more ranks)", unaligned.size() - 1) : std::string());
    f.add(source, f.title, j.pipeline ? "every stage's trace, with each send's and receive's peer (Kineto's \"Dst Rank\"/\"Src Rank\")"
                                      : "two or more collectives per rank (NCCL kernels in the trace)");
    // Why the ranks are not on one clock, here (whatif prints no profile.straggler).
    for (std::size_t i = 0; i < unaligned.size() && i < 16; ++i) f.add(source, "not aligned: " + unaligned[i], "collective ends that meet the other ranks'");
    return f;
  }
  const double err = pct_of(static_cast<double>(j.base.replayed - j.base.measured), static_cast<double>(j.base.measured));
  const double replayed = j.step_ns * static_cast<double>(j.base.replayed) / static_cast<double>(j.base.measured);
  const double spans = static_cast<double>(j.base.measured) / j.step_ns;
  f.metric("replayed_ms_per_iter", ms(replayed));
  f.metric("measured_ms_per_iter", ms(j.step_ns));
  f.metric("replay_error_pct", err);
  f.metric("ranks", static_cast<double>(j.gpu.size()));
  if (j.world > 0) f.metric("world_size", static_cast<double>(j.world));  // the job's ranks, of which `ranks` were traced
  f.metric("intervals", static_cast<double>(j.base.intervals));
  f.metric("iterations_replayed", spans);
  if (j.iterations) f.metric("coverage_pct", std::min(100.0, pct_of(spans, static_cast<double>(j.iterations))));
  std::string what = unaligned.empty() ? fmt::format("{} ranks' collectives on one clock", j.gpu.size())
                                       : fmt::format("{} of {} ranks' collectives on one clock", j.gpu.size() - unaligned.size(), j.gpu.size());
  if (j.pipeline) {
    what = fmt::format("{} ranks' sends and receives paired on one clock", j.gpu.size());
    f.metric("pairs", static_cast<double>(j.pipe.pairs()));
    f.add(source, fmt::format("{} sends joined to their receives by step and order (never by time); peers from {}{}", j.pipe.pairs(), j.pipe.peers_from(),
                              j.pipe.unpaired() ? fmt::format("; {} send/recv with no pair among the traces keep their measured length", j.pipe.unpaired())
                                                : std::string()));
    if (j.pipe.collectives() > 0) {
      what = fmt::format("{} ranks' sends and receives paired and collectives joined on one clock", j.gpu.size());
      f.metric("collectives", static_cast<double>(j.pipe.collectives()));
      f.add(source, fmt::format("{} collectives joined across their groups by step and order (never by time), each starting when its group's last "
                                "rank arrived; groups from {}{}",
                                j.pipe.collectives(), j.pipe.groups_from(),
                                j.pipe.unjoined() ? fmt::format("; {} collectives of steps their ranks hold in different counts keep their measured length",
                                                                j.pipe.unjoined())
                                                  : std::string()));
    }
  } else if (j.gpu.size() == 1)
    what = j.world > 1 ? fmt::format("one rank of {} alone (what its collectives wait for the others counts as their transfer)", j.world)
                       : "one rank's own timeline";
  // The step each change is taken from (step_base), where it is over the replay's whole
  // iterations: the title gives it first, so that the replay's step and a change's "instead of"
  // are one step (the public V100 trace: 347.51 ms over every window, 352.59 ms over its three
  // whole iterations, which every change says).
  std::string whole_title;
  if (!j.pipeline) {
    f.add(source, fmt::format("{} collective-to-collective intervals over {:.1f} iterations of {}", j.base.intervals, spans, what));
    // The changes' step and savings are over the whole iterations it holds (tried_finding): that step too.
    if (const Replay m = j.replayer.run(ReplayChange{}); m.whole_iterations > 0 && m.whole_measured > 0) {
      const double n = static_cast<double>(m.whole_iterations);
      const double whole_replayed = ms(static_cast<double>(m.whole_replayed) / n), whole_measured = ms(static_cast<double>(m.whole_measured) / n);
      f.metric("whole_iterations", n);
      f.metric("whole_step_ms_per_iter", whole_replayed);
      f.add(source, fmt::format("each change's step and saving are over the {} whole iteration{} it holds (from the end of one iteration's last "
                                "collective to the end of a later one's): {:.2f} ms per step there as replayed, {:.2f} ms measured",
                                m.whole_iterations, m.whole_iterations == 1 ? "" : "s", whole_replayed, whole_measured));
      // Said where it differs as the title prints it (a 215.93 ms window mean beside a change's 216.86);
      // the windows' mean beside it where it is 0.5% or more off.
      if (fmt::format("{:.2f} {:.2f}", whole_replayed, whole_measured) != fmt::format("{:.2f} {:.2f}", ms(replayed), ms(j.step_ns))) {
        whole_title = fmt::format("replayed step {:.2f} ms against {:.2f} ms measured ({:+.1f}%) over the {} whole iteration{} each change is taken from",
                                  whole_replayed, whole_measured, pct_of(whole_replayed - whole_measured, whole_measured), m.whole_iterations,
                                  m.whole_iterations == 1 ? "" : "s");
        if (std::abs(whole_replayed - ms(replayed)) >= 0.005 * ms(replayed))
          whole_title += fmt::format("; {:.2f} against {:.2f} ms ({:+.1f}%) over every iteration window", ms(replayed), ms(j.step_ns), err);
      }
    }
  }
  trusted = std::abs(err) <= kReplayTolerancePct;
  // A replay spanning more iterations than the capture holds has joined pieces of different
  // iterations (a stage's trace missing from a pipeline): its per-iteration figures are not the job's.
  // (A pipeline's replay spans each replica's chain: not comparable, and held by its rank set below.)
  const bool overspans = !j.pipeline && j.iterations > 0 && spans > 1.05 * static_cast<double>(j.iterations);
  // A pipeline missing a rank's trace breaks its chain of stages: the stages of the ranks given
  // are not the job's, nor their waits.
  const bool broken_chain = j.pipeline && (partial || (j.world > 0 && j.world > static_cast<std::int64_t>(j.gpu.size())));
  if (overspans || broken_chain) trusted = false;
  f.status = trusted ? report::Status::pass : report::Status::warn;
  f.title = whole_title.empty() ? fmt::format("replayed step {:.2f} ms against {:.2f} ms measured ({:+.1f}%), {}", ms(replayed), ms(j.step_ns), err, what)
                                : fmt::format("{}, {}", whole_title, what);
  for (std::size_t i = 0; i < unaligned.size() && i < 16; ++i)
    f.add(source, "not aligned, left out of the replay: " + unaligned[i], "collective ends that meet the other ranks'");
  if (unaligned.size() > 16) f.add(source, fmt::format("... {} more ranks not aligned", unaligned.size() - 16));
  if (!unaligned.empty()) f.metric("ranks_not_aligned", static_cast<double>(unaligned.size()));
  if (broken_chain) {
    f.title += fmt::format(": but {} of the job's {} ranks are in the traces, and a pipeline's stages cannot be told from part of its chain, so no change is replayed on it",
                           j.gpu.size(), j.world > 0 ? std::to_string(j.world) : std::string("unknown number of"));
    f.fix = "give every rank's trace of the job over the same steps (each stage's, with the sends' and receives' peers)";
  } else if (overspans) {
    f.title += fmt::format(": but it spans {:.1f} iterations of a capture of {}, so the traces' iterations do not line up and no change is replayed on it",
                           spans, j.iterations);
    f.fix = "give every rank's trace of the job over the same steps (a pipeline missing a stage's trace cannot be replayed as the job)";
  } else if (trusted && !unaligned.empty()) {
    // Another job's traces, or other steps of this one: the changes hold the ranks aligned only.
    f.status = report::Status::warn;
    f.title += fmt::format(": {} rank{} could not be put on the others' clock (at no offset do {} collectives' ends meet theirs: another "
                           "job's traces, or other steps) and {} left out; each change holds the others only",
                           unaligned.size(), unaligned.size() == 1 ? "" : "s", unaligned.size() == 1 ? "its" : "their",
                           unaligned.size() == 1 ? "is" : "are");
    f.fix = "give the traces of one job, every rank over the same steps";
  } else if (!trusted) {
    f.title += fmt::format(": more than {:.0f}% off{}, so no change is replayed on it", kReplayTolerancePct,
                           whole_title.empty() ? "" : " over every iteration window");
    f.fix = "the trace misses a dependency the replay needs (a collective only some ranks ran, a stream waiting on another, host "
            "synchronisation): capture every rank over the same steps, with NCCL kernels in the trace";
  }
  return f;
}


// Launch calls are what tells a GPU waiting for its host apart from one idle for other reasons:
// without them the launch change cannot decide, and says so rather than pass.
constexpr const char* kNoLaunchCalls =
    "no host launch calls in the traces (Kineto cuda_runtime events; nsys --trace=cuda): whether a GPU waits for its launches is unknown";

// The step a change is taken from, and what it saves of it, per iteration: over the whole
// iterations the replay holds where it knows them, else over every collective-to-collective step
// replayed (in the measured iterations' mean window).
struct StepBase {
  double step = 0, saved = 0;     // ns per iteration, as replayed
  std::size_t whole = 0;          // the whole iterations both are over; 0: every step replayed
};

StepBase step_base(const Job& j, const Tried& t, const Replay& cf) {
  StepBase b;
  // Over whole iterations where the replay knows them: the replay runs from a collective's end to
  // a collective's end, so a capture's partial first and last iterations weigh its collectives
  // more than a whole step does (a bandwidth change saved 15.42 ms of a step whose collectives,
  // at that bandwidth, could save at most 14.61 ms: the public 2-rank A100 trace, --busbw 100).
  // The step is then theirs too, never the mean of every window: a saving over whole iterations
  // taken from a step over others read, on the public V100 trace, "189.56 ms instead of
  // 347.51 ms" where the GPU was busy 200.1 ms of that step (its last window idles far less).
  if ((t.whole_iterations || !j.pipeline) && cf.whole_measured > 0 && cf.whole_iterations > 0) {
    const Replay as_measured = j.replayer.run(ReplayChange{});
    const double n = static_cast<double>(cf.whole_iterations);
    b.whole = cf.whole_iterations;
    b.step = static_cast<double>(as_measured.whole_replayed) / n;
    b.saved = std::max(0.0, static_cast<double>(as_measured.whole_replayed - cf.whole_replayed) / n);
    return b;
  }
  const double base = static_cast<double>(j.base.replayed), changed = static_cast<double>(cf.replayed);
  b.step = j.step_ns * base / static_cast<double>(j.base.measured);
  b.saved = base > 0 ? std::max(0.0, (base - changed) / base) * b.step : 0;
  return b;
}

Finding tried_finding(const Job& j, const Tried& t, const std::string& source) {
  Finding f = started("whatif." + t.kind, "workload", t.subject);
  const Replay cf = j.pipeline ? j.pipe.run(t.pchange) : j.replayer.run(t.change);
  const StepBase b = step_base(j, t, cf);
  const double step = b.step, saved = b.saved, saved_frac = step > 0 ? saved / step : 0;
  f.metric("saved_ms_per_iter", ms(saved));
  f.metric("saved_pct_of_step", 100 * saved_frac);
  f.metric("replayed_ms_per_iter", ms(step - saved));
  f.metric("step_ms_per_iter", ms(step));
  for (const auto& [k, v] : t.metrics) f.metric(k, v);
  if (b.whole > 0) f.metric("whole_iterations", static_cast<double>(b.whole));
  f.status = 100 * saved_frac >= kStragglerPct ? report::Status::warn : report::Status::pass;
  f.title = fmt::format("{}: the step {:.2f} ms ({:.1f}%) shorter, {:.2f} ms instead of {:.2f} ms", t.what, ms(saved), 100 * saved_frac, ms(step - saved),
                        ms(step));
  for (const auto& e : t.evidence) f.add(source, e);
  bool stalls_first = false;
  if (!t.stall_fix.empty()) {
    // The host's whole wait removed (launch overhead and host stalls): the bound on the host's
    // causes together (budget), and what the stalls add to the launches' saving.
    ReplayChange all = t.change;
    all.no_host_stall = true;
    PipelineChange pall = t.pchange;
    pall.no_host_stall = true;
    const StepBase b2 = step_base(j, t, j.pipeline ? j.pipe.run(pall) : j.replayer.run(all));
    const double with_stalls = b2.step > 0 ? std::max(saved_frac, b2.saved / b2.step) : saved_frac;
    const double stall_saved = std::max(0.0, with_stalls - saved_frac) * step;
    f.metric("host_wait_saved_pct_of_step", 100 * with_stalls);
    if (stall_saved >= 0.0005 * step) {
      f.metric("host_stall_saved_ms_per_iter", ms(stall_saved));
      f.title += fmt::format("; with its host stalls (gaps of {:.0f} ms or more before a launch) gone too, {:.2f} ms ({:.1f}%) shorter",
                             ms(static_cast<double>(kHostStallNs)), ms(saved + stall_saved), 100 * with_stalls);
      f.add(source, fmt::format("host stalls: the GPU idle {:.0f} ms or more until the host launched again (the host busy elsewhere: input, "
                                "compilation, Python between steps); fewer or cheaper launches do not remove them, so they are replayed apart: "
                                "{:.2f} ms of the step",
                                ms(static_cast<double>(kHostStallNs)), ms(stall_saved)));
      if (100 * with_stalls >= kStragglerPct) f.status = report::Status::warn;
      stalls_first = stall_saved > saved;
    }
  }
  // Where the whole iterations' step is not the windows' mean (whatif.replay's), say which it is.
  const double windows = j.step_ns * static_cast<double>(j.base.replayed) / static_cast<double>(j.base.measured);
  if (b.whole > 0 && std::abs(step - windows) >= 0.005 * windows)
    f.add(source, fmt::format("the step and its saving are over the {} whole iteration{} the replay holds (from the end of one iteration's last "
                              "collective to the end of a later one's): {:.2f} ms per step there as replayed, against {:.2f} ms over every iteration "
                              "window (whatif.replay), of which the capture's first and last enter the replay in part",
                              b.whole, b.whole == 1 ? "" : "s", ms(step), ms(windows)));
  if (!t.framework.empty()) f.add(source, t.framework);
  if (f.status == report::Status::warn) f.fix = stalls_first ? t.stall_fix : t.fix;
  return f;
}

// Why --nccl-tests cannot be this job's bound: a run whose Rank lines name other GPUs than the
// job's traces (both sides named); "" when they match or one side names none.
std::string nccl_tests_other_gpu(const Job& j, const Digest& d, const WhatifOptions& w) {
  std::set<std::string> job;
  for (auto g : j.gpu)
    if (auto m = compare::gpu_model_of_label(d.gpus[g].label); !m.empty()) job.insert(std::move(m));
  if (job.empty()) return {};
  std::vector<std::string> other;
  for (const auto& c : w.curves) {
    if (c.gpu_models.empty()) continue;
    const std::set<std::string> run(c.gpu_models.begin(), c.gpu_models.end());
    if (run != job) other.push_back(fmt::format("{} in {}", fmt::join(c.gpu_models, " + "), c.source));
  }
  if (other.empty()) return {};
  return fmt::format("not replayed: the nccl-tests run{} measured another GPU ({}) than the job's ({}): a bandwidth of another GPU is no "
                     "bound for this job's collectives; run nccl-tests on the job's GPUs, at its ranks and nodes, and replay at that",
                     other.size() == 1 ? "" : "s", fmt::join(other, "; "), fmt::join(job, " + "));
}

// The runs that name no GPU (no Rank lines) where the job's traces do: whether they ran on the
// job's GPUs is unknown, said in the evidence (a file's name is no GPU's).
void nccl_tests_gpu_unsaid(const Job& j, const Digest& d, const WhatifOptions& w, std::vector<std::string>& evidence) {
  std::set<std::string> job;
  for (auto g : j.gpu)
    if (auto m = compare::gpu_model_of_label(d.gpus[g].label); !m.empty()) job.insert(std::move(m));
  if (job.empty()) return;
  for (const auto& c : w.curves)
    if (c.gpu_models.empty())
      evidence.push_back(fmt::format("{}: names no GPU (no '# Rank ... device' lines): whether it ran on the job's GPUs ({}) is unknown; a "
                                     "bandwidth of other GPUs is no bound for this job",
                                     c.source, fmt::join(job, " + ")));
}


// The launch change's evidence: the ranks whose GPUs wait longest for their host (up to 4), each
// with its launch wait and host stalls per iteration (ns summed x `per_iter`), waiting `between`
// its collectives or its sends and receives.
void launch_waits(Tried& launch, const Job& j, const std::vector<std::int64_t>& host, const std::vector<std::int64_t>& stall, double per_iter,
                  const char* between) {
  std::vector<std::size_t> waiting;
  for (std::size_t r = 0; r < host.size() && r < stall.size(); ++r)
    if (host[r] + stall[r] > 0) waiting.push_back(r);
  std::stable_sort(waiting.begin(), waiting.end(), [&](std::size_t a, std::size_t b) { return host[a] + stall[a] > host[b] + stall[b]; });
  for (std::size_t i = 0; i < waiting.size() && i < 4; ++i) {
    const std::size_t r = waiting[i];
    launch.evidence.push_back(fmt::format("{}: its GPU waits {:.2f} ms per iteration for launches between {}{}", j.name[r],
                                          ms(static_cast<double>(host[r]) * per_iter), between,
                                          stall[r] > 0 ? fmt::format(" and {:.2f} ms in host stalls", ms(static_cast<double>(stall[r]) * per_iter))
                                                       : std::string()));
  }
  if (waiting.empty()) launch.evidence.push_back(fmt::format("no GPU waits for a launch between {}", between));
}

std::string names_of(const Job& j, const std::vector<std::size_t>& ranks) {
  std::string s;
  for (std::size_t i = 0; i < ranks.size() && i < 4; ++i) s += (i == 0 ? "" : i + 1 == ranks.size() ? " and " : ", ") + j.name[ranks[i]];
  if (ranks.size() > 4) s += fmt::format(" and {} more", ranks.size() - 4);
  return s;
}

// --busbw GBPS on a job whose traces record collective sizes, into out. A bandwidth every one
// of them already reaches shortens none: not replayed (a PASS at 0.0% would read as the job at
// that bandwidth already, and explain would count it as a hypothesis of 0), and said; one below
// what they reach together shortens only the slower ones: said beside the saving.
void busbw_change(const Job& j, const WhatifOptions& w, std::vector<Tried>& out) {
  if (w.busbw_gbps <= 0 || j.base.sized == 0) return;
  const double reach = j.base.sized_transfer > 0 ? j.base.sized_at_1gbps / j.base.sized_transfer : 0.0;
  Tried t{"busbw",
          fmt::format("{:g} GB/s", w.busbw_gbps),
          fmt::format("every collective at {:g} GB/s bus bandwidth", w.busbw_gbps),
          "the collectives run slower than this bandwidth: nccl-tests on the job's nodes (perfgap fanout --pairs finds a slow "
          "node or link), then the NCCL settings (perfgap sweep)",
          ReplayChange{{}, false, w.busbw_gbps, {}},
          {fmt::format("{} of {} collectives have a known size (Kineto's message sizes); the others keep their measured time", j.base.sized,
                       j.base.intervals),
           waiting_known(j) ? fmt::format("measured, they move their data at {:.1f} GB/s bus bandwidth once their last rank has arrived (nccl-tests' busbw)",
                                          reach)
                            : fmt::format("measured, they move their data at {:.1f} GB/s bus bandwidth including any wait for a later rank "
                                          "(nccl-tests' busbw; the wait unknown: {}, the others' arrival not traced; the transfer alone is at "
                                          "least that fast)",
                                          reach, ranks_traced_words(j))}};
  // Any collective shortened shortens the replayed timeline: none is, where it is unchanged.
  if (j.replayer.run(t.change).replayed >= j.base.replayed) {
    t.skip_why = fmt::format("not replayed: {:g} GB/s is below the {:.1f} GB/s bus bandwidth the job's collectives already reach{} (each of its {} "
                             "collectives of known size moves its data at {:g} GB/s or faster): nothing to replay; --busbw is in GB/s, as "
                             "nccl-tests' busbw column",
                             w.busbw_gbps, reach, waiting_known(j) ? "" : " with any wait for a later rank", j.base.sized, w.busbw_gbps);
  } else if (w.busbw_gbps < reach) {
    t.evidence.push_back(fmt::format("{:g} GB/s is below the {:.1f} GB/s the job's collectives reach together: only those slower than it are "
                                     "shortened",
                                     w.busbw_gbps, reach));
  }
  out.push_back(std::move(t));
}

// --nccl-tests on a job whose traces record collective sizes: every collective at the bus
// bandwidth the runs reached at its kind and size.
Tried nccl_tests_change(const Job& j, const Digest& d, const WhatifOptions& w) {
  ReplayChange c;
  c.busbw_at = [&w](parsers::Coll coll, std::uint64_t bytes) {
    for (const auto& curve : w.curves)
      if (curve.coll == coll) return busbw_at(curve, bytes);
    return 0.0;
  };
  // The kinds of the job's collectives of known size, read by the same replay (the change keeps
  // no reference to them: it is replayed again after this function).
  std::set<parsers::Coll> job_kinds;
  ReplayChange seen = c;
  seen.busbw_at = [&c, &job_kinds](parsers::Coll coll, std::uint64_t bytes) {
    job_kinds.insert(coll);
    return c.busbw_at(coll, bytes);
  };
  const Replay known = j.replayer.run(seen);
  if (known.at_known_busbw == 0) {
    // No collective of the job is of a kind the runs measured: replayed, every one keeps its time
    // and the step is 0.0% shorter, which reads as "at nccl-tests' bandwidth already" (explain
    // counted it as collective bandwidth measured at 0). Not replayed, and said.
    std::set<std::string_view> measured, runs_of;
    for (const auto& curve : w.curves) measured.insert(parsers::coll_name(curve.coll));
    for (auto k : job_kinds) runs_of.insert(parsers::coll_name(k));
    Tried t{"nccl_tests", "nccl-tests", "", "", ReplayChange{}, {}};
    t.skip_why = fmt::format("not replayed: no collective of the job is of a kind the runs measured (the runs measured {}; the job's {} "
                             "collectives of known size are {}): their bandwidth is no bound for it; give an nccl-tests run of {} at the "
                             "job's ranks and nodes",
                             fmt::join(measured, ", "), j.base.sized, fmt::join(runs_of, ", "), fmt::join(runs_of, ", "));
    return t;
  }
  std::string runs;
  for (const auto& curve : w.curves)
    runs += fmt::format("{}{} ({}: {} sizes, {}-{})", runs.empty() ? "" : ", ", parsers::coll_name(curve.coll), curve.source, curve.points.size(),
                        parsers::format_size(curve.points.front().first), parsers::format_size(curve.points.back().first));
  // A run whose busbw collapses (analyze: nccl_tests.busbw_collapse) is no healthy run: said.
  std::vector<std::string> collapsed;
  for (const auto& curve : w.curves)
    if (!curve.collapse.empty()) collapsed.push_back(curve.source);
  Tried t{"nccl_tests",
          "nccl-tests",
          collapsed.empty() ? "every collective at the bus bandwidth a healthy nccl-tests run reached at its size"
                            : fmt::format("every collective at the bus bandwidth an nccl-tests run reached at its size, a run whose busbw "
                                          "collapses past its peak ({}: nccl_tests.busbw_collapse), not a healthy one",
                                          fmt::join(collapsed, ", ")),
          "the collectives run slower than nccl-tests on a healthy fabric: the job's NCCL settings against the benchmark's "
          "(NCCL_DEBUG=INFO channels, algorithms, QPs; perfgap analyze nccl-log), then the nodes and links (perfgap fanout --pairs)",
          std::move(c),
          {fmt::format("{} of {} collectives of the job are of a kind the runs measured (beyond their sizes, the nearest size's bandwidth): {}",
                       known.at_known_busbw, j.base.intervals, runs)}};
  for (const auto& curve : w.curves)
    if (!curve.collapse.empty())
      t.evidence.push_back(fmt::format("{}: no healthy run: analyze nccl-tests warns nccl_tests.busbw_collapse: {}", curve.source, curve.collapse));
  nccl_tests_gpu_unsaid(j, d, w, t.evidence);
  return t;
}

// The bandwidth changes (--nccl-tests, --busbw) of a job whose traces record collective sizes,
// into out. A run of another GPU than the job's is no bound for it: not replayed, and said (a skip).
void bandwidth_changes(const Job& j, const Digest& d, const WhatifOptions& w, std::vector<Tried>& out) {
  std::string other_gpu = !w.curves.empty() && j.base.sized > 0 ? nccl_tests_other_gpu(j, d, w) : std::string();
  // A label the file contradicts (all_reduce= on an all_gather run): which collective's bandwidth
  // it is, is unknown; never replayed.
  std::vector<std::string> mislabelled;
  for (const auto& c : w.curves)
    if (!c.label_refused.empty()) mislabelled.push_back(c.label_refused);
  if (!mislabelled.empty() && j.base.sized > 0) {
    Tried t{"nccl_tests", "nccl-tests", "", "", ReplayChange{}, {}};
    t.skip_why = fmt::format("not replayed: {}; give the run under the collective it measured, or a run of the collective named", fmt::join(mislabelled, "; "));
    out.push_back(std::move(t));
  } else if (!other_gpu.empty()) {
    Tried t{"nccl_tests", "nccl-tests", "", "", ReplayChange{}, {}};
    t.skip_why = std::move(other_gpu);
    out.push_back(std::move(t));
  } else if (!w.curves.empty() && j.base.sized > 0) {
    out.push_back(nccl_tests_change(j, d, w));
  }
  busbw_change(j, w, out);
}

// The changes tried on this job: the ranks late together, each late rank, each node, launches, a
// bandwidth.
std::vector<Tried> changes(const Job& j, const Digest& d, const WhatifOptions& w) {
  std::vector<Tried> out;
  const std::size_t n = j.gpu.size();
  const auto& excess = j.replayer.excess();
  const auto& gaps = j.replayer.arriving();
  const double per_iter = j.base.measured > 0 ? j.step_ns / static_cast<double>(j.base.measured) : 0;  // ns of the job per replayed ns
  // Late enough to try: 1% of the step after the other ranks' median, and 0.1 ms (profile_analysis.cpp's late set).
  auto notable = [&](std::int64_t ns) { return static_cast<double>(ns) * per_iter >= std::max(0.01 * j.step_ns, 100'000.0); };
  auto on_time = [&](const std::vector<std::size_t>& ranks) {
    ReplayChange c;
    c.on_time.assign(n, false);
    for (auto r : ranks) c.on_time[r] = true;
    return c;
  };
  if (n > 1 && !j.mixed_why.empty()) {
    // Replayed collective to collective, the send/recv are each rank's own time: a rank waiting in
    // a receive for its slow pipeline peer would read as late, and be named instead of the peer.
    const std::string why = "the job's sends and receives count as each rank's own time between its collectives here, so a rank waiting in a "
                            "receive for its pipeline peer would read as late; and its pipeline could not be replayed with its collectives: " +
                            j.mixed_why;
    std::set<std::string> hosts;
    for (std::size_t r = 0; r < n; ++r)
      if (!d.gpus[j.gpu[r]].host.empty()) hosts.insert(d.gpus[j.gpu[r]].host);
    for (const auto& [kind, subject, asked] : {std::tuple{"late_set", "ranks", j.late_set.size() >= 2}, std::tuple{"rank", "ranks", true},
                                               std::tuple{"node", "nodes", hosts.size() >= 2}, std::tuple{"stage", "stages", true}}) {
      if (!asked) continue;
      Tried t{kind, subject, "", "", {}, {}};
      t.skip_why = fmt::format("no {} change replayed: {}", std::string_view(kind) == "late_set" ? "late set" : kind, why);
      out.push_back(std::move(t));
    }
  } else if (n > 1) {
    if (j.late_set.size() >= 2) {
      Tried t{"late_set", names_of(j, j.late_set), fmt::format("{} ranks late together, all arriving as the other ranks' median does", j.late_set.size()),
              "these ranks are late together: look for what they share (a node, a switch, a data shard, a pipeline stage) before any one "
              "of them; each alone saves little because the others still hold the job",
              on_time(j.late_set),
              {}};
      for (auto r : j.late_set)
        t.evidence.push_back(fmt::format("{} arrives {:.2f} ms per iteration after the other ranks' median", j.name[r], ms(static_cast<double>(excess[r]) * per_iter)));
      out.push_back(std::move(t));
    }
    // The ranks that arrive late enough to matter (as the late set's), the latest one always: the
    // answer for "each rank" when none stands out.
    std::vector<std::size_t> latest;
    for (std::size_t r = 0; r < n; ++r)
      if (excess[r] > 0) latest.push_back(r);
    std::stable_sort(latest.begin(), latest.end(), [&](std::size_t a, std::size_t b) { return excess[a] > excess[b]; });
    std::size_t keep = std::min<std::size_t>(latest.size(), 1);
    while (keep < latest.size() && keep < kSubjectsReplayed && notable(excess[latest[keep]])) ++keep;
    latest.resize(keep);
    for (auto r : latest)
      out.push_back({"rank",
                     j.name[r],
                     "arriving as the other ranks' median does",
                     "see why this rank computes or launches longer than the others (profile.straggler's table per iteration; perfgap "
                     "check on its node; its data shard or pipeline stage)",
                     on_time({r}),
                     {fmt::format("it arrives {:.2f} ms per iteration after the other ranks' median", ms(static_cast<double>(excess[r]) * per_iter))}});
    std::map<std::string, std::vector<std::size_t>> by_host;
    for (std::size_t r = 0; r < n; ++r)
      if (!d.gpus[j.gpu[r]].host.empty()) by_host[d.gpus[j.gpu[r]].host].push_back(r);
    if (by_host.size() >= 2) {
      // The nodes whose ranks take longest to arrive (of a job of two nodes, one is the median).
      std::vector<std::pair<std::int64_t, std::string>> nodes;
      for (const auto& [host, ranks] : by_host) {
        std::int64_t sum = 0;
        for (auto r : ranks) sum += gaps[r];
        nodes.emplace_back(sum / static_cast<std::int64_t>(ranks.size()), host);
      }
      std::stable_sort(nodes.begin(), nodes.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
      if (nodes.size() > kSubjectsReplayed) nodes.resize(kSubjectsReplayed);
      for (std::size_t i = 0; i < nodes.size(); ++i) {
        const auto& host = nodes[i].second;
        out.push_back({"node",
                       host,
                       fmt::format("its {} ranks arriving as the other ranks' median does", by_host[host].size()),
                       fmt::format("perfgap check on {} (and fleet against its peers): a node whose ranks are all late is the node, not the ranks; "
                                   "drain it if the check finds a cause",
                                   host),
                       on_time(by_host[host]),
                       {fmt::format("its ranks take {:.2f} ms per iteration on average to arrive after the previous collective's end",
                                    ms(static_cast<double>(nodes[i].first) * per_iter))},
                       i == 0});
      }
    }
  }
  // Launches: every GPU's host-bound idle removed. Its waits per iteration over the iterations
  // the saving is (step_base): the whole ones where the replay knows them.
  const std::size_t whole = j.replayer.held_iterations();
  const bool over_whole = !j.replayer.whole_host_wait().empty() && whole > 0;
  const auto& host = over_whole ? j.replayer.whole_host_wait() : j.replayer.host_wait();
  const auto& stall = over_whole ? j.replayer.whole_host_stall() : j.replayer.host_stall();
  const double host_per_iter = over_whole ? 1.0 / static_cast<double>(whole) : per_iter;
  Tried launch{"launch", "launches", "no GPU waiting for its launches (the CPU launching no slower than the GPU runs)",
               framework_fix(d.framework.framework, FixTopic::whatif_launch),
               ReplayChange{{}, true, 0, {}},
               {}};
  launch.framework = framework_evidence(d.framework);
  launch.stall_fix = framework_fix(d.framework.framework, FixTopic::host_stall);
  launch_waits(launch, j, host, stall, host_per_iter, "collectives");
  if (d.api_calls == 0) launch.skip_why = kNoLaunchCalls;
  out.push_back(std::move(launch));
  out.push_back(overlap_change(j, d.framework));
  bandwidth_changes(j, d, w, out);
  return out;
}

// The nodes of a pipeline with data-parallel copies (PP + DP) whose ranks compute longer than
// their stages' ranks on the other nodes (slow_nodes): each such node's ranks computing like
// those. Only traces that name their host (nsys; Kineto by tensorboard_trace_handler's file
// names) say the nodes.
void pipeline_node_changes(const Job& j, std::vector<Tried>& out) {
  const double per_iter = j.base.measured > 0 ? j.step_ns / static_cast<double>(j.base.measured) : 0;
  for (const auto& c : j.slow_nodes)
    out.push_back({"node", c.host,
                   fmt::format("its {} ranks computing like their stages' ranks on the other nodes (the median of each stage's)", c.ranks.size()),
                   fmt::format("perfgap check on {} (and fleet against its peers): a node whose ranks all compute longer than their stages' "
                               "copies elsewhere is the node, not its ranks or their stages; drain it if the check finds a cause",
                               c.host),
                   {},
                   {fmt::format("its ranks spend {:.2f} ms per iteration together between their sends, receives and collectives, their stages' "
                                "ranks on the other nodes {:.2f} ms (the median of each stage's)",
                                ms(c.own * per_iter), ms(c.elsewhere * per_iter))},
                   true,
                   c.change});
  for (std::size_t i = 0; i < j.slow_nodes.size(); ++i) out[out.size() - j.slow_nodes.size() + i].ranks = j.slow_nodes[i].ranks;
}

// The changes tried on a pipeline: each stage computing like the median stage (the slowest
// always, up to 8 that are slower by 1% of the step), each rank of a stage of several ranks
// (data-parallel replicas) computing like the median of its stage's other ranks, and launches.
std::vector<Tried> pipeline_changes(const Job& j, const Digest& d) {
  std::vector<Tried> out;
  const auto& p = j.pipe;
  const std::size_t n = j.gpu.size();
  const double per_iter = j.base.measured > 0 ? j.step_ns / static_cast<double>(j.base.measured) : 0;
  auto per_it = [&](double ns) { return ms(ns * per_iter); };
  auto notable = [&](double ns) { return ns * per_iter >= std::max(0.01 * j.step_ns, 100'000.0); };
  std::vector<std::vector<std::size_t>> ranks(p.stages());
  for (std::size_t r = 0; r < n; ++r)
    if (p.stage()[r] >= 0) ranks[static_cast<std::size_t>(p.stage()[r])].push_back(r);
  auto mean_of = [&](const std::vector<std::int64_t>& v, const std::vector<std::size_t>& rs) {
    double sum = 0;
    for (auto r : rs) sum += static_cast<double>(v[r]);
    return rs.empty() ? 0.0 : sum / static_cast<double>(rs.size());
  };
  // A stage's compute is its median rank's (stage_own): one slow copy is whatif.rank's, no stage to balance.
  const std::vector<double> own = stage_own(p);
  // "The median stage" is the other stages' median (of two stages, the other one).
  auto others = [&](std::size_t s) {
    std::vector<double> v;
    for (std::size_t o = 0; o < own.size(); ++o)
      if (o != s) v.push_back(own[o]);
    return median(v);
  };
  std::vector<std::size_t> order(p.stages());
  for (std::size_t s = 0; s < order.size(); ++s) order[s] = s;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return own[a] > own[b]; });
  for (std::size_t i = 0; i < order.size() && i < kSubjectsReplayed; ++i) {
    const std::size_t s = order[i];
    const double med = others(s);
    if (i > 0 && !notable(own[s] - med)) break;
    PipelineChange c;
    c.scale.assign(n, 1.0);
    for (auto r : ranks[s]) c.scale[r] = own[s] > med && own[s] > 0 ? med / own[s] : 1.0;
    Tried t{"stage",
            fmt::format("stage {} of {} ({})", s, p.stages(), names_of(j, ranks[s])),
            "computing like the other stages' median",
            "balance the stages: move layers off this stage (the first stage also holds the embedding, the last the loss and output layer: "
            "Megatron's --decoder-first-pipeline-num-layers and --decoder-last-pipeline-num-layers, or a custom layout), or see why its GPUs run "
            "slower (perfgap check on its nodes)",
            {},
            {fmt::format("its {} {:.2f} ms per iteration between {} sends and receives (compute, launches), the other stages' median {:.2f} ms",
                         ranks[s].size() > 1 ? "median rank spends" : "ranks spend", per_it(own[s]), ranks[s].size() > 1 ? "its" : "their", per_it(med)),
             fmt::format("inside their sends and receives: {:.2f} ms per iteration waiting for the peer to arrive, {:.2f} ms transferring once both had",
                         per_it(mean_of(p.waiting(), ranks[s])), per_it(mean_of(p.transfer(), ranks[s])))},
            i == 0,
            std::move(c)};
    // The stage and its ranks as numbers (the subject says them in words): stage_rank.K is the
    // job's rank (the trace's distributedInfo.rank) of the stage's K-th rank, where recorded.
    t.metrics = {{"stage", static_cast<double>(s)}, {"stages", static_cast<double>(p.stages())}, {"stage_ranks", static_cast<double>(ranks[s].size())}};
    for (std::size_t k = 0; k < ranks[s].size(); ++k)
      if (j.rank[ranks[s][k]] >= 0) t.metrics.emplace_back(fmt::format("stage_rank.{}", k), static_cast<double>(j.rank[ranks[s][k]]));
    if (p.collectives() > 0) {
      t.evidence[0] = fmt::format("its median rank spends {:.2f} ms per iteration between its sends, receives and collectives (compute, launches), "
                                  "the other stages' median {:.2f} ms (its ranks' mean {:.2f} ms)",
                                  per_it(own[s]), per_it(med), per_it(mean_of(p.own(), ranks[s])));
      t.evidence.push_back(fmt::format("inside their collectives: {:.2f} ms per iteration waiting for their group's last rank (the stage's other "
                                       "copies), {:.2f} ms transferring once it had; the collectives still join the copies in the change",
                                       per_it(mean_of(p.coll_waiting(), ranks[s])), per_it(mean_of(p.coll_transfer(), ranks[s]))));
    }
    if (p.unpaired())
      t.evidence.push_back(fmt::format("{} send/recv of the job have no pair among the traces: they keep their measured length, their waiting included",
                                       p.unpaired()));
    out.push_back(std::move(t));
  }
  // A rank of a stage of several: its own time against its stage's median rank (the ranks
  // profile.straggler names from, on a job with collectives too).
  const auto& copies = j.slow;
  if (const auto& set = j.slow_set; set.ranks.size() >= 2) {
    Tried t{"late_set", names_of(j, set.ranks), fmt::format("{} ranks computing like their stages' other ranks' median, together", set.ranks.size()),
            "these ranks compute longer than their stages' other copies together: look for what they share (a node, a switch, a data shard) "
            "before any one of them; each alone saves little because the others still hold the job",
            {}, {}, true, set.change};
    for (std::size_t i = 0; i < set.ranks.size(); ++i)
      t.evidence.push_back(fmt::format("{} spends {:.2f} ms per iteration between its sends, receives and collectives, the median of its stage {}'s "
                                       "ranks outside the set {:.2f} ms", j.name[set.ranks[i]], per_it(set.own[i]), p.stage()[set.ranks[i]], per_it(set.target[i])));
    t.ranks = set.ranks;
    out.push_back(std::move(t));
  }
  for (const auto& c : copies)
    out.push_back({"rank", j.name[c.rank], fmt::format("computing like the median of its stage {}'s other ranks", c.stage),
                   "see why this rank computes longer than the other ranks of its stage (its data shard; perfgap check on its node)", {},
                   {fmt::format("it spends {:.2f} ms per iteration between its sends{} receives{}, the median of its stage's other ranks {:.2f} ms", per_it(c.own),
                                p.collectives() > 0 ? "," : " and", p.collectives() > 0 ? " and collectives" : "", per_it(c.median))},
                   true, c.change});
  for (std::size_t i = 0; i < copies.size(); ++i) out[out.size() - copies.size() + i].ranks = {copies[i].rank};
  if (p.collectives() > 0) pipeline_node_changes(j, out);
  Tried launch{"launch", "launches", "no GPU waiting for its launches (the CPU launching no slower than the GPU runs)",
               framework_fix(d.framework.framework, FixTopic::whatif_launch_pipeline), {}, {}};
  launch.framework = framework_evidence(d.framework);
  launch.stall_fix = framework_fix(d.framework.framework, FixTopic::host_stall);
  launch_waits(launch, j, p.host_wait(), p.host_stall(), per_iter, "sends and receives");
  if (d.api_calls == 0) launch.skip_why = kNoLaunchCalls;
  launch.pchange.no_host_wait = true;
  out.push_back(std::move(launch));
  // A stage's compute needs its receives' activations and gradients: which of its send/recv it
  // could run under is its schedule's, not what the trace says.
  Tried overlap{"overlap", "communication", "", "", {}, {}};
  overlap.skip_why =
      "communication overlap not replayed on a pipeline's sends and receives: which compute needs which receive is the schedule's (1F1B, "
      "interleaving), not in the trace; whatif.stage says what the stages' waiting costs";
  out.push_back(std::move(overlap));
  return out;
}

// Why --busbw or --nccl-tests was not replayed, as a skip finding.
// The launches and overlap changes as profile.launch_bound reads the same traces: a filtered or
// sampled trace (its dropped events read as idle, host stalls and compute held) is not replayed;
// host stalls spent mostly inside CUDA calls on the launching thread (cudaFree, a first launch
// loading its module) get that fix, not the data loader's.
void as_analysed(Tried& t, const Digest& d, const Analysis& an) {
  if (const std::string sampled = sampled_trace_evidence(d); !sampled.empty() && t.skip_why.empty())
    t.skip_why = (t.kind == "launch" ? "launches not replayed: " : "communication overlap not replayed: ") + sampled;
  if (t.kind != "launch") return;
  if (const StallTime st = stall_time(an); st.calls_hold()) t.stall_fix = host_call_stall_fix(d.framework.framework, st.call_names());
}

Finding busbw_unknown(const std::string& id, const std::string& subject, const std::string& option, const std::string& source) {
  Finding f = started(id, "workload", subject);
  f.title = "no collective's size is in the traces (nsys exports and older Kineto traces record none): " + option + " cannot be replayed";
  f.add(source, f.title, "Kineto traces with NCCL's message sizes (\"In msg nelems\", PyTorch 2.1 or later)");
  return f;
}

std::vector<Finding> whatif_findings(Digest& d, const std::string& source, const ProfileOptions& o, const WhatifOptions& w) {
  auto an = analyze(d, o);
  Job j = replayable(d, an);
  std::vector<Finding> out;
  if (d.job.several) out.push_back(ranks_finding(d.job, source, d.framework.framework));
  bool trusted = false;
  const auto unaligned = unaligned_ranks(d, an, j);
  // The measured step is the windows' mean over every trace, the unaligned ones' too (another
  // job's steps): the step of the ranks replayed is their whole iterations'.
  if (!unaligned.empty())
    if (const Replay m = j.replayer.run(ReplayChange{}); m.whole_iterations > 0 && m.whole_measured > 0)
      j.step_ns = static_cast<double>(m.whole_measured) / static_cast<double>(m.whole_iterations);
  out.push_back(replay_finding(j, source, d.job.partial(), unaligned, trusted));
  // The GPUs the traces name: compare and explain tell a report of another machine by them.
  std::set<std::string> models;
  for (const auto& g : d.gpus)
    if (auto m = compare::gpu_model_of_label(g.label); !m.empty()) models.insert(std::move(m));
  if (!models.empty()) out.back().add(std::string(compare::kTracedGpusEvidence), fmt::format("{}", fmt::join(models, " + ")));
  if (!trusted) return out;
  std::vector<Finding> tried;
  if (j.pipeline && j.pipe.stages() == 0) {
    Finding f = started("whatif.stage", "workload", source);
    f.title = "no stage change replayed: " + j.pipe.stages_why();
    f.add(source, f.title, "ranks joined by sends and receives in a chain of stages (GPipe, 1F1B)");
    out.push_back(std::move(f));
  }
  std::vector<Finding> undecided;
  std::vector<std::vector<std::size_t>> moved;  // per finding of `tried`: the ranks its change moves
  auto tries = j.pipeline ? pipeline_changes(j, d) : changes(j, d, w);
  for (auto& t : tries)
    if (t.kind == "launch" || t.kind == "overlap") as_analysed(t, d, an);
  for (const auto& t : tries) {
    if (!t.skip_why.empty()) {
      Finding f = started("whatif." + t.kind, "workload", t.subject);
      f.title = t.skip_why;
      f.add(source, t.skip_why);
      undecided.push_back(std::move(f));
      continue;
    }
    Finding f = tried_finding(j, t, source);
    const double saved = ms(j.step_ns) * f.metrics[1].second / 100;
    if (t.shown || saved >= std::max(0.01 * ms(j.step_ns), 0.1)) tried.push_back(std::move(f)), moved.push_back(t.ranks.empty() ? on_time_ranks(t.change) : t.ranks);
  }
  place_nodes(tried, moved);
  // Over part of the job the replay knows only the ranks read: the others may hold the job too.
  if (d.job.partial() || (j.world > static_cast<std::int64_t>(j.gpu.size()) && !d.job.several))
    for (auto& f : tried)
      f.add(source, fmt::format("{} of the job's {} ranks are in the traces: the replay holds only those, as if the others kept pace (give every "
                                "rank's trace for the job's answer)",
                                j.gpu.size(), j.world > 0 ? std::to_string(j.world) : std::string("unknown number of")));
  else if (!unaligned.empty())
    for (auto& f : tried)
      f.add(source, fmt::format("{} of the traces' {} ranks could not be put on one clock with the others (whatif.replay): the replay holds the "
                                "{} others only, as if those kept pace",
                                unaligned.size(), j.gpu.size(), j.gpu.size() - unaligned.size()));
  for (auto& f : tried) out.push_back(std::move(f));
  for (auto& f : undecided) out.push_back(std::move(f));
  rocm_fix_words(d, out);
  if (j.pipeline) {  // --busbw and --nccl-tests are for collectives
    for (const auto& [asked, id, subject] : {std::tuple{w.busbw_gbps > 0, "whatif.busbw", fmt::format("{:g} GB/s", w.busbw_gbps)},
                                             std::tuple{!w.curves.empty(), "whatif.nccl_tests", std::string("nccl-tests")}}) {
      if (!asked) continue;
      Finding f = started(id, "workload", subject);
      f.title = j.pipe.collectives() > 0
                    ? "a pipeline's collectives are not replayed at a bandwidth (not yet: the replay joins them with its sends and receives): the "
                      "stage and rank changes say what their waiting costs"
                    : "a pipeline's sends and receives are not replayed at a bandwidth (collectives only): the stage changes say what their waiting costs";
      f.add(source, f.title, "collectives of known size");
      out.push_back(std::move(f));
    }
    return out;
  }
  if (w.busbw_gbps > 0 && j.base.sized == 0) out.push_back(busbw_unknown("whatif.busbw", fmt::format("{:g} GB/s", w.busbw_gbps), "--busbw", source));
  if (!w.curves.empty() && j.base.sized == 0) out.push_back(busbw_unknown("whatif.nccl_tests", "nccl-tests", "--nccl-tests", source));
  return out;
}

}  // namespace

double busbw_at(const BusbwCurve& c, std::uint64_t bytes) {
  const auto& p = c.points;
  if (p.empty()) return 0;
  if (bytes <= p.front().first) return p.front().second;
  if (bytes >= p.back().first) return p.back().second;
  auto hi = std::lower_bound(p.begin(), p.end(), bytes, [](const auto& x, std::uint64_t b) { return x.first < b; });
  auto lo = hi - 1;
  const double f = std::log(static_cast<double>(bytes) / static_cast<double>(lo->first)) / std::log(static_cast<double>(hi->first) / static_cast<double>(lo->first));
  return lo->second + f * (hi->second - lo->second);
}

std::string whatif_undecided(const std::vector<Finding>& findings) {
  const Finding* replay = nullptr;
  const Finding* first_skip = nullptr;
  for (const auto& f : findings) {
    if (!f.id.starts_with("whatif.") || f.id == "whatif.digest") continue;
    if (f.id == "whatif.replay") {
      replay = &f;
      continue;
    }
    if (f.status != report::Status::skip) return "";  // a change replayed
    if (!first_skip) first_skip = &f;
  }
  if (!replay) return "";  // --digest, or no trace read
  constexpr std::string_view kNothing = "nothing to replay: ";
  if (replay->status == report::Status::skip) {
    std::string_view why = replay->title;
    if (why.starts_with(kNothing)) why.remove_prefix(kNothing.size());
    return "nothing could be replayed: " + std::string(why);
  }
  // A replay not trusted (it says why) or changes that could not be decided.
  if (replay->status != report::Status::pass) return "no change could be replayed: " + replay->title;
  if (first_skip) return "no change could be replayed: " + first_skip->title;
  return "";
}

ProfileJob whatif_profile_job(const std::vector<std::string>& files, const RankReader& read, const ProfileOptions& o, const WhatifOptions& w,
                              std::size_t threads) {
  auto jd = read_profile_job(files, read, o, threads);
  if (!jd.job.used.empty()) jd.job.findings = whatif_findings(jd.all, jd.source, o, w);
  return std::move(jd.job);
}

}  // namespace perfgap::analyzers
