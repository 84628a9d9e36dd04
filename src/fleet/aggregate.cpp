#include "fleet/aggregate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <climits>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "compare/compare.hpp"
#include "fleet/measured.hpp"
#include "parsers/hostlist.hpp"
#include "report/informational.hpp"

namespace perfgap::fleet {
namespace {

using report::Finding;
using report::Status;

constexpr const char* kLayer = "fleet";

Finding make(const char* id, Status s, std::string subject, std::string title) {
  Finding f;
  f.id = id;
  f.layer = kLayer;
  f.status = s;
  f.subject = std::move(subject);
  f.title = std::move(title);
  return f;
}

std::string plural(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

std::string number(double v) { return fmt::format("{:.6g}", v); }

}  // namespace

namespace {

// What a report says of its machine: its CPU model and architecture ("" when not said).
struct Machine {
  std::string cpu, arch;
  bool known() const { return !cpu.empty() || !arch.empty(); }
  // Two machines are told apart only by what both reports say.
  bool same(const Machine& o) const { return (cpu.empty() || o.cpu.empty() || cpu == o.cpu) && (arch.empty() || o.arch.empty() || arch == o.arch); }
  void fill(const Machine& o) {
    if (cpu.empty()) cpu = o.cpu;
    if (arch.empty()) arch = o.arch;
  }
};

Machine machine_fields(const NodeReport& r) {
  Machine m;
  auto cpu = r.settings.find("cpu_model");
  if (cpu != r.settings.end() && cpu->second != report::kSettingUnknown) m.cpu = cpu->second;
  if (r.arch != report::kSettingUnknown) m.arch = r.arch;
  return m;
}

std::string describe_machine(const Machine& m) {
  std::string out;
  if (!m.cpu.empty()) out = "cpu_model " + m.cpu;
  if (!m.arch.empty()) out += (out.empty() ? "arch " : ", arch ") + m.arch;
  return out;
}

}  // namespace

std::string machine_of(const NodeReport& r) { return describe_machine(machine_fields(r)); }

Fleet dedupe_nodes(std::vector<NodeReport> reports) {
  // Input order breaks ties, so remember it before sorting by name.
  std::vector<std::size_t> order(reports.size());
  for (std::size_t i = 0; i < order.size(); ++i) order[i] = i;
  std::stable_sort(order.begin(), order.end(), [&](std::size_t a, std::size_t b) { return reports[a].name < reports[b].name; });
  auto newer = [&](std::size_t a, std::size_t b) {  // a supersedes b
    const auto& ta = reports[a].generated_unix;
    const auto& tb = reports[b].generated_unix;
    if (ta.value_or(LLONG_MIN) != tb.value_or(LLONG_MIN)) return ta.value_or(LLONG_MIN) > tb.value_or(LLONG_MIN);
    return a > b;
  };
  Fleet fleet;
  fleet.nodes.reserve(reports.size());
  std::vector<NodeReport> renamed;  // NAME#2...: sorted in with the others at the end
  std::size_t i = 0;
  while (i < order.size()) {
    std::size_t end = i + 1;
    while (end < order.size() && reports[order[end]].name == reports[order[i]].name) ++end;
    // The machines among the reports of this name, in input order; a report that does not say
    // its machine belongs to the first.
    std::vector<Machine> machines;
    std::vector<std::vector<std::size_t>> members;
    for (std::size_t j = i; j < end; ++j) {
      auto m = machine_fields(reports[order[j]]);
      std::size_t k = 0;
      if (m.known())
        k = static_cast<std::size_t>(std::find_if(machines.begin(), machines.end(), [&](const Machine& x) { return x.same(m); }) - machines.begin());
      if (k == machines.size()) {
        machines.push_back(m);
        members.emplace_back();
      } else {
        machines[k].fill(m);
      }
      members[k].push_back(order[j]);
    }
    std::string first_file;
    for (std::size_t k = 0; k < members.size(); ++k) {
      const auto& group = members[k];
      std::size_t keep = group[0];
      for (std::size_t j = 1; j < group.size(); ++j)
        if (newer(group[j], keep)) keep = group[j];
      const std::string name = reports[keep].name;
      const std::string kept_as = k == 0 ? name : fmt::format("{}#{}", name, k + 1);
      for (auto j : group)
        if (j != keep)
          fleet.superseded.push_back({kept_as, reports[keep].file, reports[keep].generated_at, reports[j].file, reports[j].generated_at});
      if (k == 0) {
        first_file = reports[keep].file;
        fleet.nodes.push_back(std::move(reports[keep]));
      } else {
        fleet.clashes.push_back({name, kept_as, reports[keep].file, describe_machine(machines[k]), first_file, describe_machine(machines[0])});
        reports[keep].name = kept_as;
        renamed.push_back(std::move(reports[keep]));
      }
    }
    i = end;
  }
  if (!renamed.empty()) {
    for (auto& r : renamed) fleet.nodes.push_back(std::move(r));
    std::stable_sort(fleet.nodes.begin(), fleet.nodes.end(), [](const NodeReport& a, const NodeReport& b) { return a.name < b.name; });
  }
  return fleet;
}

std::vector<Finding> node_names(const Fleet& fleet) {
  std::vector<Finding> out;
  for (std::size_t i = 0; i < fleet.clashes.size();) {
    std::size_t end = i;
    while (end < fleet.clashes.size() && fleet.clashes[end].name == fleet.clashes[i].name) ++end;
    const auto& c = fleet.clashes[i];
    std::string as = c.name;
    for (std::size_t j = i; j < end; ++j) as += ", " + fleet.clashes[j].kept_as;
    Finding f = make("fleet.node_names", Status::warn, c.name,
                     fmt::format("{} different machines report the node name {}: kept apart as {}, not deduplicated", end - i + 1, c.name, as));
    f.add(c.first_file, fmt::format("{} ({})", c.name, c.first_machine.empty() ? "machine not said" : c.first_machine));
    for (std::size_t j = i; j < end; ++j)
      f.add(fleet.clashes[j].file, fmt::format("{} ({})", fleet.clashes[j].kept_as, fleet.clashes[j].machine));
    f.fix = "Give each machine its own name: run `perfgap check` on the node itself (its hostname), or capture a tree with its "
            "hostname (proc/sys/kernel/hostname); a name from a folder (fsroot, a fixture) is no node's.";
    f.metric("machines", static_cast<double>(end - i + 1));
    out.push_back(std::move(f));
    i = end;
  }
  return out;
}

Finding node_failures(const Fleet& fleet) {
  const auto& nodes = fleet.nodes;
  // Nodes with the same failing ids form one evidence line: at 1,000 nodes the usual picture
  // (many nodes with the same two failures) stays a few lines.
  std::map<std::vector<std::string_view>, std::vector<std::string_view>> by_failures;
  std::map<std::string_view, std::size_t> per_id;
  std::size_t with_errors = 0;
  for (const auto& n : nodes) {
    std::vector<std::string_view> ids;
    bool error = false;
    for (const auto& f : n.findings) {
      if (f.status == Status::fail) ids.push_back(f.id);
      error |= f.status == Status::error;
    }
    with_errors += error;
    if (ids.empty()) continue;
    std::sort(ids.begin(), ids.end());
    ids.erase(std::unique(ids.begin(), ids.end()), ids.end());
    for (auto id : ids) ++per_id[id];
    by_failures[std::move(ids)].push_back(n.name);
  }
  std::size_t failing = 0;
  for (const auto& [ids, names] : by_failures) failing += names.size();

  Finding f = make("fleet.node_failures", failing ? Status::fail : Status::pass, "", "");
  if (failing) {
    std::vector<std::pair<std::string_view, std::size_t>> ranked(per_id.begin(), per_id.end());
    std::stable_sort(ranked.begin(), ranked.end(), [](auto& a, auto& b) { return a.second > b.second; });
    std::string top;
    for (std::size_t i = 0; i < ranked.size() && i < 3; ++i) top += fmt::format("{}{} ({})", i ? ", " : "", ranked[i].first, ranked[i].second);
    if (ranked.size() > 3) top += fmt::format(", {} more ids", ranked.size() - 3);
    f.title = fmt::format("{} of {} fail: {}", failing, plural(nodes.size(), "node"), top);
    std::vector<std::pair<const std::vector<std::string_view>*, const std::vector<std::string_view>*>> groups;
    groups.reserve(by_failures.size());
    for (const auto& [ids, names] : by_failures) groups.emplace_back(&ids, &names);
    std::stable_sort(groups.begin(), groups.end(), [](auto& a, auto& b) { return a.second->size() > b.second->size(); });
    for (const auto& [ids, names] : groups) {
      std::string list;
      for (auto id : *ids) list += (list.empty() ? "" : ", ") + std::string(id);
      f.add(parsers::compress_hostlist(*names), fmt::format("{} ({})", list, plural(names->size(), "node")));
    }
    f.fix = "Fix each failing check on the nodes named (perfgap check on a node shows its findings and fixes), or drain "
            "those nodes until they pass.";
  } else {
    f.title = fmt::format("no node fails ({})", plural(nodes.size(), "node"));
  }
  // Two reports of one node: say which was used, so an operator can remove the stale one.
  for (const auto& s : fleet.superseded)
    f.add(s.dropped_file, fmt::format("{} (generated {}): not used; {} has the newer report of {} (generated {})", s.node,
                                      s.dropped_generated_at.empty() ? "?" : s.dropped_generated_at, s.kept_file, s.node,
                                      s.kept_generated_at.empty() ? "?" : s.kept_generated_at));
  f.metric("nodes", static_cast<double>(nodes.size()));
  f.metric("failing_nodes", static_cast<double>(failing));
  f.metric("nodes_with_errors", static_cast<double>(with_errors));
  if (!fleet.superseded.empty()) f.metric("superseded_reports", static_cast<double>(fleet.superseded.size()));
  return f;
}

namespace {

std::string format_key(std::string_view id, std::string_view metric, std::string_view subject) {
  std::string key;
  key.reserve(id.size() + metric.size() + subject.size() + 2);
  key += id;
  key += '.';
  key += metric;
  if (!subject.empty()) {
    key += '@';
    key += subject;
  }
  return key;
}

bool node_specific(std::string_view subject) { return subject.starts_with("pid:"); }  // a process: no counterpart elsewhere

}  // namespace

std::string metric_key(const NodeFinding& f, std::string_view metric) {
  return node_specific(f.subject) ? std::string() : format_key(f.id, metric, f.subject);
}

namespace {

// A value far from the fleet's median, on the side its metric is worse (or either side, where the
// direction is not known).
struct OutlierHit {
  std::uint32_t node;
  const std::string* key;
  double value;
  Spread spread;
  std::size_t n;
  std::string_view check;  // the finding the metric is of
};

// The values far from the median whose own check passes there: said, not flagged (a node with 16
// times the fleet's /dev/shm, or deeper idle states, where the check passes, is not a problem).
Finding outliers_passing(std::vector<OutlierHit>& info, const std::vector<NodeReport>& nodes, Finding f) {
  constexpr std::size_t kShown = 20;
  std::sort(info.begin(), info.end(),
            [](const OutlierHit& a, const OutlierHit& b) { return a.node != b.node ? a.node < b.node : *a.key < *b.key; });
  for (std::size_t j = 0; j < info.size() && j < kShown; ++j) {
    const auto& h = info[j];
    f.add(*h.key, fmt::format("{}: {} (fleet median {} of {} nodes; {} passes there: information, not an outlier)", nodes[h.node].name,
                              number(h.value), number(h.spread.median), h.n, h.check));
  }
  if (info.size() > kShown)
    f.add("far where their check passes",
          fmt::format("{} more values (the JSON report's metric passing_far counts them)", info.size() - kShown));
  f.metric("passing_far", static_cast<double>(info.size()));
  return f;
}

}  // namespace

std::vector<Finding> outliers(const std::vector<NodeReport>& nodes, const OutlierRule& rule) {
  struct Sample {
    std::uint32_t node;
    double value;
    bool passes;  // the finding carrying it passes there (a verdict, not an informational summary's pass)
  };
  // Keyed by views into the node reports (id, metric, subject): no string is built per
  // sample; 10,000 nodes carry about a million of them.
  struct Key {
    std::string_view id, metric, subject;
    bool operator==(const Key&) const = default;
  };
  struct KeyHash {
    std::size_t operator()(const Key& k) const {
      std::hash<std::string_view> h;
      return h(k.id) ^ (h(k.metric) * 31) ^ (h(k.subject) * 1000003);
    }
  };
  std::unordered_map<Key, std::vector<Sample>, KeyHash> samples_of;
  for (std::uint32_t i = 0; i < nodes.size(); ++i)
    for (const auto& f : nodes[i].findings) {
      if (node_specific(f.subject)) continue;
      const bool passes = f.status == Status::pass && report::decides(f.id, f.status);
      for (const auto& [name, value] : nodes[i].metrics_of(f)) {
        if (!std::isfinite(value)) continue;
        auto& v = samples_of[Key{f.id, name, f.subject}];
        if (v.empty() || v.back().node != i) v.push_back({i, value, passes});  // a repeated finding: its first value
      }
    }
  // The printed key of each compared metric, in a stable order for the findings, with its
  // absolute floor, its direction (the one table compare and fleet.pace read) and its check.
  struct Compared {
    const std::vector<Sample>* samples;
    double floor;
    compare::Direction direction;
    std::string_view check;
  };
  std::map<std::string, Compared> by_key;
  for (const auto& [k, samples] : samples_of) {
    if (samples.size() < rule.min_nodes) continue;
    by_key.emplace(format_key(k.id, k.metric, k.subject),
                   Compared{&samples, absolute_floor(k.metric), compare::metric_direction(k.metric), k.id});
  }
  std::vector<OutlierHit> hits, info;
  std::size_t compared = by_key.size();
  std::vector<double> xs;
  for (const auto& [key, c] : by_key) {
    xs.clear();
    for (const auto& s : *c.samples) xs.push_back(s.value);
    auto sp = spread(xs);
    for (const auto& s : *c.samples) {
      if (!is_outlier(s.value, *sp, rule, c.floor)) continue;
      // Only the bad side of a metric whose direction is known: more bandwidth, less steal is no outlier.
      if ((c.direction == compare::Direction::higher_is_better && s.value > sp->median) ||
          (c.direction == compare::Direction::lower_is_better && s.value < sp->median))
        continue;
      (s.passes ? info : hits).push_back({s.node, &key, s.value, *sp, c.samples->size(), c.check});
    }
  }
  if (compared == 0)
    return {make("fleet.outliers", Status::skip, "",
                 fmt::format("no metric is reported by at least {} nodes: too few to tell an outlier ({})", rule.min_nodes,
                             plural(nodes.size(), "node")))};
  if (hits.empty()) {
    Finding f = make("fleet.outliers", Status::pass, "",
                     fmt::format("no node far from the fleet on {} (modified z-score within {:g}, {}){}", plural(compared, "metric"),
                                 rule.z_threshold, plural(nodes.size(), "node"),
                                 info.empty() ? std::string()
                                              : fmt::format("; {} far from the median where {} own check passes (information)",
                                                            plural(info.size(), "value"), info.size() == 1 ? "its" : "their")));
    f.metric("metrics_compared", static_cast<double>(compared));
    if (!info.empty()) f = outliers_passing(info, nodes, std::move(f));
    return {f};
  }
  std::sort(hits.begin(), hits.end(),
            [](const OutlierHit& a, const OutlierHit& b) { return a.node != b.node ? a.node < b.node : *a.key < *b.key; });
  std::vector<Finding> out;
  for (std::size_t i = 0; i < hits.size();) {
    std::size_t end = i;
    while (end < hits.size() && hits[end].node == hits[i].node) ++end;
    const auto& node = nodes[hits[i].node];
    std::string summary;
    for (std::size_t j = i; j < end && j < i + 2; ++j)
      summary += fmt::format("{}{} {} (fleet median {})", j > i ? ", " : "", *hits[j].key, number(hits[j].value), number(hits[j].spread.median));
    if (end - i > 2) summary += fmt::format(" and {} more", end - i - 2);
    Finding f = make("fleet.outliers", Status::warn, node.name,
                     fmt::format("{} far from the fleet: {}", plural(end - i, "metric"), summary));
    for (std::size_t j = i; j < end; ++j) {
      const auto& h = hits[j];
      auto z = modified_z(h.value, h.spread);
      f.add(*h.key, z ? fmt::format("{} (modified z {:.1f})", number(h.value), *z) : number(h.value),
            fmt::format("{} (median of {} nodes; MAD {})", number(h.spread.median), h.n, number(h.spread.mad)));
      f.metric(*h.key, h.value);
      f.metric(*h.key + ":fleet_median", h.spread.median);
    }
    f.fix = "Look at this node's own report (perfgap check on it) for the finding named in each metric; compare its "
            "hardware and settings with a node at the median.";
    out.push_back(std::move(f));
    i = end;
  }
  if (!info.empty())
    out.push_back(outliers_passing(info, nodes,
                                   make("fleet.outliers", Status::pass, "",
                                        fmt::format("{} far from the median where {} own check passes: information, not outliers",
                                                    plural(info.size(), "value"), info.size() == 1 ? "its" : "their"))));
  return out;
}

std::vector<Finding> unreadable(const std::vector<Unreadable>& inputs) {
  std::vector<Finding> out;
  out.reserve(inputs.size());
  for (const auto& u : inputs) {
    Finding f = make("fleet.unreadable", Status::error, u.file, "unusable report: " + u.why);
    f.add(u.file, u.why);
    if (u.why == kNcclTestsNoHostWhy)
      f.fix = "fleet names an nccl-tests run's nodes by the '#  Rank N Group G Pid P on HOST device D' lines nccl-tests prints at its start: "
              "give the log from its beginning (not a tail or an excerpt of the table), or rerun nccl-tests keeping its '#' header lines "
              "(no filter that drops them; srun --label and mpirun --tag-output prefixes are read), then analyze it again; the rest of the "
              "fleet was aggregated without it.";
    else if (std::string_view(u.why).starts_with(kStepsStartupOnlyWhy))
      f.fix =
          "give the node's log over steady-state steps (more iterations: past the warm-up and the loss-scale overflows of a run's start) "
          "and analyze it again (perfgap analyze steps LOG --format json); the rest of the fleet was aggregated without it.";
    else if (u.why == kNcclTestsOneRankWhy)
      f.fix = "run nccl-tests over the node's GPUs (one process with -g 8, or one rank per GPU under mpirun/srun) and analyze that "
              "run; the rest of the fleet was aggregated without it.";
    else if (u.why == kNoMeasurementWhy)
      // A well-formed analyze report of something fleet does not pace: running check again would not help.
      f.fix = "this report measures nothing fleet compares across nodes: a profile needs its iterations (profile.iterations: "
              "the job's step annotations, ProfilerStep#N or NVTX ranges, or --iteration-range when analyzing it); give fleet "
              "the nodes' nccl-tests, step-log, profile or NCCL Inspector/RAS reports instead; the rest of the fleet was "
              "aggregated without it.";
    else
      f.fix = "Run `perfgap check --format json --output FILE` on that node again (--output writes the whole report or "
              "nothing); the rest of the fleet was aggregated without it.";
    out.push_back(std::move(f));
  }
  return out;
}

const std::vector<std::string_view>& hardware_ids() {
  static const std::vector<std::string_view> ids = {"gpu.xid",  "gpu.fallen_off_bus", "gpu.nvlink_xid",           "gpu.nvswitch_sxid",
                                                    "pcie.aer", "net.link_flaps",     "net.ib.counters",      "kernel.edac",
                                                    "cpu.thermal_throttle", "kernel.soft_lockup", "kernel.hung_task",
                                                    "gpu.driver_errors", "net.nic_health", "kernel.panic"};
  return ids;
}

namespace {

bool is_hardware_id(std::string_view id) {
  const auto& ids = hardware_ids();
  return std::find(ids.begin(), ids.end(), id) != ids.end();
}

bool ran(const NodeFinding& f) { return f.status != Status::skip && f.status != Status::error; }

// Whether any report read a hardware source at all: a hardware id that ran, not only skipped
// (reports of an older perfgap hold none; a node checked without root skips them all).
bool any_hardware(const std::vector<NodeReport>& nodes) {
  for (const auto& n : nodes)
    for (const auto& f : n.findings)
      if (is_hardware_id(f.id) && ran(f)) return true;
  return false;
}

// The nodes that read none of the hardware sources: a pass says nothing of them.
std::vector<std::string_view> read_no_hardware(const std::vector<NodeReport>& nodes) {
  std::vector<std::string_view> none;
  for (const auto& n : nodes)
    if (std::none_of(n.findings.begin(), n.findings.end(), [](const NodeFinding& f) { return is_hardware_id(f.id) && ran(f); }))
      none.push_back(n.name);
  return none;
}

// Per hardware id, the nodes that did not read it (its finding absent or only skipped): the
// pass speaks only for the nodes that did.
std::vector<std::pair<std::string_view, std::vector<std::string_view>>> hardware_unread(const std::vector<NodeReport>& nodes) {
  std::vector<std::pair<std::string_view, std::vector<std::string_view>>> out;
  for (auto id : hardware_ids()) {
    std::vector<std::string_view> names;
    for (const auto& n : nodes)
      if (std::none_of(n.findings.begin(), n.findings.end(), [&](const NodeFinding& f) { return f.id == id && ran(f); })) names.push_back(n.name);
    if (!names.empty()) out.emplace_back(id, std::move(names));
  }
  return out;
}

std::string joined(const std::vector<std::string>& v, std::size_t max) {
  std::string out;
  for (std::size_t i = 0; i < v.size() && i < max; ++i) out += (i ? ", " : "") + v[i];
  if (v.size() > max) out += fmt::format(", {} more", v.size() - max);
  return out;
}

}  // namespace

std::vector<Finding> hardware(const std::vector<NodeReport>& nodes) {
  if (!any_hardware(nodes))
    return {make("fleet.hardware", Status::skip, "", fmt::format("no node read the hardware sources (kernel-log events, RDMA counters; {}): checks skipped there (no root, dmesg_restrict, no RDMA device, --skip) or reports of an older perfgap", plural(nodes.size(), "node")))};
  std::vector<Finding> out;
  for (auto id : hardware_ids()) {
    // (status, devices) -> nodes
    std::map<std::pair<int, std::string>, std::vector<std::string_view>> groups;
    std::size_t failing = 0, warning = 0;
    for (const auto& n : nodes) {
      Status worst = Status::pass;
      std::vector<std::string> subjects;
      for (const auto& f : n.findings) {
        if (f.id != id || (f.status != Status::fail && f.status != Status::warn)) continue;
        if (f.status == Status::fail) worst = Status::fail;
        else if (worst != Status::fail) worst = Status::warn;
        if (!f.subject.empty()) subjects.push_back(f.subject);
      }
      if (worst == Status::pass) continue;
      (worst == Status::fail ? failing : warning) += 1;
      std::sort(subjects.begin(), subjects.end());
      subjects.erase(std::unique(subjects.begin(), subjects.end()), subjects.end());
      groups[{worst == Status::fail ? 0 : 1, joined(subjects, 8)}].push_back(n.name);
    }
    if (groups.empty()) continue;
    auto f = make("fleet.hardware", failing ? Status::fail : Status::warn, std::string(id),
                  fmt::format("{}: {} ({} failing, {} warning)", id, plural(failing + warning, "node"), failing, warning));
    for (const auto& [key, names] : groups)
      f.add(parsers::compress_hostlist(names), fmt::format("{}{}{}", key.first == 0 ? "fail" : "warn", key.second.empty() ? "" : ": ", key.second));
    f.metric("failing_nodes", static_cast<double>(failing));
    f.metric("warning_nodes", static_cast<double>(warning));
    f.fix = fmt::format("perfgap check --only {} on a node named shows its devices, lines and fix; fleet.drain names the nodes to take out.", id);
    out.push_back(std::move(f));
  }
  if (out.empty()) {
    const auto unread = hardware_unread(nodes);
    auto f = make("fleet.hardware", Status::pass, "", fmt::format("no node reports hardware events or RDMA port errors ({})", plural(nodes.size(), "node")));
    const auto none = read_no_hardware(nodes);
    if (!none.empty())
      f.title = fmt::format("no hardware events or RDMA port errors on the {} that read them; {} read none: {}",
                            plural(nodes.size() - none.size(), "node"), plural(none.size(), "node"), parsers::compress_hostlist(none));
    for (const auto& [id, names] : unread)
      f.add(std::string(id), fmt::format("not read on {} (skipped there): {}", plural(names.size(), "node"), parsers::compress_hostlist(names)));
    out.push_back(std::move(f));
  }
  return out;
}

namespace {
// Missing or degraded hardware against the node's kind (fleet --expect) drains as a hardware event does.
bool drains(std::string_view id) { return is_hardware_id(id) || id == "expect.counts" || id == "expect.links" || id == "expect.placement"; }
}  // namespace

Finding drain(const std::vector<NodeReport>& nodes) {
  if (!any_hardware(nodes) && std::none_of(nodes.begin(), nodes.end(), [](const NodeReport& n) {
        return std::any_of(n.findings.begin(), n.findings.end(), [](const NodeFinding& f) { return drains(f.id) && ran(f); });
      })) return make("fleet.drain", Status::skip, "", "no node read the hardware sources (every hardware check skipped or absent): nothing to decide a drain on");
  std::map<std::string, std::vector<std::string_view>> by_reasons;
  std::size_t count = 0;
  for (const auto& n : nodes) {
    std::vector<std::string> reasons;
    for (const auto& f : n.findings)
      if (f.status == Status::fail && drains(f.id)) reasons.push_back(f.subject.empty() ? std::string(f.id) : fmt::format("{}@{}", f.id, f.subject));
    if (reasons.empty()) continue;
    std::sort(reasons.begin(), reasons.end());
    reasons.erase(std::unique(reasons.begin(), reasons.end()), reasons.end());
    by_reasons[joined(reasons, 8)].push_back(n.name);
    ++count;
  }
  if (!count) {
    // Judged: a node where something a drain is decided on ran (a hardware check or an
    // expectation of its kind's hardware).
    std::vector<std::string_view> none;
    for (const auto& n : nodes)
      if (std::none_of(n.findings.begin(), n.findings.end(), [](const NodeFinding& f) { return drains(f.id) && ran(f); })) none.push_back(n.name);
    if (none.empty()) return make("fleet.drain", Status::pass, "", fmt::format("no node to drain for hardware ({})", plural(nodes.size(), "node")));
    return make("fleet.drain", Status::pass, "",
                fmt::format("no node to drain for hardware among the {} judged; {} read no hardware source (not judged): {}",
                            plural(nodes.size() - none.size(), "node"), plural(none.size(), "node"), parsers::compress_hostlist(none)));
  }
  std::vector<std::string_view> all;
  for (const auto& [reasons, names] : by_reasons) all.insert(all.end(), names.begin(), names.end());
  std::sort(all.begin(), all.end());
  const auto list = parsers::compress_hostlist(all);
  auto f = make("fleet.drain", Status::fail, "", fmt::format("drain {}: {}", plural(count, "node"), list));
  for (const auto& [reasons, names] : by_reasons) f.add(parsers::compress_hostlist(names), reasons);
  f.metric("nodes_to_drain", static_cast<double>(count));
  f.fix = fmt::format("scontrol update nodename={} state=drain reason=\"perfgap: hardware\" (or let perfgap health drain them: docs/SLURM.md), then service each as its node report says.", list);
  f.impact = "A job placed on one of these nodes fails or runs at the pace of its failing GPU or rail.";
  return f;
}

report::Chart status_heatmap(const Fleet& fleet) {
  report::Chart c;
  c.kind = report::Chart::Kind::heatmap;
  // Columns: every id, the ones failing on most nodes first, then by name.
  std::map<std::string_view, std::size_t> failing;
  for (const auto& n : fleet.nodes) {
    std::set<std::string_view> seen;
    for (const auto& f : n.findings) {
      failing.try_emplace(f.id, 0);
      if (f.status == Status::fail && seen.insert(f.id).second) ++failing[f.id];
    }
  }
  std::vector<std::string_view> ids;
  ids.reserve(failing.size());
  for (const auto& [id, k] : failing) ids.push_back(id);
  std::stable_sort(ids.begin(), ids.end(), [&](std::string_view a, std::string_view b) { return failing[a] > failing[b]; });
  std::map<std::string_view, std::size_t> column;
  for (std::size_t j = 0; j < ids.size(); ++j) {
    column[ids[j]] = j;
    c.columns.emplace_back(ids[j]);
  }
  // Rows: one per failing set (the ids a node fails or errors on), not one per node, so that
  // 10,000 nodes are as many rows as there are distinct troubles; each cell is the worst
  // status of that id over the row's nodes.
  struct Group {
    std::vector<std::string_view> names;
    std::vector<std::optional<Status>> cells;
  };
  std::map<std::vector<std::size_t>, Group> groups;
  for (const auto& n : fleet.nodes) {
    std::vector<std::size_t> failing_set;
    for (const auto& f : n.findings)
      if (f.status == Status::fail || f.status == Status::error) failing_set.push_back(column[f.id]);
    std::sort(failing_set.begin(), failing_set.end());
    failing_set.erase(std::unique(failing_set.begin(), failing_set.end()), failing_set.end());
    auto& g = groups[failing_set];
    if (g.cells.empty()) g.cells.resize(ids.size());
    g.names.push_back(n.name);
    for (const auto& f : n.findings) {
      auto& cell = g.cells[column[f.id]];
      if (!cell || report::severity(f.status) > report::severity(*cell)) cell = f.status;
    }
  }
  std::vector<std::pair<const std::vector<std::size_t>*, Group*>> order;
  order.reserve(groups.size());
  for (auto& [set, g] : groups) order.emplace_back(&set, &g);
  // The most failing ids first, then the largest group; the healthy row (no failing id) last.
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) {
    if (a.first->size() != b.first->size()) return a.first->size() > b.first->size();
    return a.second->names.size() > b.second->names.size();
  });
  for (auto& [set, g] : order) {
    const std::string list = parsers::compress_hostlist(g->names);
    c.rows.push_back(g->names.size() == 1 ? list : fmt::format("{} nodes: {}", g->names.size(), list));
    c.cells.push_back(std::move(g->cells));
  }
  c.title = fmt::format("checks by node ({} in {}): the worst status of each check", plural(fleet.nodes.size(), "node"),
                        plural(c.rows.size(), "group"));
  return c;
}

std::vector<report::NodeStanding> node_standings(const Fleet& fleet) {
  std::vector<report::NodeStanding> out;
  out.reserve(fleet.nodes.size());
  for (const auto& n : fleet.nodes) {
    report::NodeStanding s;
    s.name = n.name;
    for (const auto& f : n.findings) {
      if (f.status == Status::fail || f.status == Status::error) s.failing.emplace_back(f.id);
      else if (f.status == Status::warn) s.warning.emplace_back(f.id);
      if (f.status != Status::skip && report::severity(f.status) > report::severity(s.worst)) s.worst = f.status;
      ++(report::decides(f.id, f.status) ? s.decided : s.skipped);  // an informational summary's pass examined nothing
    }
    for (auto* v : {&s.failing, &s.warning}) {
      std::sort(v->begin(), v->end());
      v->erase(std::unique(v->begin(), v->end()), v->end());
    }
    out.push_back(std::move(s));
  }
  // The worst first: fail, error, warn, then pass; more failing ids, then more warnings, then by name.
  std::stable_sort(out.begin(), out.end(), [](const report::NodeStanding& a, const report::NodeStanding& b) {
    if (report::severity(a.worst) != report::severity(b.worst)) return report::severity(a.worst) > report::severity(b.worst);
    if (a.failing.size() != b.failing.size()) return a.failing.size() > b.failing.size();
    return a.warning.size() > b.warning.size();
  });
  return out;
}

std::vector<Finding> aggregate(const Fleet& fleet, const std::vector<Unreadable>& bad, const OutlierRule& rule) {
  std::vector<Finding> out;
  out.push_back(node_failures(fleet));
  for (auto& f : node_names(fleet)) out.push_back(std::move(f));
  for (auto& f : hardware(fleet.nodes)) out.push_back(std::move(f));
  out.push_back(drain(fleet.nodes));
  for (auto& f : drift(fleet.nodes)) out.push_back(std::move(f));
  for (auto& f : outliers(fleet.nodes, rule)) out.push_back(std::move(f));
  for (auto& f : unreadable(bad)) out.push_back(std::move(f));
  return out;
}

}  // namespace perfgap::fleet
