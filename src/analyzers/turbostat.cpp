#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <optional>
#include <tuple>

#include "analyzers/analyzers.hpp"

namespace perfgap::analyzers {
namespace {

struct Avg {
  double sum = 0;
  int n = 0;
  void add(double v) {
    sum += v;
    ++n;
  }
  double value() const { return n ? sum / n : 0; }
};

// The rows of busy cores (Busy% >= 50, every interval), as both findings say them (metric
// busy_rows): a capture with none was taken while nothing ran, so it measures no busy clock and
// its idle cores say nothing of what a running job loses (explain prices nothing from it).
// Unknown without a Busy% column.
std::optional<int> turbostat_busy_rows(const parsers::Turbostat& t, const std::vector<parsers::TurbostatRow>& rows) {
  if (std::find(t.columns.begin(), t.columns.end(), "Busy%") == t.columns.end()) return std::nullopt;
  int n = 0;
  for (const auto& r : rows)
    if (auto busy = r.get("Busy%"); busy && *busy >= 50) ++n;
  return n;
}

// turbostat.busy_mhz: the busy cores' clock against the rated maximum.
Finding turbostat_busy_mhz_finding(const parsers::Turbostat& t, const std::vector<parsers::TurbostatRow>& rows, const std::string& src_rows,
                                   const std::string& source, const TurbostatOptions& o) {
  Finding f;
  f.id = "turbostat.busy_mhz";
  f.layer = "cpu-power";
  f.subject = source;
  Avg mhz;
  std::vector<int> busy_cpus;
  for (const auto& r : rows) {
    auto busy = r.get("Busy%");
    auto bzy = r.get("Bzy_MHz");
    if (!busy || !bzy || *busy < 50) continue;
    mhz.add(*bzy);
    if (r.cpu && std::find(busy_cpus.begin(), busy_cpus.end(), *r.cpu) == busy_cpus.end()) busy_cpus.push_back(*r.cpu);
  }
  int busy_n = static_cast<int>(busy_cpus.size());
  std::optional<double> rated = o.rated_mhz;
  std::string rated_from = "--rated-mhz";
  if (!rated && !t.max_turbo_mhz.empty()) {
    // The nearest "max turbo N active cores" at or above the number of busy cores (turbostat
    // counts cores; busy CPUs include SMT siblings, so this is conservative), else the largest N.
    auto it = t.max_turbo_mhz.lower_bound(std::max(1, busy_n));
    if (it == t.max_turbo_mhz.end()) it = std::prev(t.max_turbo_mhz.end());
    rated = it->second;
    rated_from = fmt::format("turbostat header: max turbo {} active cores", it->first);
  }
  if (mhz.n == 0) {
    f.status = report::Status::skip;
    f.title = t.columns.empty() || std::find(t.columns.begin(), t.columns.end(), "Bzy_MHz") == t.columns.end()
                  ? "no Bzy_MHz/Busy% columns in the turbostat output"
                  : "no busy cores (Busy% >= 50) in the " + src_rows;
    if (auto n = turbostat_busy_rows(t, rows); n && *n == 0) f.metric("busy_rows", 0);
  } else if (!rated) {
    f.status = report::Status::skip;
    f.title = fmt::format("busy cores average {:.0f} MHz, but no rated maximum: pass --rated-mhz (TSC_MHz is not a rated maximum)", mhz.value());
    f.metric("busy_mhz", mhz.value());
    f.metric("busy_rows", mhz.n);
  } else {
    double ratio = mhz.value() / *rated;
    f.metric("busy_mhz", mhz.value());
    f.metric("busy_rows", mhz.n);
    f.metric("rated_mhz", *rated);
    f.metric("ratio", ratio);
    f.add(source, fmt::format("busy cores ({} {}{}) average {:.0f} MHz", mhz.n, src_rows, busy_n ? fmt::format(", {} CPUs", busy_n) : "", mhz.value()),
          fmt::format(">= {:.0f} MHz (90% of {:.0f} MHz, {})", 0.9 * *rated, *rated, rated_from));
    f.table = {{"busy cores", "avg MHz", "rated MHz", "% of rated", "bar"},
               {fmt::format("{} {}{}", mhz.n, src_rows, busy_n ? fmt::format(", {} CPUs", busy_n) : ""), fmt::format("{:.0f}", mhz.value()),
                fmt::format("{:.0f}", *rated), fmt::format("{:.1f}%", 100 * ratio), "90%"}};
    if (ratio < 0.9) {
      f.status = report::Status::fail;
      f.title = fmt::format("busy cores run at {:.0f} MHz, {:.0f}% of the rated {:.0f} MHz", mhz.value(), 100 * ratio, *rated);
      f.fix = "allow turbo and deep C-states (idle cores in C6 give busy cores turbo headroom): BIOS C-state/turbo settings, cpu.turbo and cpu.cstate.deep_idle checks; performance governor";
      f.impact = "~4% of training throughput at 3.0 instead of 3.8 GHz";
    } else {
      f.status = report::Status::pass;
      f.title = fmt::format("busy cores run at {:.0f} MHz, {:.0f}% of the rated {:.0f} MHz", mhz.value(), 100 * ratio, *rated);
    }
  }
  return f;
}

// The kernel's deep idle states as turbostat lists them: a request count column ("C6", "C7s",
// "C10") and a residency column ("C6%", "C6-SKX" printed as "C6%"), named after the cpuidle
// state. Core C6 and deeper only (C1E, C3 are shallow).
bool deep_idle_listed_state(std::string_view col) {
  if (col.size() < 2 || col[0] != 'C' || !std::isdigit(static_cast<unsigned char>(col[1]))) return false;
  std::size_t i = 1;
  int n = 0;
  while (i < col.size() && std::isdigit(static_cast<unsigned char>(col[i])) && n < 100) n = n * 10 + (col[i++] - '0');
  while (i < col.size() && std::isalpha(static_cast<unsigned char>(col[i]))) ++i;
  if (i < col.size() && col[i] == '%') ++i;
  return i == col.size() && n >= 6;
}

constexpr const char* kNeverAsked =
    "a PM QoS request holds the cores out (something keeps /dev/cpu_dma_latency open with a low value: "
    "`fuser -v /dev/cpu_dma_latency`; tuned's latency-performance and network-latency profiles set force_latency, e.g. switch to "
    "`tuned-adm profile throughput-performance`), or the state is disabled (`grep . /sys/devices/system/cpu/cpu*/cpuidle/state*/disable`: "
    "echo 0 to re-enable; intel_idle.states_off= on the kernel command line); see cpu.cstate.deep_idle";

// Where idle cores never reach a deep C-state, who holds them out of it. The kernel listing a
// deep state (its count and % columns) that no idle row ever entered: the OS never asked for it
// (a PM QoS request, the state disabled), since a BIOS limit or max_cstate cap removes the state
// from the list. Asked for (count or % above 0) yet no hardware residency: the firmware demotes
// it (BIOS C-state limit). Not listed at all: the BIOS or a kernel cap hides it.
std::string deep_idle_fix(const parsers::Turbostat& t, const std::vector<parsers::TurbostatRow>& rows, Finding& f, const std::string& source) {
  static constexpr const char* bios = "allow C6 in the BIOS (package C-state limit) and drop intel_idle.max_cstate/processor.max_cstate caps; see cpu.cstate.deep_idle";
  std::vector<std::string> listed;
  for (const auto& c : t.columns)
    if (deep_idle_listed_state(c)) listed.push_back(c);
  if (listed.empty()) return bios;
  std::string entered;
  for (const auto& r : rows) {
    auto busy = r.get("Busy%");
    if (!busy || *busy >= 10) continue;
    for (const auto& c : listed)
      if (auto v = r.get(c); v && *v > 0 && entered.empty()) entered = c;
  }
  std::string names;
  for (const auto& c : listed) names += (names.empty() ? "" : ", ") + c;
  if (!entered.empty()) {
    f.add(source, fmt::format("the kernel requests its deep idle state ({} above 0 on an idle row), but the cores record no deep residency: the hardware demotes it", entered));
    return bios;
  }
  f.add(source, fmt::format("the kernel lists a deep idle state (columns {}) and no idle row ever entered it (0 on every idle row): the OS never asks for it", names),
        "entered on idle cores");
  return std::string("the kernel has C6 but never enters it: ") + kNeverAsked;
}

// The kernel's own idle-state residency (cpuidle's "C1%", "C2%", "C6%" columns) where turbostat
// prints no hardware core C-state counters (CPU%c1, CPU%c6: AMD, VMs): the shallow states
// (POLL, C1, C1E) against the deep ones. Deep are the listed states of C6 and beyond
// (intel_idle's names); where none is listed, C2 and beyond (acpi_idle's ACPI _CST states,
// which the firmware maps to core C6 on AMD EPYC and Ryzen).
struct KernelIdleColumns {
  std::vector<std::string> shallow, deep;
};
KernelIdleColumns kernel_idle_columns(const parsers::Turbostat& t) {
  KernelIdleColumns k;
  std::vector<std::string> beyond_c1;
  for (const auto& c : t.columns) {
    if (!c.ends_with('%')) continue;
    if (c == "POLL%" || c == "C1%" || c == "C1E%") {
      k.shallow.push_back(c);
    } else if (deep_idle_listed_state(c)) {
      k.deep.push_back(c);
    } else if (c.size() >= 3 && c[0] == 'C' && std::isdigit(static_cast<unsigned char>(c[1])) && c[1] != '0' && c[1] != '1') {
      beyond_c1.push_back(c);  // C2%, C3%, C3_ACPI%, ...
    }
  }
  if (k.deep.empty()) k.deep = beyond_c1;
  if (std::find(k.shallow.begin(), k.shallow.end(), "C1%") == k.shallow.end()) k.deep.clear();
  return k;
}

// turbostat.deep_idle from the kernel's idle-state residency (see kernel_idle_columns): `fail`
// where idle cores never enter a deep state (then neither can the hardware), else `skip`.
Finding kernel_idle_finding(Finding f, const KernelIdleColumns& k, const std::vector<parsers::TurbostatRow>& rows,
                            const std::string& src_rows, const std::string& source) {
  auto sum = [](const parsers::TurbostatRow& r, const std::vector<std::string>& cols) {
    double v = 0;
    for (const auto& c : cols) v += r.get(c).value_or(0);
    return v;
  };
  auto join_plus = [](const std::vector<std::string>& cols) {
    std::string s;
    for (const auto& c : cols) s += (s.empty() ? "" : "+") + c;
    return s;
  };
  const std::string shallow_name = join_plus(k.shallow), deep_name = join_plus(k.deep);
  Avg shallow, deep;
  int idle = 0;
  for (const auto& r : rows) {
    auto busy = r.get("Busy%");
    if (!busy || *busy >= 10 || !r.get("C1%")) continue;
    ++idle;
    shallow.add(sum(r, k.shallow));
    deep.add(sum(r, k.deep));
  }
  if (idle == 0) {
    f.status = report::Status::skip;
    f.title = "no idle cores (Busy% < 10) in the " + src_rows;
    return f;
  }
  f.metric("idle_cpus", idle);
  f.metric("c1_pct", shallow.value());
  f.metric("deep_pct", deep.value());
  f.add(source, fmt::format("idle cores ({} {}): {} {:.2f}%, {} {:.2f}%", idle, src_rows, shallow_name, shallow.value(), deep_name, deep.value()),
        fmt::format("{} >= 1% or {} <= 50%", deep_name, shallow_name));
  f.add(source,
        "no hardware core C-state columns (CPU%c1, CPU%c6): judged on the kernel's idle-state residency (what cpuidle asked for); a "
        "firmware that demotes the request would not show here");
  f.table = {{"idle cores", shallow_name, deep_name},
             {fmt::format("{} {}", idle, src_rows), fmt::format("{:.2f}%", shallow.value()), fmt::format("{:.2f}%", deep.value())}};
  if (deep.value() < 1.0 && shallow.value() > 50.0) {
    f.status = report::Status::fail;
    f.title = fmt::format("idle cores sit in {} ({:.1f}%) and the kernel never enters a deep idle state ({} {:.2f}%)", shallow_name,
                          shallow.value(), deep_name, deep.value());
    f.fix = std::string("the kernel lists deep idle states but never enters them: ") + kNeverAsked;
    f.impact = "~4%: busy cores lose turbo headroom when idle cores cannot sleep";
  } else {
    // The kernel asking is not the core getting there: a BIOS that disables the deep state
    // while _CST still lists it demotes every request, the case this finding exists for.
    f.status = report::Status::skip;
    f.title = fmt::format("the kernel asks for deep idle states ({} {:.1f}% of idle time, {} {:.1f}%), but without the hardware's core "
                          "C-state counters (CPU%c6) a firmware that demotes the request cannot be told apart",
                          deep_name, deep.value(), shallow_name, shallow.value());
  }
  return f;
}

// turbostat.deep_idle: whether idle cores reach a deep C-state.
Finding turbostat_deep_idle_finding(const parsers::Turbostat& t, const std::vector<parsers::TurbostatRow>& rows,
                                    const std::string& src_rows, const std::string& source) {
  Finding f;
  f.id = "turbostat.deep_idle";
  f.layer = "cpu-power";
  f.subject = source;
  static const char* kDeep[] = {"CPU%c6", "CPU%c7", "CPU%c8", "CPU%c9", "CPU%c10"};
  std::vector<std::string> deep_cols;
  for (const char* c : kDeep)
    if (std::find(t.columns.begin(), t.columns.end(), c) != t.columns.end()) deep_cols.push_back(c);
  bool has_c1 = std::find(t.columns.begin(), t.columns.end(), "CPU%c1") != t.columns.end();
  Avg c1, deep;
  int idle = 0, inherited = 0, mate_busy = 0;
  auto deep_of = [&](const parsers::TurbostatRow& r) -> std::optional<double> {
    double d = 0;
    bool any = false;
    for (const auto& c : deep_cols)
      if (auto v = r.get(c)) {
        d += *v;
        any = true;
      }
    return any ? std::optional<double>(d) : std::nullopt;
  };
  // Core-level columns (CPU%c6, CPU%c7, ...) are printed on the first thread of a core
  // only; its sibling threads' rows end before them. Such a row takes its core's value from
  // the row of the same interval, package and core that has it (when that thread is idle
  // too: a core with a busy thread cannot enter C6, so that value says nothing about idle).
  struct CoreKey {
    int block;
    double pkg, core;
    bool operator<(const CoreKey& o) const { return std::tie(block, pkg, core) < std::tie(o.block, o.pkg, o.core); }
  };
  std::map<CoreKey, std::pair<double, bool>> core_deep;  // -> (deep value, that thread idle)
  for (const auto& r : rows) {
    auto core = r.get("Core");
    auto d = deep_of(r);
    if (!core || !d) continue;
    auto busy = r.get("Busy%");
    core_deep.emplace(CoreKey{r.block, r.get("Package").value_or(-1), *core}, std::make_pair(*d, busy && *busy < 10));
  }
  for (const auto& r : rows) {
    auto busy = r.get("Busy%");
    auto rc1 = r.get("CPU%c1");
    if (!busy || *busy >= 10 || !rc1) continue;
    ++idle;
    c1.add(*rc1);
    if (auto d = deep_of(r)) {
      deep.add(*d);
      continue;
    }
    auto core = r.get("Core");
    if (!core) continue;
    auto it = core_deep.find(CoreKey{r.block, r.get("Package").value_or(-1), *core});
    if (it == core_deep.end()) continue;
    if (!it->second.second) {
      ++mate_busy;
      continue;
    }
    ++inherited;
    deep.add(it->second.first);
  }
  std::string deep_name;
  for (const auto& c : deep_cols) deep_name += (deep_name.empty() ? "" : "+") + c;
  if (deep_cols.empty() || !has_c1) {
    if (auto k = kernel_idle_columns(t); !k.deep.empty()) return kernel_idle_finding(std::move(f), k, rows, src_rows, source);
    f.status = report::Status::skip;
    f.title = "no CPU%c1 and deep core C-state columns (CPU%c6/c7/c10) nor the kernel's idle-state residency (C1%, C2%, C6%, ...) in the turbostat output";
  } else if (idle == 0) {
    f.status = report::Status::skip;
    f.title = "no idle cores (Busy% < 10) in the " + src_rows;
  } else if (deep.n == 0) {
    f.status = report::Status::skip;
    f.title = fmt::format("{} idle {} but none with a {} value (its core's first thread is busy or not printed)", idle, src_rows, deep_name);
    f.metric("idle_cpus", idle);
  } else {
    f.metric("idle_cpus", idle);
    f.metric("c1_pct", c1.value());
    f.metric("deep_pct", deep.value());
    if (auto n = turbostat_busy_rows(t, rows)) f.metric("busy_rows", *n);
    f.add(source, fmt::format("idle cores ({} {}): CPU%c1 {:.2f}%, {} {:.2f}%", idle, src_rows, c1.value(), deep_name, deep.value()),
          fmt::format("{} >= 1% or CPU%c1 <= 50%", deep_name));
    if (inherited || mate_busy)
      f.add(source, fmt::format("{} sibling-thread row(s) without core-level columns: {} take their core's {} from its first thread{}", inherited + mate_busy,
                                inherited, deep_name, mate_busy ? fmt::format(", {} left out of the {} average (their core's first thread is busy)", mate_busy, deep_name) : ""));
    f.table = {{"idle cores", "CPU%c1", deep_name},
               {fmt::format("{} {}", idle, src_rows), fmt::format("{:.2f}%", c1.value()), fmt::format("{:.2f}%", deep.value())}};
    if (deep.value() < 1.0 && c1.value() > 50.0) {
      f.status = report::Status::fail;
      f.title = fmt::format("idle cores sit in C1 ({:.1f}%) and never reach a deep C-state ({} {:.2f}%)", c1.value(), deep_name, deep.value());
      f.fix = deep_idle_fix(t, rows, f, source);
      f.impact = "~4%: busy cores lose turbo headroom when idle cores cannot sleep";
    } else {
      f.status = report::Status::pass;
      f.title = fmt::format("idle cores reach deep C-states ({} {:.1f}%, CPU%c1 {:.1f}%)", deep_name, deep.value(), c1.value());
    }
  }
  return f;
}

}  // namespace

std::vector<Finding> analyze_turbostat(const parsers::Turbostat& t, const std::string& source, const TurbostatOptions& o) {
  std::vector<Finding> out;
  // Per-CPU rows of every interval; without any (a --show without CPU), the summary rows.
  const auto& rows = t.cpu_rows.empty() ? t.summary_rows : t.cpu_rows;
  const bool per_cpu = !t.cpu_rows.empty();
  const std::string src_rows = per_cpu ? "per-CPU rows" : "summary rows";

  out.push_back(turbostat_busy_mhz_finding(t, rows, src_rows, source, o));
  out.push_back(turbostat_deep_idle_finding(t, rows, src_rows, source));
  for (auto& d : damaged_lines("turbostat.busy_mhz", "cpu-power", source, t.damaged)) out.push_back(std::move(d));
  return out;
}

}  // namespace perfgap::analyzers
