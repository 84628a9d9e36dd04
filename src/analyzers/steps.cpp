#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

double median_of_sorted(const std::vector<double>& v) {
  const std::size_t n = v.size();
  return n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
}

// The global batch size of the records used: the one the lines say (all that say one agree),
// else the samples consumed per iteration between records that number both; nullopt where
// the log says neither or the sizes differ (a batch ramp-up).
std::optional<double> steps_global_batch(const std::vector<const parsers::StepRecord*>& kept) {
  std::optional<double> said;
  for (const auto* r : kept) {
    if (r->global_batch <= 0) continue;
    if (said && *said != r->global_batch) return std::nullopt;
    said = r->global_batch;
  }
  if (said) return said;
  std::optional<double> per_step;
  const parsers::StepRecord* prev = nullptr;
  for (const auto* r : kept) {
    if (r->consumed_samples < 0 || r->iteration < 0) continue;
    if (prev && r->iteration > prev->iteration && r->consumed_samples > prev->consumed_samples) {
      const double b = (r->consumed_samples - prev->consumed_samples) / static_cast<double>(r->iteration - prev->iteration);
      if (per_step && std::abs(*per_step - b) > 1e-6 * b) return std::nullopt;
      per_step = b;
    }
    prev = r;
  }
  return per_step;
}

}  // namespace

std::optional<StepStats> step_stats(const parsers::StepLog& log, std::optional<std::size_t> warmup) {
  StepStats s;
  s.records = log.records.size();
  s.throughput = log.throughput;
  s.unit = log.unit;
  s.field = log.field;
  s.layout = parsers::step_layout_name(log.layout);
  std::size_t w;
  if (warmup) {
    w = *warmup;
    s.warmup_default = false;
  } else {
    w = std::max<std::size_t>(1, s.records / 10);
    if (w >= s.records) w = s.records > 0 ? s.records - 1 : 0;
  }
  // Start-up costs make steps slower, never faster: a default warm-up whose records are all no
  // slower than the median of the rest (a log cut from the middle of a run, "iteration 71/100")
  // holds no start-up, and dropping it would only move the median. Kept, and said.
  if (!warmup && w > 0 && w < s.records) {
    std::vector<double> rest;
    for (std::size_t i = w; i < s.records; ++i) rest.push_back(log.records[i].value);
    std::sort(rest.begin(), rest.end());
    const double rest_median = median_of_sorted(rest);
    const bool any_slower = std::any_of(log.records.begin(), log.records.begin() + static_cast<std::ptrdiff_t>(w), [&](const auto& r) {
      return s.throughput ? r.value < rest_median : r.value > rest_median;
    });
    if (!any_slower) {
      s.warmup_kept = w;
      s.warmup_rest_median = rest_median;
      w = 0;
    }
  }
  s.warmup = w;
  if (w >= s.records) return std::nullopt;
  s.series.reserve(log.records.size());
  for (std::size_t i = 0; i < log.records.size(); ++i)
    s.series.emplace_back(log.records[i].iteration >= 0 ? static_cast<double>(log.records[i].iteration) : static_cast<double>(i + 1), log.records[i].value);
  std::vector<const parsers::StepRecord*> kept;
  for (std::size_t i = w; i < s.records; ++i) kept.push_back(&log.records[i]);
  // Skipped iterations (no optimizer step) are not representative steps: left out, unless
  // nothing else is left (then kept and said).
  std::size_t skipped = static_cast<std::size_t>(std::count_if(kept.begin(), kept.end(), [](const auto* r) { return r->skipped; }));
  if (skipped == kept.size()) {
    s.all_skipped = skipped > 0;
  } else if (skipped > 0) {
    kept.erase(std::remove_if(kept.begin(), kept.end(), [](const auto* r) { return r->skipped; }), kept.end());
    s.skipped = skipped;
  }
  s.first_iteration = kept.front()->iteration;
  s.global_batch = steps_global_batch(kept);
  // Start-up records only: a single record, the log's first (numbered 0 or 1, or not numbered),
  // that the default warm-up would drop from a longer log; or skipped iterations only (loss-scale
  // overflows while the scale settles, at a run's start: no optimizer step).
  if (s.all_skipped)
    s.startup_only = fmt::format("every record used is a skipped iteration ({} of them; loss-scale overflow while the scale settles at the "
                                 "run's start: no optimizer step), not a steady-state step",
                                 kept.size());
  else if (kept.size() == 1 && s.records == 1 && !warmup && s.first_iteration <= 1)
    s.startup_only = fmt::format("its only record{} is the run's first step, which the default warm-up drops from a longer log (start-up: "
                                 "compilation, allocator and NCCL set-up, data loader start)",
                                 s.first_iteration >= 0 ? fmt::format(" (iteration {})", s.first_iteration) : "");
  std::vector<double> v;
  v.reserve(kept.size());
  for (const auto* r : kept) v.push_back(r->value);
  s.used = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  s.median = median_of_sorted(v);
  // Nearest rank: p99 of times from the top; for throughputs the slow end is the bottom.
  std::size_t rank = std::max<std::size_t>(static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n))), 1);
  s.tail = s.throughput ? v[std::min(n, std::max<std::size_t>(static_cast<std::size_t>(std::ceil(0.01 * static_cast<double>(n))), 1)) - 1]
                        : v[std::min(n, rank) - 1];
  s.min = v.front();
  s.max = v.back();
  return s;
}

StepStats step_figure(double ms) {
  StepStats s;
  s.median = s.mean = s.tail = s.min = s.max = ms;
  return s;
}

StepStats step_throughput_figure(double value, std::string unit) {
  StepStats s = step_figure(value);
  s.throughput = true;
  s.unit = std::move(unit);
  return s;
}

namespace {

// The fewest steps after warm-up among which steps.tail passes (finds no slow tail); a slow
// step is reported among fewer.
constexpr std::size_t kMinTailRecords = 10;

// A share in percent with the digits it needs: 95.3%, 0.036% (never 0.0% for a share that is not nothing).
std::string steps_pct_text(double pct) {
  if (pct == 0 || std::abs(pct) >= 1 || !std::isfinite(pct)) return fmt::format("{:.1f}%", pct);
  return fmt::format("{:.2g}%", pct);
}

// The first w records by the log's own iteration numbers: "iteration 71", "iterations 1 to 3".
std::string first_iterations_words(const StepStats& s, std::size_t w) {
  auto label = [&](std::size_t i) { return fmt::format("{:g}", s.series[i].first); };
  return w == 1 ? "iteration " + label(0) : fmt::format("iterations {} to {}", label(0), label(w - 1));
}

// Which records the warm-up dropped, by the log's own iteration numbers, and why.
std::string steps_warmup_words(const StepStats& s) {
  const std::size_t w = std::min(s.warmup, s.series.size());
  const std::string which = first_iterations_words(s, w);
  return fmt::format("warm-up dropped: {} (the first {}; {}): a run's first steps, also the first after a restart from a checkpoint, "
                     "include start-up costs (compilation, allocator and NCCL set-up, data loader start){}",
                     which, w == 1 ? std::string("record") : fmt::format("{} records", w),
                     s.warmup_default ? "by default 10% of the records, at least 1, never all" : "--warmup",
                     s.warmup_default ? "; --warmup 0 keeps them" : "");
}

std::string fmt_value(double v, const StepStats& s);

// The default warm-up left in: its records were no slower than the rest.
std::string steps_warmup_kept_words(const StepStats& s) {
  const std::size_t w = std::min(s.warmup_kept, s.series.size());
  const std::string which = first_iterations_words(s, w);
  std::string values;
  for (std::size_t i = 0; i < w && i < 3; ++i) values += (i ? ", " : "") + fmt_value(s.series[i].second, s);
  if (w > 3) values += ", ...";
  return fmt::format("no warm-up dropped: {} ({}), the default warm-up, is no slower than the median of the records after it ({}), "
                     "so it holds no start-up cost (a log cut from the middle of a run); --warmup {} drops it",
                     which, values, fmt_value(s.warmup_rest_median, s), w);
}

std::string fmt_value(double v, const StepStats& s) { return s.throughput ? fmt::format("{:.2f} {}", v, s.unit) : fmt::format("{:.1f} ms", v); }

// At most this many points per series in the chart; longer runs are drawn as bucket means
// with their min-max band, so a spike still shows.
constexpr std::size_t kStepChartPoints = 1200;

void add_points(report::ChartSeries& out, const std::vector<std::pair<double, double>>& v, std::size_t begin, std::size_t end) {
  const std::size_t n = end - begin;
  if (n <= kStepChartPoints) {
    for (std::size_t i = begin; i < end; ++i) out.points.push_back({v[i].first, v[i].second, std::nullopt, std::nullopt});
    return;
  }
  for (std::size_t b = 0; b < kStepChartPoints; ++b) {
    std::size_t lo = begin + n * b / kStepChartPoints, hi = begin + n * (b + 1) / kStepChartPoints;
    double sum = 0, mn = v[lo].second, mx = v[lo].second, x = 0;
    for (std::size_t i = lo; i < hi; ++i) {
      sum += v[i].second;
      x += v[i].first;
      mn = std::min(mn, v[i].second);
      mx = std::max(mx, v[i].second);
    }
    const double k = static_cast<double>(hi - lo);
    out.points.push_back({x / k, sum / k, mn, mx});
  }
}

// The run over its iterations (warm-up apart) with the reference as a line.
report::Chart steps_chart(const StepStats& s, const StepsOptions& o, bool comparable) {
  report::Chart c;
  c.title = s.throughput ? fmt::format("throughput per record ({})", s.unit) : "time per iteration";
  c.x_label = "iteration";
  c.y_label = s.throughput ? s.unit : "ms";
  const std::size_t w = std::min(s.warmup, s.series.size());
  if (w > 0) {
    report::ChartSeries warm{"warm-up (dropped)", {}};
    // One point more, so the two lines join.
    add_points(warm, s.series, 0, std::min(w + 1, s.series.size()));
    c.series.push_back(std::move(warm));
  }
  report::ChartSeries run{"measured", {}};
  add_points(run, s.series, w, s.series.size());
  c.series.push_back(std::move(run));
  if (comparable) {
    c.reference_y = *o.reference;
    c.reference_label = fmt::format("reference {}", fmt_value(*o.reference, s));
  }
  return c;
}

// A percent of reference above this many times 100 is a sign the reference is another job.
constexpr double kFarAboveReference = 2;

// Why a reference of the run's unit is still no reference for it (steps.gap skips, saying so);
// empty when it is one. Another job: a step log whose global batch size differs from the run's
// (both logs say it). No steady state: a reference log whose median rests on start-up records
// only.
std::string steps_not_a_reference(const StepStats& s, const std::string& source, const StepsOptions& o) {
  if (s.global_batch && o.reference_batch && *s.global_batch != *o.reference_batch)
    return fmt::format("the reference is another job: global batch size {:g} in {}, {:g} in the reference {}: steps of different batches are not "
                       "one scale (give a reference of the same job: the same model, global batch size and scale)",
                       *s.global_batch, source, *o.reference_batch, o.reference_source);
  if (!o.reference_startup_only.empty())
    return fmt::format("the reference {} is no steady state: {}; not scored (give a reference log with steady-state steps, or "
                       "--reference {})",
                       o.reference_source, o.reference_startup_only, s.throughput ? "N" + s.unit : std::string("MS"));
  return {};
}

// steps.gap: the run's median against the reference, when there is one to score against.
Finding steps_gap_finding(const StepStats& s, const std::string& source, const StepsOptions& o) {
  const bool number_only = s.records == 0;
  const std::string per = s.throughput ? "" : " per iteration";
  // What was compared, for titles and evidence.
  const std::string quantity = s.throughput ? fmt::format("throughput ({})", s.unit) : "time per iteration";
  Finding f;
  f.id = "steps.gap";
  f.layer = "workload";
  f.subject = source;
  if (s.throughput) {
    f.metric("median_throughput", s.median);
    f.metric("mean_throughput", s.mean);
    f.metric("p1_throughput", s.tail);
  } else {
    f.metric("median_ms", s.median);
  }
  // The job's global batch size, where the log says it: compare and fleet keep other jobs apart.
  if (s.global_batch) f.metric("global_batch_size", *s.global_batch);
  if (!number_only) {
    if (!s.throughput) {
      f.metric("mean_ms", s.mean);
      f.metric("p99_ms", s.tail);
    }
    f.metric("records", static_cast<double>(s.records));
    f.metric("warmup_records", static_cast<double>(s.warmup));
    if (s.skipped) f.metric("skipped_iterations", static_cast<double>(s.skipped));
  }
  std::string measured;
  if (number_only) {
    measured = s.throughput ? fmt::format("{:g} {}", s.median, s.unit) : fmt::format("{:g} ms per iteration", s.median);
  } else {
    measured = fmt::format("median {}{} over {} record{} ({} warm-up dropped{}; mean {}, {} {}) from {} ({})", fmt_value(s.median, s), per, s.used,
                           s.used == 1 ? "" : "s", s.warmup, s.skipped ? fmt::format(", {} skipped iterations left out", s.skipped) : "",
                           fmt_value(s.mean, s), s.throughput ? "p1" : "p99", fmt_value(s.tail, s), s.field, s.layout);
  }
  auto notes = [&] {
    if (number_only) return;
    if (s.warmup > 0 && !s.series.empty()) f.add(source, steps_warmup_words(s));
    if (s.warmup_kept > 0 && !s.series.empty()) f.add(source, steps_warmup_kept_words(s));
    if (s.used > 1 && s.used < kMinTailRecords)
      f.add(source, fmt::format("the median rests on {} records after the warm-up, fewer than the {} steps.tail needs to rule out a slow tail: "
                                "a short log's median may still hold start-up or stalled steps; a longer log makes it firm",
                                s.used, kMinTailRecords));
    if (s.used == 1 && s.warmup == 0 && s.warmup_kept == 0)
      f.add(source, fmt::format("a single record{}: no warm-up could be dropped, and a run's first steps include start-up costs",
                                s.first_iteration >= 0 ? fmt::format(" (iteration {})", s.first_iteration) : ""));
    if (s.all_skipped)
      f.add(source, fmt::format("all {} record(s) after the warm-up are skipped iterations (loss-scale overflow: no optimizer step); "
                                "they are used, but steady-state steps may differ",
                                s.used));
  };
  const std::string single = number_only ? ""
                             : s.used == 1 ? ", from a single record"
                             : s.used < kMinTailRecords ? fmt::format(", from only {} records after warm-up", s.used)
                                                        : "";
  const char* all_skipped = s.all_skipped ? ", skipped iterations only" : "";
  bool comparable = o.reference && o.reference_throughput == s.throughput && o.reference_unit == s.unit;
  // Comparable in unit, but not a reference for this run: another job's batch, or start-up only.
  const std::string not_a_reference = comparable ? steps_not_a_reference(s, source, o) : std::string();
  if (!not_a_reference.empty()) {
    comparable = false;
    f.status = report::Status::skip;
    f.title = not_a_reference;
    f.add(source, measured);
    f.add(o.reference_source, fmt::format("reference {}{}", fmt_value(*o.reference, s), per));
    if (s.global_batch && o.reference_batch)
      f.add("global batch size", fmt::format("{:g} in {}, {:g} in {}", *s.global_batch, source, *o.reference_batch, o.reference_source));
    if (!o.reference_startup_only.empty()) f.add(o.reference_source, "start-up only: " + o.reference_startup_only);
    const double pct = s.throughput ? s.median / *o.reference : *o.reference / s.median;
    f.add("not scored", fmt::format("as figures the run would read {} of this reference: a figure of no meaning where the reference is not "
                                    "the same job's steady state",
                                    steps_pct_text(100 * pct)));
    notes();
  } else if (!o.reference) {
    f.status = report::Status::skip;
    f.title = fmt::format("median {}{}{}{}; no reference to score against ({})", fmt_value(s.median, s), per, single, all_skipped,
                          s.throughput ? fmt::format("--reference N{} or a step log of the same throughput", s.unit) : "--reference MS or a reference step log");
    f.add(source, measured);
    notes();
  } else if (!comparable) {
    f.status = report::Status::skip;
    f.title = fmt::format("the log reports {}, the reference {} is {}: nothing comparable ({})", quantity, o.reference_source,
                          o.reference_throughput ? fmt::format("a throughput ({})", o.reference_unit) : "a time per iteration",
                          s.throughput ? fmt::format("give --reference the healthy run's throughput as N{} or a step log in {}", s.unit, s.unit)
                                       : "give --reference as milliseconds per iteration or a step log of step times");
    f.add(source, measured);
    f.add(o.reference_source, o.reference_throughput ? fmt::format("reference {:.2f} {}", *o.reference, o.reference_unit)
                                                     : fmt::format("reference {:.1f} ms per iteration", *o.reference));
    notes();
  } else {
    double ref = *o.reference;
    double pct = s.throughput ? s.median / ref : ref / s.median;
    if (s.throughput) f.metric("reference_throughput", ref);
    else f.metric("reference_ms", ref);
    f.metric("percent_of_reference", 100 * pct);
    f.add(source, measured);
    f.add(o.reference_source, fmt::format("reference {}{}", fmt_value(ref, s), per));
    f.add("percent of reference",
          fmt::format("{} ({})", steps_pct_text(100 * pct), s.throughput ? "measured / reference throughput" : "reference_ms / median_ms"),
          fmt::format(">= {:.0f}%", 100 * o.threshold));
    // Twice the healthy run's pace is no tuning gain: most likely another job (model, batch,
    // scale) or a reference of start-up steps.
    const bool far_above = pct > kFarAboveReference;
    if (far_above)
      f.add("comparable?", fmt::format("{} of the reference: more than {:g} times its pace, which no configuration fix explains; is the reference the "
                                       "same job (model, global batch size, GPUs and nodes) in its steady state?",
                                       steps_pct_text(100 * pct), kFarAboveReference));
    notes();
    f.table = {{s.throughput ? "median " + s.unit : "median ms", s.throughput ? "reference " + s.unit : "reference ms", "% of reference", "bar"},
               {s.throughput ? fmt::format("{:.2f}", s.median) : fmt::format("{:.1f}", s.median),
                s.throughput ? fmt::format("{:.2f}", ref) : fmt::format("{:.1f}", ref), steps_pct_text(100 * pct),
                fmt::format("{:.0f}%", 100 * o.threshold)}};
    std::string vs = s.throughput ? fmt::format("{} vs {}", fmt_value(s.median, s), fmt_value(ref, s))
                                  : fmt::format("{:.1f} ms vs {:.1f} ms per iteration", s.median, ref);
    if (pct < o.threshold) {
      f.status = report::Status::fail;
      f.title = fmt::format("{} of reference {}({}{}{}), below the {:.0f}% bar", steps_pct_text(100 * pct), s.throughput ? "throughput " : "", vs, single,
                            all_skipped, 100 * o.threshold);
      f.fix = "run perfgap check on the nodes and perfgap analyze on the run's profiles (perf, turbostat, nccl-tests, NCCL log) to find the configuration gap";
      f.impact = s.throughput ? fmt::format("{} less throughput than the reference", steps_pct_text(100 * (1 - pct)))
                 : s.median >= 2 * ref ? fmt::format("iterations take {:.1f} times the reference's time", s.median / ref)
                                       : fmt::format("iterations {:.1f}% slower than the reference", 100 * (s.median / ref - 1));
    } else {
      f.status = report::Status::pass;
      f.title = fmt::format("{} of reference {}({}{}{}), at or above the {:.0f}% bar", steps_pct_text(100 * pct), s.throughput ? "throughput " : "", vs, single,
                            all_skipped, 100 * o.threshold);
      if (far_above)
        f.title += fmt::format("; more than {:g} times the reference's pace: check that it is the same job (model, global batch size, scale)",
                               kFarAboveReference);
    }
  }
  if (s.throughput) f.add(std::string(parsers::kThroughputUnitEvidence), s.unit);
  if (!s.startup_only.empty()) f.add(std::string(parsers::kStartupOnlyEvidence), s.startup_only);
  if (!number_only && !s.series.empty()) f.charts.push_back(steps_chart(s, o, comparable));
  return f;
}

// steps.tail: the slow tail of the step times over their median.
Finding steps_tail_finding(const StepStats& s, const std::string& source) {
  const bool number_only = s.records == 0;
  Finding f;
  f.id = "steps.tail";
  f.layer = "workload";
  f.subject = source;
  if (number_only) {
    f.status = report::Status::skip;
    f.title = "a single figure has no step-time distribution (give a step log)";
  } else if (s.used < 2) {
    f.status = report::Status::skip;
    f.title = fmt::format("{} record(s) after warm-up: too few for a tail", s.used);
  } else {
    // In time terms: the slow tail's step time over the median's. For a throughput the slow
    // tail is the 1st percentile, and its step takes median / p1 as long.
    double over = s.throughput ? s.median / s.tail - 1 : s.tail / s.median - 1;
    const char* tail_name = s.throughput ? "p1" : "p99";
    if (s.throughput) {
      f.metric("p1_throughput", s.tail);
      f.metric("median_throughput", s.median);
    } else {
      f.metric("p99_ms", s.tail);
      f.metric("median_ms", s.median);
    }
    f.metric("p99_over_median_pct", 100 * over);
    f.add(source,
          fmt::format("{} {}, median {}, {} {} over {} records", tail_name, fmt_value(s.tail, s), fmt_value(s.median, s), s.throughput ? "min" : "max",
                      fmt_value(s.throughput ? s.min : s.max, s), s.used),
          s.throughput ? "p1 >= median / 1.05 (slowest steps at most 5% longer)" : "p99 <= median + 5%");
    f.table = {{"records", s.throughput ? "median " + s.unit : "median ms", s.throughput ? "mean " + s.unit : "mean ms",
                s.throughput ? "p1 " + s.unit : "p99 ms", s.throughput ? "min " + s.unit : "max ms", "slow tail over median"},
               {std::to_string(s.used), fmt::format("{:.1f}", s.median), fmt::format("{:.1f}", s.mean), fmt::format("{:.1f}", s.tail),
                fmt::format("{:.1f}", s.throughput ? s.min : s.max), fmt::format("{:.1f}%", 100 * over)}};
    if (over > 0.05) {
      f.status = report::Status::warn;
      // Among fewer records than a percentile needs, the tail is the slowest record: said so.
      const std::string which = s.used < kMinTailRecords ? fmt::format("the slowest of {} records:", s.used)
                                                         : std::string(s.throughput ? "p1" : "p99");
      f.title = s.throughput ? fmt::format("{} throughput {} is {:.1f}% below the median {}: the slowest steps take {:.1f}% longer (stalls)", which,
                                           fmt_value(s.tail, s), 100 * (1 - s.tail / s.median), fmt_value(s.median, s), 100 * over)
                             : fmt::format("{} step time {:.1f} ms is {:.1f}% above the median {:.1f} ms: stalls", which, s.tail, 100 * over, s.median);
      f.fix = "look for stalls on the loader/launcher cores: housekeeping or hypervisor threads sharing them (perfgap check: placement.shared_cores, cpu.steal), checkpointing, GC";
      f.impact = "synchronous training waits for the slowest rank at every step";
    } else if (s.used < kMinTailRecords) {
      // A slow step seen among a few is seen; its absence among a few rules out no tail.
      f.status = report::Status::skip;
      f.title = fmt::format("{} records after warm-up: too few to rule out a slow tail (at least {}); the slowest is {:.1f}% {} the median",
                            s.used, kMinTailRecords, 100 * over, s.throughput ? "below" : "above");
    } else {
      f.status = report::Status::pass;
      f.title = s.throughput ? fmt::format("p1 throughput within {:.1f}% of the median (in step time)", 100 * over)
                             : fmt::format("p99 step time within {:.1f}% of the median", 100 * over);
    }
  }
  return f;
}

}  // namespace

std::vector<Finding> analyze_steps(const StepStats& s, const std::string& source, const StepsOptions& o) {
  std::vector<Finding> out;
  out.push_back(steps_gap_finding(s, source, o));
  out.push_back(steps_tail_finding(s, source));
  return out;
}

}  // namespace perfgap::analyzers
