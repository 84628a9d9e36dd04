#include "compare/tlb_parity.hpp"

#include <fmt/format.h>

#include <cmath>


namespace perfgap::compare {
namespace {

struct Figure {
  double value = 0;
  std::string name, subject;
};

std::optional<double> metric(const ReportFinding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name && std::isfinite(v) && v >= 0) return v;
  return std::nullopt;
}

// The report's first perf_stat.dtlb with `name`.
std::optional<Figure> figure(const ReportView& r, const std::string& name) {
  for (const auto& f : r.findings)
    if (f.id == "perf_stat.dtlb")
      if (auto v = metric(f, name)) return Figure{*v, name, f.subject};
  return std::nullopt;
}

}  // namespace

std::optional<report::Finding> tlb_parity(const ReportView& before, const std::string& before_name, const ReportView& after,
                                          const std::string& after_name, const Options& o) {
  // The same figure on both sides: the load miss ratio, else misses per 1k instructions.
  std::optional<Figure> b, a;
  for (const char* name : {"dtlb_load_miss_pct", "dtlb_mpki"}) {
    b = figure(before, name);
    a = figure(after, name);
    if (a && b) break;
  }
  if (!a || !b) return std::nullopt;
  const double pass_within = o.tlb_pass_within, fail_beyond = o.tlb_fail_beyond;
  const bool pct = a->name == "dtlb_load_miss_pct";
  auto show = [&](double v) { return pct ? fmt::format("{:.4g}%", v) : fmt::format("{:.4g} per 1k instructions", v); };
  const std::string what = pct ? "dTLB load miss ratio" : "dTLB misses per 1k instructions";
  report::Finding f;
  f.id = "compare.tlb_parity";
  f.layer = "virtualization";
  f.subject = "perf_stat.dtlb";
  f.add(before_name, fmt::format("{} {} ({})", what, show(b->value), b->subject));
  f.add(after_name, fmt::format("{} {} ({})", what, show(a->value), a->subject),
        fmt::format("within {:.2f}x of {}'s (fail beyond {:.2f}x)", pass_within, before_name, fail_beyond));
  if (b->value <= 0) {
    f.status = a->value <= 0 ? report::Status::pass : report::Status::fail;
    f.title = a->value <= 0 ? fmt::format("{}: none in either report: at parity", what)
                            : fmt::format("{}: {} in {}, none in {}", what, show(a->value), after_name, before_name);
    return f;
  }
  const double x = a->value / b->value;
  f.metric("times_before", x);
  f.metric(std::string("before_") + a->name, b->value);
  f.metric(std::string("after_") + a->name, a->value);
  if (x <= pass_within) {
    f.status = report::Status::pass;
    f.title = fmt::format("{} {} against {} in {} ({:.2f}x): back to parity", what, show(a->value), show(b->value), before_name, x);
  } else {
    f.status = x > fail_beyond ? report::Status::fail : report::Status::warn;
    f.title = fmt::format("{} {} against {} in {}: {:.2f}x, not at parity ({:.0f}% above; parity is within {:.2f}x)", what, show(a->value),
                          show(b->value), before_name, x, 100 * (x - 1), pass_within);
  }
  return f;
}

}  // namespace perfgap::compare
