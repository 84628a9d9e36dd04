#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <mutex>

#include "analyzers/analyzers.hpp"
#include "core/kb.hpp"

namespace perfgap::analyzers {

bool KernelSymbol::matches(const std::string& base) const {
  if (!match.empty() && match.back() == '*') return base.compare(0, match.size() - 1, match, 0, match.size() - 1) == 0;
  return base == match;
}

namespace {
std::vector<KernelSymbol> perf_symbols_of(const std::vector<core::KbSymbol>& in) {
  std::vector<KernelSymbol> out;
  out.reserve(in.size());
  for (const auto& s : in) out.push_back({s.match, s.group, s.finding, s.cause, s.fix});
  return out;
}
}  // namespace

// A knowledge-base text with a symbols list, read by the knowledge base's own parser.
std::optional<std::vector<KernelSymbol>> parse_kernel_symbols(const std::string& text, std::string* error) {
  auto f = core::parse_kb(text, "symbols");
  if (f && f->symbols.empty()) f = tl::unexpected(std::string("no 'symbols' list"));
  if (!f) {
    if (error) *error = f.error();
    return std::nullopt;
  }
  return perf_symbols_of(f->symbols);
}

const std::vector<KernelSymbol>& kernel_symbols() {
  static const std::vector<KernelSymbol> kb = [] {
    auto k = perf_symbols_of(core::builtin_kb().symbols);
    if (k.empty()) throw std::runtime_error("embedded knowledge base: no kernel symbols (data/kb/kernel_symbols.yaml)");
    return k;
  }();
  return kb;
}

namespace {
constexpr double kThresholdPct = 5.0;

const char* layout_name(parsers::PerfProfile::Layout l) {
  switch (l) {
    case parsers::PerfProfile::Layout::report: return "perf report";
    case parsers::PerfProfile::Layout::top: return "perf top";
    case parsers::PerfProfile::Layout::legacy: return "perf report (legacy layout)";
    case parsers::PerfProfile::Layout::script: return "perf script";
    case parsers::PerfProfile::Layout::data: return "perf.data";
    case parsers::PerfProfile::Layout::live: return "live sampling";
  }
  return "perf";
}
}  // namespace

Finding perf_summary(const parsers::PerfProfile& p, const std::string& source) {
  Finding f;
  f.id = "perf.summary";
  f.layer = "virtualization";
  f.subject = source;
  f.status = report::Status::pass;
  // Self share per symbol summed over its rows (commands, threads), the hottest first.
  std::map<std::string, double> by_sym;
  std::map<std::string, std::vector<std::pair<double, std::string>>> comms;
  double kernel = 0;
  for (const auto& s : p.symbols) {
    bool k = s.kernel || s.dso.find("kernel") != std::string::npos;
    if (k) kernel += s.self_pct;
    by_sym[s.symbol] += s.self_pct;
    if (!s.comm.empty()) comms[s.symbol].emplace_back(s.self_pct, s.comm);
  }
  std::vector<std::pair<double, std::string>> top;
  top.reserve(by_sym.size());
  for (const auto& [sym, pct] : by_sym) top.emplace_back(pct, sym);
  std::stable_sort(top.begin(), top.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
  if (top.size() > 10) top.resize(10);
  if (p.samples > 0) f.metric("samples", p.samples);
  if (p.lost) f.metric("lost", *p.lost);
  f.metric("kernel_pct", kernel);
  for (const auto& [pct, sym] : top) {
    f.metric("top." + sym, pct);
    auto& c = comms[sym];
    std::stable_sort(c.begin(), c.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string who;
    for (std::size_t i = 0; i < c.size() && i < 3; ++i) who += fmt::format("{}{} {:.2f}%", i ? ", " : "", c[i].second, c[i].first);
    if (c.size() > 3) who += fmt::format(", {} more", c.size() - 3);
    f.add(source, fmt::format("{:.2f}% {}{}", pct, sym, who.empty() ? "" : " (" + who + ")"));
  }
  std::string counts = p.samples > 0 ? fmt::format("{:.0f} samples", p.samples) : fmt::format("{} row{}", p.symbols.size(), p.symbols.size() == 1 ? "" : "s");
  if (!p.event.empty()) {
    // Several events sampled: the shares are of one event's samples; the others are named, not added.
    std::string others;
    for (const auto& [name, n] : p.other_events) others += fmt::format("{}{} {:.0f}", others.empty() ? "" : ", ", name, n);
    counts += fmt::format(" of {} ({} left out)", p.event, others);
    f.add(source, fmt::format("{} events sampled: the shares are of {} alone; {} not added (samples of different events count different "
                              "things: cycles first, then cpu-clock, task-clock, else the event with most samples)",
                              p.other_events.size() + 1, p.event, others));
    f.metric("events_sampled", static_cast<double>(p.other_events.size() + 1));
  }
  if (p.lost) counts += fmt::format(", {:.0f} lost", *p.lost);
  const std::string scope = p.cpu_list.empty() ? std::string() : fmt::format(", CPU {} only", p.cpu_list);
  f.title = fmt::format("{} ({}{}), {:.2f}% in the kernel{}", counts, layout_name(p.layout), scope, kernel,
                        top.empty() ? "" : fmt::format("; hottest {} {:.2f}%", top.front().second, top.front().first));
  if (!p.cpu_list.empty())
    f.add(source, fmt::format("the capture sampled CPU {} only (its command line's -C): every share is of those CPUs' samples, not of the machine's",
                              p.cpu_list));
  if (p.recording) {
    const auto& r = *p.recording;
    f.add(source, fmt::format("recorded on {} ({} {}, {} CPUs online){}{}{}", r.hostname.empty() ? "an unnamed host" : r.hostname,
                              r.osrelease.empty() ? "kernel unknown" : r.osrelease, r.arch.empty() ? "arch unknown" : r.arch, r.nr_cpus,
                              r.pipe ? ", pipe mode" : "", r.compressed ? ", zstd-compressed" : "", r.big_endian ? ", big-endian" : ""));
    if (r.unmatched_samples > 0) f.add(source, fmt::format("{} samples name no event of the header (not counted)", r.unmatched_samples));
    if (!p.symbol_source.empty()) f.add(source, "kernel symbols: " + p.symbol_source);
    f.metric("unresolved_kernel_pct", p.unresolved_kernel_pct);
  }
  return f;
}

std::vector<Finding> analyze_perf(const parsers::PerfProfile& p, const std::string& source, const std::vector<KernelSymbol>& kb, double min_samples) {
  // A symbol's rows summed: `perf report --sort comm,sym` prints one row per command (or
  // thread), and its self time is the sum of them. Keyed by the base name (compiler suffixes
  // dropped), in order of first appearance.
  struct Hit {
    const KernelSymbol* k = nullptr;
    std::string name;   // as printed when every row prints it the same, else the base name
    std::string base;
    double pct = 0;
    std::vector<const parsers::PerfSymbol*> rows;
  };
  std::vector<Hit> smmu, hot;
  for (const auto& s : p.symbols) {
    if (!s.kernel && s.dso.find("kernel") == std::string::npos && !s.dso.empty()) continue;  // user-space frame
    auto base = parsers::perf_base_symbol(s.symbol);
    for (const auto& k : kb) {
      if (!k.matches(base)) continue;
      auto& list = k.finding == "smmu_cmdq" ? smmu : hot;
      auto it = std::find_if(list.begin(), list.end(), [&](const Hit& h) { return h.base == base; });
      if (it == list.end()) {
        list.push_back({&k, s.symbol, base, 0, {}});
        it = std::prev(list.end());
      } else if (it->name != s.symbol) {
        it->name = base;
      }
      it->pct += s.self_pct;
      it->rows.push_back(&s);
      break;
    }
  }
  auto where = [&](const Hit& h) { return h.rows.front()->line > 0 ? fmt::format("{}:{}", source, h.rows.front()->line) : source; };
  // "4.00% python, 3.00% pt_data_worker" when a symbol has several rows (or one with a command).
  auto shares = [](const Hit& h) {
    if (h.rows.size() < 2 && (h.rows.empty() || h.rows.front()->comm.empty())) return std::string();
    std::string out;
    std::size_t n = 0;
    for (const auto* r : h.rows) {
      if (++n > 8) {
        out += fmt::format(", ... {} more rows", h.rows.size() - 8);
        break;
      }
      out += fmt::format("{}{:.2f}% {}", out.empty() ? "" : ", ", r->self_pct, r->comm.empty() ? fmt::format("(line {})", r->line) : r->comm);
    }
    return fmt::format(" [{} row{}: {}]", h.rows.size(), h.rows.size() == 1 ? "" : "s", out);
  };
  const std::string what = fmt::format("{}{}", layout_name(p.layout), p.children_column ? ", Self column" : "");
  std::vector<Finding> out;
  // perf.data kernel leaves no symbol table named: a pass cannot be told when they could hide a
  // frame above the threshold (a fail or warn from the named ones stands).
  auto unnamed = [&](Finding& f) {
    if (p.unresolved_kernel_pct <= kThresholdPct) {
      if (p.unresolved_kernel_pct > 0)
        f.add(source, fmt::format("{:.2f}% of samples are kernel addresses no symbol names ({})", p.unresolved_kernel_pct, p.symbol_source));
      return;
    }
    f.status = report::Status::skip;
    f.title = fmt::format("{:.2f}% of samples are kernel addresses without names: {}", p.unresolved_kernel_pct, p.symbol_source);
    const bool binary = p.layout == parsers::PerfProfile::Layout::data || p.layout == parsers::PerfProfile::Layout::live;
    f.fix = binary ? "capture /proc/kallsyms on the recording node (as root, while it runs the same boot) and pass --kallsyms FILE"
                   : "run perf report/script where kernel symbols can be read (as root or with kernel.kptr_restrict=0, on the node and boot "
                     "that recorded), or give perfgap the perf.data itself with --kallsyms FILE";
    f.metric("unresolved_kernel_pct", p.unresolved_kernel_pct);
  };
  {
    Finding f;
    f.id = "perf.smmu_cmdq";
    f.layer = "virtualization";
    f.subject = source;
    double share = 0;
    for (const auto& h : smmu) {
      share += h.pct;
      f.add(where(h), fmt::format("{:.2f}% {}{}", h.pct, h.name, shares(h)));
    }
    f.metric("smmu_cmdq_pct", share);
    if (p.samples > 0) f.metric("samples", p.samples);
    if (share > kThresholdPct) {
      f.status = report::Status::fail;
      f.title = fmt::format("SMMU command-queue frames hold {:.2f}% of {}samples as self time (> {:.0f}%)", share,
                            p.cpu_list.empty() ? std::string() : fmt::format("CPU {}'s ", p.cpu_list), kThresholdPct);
      f.fix = smmu.front().k->fix;
      f.impact = "CPU cycles spent issuing IOMMU invalidations; in a VM without CMDQV every DMA unmap traps (MoE iterations 12-14% slower at 24% of cycles)";
    } else {
      f.status = report::Status::pass;
      f.title = smmu.empty() ? fmt::format("no SMMU command-queue frames in the profile ({})", what)
                             : fmt::format("SMMU command-queue frames at {:.2f}% of samples (<= {:.0f}%)", share, kThresholdPct);
      if (smmu.empty()) f.add(source, fmt::format("{} kernel and user rows read ({}); none is an SMMU command-queue frame", p.symbols.size(), what));
      unnamed(f);
    }
    out.push_back(std::move(f));
  }
  {
    Finding f;
    f.id = "perf.hot_kernel";
    f.layer = "virtualization";
    f.subject = source;
    std::vector<const Hit*> over;
    for (const auto& h : hot)
      if (h.pct > kThresholdPct) over.push_back(&h);
    for (const auto& h : hot) f.metric(fmt::format("pct.{}", h.base), h.pct);
    if (!over.empty()) {
      f.status = report::Status::warn;
      std::string names;
      for (const auto* h : over) names += (names.empty() ? "" : ", ") + fmt::format("{} {:.2f}%", h->name, h->pct);
      f.title = fmt::format("known-costly kernel frames above {:.0f}% of samples: {}", kThresholdPct, names);
      std::string fixes;
      std::map<std::string, bool> seen;
      for (const auto* h : over) {
        f.add(where(*h), fmt::format("{:.2f}% {} ({}): {}{}", h->pct, h->name, h->k->group, h->k->cause, shares(*h)));
        if (!seen[h->k->group]) {
          seen[h->k->group] = true;
          fixes += (fixes.empty() ? "" : " | ") + h->k->group + ": " + h->k->fix;
        }
      }
      f.fix = fixes;
      f.impact = "CPU time lost in the kernel on the cores that feed the GPUs";
    } else {
      f.status = report::Status::pass;
      f.title = hot.empty() ? fmt::format("no known-costly kernel frame in the profile ({})", what)
                            : fmt::format("known-costly kernel frames all at or below {:.0f}% of samples", kThresholdPct);
      for (const auto& h : hot) f.add(where(h), fmt::format("{:.2f}% {}{}", h.pct, h.name, shares(h)));
      if (hot.empty()) f.add(source, fmt::format("{} rows read ({}); none is a known-costly kernel frame", p.symbols.size(), what));
      unnamed(f);
    }
    out.push_back(std::move(f));
  }
  // A known sample count too small to judge a 5% share: the shares stay as evidence.
  if (p.samples > 0 && p.samples < min_samples)
    for (auto& f : out) {
      f.status = report::Status::skip;
      f.title = fmt::format("too few samples ({:.0f}; at least {:.0f} to judge a {:.0f}% share)", p.samples, min_samples, kThresholdPct);
      f.fix = "record longer or at a higher frequency (perf record -F, perfgap profile --seconds)";
      f.impact.clear();
    }
  out.push_back(perf_summary(p, source));
  for (auto& d : damaged_lines("perf.hot_kernel", "virtualization", source, p.damaged)) out.push_back(std::move(d));
  return out;
}

}  // namespace perfgap::analyzers
