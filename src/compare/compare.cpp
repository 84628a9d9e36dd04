#include "compare/compare.hpp"
#include "compare/same_job.hpp"
#include "compare/size_range.hpp"
#include "compare/tlb_parity.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <array>
#include <cstdint>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include "report/informational.hpp"
#include "report/reader.hpp"
#include "report/text_style.hpp"
#include "sys/named_file.hpp"

namespace perfgap::compare {
namespace {

using report::Finding;
using report::Status;

// How bad a status is for the comparison; skip is "not decided", below pass.
int rank(Status s) {
  switch (s) {
    case Status::fail: return 3;
    case Status::error: return 2;
    case Status::warn: return 1;
    case Status::pass: return 0;
    case Status::skip: return -1;
  }
  return -1;
}

bool is_problem(Status s) { return rank(s) >= 1; }

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
bool contains(std::string_view s, std::string_view p) { return s.find(p) != std::string_view::npos; }

std::string key_text(const ReportFinding& f) { return f.subject.empty() ? f.id : f.id + " (" + f.subject + ")"; }

std::string number(double v) {
  if (std::isnan(v)) return "nan";
  return fmt::format("{:.4g}", v);
}

// One finding per (id, subject): the most severe status, the first finding's title and metrics.
struct Entry {
  const ReportFinding* first = nullptr;
  Status status = Status::skip;
  std::size_t order = 0;
};
using Index = std::map<std::pair<std::string_view, std::string>, Entry>;

// Analyzer findings name their input file as subject, which differs between the two runs;
// its place among the report's inputs is what the two have in common.
std::string match_subject(const ReportView& r, const std::string& subject) {
  for (std::size_t i = 0; i < r.inputs.size(); ++i)
    if (!subject.empty() && subject == r.inputs[i]) return fmt::format("\x01input {}", i);
  return subject;
}

// check --history's own findings compare a run with the runs kept before it, not with the other
// report: never matched, so never a regression or a fix (history --compare previous latest).
bool about_past_runs(std::string_view id) { return id == "history.changed" || id == "history.since_good"; }

Index index(const ReportView& r) {
  Index out;
  for (std::size_t i = 0; i < r.findings.size(); ++i) {
    const auto& f = r.findings[i];
    if (about_past_runs(f.id)) continue;
    auto [it, fresh] = out.try_emplace({f.id, match_subject(r, f.subject)}, Entry{&f, f.status, i});
    if (!fresh && report::severity(f.status) > report::severity(it->second.status)) it->second.status = f.status;
  }
  return out;
}

Finding make(std::string id, Status st, const ReportFinding& about, std::string title) {
  Finding f;
  f.id = std::move(id);
  f.layer = about.layer;
  f.status = st;
  f.subject = key_text(about);
  f.title = std::move(title);
  return f;
}

// A subject that names a device (docs/ANALYZE.md, "compare", lost devices): a PCI address
// (0000:18:00.0, 18:00.0) or an RDMA port (mlx5_0:1). Processes (pid:4242), variables and inputs
// come and go between runs; a device that was there and is not is lost.
bool names_device(std::string_view s) {
  auto hex = [](char c) { return (c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'); };
  auto hex_run = [&](std::string_view t, std::size_t at, std::size_t n) {
    if (at + n > t.size()) return false;
    for (std::size_t i = at; i < at + n; ++i)
      if (!hex(t[i])) return false;
    return true;
  };
  auto bdf = [&](std::string_view t) {  // bb:dd.f
    return t.size() == 7 && hex_run(t, 0, 2) && t[2] == ':' && hex_run(t, 3, 2) && t[5] == '.' && hex_run(t, 6, 1);
  };
  if (bdf(s) || (s.size() == 12 && hex_run(s, 0, 4) && s[4] == ':' && bdf(s.substr(5)))) return true;
  const auto colon = s.rfind(':');
  if (colon == std::string_view::npos || colon == 0 || colon + 1 == s.size() || s.substr(0, colon) == "pid") return false;
  for (char c : s.substr(colon + 1))
    if (c < '0' || c > '9') return false;
  if (!(s[0] >= 'a' && s[0] <= 'z')) return false;
  for (char c : s.substr(0, colon))
    if (!((c >= 'a' && c <= 'z') || (c >= '0' && c <= '9') || c == '_' || c == '-')) return false;
  return true;
}

// Findings of events in the kernel log, per device: a device without events later (a rotated or
// cleared log, a reboot) is no device lost. (The kernel log's hardware-event checks.)
bool about_logged_events(std::string_view id) {
  static constexpr std::string_view kLogged[] = {"gpu.xid", "gpu.fallen_off_bus", "gpu.nvlink_xid", "gpu.nvswitch_sxid",
                                                 "pcie.aer", "net.link_flaps",     "kernel.edac",
                                                 "gpu.driver_errors", "net.nic_health"};
  return std::find(std::begin(kLogged), std::end(kLogged), id) != std::end(kLogged);
}

// A skip that says its source could not be read (or was not captured in a tree from elsewhere),
// as opposed to one that read it and found nothing ("no RDMA devices", "no NVIDIA GPU on PCI").
bool source_unread(const ReportFinding& f) {
  if (f.status != Status::skip) return false;
  for (std::string_view w : {"not readable", "no readable", "unreadable", "not captured", "cannot be read", "could not be read", "not read"})
    if (contains(f.title, w)) return true;
  return false;
}

// Counts of devices a check reports (gpu.inventory, nccl.topo): fewer after is a device lost.
bool counts_devices(std::string_view name) {
  return name == "gpus_pci" || name == "gpus_visible" || name == "topo_gpus" || name == "topo_nics";
}

// Whether the after report read what a finding of `id` reads: a finding of that id that is not a
// skip saying its source was unread (another subject of it, or the check's one finding).
std::vector<const ReportFinding*> read_same_source(const ReportView& after, std::string_view id) {
  std::vector<const ReportFinding*> out;
  for (const auto& f : after.findings)
    if (f.id == id && !source_unread(f)) out.push_back(&f);
  return out;
}

// A device (subject) the before report had, present and passing, and the after report lacks
// although it read the same source: lost, a regression; nullopt where the after run cannot say.
std::optional<Finding> lost_device(const Entry& b, const ReportView& after, const std::string& before_name, const std::string& after_name) {
  const ReportFinding& bf = *b.first;
  // Present and passing before: a device that failed before and is gone may have been taken out.
  if (b.status != Status::pass || !names_device(bf.subject) || about_logged_events(bf.id)) return std::nullopt;
  const auto read = read_same_source(after, bf.id);
  if (read.empty()) return std::nullopt;
  std::vector<std::string> others;
  for (const auto* f : read)
    if (!f->subject.empty() && std::find(others.begin(), others.end(), f->subject) == others.end()) others.push_back(f->subject);
  const std::string b_status(report::to_string(b.status));
  std::string listed;
  for (std::size_t i = 0; i < others.size() && i < 4; ++i) listed += (i ? ", " : "") + others[i];
  if (others.size() > 4) listed += fmt::format(" and {} more", others.size() - 4);
  const std::string how = others.empty() ? fmt::format("its {} finding says: {}", bf.id, read.front()->title) : fmt::format("{} reports {}", bf.id, listed);
  Finding f = make("compare.regressed", Status::fail, bf,
                   fmt::format("{} is gone: {} in {}, absent from {}, which read the same source ({})", bf.subject, b_status, before_name, after_name, how));
  f.add(before_name, b_status + ": " + bf.title);
  f.add(after_name, fmt::format("{} not reported; {}", bf.subject, how));
  f.fix = "A device that was there is lost: check whether it fell off the bus or its driver failed (dmesg, lspci, ibstat), and reseat or replace it.";
  return f;
}

// The counts of devices a finding had before and lacks after (gpus_pci 1 -> absent): "gpus_pci 1
// -> absent"; empty when none dropped to absent (a figure present in both is compare.metric's).
std::vector<std::string> devices_uncounted(const ReportFinding& before, const ReportFinding& after) {
  std::vector<std::string> out;
  for (const auto& [name, then] : before.metrics) {
    if (!counts_devices(name) || !(then > 0)) continue;
    bool present = false;
    for (const auto& m : after.metrics) present = present || m.first == name;
    if (!present) out.push_back(fmt::format("{} {} -> absent", name, number(then)));
  }
  return out;
}

// Below this a move is noise whatever its relative size (docs/ANALYZE.md, "compare"): a percent
// metric must move a whole point (0.25% -> 0.40% remote is +60% relative and nothing at all), a
// ratio one hundredth, a bandwidth or time its run-to-run spread where the report gives one
// (`NAME.spread`: nccl-tests' in-place and out-of-place runs of a size, two measurements of one
// bandwidth).
double noise_floor(std::string_view name, const std::map<std::string_view, double>& before_spread,
                   const std::map<std::string_view, double>& after_spread, std::string* why) {
  auto has = [&](std::string_view p) { return name.find(p) != std::string_view::npos; };
  if (has("pct") || has("percent")) {
    *why = "1 point (a percent metric)";
    return 1;
  }
  if (starts_with(name, "ratio") || has("_ratio") || has(".ratio")) {
    *why = "0.01 (a ratio)";
    return 0.01;
  }
  double spread = 0;
  for (const auto* m : {&before_spread, &after_spread})
    if (auto it = m->find(name); it != m->end()) spread = std::max(spread, it->second);
  if (spread > 0) {
    *why = fmt::format("{} (the run-to-run spread the reports give)", number(spread));
    return spread;
  }
  why->clear();
  return 0;
}

// A move in words: "+26.7%", or "from 0" where the before value is 0 and a percent of it means nothing.
std::string move_text(double then, double pct) { return then == 0 ? std::string("from 0") : fmt::format("{:+.1f}%", pct); }

// What a metric move was, for the headline: the largest improvement and regression over all findings.
struct MetricMove {
  std::string text;        // "busbw_gbps.1073741824 of nccl_tests.busbw (...): 28.3 -> 61.2 (+116.3%)"
  double impact = 0;       // its finding's cost in throughput by the knowledge base (Options::impact_pct)
  bool from_zero = false;  // the before value was 0: no relative size
  double size = 0;         // |percent| of the before value; |delta| from 0
};
// The move the headline names: its finding's larger throughput impact first, then a relative
// move over one from 0 (whose percent is undefined: C6 0 -> 96% is not "more" than 3.0 -> 3.8 GHz),
// then the larger move (the same size up to rounding keeps the first: busy_mhz before its ratio).
bool outranks(const MetricMove& a, const MetricMove& b) {
  if (a.impact != b.impact) return a.impact > b.impact;
  if (a.from_zero != b.from_zero) return !a.from_zero;
  return a.size > b.size * (1 + 1e-9);
}
struct MetricTally {
  int worse = 0, better = 0, changed = 0, within_noise = 0;
  std::optional<MetricMove> best, worst;
};

std::map<std::string_view, double> spreads(const ReportFinding& f) {
  std::map<std::string_view, double> out;
  for (const auto& [k, v] : f.metrics) {
    std::string_view n = k;
    if (n.size() > 7 && n.substr(n.size() - 7) == ".spread" && std::isfinite(v)) out.emplace(n.substr(0, n.size() - 7), std::fabs(v));
  }
  return out;
}

// The before/after figure of a finding whose metrics are a curve over message sizes
// (nccl-tests, sweep: NAME_gbps.BYTES): both runs' curves on one chart, the family with the
// most sizes in both; nullopt when there is none (two sizes at least).
std::optional<report::Chart> size_curves(const ReportFinding& before, const ReportFinding& after, const std::string& before_name,
                                         const std::string& after_name) {
  // The curve itself: NAME_gbps.BYTES only (not NAME_gbps.BYTES.spread).
  auto sized = [](std::string_view key) -> std::optional<std::pair<std::string_view, double>> {
    auto m = report::sized_metric(key);
    if (!m || !m->rest.empty()) return std::nullopt;
    return std::make_pair(m->name, m->bytes);
  };
  std::map<std::string_view, std::map<double, double>> was;
  for (const auto& [k, v] : before.metrics)
    if (auto s = sized(k); s && std::isfinite(v)) was[s->first].try_emplace(s->second, v);
  std::map<std::string_view, std::vector<std::array<double, 3>>> both;  // size, before, after
  for (const auto& [k, v] : after.metrics) {
    auto s = sized(k);
    if (!s || !std::isfinite(v)) continue;
    auto fam = was.find(s->first);
    if (fam == was.end()) continue;
    if (auto it = fam->second.find(s->second); it != fam->second.end()) {
      auto& pts = both[s->first];
      if (pts.empty() || pts.back()[0] != s->second) pts.push_back({s->second, it->second, v});
    }
  }
  const std::pair<const std::string_view, std::vector<std::array<double, 3>>>* best = nullptr;
  for (const auto& fam : both)
    if (!best || fam.second.size() > best->second.size()) best = &fam;
  if (!best || best->second.size() < 2) return std::nullopt;
  report::Chart c;
  c.title = fmt::format("{} before and after: {}", best->first, key_text(after));
  c.x_label = "message size";
  c.y_label = fmt::format("{} (GB/s)", best->first);
  c.log_x = c.x_bytes = true;
  // The legend names the files, not their directories (a legend line is short).
  auto base = [](const std::string& path) { return path.substr(path.find_last_of('/') == std::string::npos ? 0 : path.find_last_of('/') + 1); };
  report::ChartSeries b{fmt::format("before ({})", base(before_name)), {}}, a{fmt::format("after ({})", base(after_name)), {}};
  auto pts = best->second;
  std::sort(pts.begin(), pts.end());
  for (const auto& p : pts) {
    b.points.push_back({p[0], p[1], std::nullopt, std::nullopt});
    a.points.push_back({p[0], p[2], std::nullopt, std::nullopt});
  }
  c.series = {std::move(b), std::move(a)};
  return c;
}

// The metric deltas of one (id, subject) present in both reports; nullopt when none changed.
std::optional<Finding> metric_deltas(const ReportFinding& before, const ReportFinding& after, const std::string& before_name,
                                     const std::string& after_name, const Options& o, MetricTally& tally) {
  std::map<std::string_view, double> was;
  for (const auto& [k, v] : before.metrics) was.try_emplace(k, v);
  const auto before_spread = spreads(before), after_spread = spreads(after);
  Finding f = make("compare.metric", Status::pass, after, "");
  std::vector<std::string> worse, better, changed;
  // The worst moves first (evidence and title), then the rest in the report's order.
  struct Move {
    double badness;  // percent the wrong way; 0 when not worse
    report::Evidence evidence;
    std::string name;
  };
  std::vector<Move> moves;
  std::map<std::string_view, bool> seen;  // a repeated name: its first value, as on the before side
  int noise = 0;
  for (const auto& [name, reported] : after.metrics) {
    if (!seen.try_emplace(name, true).second) continue;
    if (std::string_view(name).size() > 7 && std::string_view(name).substr(name.size() - 7) == ".spread") continue;  // a noise figure, not a metric
    auto it = was.find(name);
    if (it == was.end()) continue;
    double then = it->second, now = reported;
    if (then == now || (std::isnan(then) && std::isnan(now))) continue;
    // A peak of two runs over different sizes is compared over the sizes both measured; an
    // average over them, or a peak with no size in common, is not compared (the note says why).
    const auto sizes = over_common_sizes(name, before, after);
    if (sizes && sizes->figures) std::tie(then, now) = *sizes->figures;
    const double delta = now - then;
    const double pct = then != 0 ? 100.0 * delta / std::fabs(then) : (delta > 0 ? INFINITY : -INFINITY);
    const auto dir = sizes && !sizes->compared ? Direction::unknown : metric_direction(name);
    std::string floor_why;
    const double floor = noise_floor(name, before_spread, after_spread, &floor_why);
    // A spread must be exceeded; a fixed floor (a point, a hundredth) reached.
    const bool past_floor = floor_why.find("spread") != std::string::npos ? std::fabs(delta) > floor : std::fabs(delta) >= floor;
    const bool beyond = std::fabs(pct) > o.tolerance_pct && past_floor;
    const bool wrong_way = (dir == Direction::higher_is_better && delta < 0) || (dir == Direction::lower_is_better && delta > 0);
    const bool got_worse = dir != Direction::unknown && wrong_way && beyond;
    const bool got_better = dir != Direction::unknown && !wrong_way && beyond;
    if (dir != Direction::unknown && std::fabs(pct) > o.tolerance_pct && !beyond) ++noise;
    std::string line = fmt::format("{} -> {} ({}{}{}{})", number(then), number(now), move_text(then, pct),
                                   dir == Direction::unknown ? "" : dir == Direction::higher_is_better ? ", higher is better" : ", lower is better",
                                   dir != Direction::unknown && std::fabs(pct) > o.tolerance_pct && !beyond
                                       ? fmt::format("; within the noise floor of {}", floor_why)
                                       : "",
                                   sizes ? "; " + sizes->note : "");
    if (sizes && !sizes->compared) line = fmt::format("{} -> {} ({})", number(then), number(now), sizes->note);
    if (got_worse)
      moves.push_back({std::fabs(pct),
                       {after_name + " " + name, line,
                        fmt::format("within {}% of {} ({}){}", o.tolerance_pct, number(then), before_name,
                                    floor_why.empty() ? "" : ", or within " + floor_why)},
                       std::string(name)});
    else
      moves.push_back({0, {after_name + " " + name, line, std::nullopt}, std::string(name)});
    if (got_worse || got_better) {
      auto& slot = got_worse ? tally.worst : tally.best;
      MetricMove move{fmt::format("{} of {} {} -> {} ({})", name, key_text(after), number(then), number(now), move_text(then, pct)),
                      o.impact_pct ? o.impact_pct(after.id) : 0, then == 0, then == 0 ? std::fabs(delta) : std::fabs(pct)};
      if (!slot || outranks(move, *slot)) slot = std::move(move);
      (got_worse ? tally.worse : tally.better) += 1;
      (got_worse ? worse : better).push_back(std::string(name));
    }
    changed.push_back(std::string(name));
    f.metric(std::string(name) + ".before", then);
    f.metric(std::string(name) + ".after", now);
    if (std::isfinite(pct) && !(sizes && !sizes->compared)) f.metric(std::string(name) + ".delta_pct", pct);
  }
  tally.changed += static_cast<int>(changed.size());
  tally.within_noise += noise;
  if (changed.empty()) return std::nullopt;
  std::stable_sort(moves.begin(), moves.end(), [](const Move& x, const Move& y) { return x.badness > y.badness; });
  for (auto& m : moves) f.evidence.push_back(std::move(m.evidence));
  if (auto c = size_curves(before, after, before_name, after_name)) f.charts.push_back(std::move(*c));
  auto names = [](const std::vector<std::string>& v) {
    std::string out = fmt::format("{}", fmt::join(v.size() > 4 ? std::vector<std::string>(v.begin(), v.begin() + 4) : v, ", "));
    if (v.size() > 4) out += fmt::format(" and {} more", v.size() - 4);
    return out;
  };
  const std::string counts = fmt::format("{} changed: {} worse, {} better beyond {}% and the noise floor{}",
                                         changed.size() == 1 ? "1 metric" : fmt::format("{} metrics", changed.size()), worse.size(), better.size(),
                                         o.tolerance_pct, noise ? fmt::format(", {} within noise", noise) : "");
  if (!worse.empty()) {
    f.status = Status::fail;
    f.title = fmt::format("{}; worse: {}{}", counts, names(worse), better.empty() ? "" : "; better: " + names(better));
    f.fix = "Find what changed between the two runs (settings, environment, node) with the other compare findings and the reports' node sections; rerun to rule out noise.";
  } else {
    f.title = better.empty() ? counts : fmt::format("{}; better: {}", counts, names(better));
  }
  return f;
}

// compare's answer for reports of different jobs or machines, or of different runs (nccl-tests of
// other collectives): no verdict, the differences named.
Finding another_job(const std::vector<std::string>& other, const std::vector<std::string>& runs, const std::string& before_name,
                    const std::string& after_name) {
  Finding s;
  s.id = "compare.summary";
  s.layer = "workload";
  s.status = Status::skip;
  if (other.empty()) {
    s.title = fmt::format("the reports are of different runs ({}): the busbw of one collective is no measure of another's, not a fix or a "
                          "regression; nothing compared (compare two runs of the same collective, before and after a change)",
                          fmt::join(runs, "; "));
  } else {
    std::vector<std::string> all = other;
    all.insert(all.end(), runs.begin(), runs.end());
    s.title = fmt::format("the reports are of different jobs or machines ({}): a difference between them is the setups', not a fix or a "
                          "regression; nothing compared (compare two runs of the same job, before and after a change)",
                          fmt::join(all, "; "));
  }
  for (const auto& w : other) s.add(after_name, w, fmt::format("the same job and machine as {}", before_name));
  for (const auto& w : runs) s.add(after_name, "collective measured: " + w, fmt::format("the collective of {}", before_name));
  if (!other.empty()) s.metric("different_jobs", static_cast<double>(other.size()));
  if (!runs.empty()) s.metric("different_runs", static_cast<double>(runs.size()));
  return s;
}

}  // namespace

tl::expected<ReportView, std::string> load_report(const std::string& path) {
  auto text = sys::read_named_file(path, kMaxReportFileBytes);
  if (!text) return tl::unexpected(text.error());
  return read_report(*text);
}

tl::expected<ReportView, std::string> read_report(std::string_view text) {
  report::Reader reader;
  auto read = reader.read(text);
  if (!read) return tl::unexpected(std::move(read.error()));
  const report::ReadReport& in = *read;
  ReportView r;
  r.kind = in.kind;
  r.generated_at = in.generated_at.value_or("");
  r.inputs.assign(in.inputs.begin(), in.inputs.end());
  if (in.node) {
    const report::ReadNode& n = *in.node;
    r.node = n.name.value_or("");
    for (const auto& [key, value] : {std::pair{"kernel", n.kernel}, {"arch", n.arch}, {"container", n.container}})
      if (value) r.node_facts.emplace_back(key, *value);
    if (n.virtualized) r.node_facts.emplace_back("virtualized", *n.virtualized ? "yes" : "no");
    for (const auto& [section, entries] : {std::pair{"settings", n.settings}, {"environment", n.environment}, {"nccl_conf", n.nccl_conf}})
      for (const auto& e : entries) r.node_facts.emplace_back(std::string(section) + "." + std::string(e.key), e.value);
  }
  r.findings.reserve(in.findings.size());
  for (const auto& in_f : in.findings) {
    ReportFinding f;
    f.id = in_f.id;
    f.layer = in_f.layer;
    f.subject = in_f.subject;
    f.title = in_f.title;
    f.status = in_f.status;
    for (const auto& m : in_f.metrics) f.metrics.emplace_back(m.name, m.value);
    for (const auto& ev : in_f.evidence) f.evidence.emplace_back(ev.source, ev.observed);
    r.findings.push_back(std::move(f));
  }
  return r;
}

std::string comparable_kind(std::string_view kind) {
  if (kind == "live" || kind == "root") return "node";
  return std::string(kind);
}

Direction metric_direction(std::string_view n) {
  // Worse when higher: times, waits, shares lost, problems counted.
  static constexpr std::string_view kLowerPrefixes[] = {
      "median_ms", "mean_ms", "iteration_ms", "exposed_", "remote_pct", "steal_pct", "max_cpu_steal_pct", "host_bound_pct",
      "idle_pct", "idle_ms_per_iter", "launch_delay_us", "launch_api_us", "launch_p50_us", "launch_p99_us", "cpus_below", "smmu_cmdq_pct", "failing_nodes", "nodes_with_errors",
      "cpus_without_deep_idle", "cpus_not_performance", "capped_cpus", "intruding_processes", "device_irqs_on_training_cores",
      "replay_counter", "volatile_uncorrected", "aggregate_uncorrected", "remapped_uncorrectable", "gpus_far_from_nic",
      "short_kernel_pct", "mismatches", "nodes_off_majority", "unreadable_lines", "other_node_pct", "measured_ms"};
  // Worse when lower: bandwidths, rates, throughput, shares of the reference, clocks reached.
  static constexpr std::string_view kHigherPrefixes[] = {"busbw_gbps", "avg_busbw_gbps", "max_busbw_gbps", "algbw", "percent_of_reference",
                                                         "pct_of_reference", "busy_mhz", "median_throughput", "mean_throughput",
                                                         "rate_gbps", "links_up", "deep_pct", "ratio", "min_ratio",
                                                         "gpus_pci", "gpus_visible", "topo_gpus", "topo_nics"};
  // nccl-tests sizes below 1 MiB are latency-bound and printed to 0.01 GB/s: their bus
  // bandwidth moves by whole multiples from rounding alone, and analyze judges only sizes of
  // 1 MiB or more by default, so compare does not judge them either.
  if (starts_with(n, "busbw_gbps.")) {
    std::string_view rest = n.substr(11);
    std::uint64_t bytes = 0;
    std::size_t digits = 0;
    while (digits < rest.size() && rest[digits] >= '0' && rest[digits] <= '9' && bytes < (1ull << 40))
      bytes = bytes * 10 + static_cast<std::uint64_t>(rest[digits++] - '0');
    if (digits > 0 && (digits == rest.size() || rest[digits] == '.') && bytes < (1ull << 20)) return Direction::unknown;
  }
  for (auto p : kLowerPrefixes)
    if (starts_with(n, p)) return Direction::lower_is_better;
  for (auto p : kHigherPrefixes)
    if (starts_with(n, p)) return Direction::higher_is_better;
  // nccl-tests comparisons name each size: pct.SIZE is the share of the reference reached.
  if (starts_with(n, "pct.")) return Direction::higher_is_better;
  if (contains(n, "_ms_per_iter") && !starts_with(n, "compute_")) return Direction::lower_is_better;
  return Direction::unknown;
}

std::vector<Finding> compare_reports(const ReportView& before, const std::string& before_name, const ReportView& after,
                                     const std::string& after_name, const Options& o) {
  // Two different jobs or machines: what differs between them is the setups', not a change's.
  // Two runs of different collectives: one busbw is no measure of the other's.
  auto other = different_jobs(before, before_name, after, after_name);
  auto runs = different_runs(before, before_name, after, after_name);
  if (!other.empty() || !runs.empty()) return {another_job(other, runs, before_name, after_name)};
  const Index was = index(before);
  const Index now = index(after);
  std::vector<Finding> out;
  int fixed = 0, improved = 0, regressed = 0, fresh = 0, unchanged = 0, gone = 0, metric_worse = 0, same = 0;
  int decided_both = 0;  // (id, subject) judged in both reports: neither a skip nor an informational summary's pass
  MetricTally tally;
  std::vector<std::pair<std::size_t, const Index::value_type*>> order;
  order.reserve(now.size());
  for (const auto& e : now) order.emplace_back(e.second.order, &e);
  std::sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  for (const auto& [pos, entry] : order) {
    const auto& [key, a] = *entry;
    const ReportFinding& af = *a.first;
    const std::string a_status(report::to_string(a.status));
    auto it = was.find(key);
    if (it == was.end()) {
      if (is_problem(a.status)) {
        Status st = rank(a.status) >= 2 ? Status::fail : Status::warn;
        auto f = make("compare.new", st, af, fmt::format("new in {}: {} {}", after_name, a_status, af.title));
        f.add(after_name, a_status + ": " + af.title);
        f.add(before_name, "not reported");
        out.push_back(std::move(f));
        ++fresh;
      } else {
        ++same;
      }
      continue;
    }
    const Entry& b = it->second;
    const ReportFinding& bf = *b.first;
    const std::string b_status(report::to_string(b.status));
    const int rb = rank(b.status), ra = rank(a.status);
    decided_both += report::decides(bf.id, b.status) && report::decides(af.id, a.status);
    std::optional<Finding> f;
    if (ra > rb && is_problem(a.status)) {
      f = make("compare.regressed", Status::fail, af, fmt::format("{} -> {}: {}", b_status, a_status, af.title));
      f->fix = "Compare the two reports' evidence for this finding and the node settings that differ; the finding's own fix applies.";
      ++regressed;
    } else if (is_problem(b.status) && a.status == Status::pass) {
      f = make("compare.fixed", Status::pass, af, fmt::format("fixed: {} -> pass: {}", b_status, af.title));
      ++fixed;
    } else if (is_problem(b.status) && ra < rb && ra >= 1) {
      f = make("compare.improved", Status::pass, af, fmt::format("better but not fixed: {} -> {}: {}", b_status, a_status, af.title));
      ++improved;
    } else if (auto lost = devices_uncounted(bf, af); !lost.empty() && b.status != Status::skip && a.status == Status::skip && !source_unread(af)) {
      f = make("compare.regressed", Status::fail, af,
               fmt::format("{} -> skip: devices gone ({}): {}", b_status, fmt::join(lost, ", "), af.title));
      f->fix = "A device that was there is lost: check whether it fell off the bus or its driver failed (dmesg, lspci, nvidia-smi, ibstat), and reseat or replace it.";
      ++regressed;
    } else if (is_problem(b.status) && a.status == Status::skip) {
      f = make("compare.gone", Status::skip, af, fmt::format("{} in {}, undecided (skip) in {}: {}", b_status, before_name, after_name, af.title));
      ++gone;
    } else if (is_problem(a.status) && ra == rb) {
      f = make("compare.unchanged", Status::warn, af, fmt::format("still {}: {}", a_status, af.title));
      ++unchanged;
    } else {
      ++same;
    }
    if (f) {
      f->add(before_name, b_status + ": " + bf.title);
      f->add(after_name, a_status + ": " + af.title);
      out.push_back(std::move(*f));
    }
    if (auto m = metric_deltas(bf, af, before_name, after_name, o, tally)) {
      if (m->status == Status::fail) ++metric_worse;
      out.push_back(std::move(*m));
    }
  }
  // What only the before report had: fixed or not, the after run did not say.
  std::vector<const Entry*> only_before;
  for (const auto& [key, b] : was)
    if (!now.count(key)) only_before.push_back(&b);
  std::sort(only_before.begin(), only_before.end(), [](const Entry* x, const Entry* y) { return x->order < y->order; });
  for (const Entry* b : only_before) {
    if (auto lost = lost_device(*b, after, before_name, after_name)) {
      out.push_back(std::move(*lost));
      ++regressed;
      continue;
    }
    const std::string b_status(report::to_string(b->status));
    auto f = make("compare.gone", Status::skip, *b->first, fmt::format("not in {} ({} in {}): cannot tell whether it changed", after_name, b_status, before_name));
    f.add(before_name, b_status + ": " + b->first->title);
    f.add(after_name, "not reported");
    out.push_back(std::move(f));
    ++gone;
  }
  if (auto p = tlb_parity(before, before_name, after, after_name, o)) out.push_back(std::move(*p));
  Finding s;
  s.id = "compare.summary";
  s.layer = "workload";
  s.status = Status::pass;
  // The headline: what a user needs without -v. Which reports these are first when they differ,
  // then the counts, then the largest move each way.
  std::vector<std::string> caveats;
  if (before.node != after.node && !before.node.empty() && !after.node.empty())
    caveats.push_back(fmt::format("different nodes: {} vs {}", before.node, after.node));
  if (before.kind != after.kind) caveats.push_back(fmt::format("different kinds: a {} report vs a {} report", before.kind, after.kind));
  std::size_t common = 0;
  for (const auto& e : now) common += was.count(e.first);
  if (common == 0 && !now.empty() && !was.empty()) caveats.push_back("no finding in common: the reports measure different things");
  s.status = caveats.empty() ? Status::pass : Status::warn;
  std::string head = caveats.empty() ? "" : fmt::format("{}: ", fmt::join(caveats, "; "));
  head += fmt::format("{} metric{} improved, {} regressed", tally.better, tally.better == 1 ? "" : "s", tally.worse);
  if (tally.best) head += "; largest improvement: " + tally.best->text;
  if (tally.worst) head += "; largest regression: " + tally.worst->text;
  if (tally.within_noise) head += fmt::format("; {} move{} within noise", tally.within_noise, tally.within_noise == 1 ? "" : "s");
  head += fmt::format("; findings: {} fixed, {} improved, {} regressed, {} new, {} still a problem, {} gone or undecided", fixed, improved, regressed,
                      fresh, unchanged, gone);
  s.title = std::move(head);
  s.add(before_name, fmt::format("{} report{}{}, {} findings", before.kind, before.node.empty() ? "" : " of " + before.node,
                                 before.generated_at.empty() ? "" : " at " + before.generated_at, before.findings.size()));
  s.add(after_name, fmt::format("{} report{}{}, {} findings", after.kind, after.node.empty() ? "" : " of " + after.node,
                                after.generated_at.empty() ? "" : " at " + after.generated_at, after.findings.size()));
  if (before.node != after.node && !before.node.empty() && !after.node.empty())
    s.add("node.name", fmt::format("{} vs {}: two different nodes compared: a difference may be the node's, not the change's", before.node, after.node));
  s.metric("metrics_improved", tally.better);
  s.metric("metrics_changed", tally.changed);
  s.metric("metrics_within_noise", tally.within_noise);
  for (auto [name, n] : {std::pair{"fixed", fixed}, {"improved", improved}, {"regressed", regressed}, {"new", fresh},
                         {"unchanged_problems", unchanged}, {"gone", gone}, {"metric_regressions", metric_worse}, {"unchanged_ok", same},
                         {"decided_in_both", decided_both}})
    s.metric(name, n);
  out.insert(out.begin(), std::move(s));
  return out;
}

std::string undecided_why(const std::vector<Finding>& findings) {
  const Finding* summary = nullptr;
  for (const auto& f : findings) {
    if (f.id == "compare.summary") summary = &f;
    else if (f.id == "compare.tlb_parity" && report::decides(f)) return "";
  }
  // compare.summary alone as a skip (reports of different jobs): the report's own rule says why.
  if (!summary || summary->status == Status::skip) return "";
  double decided = 0, gone = 0;
  for (const auto& [name, v] : summary->metrics) {
    if (name == "gone") gone = v;
    for (std::string_view counted : {"fixed", "improved", "regressed", "new", "unchanged_problems", "decided_in_both", "metrics_improved", "metric_regressions"})
      if (name == counted) decided += v;
  }
  if (decided > 0) return "";
  return fmt::format("nothing could be compared: no finding was decided in both reports (each is a skip, or a summary that only says what was read, in "
                     "one of them){}",
                     gone > 0 ? fmt::format("; {:.0f} decided before and not after (compare.gone)", gone) : "");
}

}  // namespace perfgap::compare
