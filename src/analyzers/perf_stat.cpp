// analyze perf-stat: the TLB miss figures of a `perf stat` run, judged against a reference run
// of the same workload (bare metal, or a known-good node). Without one a ratio says nothing
// about a problem (it is the workload's), so the findings skip with the figures.
#include <fmt/format.h>

#include <cmath>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

using report::Status;

const parsers::PerfStatEvent* counted(const parsers::PerfStat& s, const char* name) {
  const auto* e = s.find(name);
  return e && e->counted > 0 ? e : nullptr;
}

std::string why_not_counted(const parsers::PerfStat& s, const char* name) {
  const auto* e = s.find(name);
  if (!e) return fmt::format("{} not in the output", name);
  if (e->not_supported) return fmt::format("{} <not supported>", name);
  return fmt::format("{} <not counted>", name);
}

std::string percent(double v) { return v >= 0.1 ? fmt::format("{:.2f}%", v) : fmt::format("{:.4f}%", v); }

}  // namespace

TlbFigures tlb_figures(const parsers::PerfStat& s, TlbKind kind) {
  const bool d = kind == TlbKind::data;
  const char* loads = d ? "dTLB-loads" : "iTLB-loads";
  const char* misses = d ? "dTLB-load-misses" : "iTLB-load-misses";
  TlbFigures t;
  const auto* m = counted(s, misses);
  const auto* l = counted(s, loads);
  const auto* i = counted(s, "instructions");
  if (m && l && l->value > 0) t.load_miss_pct = 100 * m->value / l->value;
  if (m && i && i->value > 0) t.mpki = 1000 * m->value / i->value;
  if (d) {
    const auto* sm = counted(s, "dTLB-store-misses");
    const auto* st = counted(s, "dTLB-stores");
    if (sm && st && st->value > 0) t.store_miss_pct = 100 * sm->value / st->value;
    if (sm && i && i->value > 0) t.store_mpki = 1000 * sm->value / i->value;
  }
  for (const auto* e : {m, l, i})
    if (e && e->min_running_pct < 100) t.min_running_pct = std::min(t.min_running_pct, e->min_running_pct);
  if (!m) t.missing.push_back(why_not_counted(s, misses));
  if (m && !t.load_miss_pct && !t.mpki) {
    t.missing.push_back(why_not_counted(s, loads));
    t.missing.push_back(why_not_counted(s, "instructions"));
  }
  return t;
}

std::vector<Finding> analyze_perf_stat(const parsers::PerfStat& s, const std::string& source, const PerfStatOptions& o) {
  std::vector<Finding> out;
  // ---- the events read, with their scaling
  {
    Finding f;
    f.id = "perf_stat.events";
    f.layer = "virtualization";
    f.subject = source;
    f.status = Status::pass;
    int ok = 0, unsupported = 0, uncounted = 0, scaled = 0;
    f.table = {{"event", "value", "rows", "counted", "note"}};
    for (const auto& e : s.events) {
      ok += e.counted > 0;
      unsupported += e.not_supported > 0;
      uncounted += e.not_counted > 0;
      scaled += e.counted > 0 && e.min_running_pct < 100;
      std::string note = e.not_supported ? "<not supported>" : e.not_counted ? "<not counted>" : "";
      if (e.noise_pct) note += fmt::format("{}+- {:.2f}% over runs", note.empty() ? "" : "; ", *e.noise_pct);
      f.table.push_back({e.name, e.counted ? fmt::format("{:.0f}{}", e.value, e.unit.empty() ? "" : " " + e.unit) : "-",
                         std::to_string(e.counted + e.not_supported + e.not_counted),
                         e.counted ? fmt::format("{:.2f}%", e.min_running_pct) : "-", note});
      if (e.counted && e.min_running_pct < 100)
        f.add(source, fmt::format("{}: scaled, counted {:.2f}% of the time (multiplexed)", e.name, e.min_running_pct));
      if (!e.counted) f.add(source, fmt::format("{}: {}", e.name, e.not_supported ? "<not supported>" : "<not counted>"));
    }
    f.title = fmt::format("{} events read ({} {}{}{}): {} counted{}{}{}", s.events.size(), s.format,
                          s.aggregation.empty() ? "totals" : "per " + s.aggregation + " rows", s.intervals ? ", intervals" : "",
                          s.runs ? fmt::format(", {} runs", *s.runs) : "", ok, unsupported ? fmt::format(", {} <not supported>", unsupported) : "",
                          uncounted ? fmt::format(", {} <not counted>", uncounted) : "", scaled ? fmt::format(", {} scaled (multiplexed)", scaled) : "");
    f.metric("events", static_cast<double>(s.events.size()));
    f.metric("events_counted", ok);
    f.metric("events_scaled", scaled);
    out.push_back(std::move(f));
  }
  for (auto kind : {TlbKind::data, TlbKind::instruction}) {
    const bool d = kind == TlbKind::data;
    const char* name = d ? "dTLB" : "iTLB";
    const char* pre = d ? "dtlb" : "itlb";
    Finding f;
    f.id = d ? "perf_stat.dtlb" : "perf_stat.itlb";
    f.layer = "virtualization";
    f.subject = source;
    auto t = tlb_figures(s, kind);
    if (!t.load_miss_pct && !t.mpki) {
      f.status = Status::skip;
      f.title = fmt::format("no {} miss figure: {}", name, fmt::join(t.missing, ", "));
      if (s.find(d ? "dTLB-load-misses" : "iTLB-load-misses") && !counted(s, d ? "dTLB-load-misses" : "iTLB-load-misses"))
        f.title += fmt::format(" ({})", kNoPmuAdvice);
      f.add(source, fmt::format("perf stat -e {0}-loads,{0}-load-misses,instructions", name));
      out.push_back(std::move(f));
      continue;
    }
    std::vector<std::string> parts;
    if (t.load_miss_pct) {
      parts.push_back(fmt::format("{} of loads miss", percent(*t.load_miss_pct)));
      f.metric(fmt::format("{}_load_miss_pct", pre), *t.load_miss_pct);
    }
    if (t.mpki) {
      parts.push_back(fmt::format("{:.3f} misses per 1k instructions", *t.mpki));
      f.metric(fmt::format("{}_mpki", pre), *t.mpki);
    }
    if (t.store_miss_pct) {
      parts.push_back(fmt::format("{} of stores miss", percent(*t.store_miss_pct)));
      f.metric("dtlb_store_miss_pct", *t.store_miss_pct);
    }
    if (t.store_mpki) {
      parts.push_back(fmt::format("{:.3f} store misses per 1k instructions", *t.store_mpki));
      f.metric("dtlb_store_mpki", *t.store_mpki);
    }
    const std::string figures = fmt::format("{}", fmt::join(parts, ", "));
    f.add(source, figures + (t.min_running_pct < 100 ? fmt::format(" (scaled: counted {:.2f}% of the time)", t.min_running_pct) : ""));
    if (!o.reference) {
      f.status = Status::skip;
      f.title = fmt::format("{}: {}; no reference to judge against ({})", name, figures, o.no_reference);
      out.push_back(std::move(f));
      continue;
    }
    auto r = tlb_figures(*o.reference, kind);
    const auto& lim = d ? o.dtlb : o.itlb;
    // The same figure on both sides: the load miss ratio, else misses per 1k instructions.
    std::optional<double> ours, theirs;
    std::string what;
    if (t.load_miss_pct && r.load_miss_pct) {
      ours = t.load_miss_pct, theirs = r.load_miss_pct, what = "load miss ratio";
    } else if (t.mpki && r.mpki) {
      ours = t.mpki, theirs = r.mpki, what = "misses per 1k instructions";
    }
    if (!ours) {
      f.status = Status::skip;
      f.title = fmt::format("{}: {}; the reference {} has no comparable figure ({})", name, figures, o.reference_source,
                            r.missing.empty() ? "other events counted" : fmt::format("{}", fmt::join(r.missing, ", ")));
      out.push_back(std::move(f));
      continue;
    }
    auto show = [&](double v) { return what == "load miss ratio" ? percent(v) : fmt::format("{:.3f}", v); };
    f.metric(fmt::format("reference_{}", what == "load miss ratio" ? fmt::format("{}_load_miss_pct", pre) : fmt::format("{}_mpki", pre)), *theirs);
    double x = *theirs > 0 ? *ours / *theirs : (*ours > 0 ? INFINITY : 1.0);
    if (std::isfinite(x)) f.metric("times_reference", x);
    f.add(o.reference_source, fmt::format("reference {}: {}", what, show(*theirs)),
          fmt::format("within {:.2f}x of the reference; fail beyond {:.2f}x", lim.pass_within, lim.fail_beyond));
    const std::string times = std::isfinite(x) ? fmt::format("{:.2f}x", x) : "above a reference of none";
    if (x <= lim.pass_within) {
      f.status = Status::pass;
      f.title = fmt::format("{} {} {} against the reference's {} ({}): at parity", name, what, show(*ours), show(*theirs), times);
    } else {
      f.status = x > lim.fail_beyond ? Status::fail : Status::warn;
      f.title = fmt::format("{} {} {} against the reference's {} ({})", name, what, show(*ours), show(*theirs), times);
      f.fix = d ? "memory mapping costs more than in the reference: compare page sizes (mem.page_size: 64 KiB pages on Grace), transparent huge pages "
                  "(always or madvise) and the hugepage backing of the VM's memory on the host, and the SMMU path (smmu.cmdqv; perf's "
                  "arm_smmu_cmdq_* share: analyze perf)"
                : "instruction fetches miss the TLB more than in the reference: compare page sizes and huge pages for text (mem.page_size, THP) "
                  "and the binaries and libraries run";
    }
    out.push_back(std::move(f));
  }
  for (auto& f : damaged_lines("perf_stat.events", "virtualization", source, s.damaged)) out.push_back(std::move(f));
  return out;
}

}  // namespace perfgap::analyzers
