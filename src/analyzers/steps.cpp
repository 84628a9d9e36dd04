#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {

std::optional<StepStats> step_stats(const parsers::StepLog& log, std::optional<std::size_t> warmup) {
  StepStats s;
  s.records = log.records.size();
  std::size_t w;
  if (warmup) {
    w = *warmup;
  } else {
    w = std::max<std::size_t>(1, s.records / 10);
    if (w >= s.records) w = s.records > 0 ? s.records - 1 : 0;
  }
  s.warmup = w;
  if (w >= s.records) return std::nullopt;
  std::vector<double> v;
  v.reserve(s.records - w);
  for (std::size_t i = w; i < s.records; ++i) v.push_back(log.records[i].ms);
  s.used = v.size();
  double sum = 0;
  for (double x : v) sum += x;
  s.mean_ms = sum / static_cast<double>(v.size());
  std::sort(v.begin(), v.end());
  std::size_t n = v.size();
  s.median_ms = n % 2 ? v[n / 2] : (v[n / 2 - 1] + v[n / 2]) / 2;
  std::size_t rank = static_cast<std::size_t>(std::ceil(0.99 * static_cast<double>(n)));  // nearest rank
  s.p99_ms = v[std::min(n, std::max<std::size_t>(rank, 1)) - 1];
  s.min_ms = v.front();
  s.max_ms = v.back();
  return s;
}

std::vector<Finding> analyze_steps(const StepStats& s, const std::string& source, const StepsOptions& o) {
  std::vector<Finding> out;
  const bool number_only = s.records == 0;
  {
    Finding f;
    f.id = "steps.gap";
    f.layer = "workload";
    f.subject = source;
    f.metric("median_ms", s.median_ms);
    if (!number_only) {
      f.metric("mean_ms", s.mean_ms);
      f.metric("p99_ms", s.p99_ms);
      f.metric("records", static_cast<double>(s.records));
      f.metric("warmup_records", static_cast<double>(s.warmup));
    }
    std::string measured = number_only ? fmt::format("{:g} ms per iteration", s.median_ms)
                                       : fmt::format("median {:.1f} ms per iteration over {} records ({} warm-up dropped; mean {:.1f}, p99 {:.1f})",
                                                     s.median_ms, s.used, s.warmup, s.mean_ms, s.p99_ms);
    if (!o.reference_ms) {
      f.status = report::Status::skip;
      f.title = fmt::format("median {:.1f} ms per iteration; no reference to score against (--reference-ms or --reference)", s.median_ms);
      f.add(source, measured);
    } else {
      double pct = *o.reference_ms / s.median_ms;
      f.metric("reference_ms", *o.reference_ms);
      f.metric("percent_of_reference", 100 * pct);
      f.add(source, measured);
      f.add(o.reference_source, fmt::format("reference {:.1f} ms per iteration", *o.reference_ms));
      f.add("percent of reference", fmt::format("{:.1f}% (reference_ms / median_ms)", 100 * pct), fmt::format(">= {:.0f}%", 100 * o.threshold));
      f.table = {{"median ms", "reference ms", "% of reference", "bar"},
                 {fmt::format("{:.1f}", s.median_ms), fmt::format("{:.1f}", *o.reference_ms), fmt::format("{:.1f}%", 100 * pct),
                  fmt::format("{:.0f}%", 100 * o.threshold)}};
      if (pct < o.threshold) {
        f.status = report::Status::fail;
        f.title = fmt::format("{:.1f}% of reference ({:.1f} ms vs {:.1f} ms per iteration), below the {:.0f}% bar", 100 * pct, s.median_ms,
                              *o.reference_ms, 100 * o.threshold);
        f.fix = "run perfgap check on the nodes and perfgap analyze on the run's profiles (perf, turbostat, nccl-tests, NCCL log) to find the configuration gap";
        f.impact = fmt::format("iterations {:.1f}% slower than the reference", 100 * (s.median_ms / *o.reference_ms - 1));
      } else {
        f.status = report::Status::pass;
        f.title = fmt::format("{:.1f}% of reference ({:.1f} ms vs {:.1f} ms per iteration), at or above the {:.0f}% bar", 100 * pct, s.median_ms,
                              *o.reference_ms, 100 * o.threshold);
      }
    }
    out.push_back(std::move(f));
  }
  {
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
      double over = s.p99_ms / s.median_ms - 1;
      f.metric("p99_ms", s.p99_ms);
      f.metric("median_ms", s.median_ms);
      f.metric("p99_over_median_pct", 100 * over);
      f.add(source, fmt::format("p99 {:.1f} ms, median {:.1f} ms, max {:.1f} ms over {} records", s.p99_ms, s.median_ms, s.max_ms, s.used),
            "p99 <= median + 5%");
      f.table = {{"records", "median ms", "mean ms", "p99 ms", "max ms", "p99 over median"},
                 {std::to_string(s.used), fmt::format("{:.1f}", s.median_ms), fmt::format("{:.1f}", s.mean_ms), fmt::format("{:.1f}", s.p99_ms),
                  fmt::format("{:.1f}", s.max_ms), fmt::format("{:.1f}%", 100 * over)}};
      if (over > 0.05) {
        f.status = report::Status::warn;
        f.title = fmt::format("p99 step time {:.1f} ms is {:.1f}% above the median {:.1f} ms: stalls", s.p99_ms, 100 * over, s.median_ms);
        f.fix = "look for stalls on the loader/launcher cores: housekeeping or hypervisor threads sharing them (perfgap check: placement.shared_cores, cpu.steal), checkpointing, GC";
        f.impact = "synchronous training waits for the slowest rank at every step";
      } else {
        f.status = report::Status::pass;
        f.title = fmt::format("p99 step time within {:.1f}% of the median", 100 * over);
      }
    }
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace perfgap::analyzers
