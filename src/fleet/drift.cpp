// fleet.drift: the kernel, node settings and NCCL_/UCX_ variables that differ across the nodes,
// each value with its nodes; for a setting a node check judges (kSettingJudges), how each value's
// nodes stand on it, so that a node whose check passes is never told to change.
#include "fleet/aggregate.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <string_view>
#include <unordered_map>
#include <utility>

#include "parsers/hostlist.hpp"

namespace perfgap::fleet {
namespace {

using report::Finding;
using report::Status;

Finding drift_make(Status s, std::string subject, std::string title) {
  Finding f;
  f.id = "fleet.drift";
  f.layer = "fleet";
  f.status = s;
  f.subject = std::move(subject);
  f.title = std::move(title);
  return f;
}

std::string drift_plural(std::size_t n, std::string_view word) { return fmt::format("{} {}{}", n, word, n == 1 ? "" : "s"); }

}  // namespace

namespace {
// fleet.drift's pass names only what was compared: a kernel no node reported, or NCCL_/UCX_
// variables no node's environment held, match nothing (nodes checked without their job's
// environment, or reports whose kernel was not read).
template <class Values>
Finding drift_pass(bool kernel, const Values& values, std::size_t nodes) {
  std::size_t settings = 0, variables = 0;
  for (const auto& [key, by_value] : values) {
    if (key.first == 1) ++settings;
    if (key.first >= 2) ++variables;
  }
  std::vector<std::string> compared, not_compared;
  (kernel ? compared : not_compared).emplace_back("the kernel");
  (settings ? compared : not_compared).push_back(settings ? drift_plural(settings, "setting") : "settings");
  (variables ? compared : not_compared).push_back(variables ? drift_plural(variables, "NCCL_/UCX_ variable") : "NCCL_/UCX_ variables");
  if (compared.empty())
    return drift_make(
        Status::skip, "",
        fmt::format("no node reported its kernel, settings or NCCL_/UCX_ variables: nothing to compare ({})", drift_plural(nodes, "node")));
  Finding f = drift_make(Status::pass, "", fmt::format("{} match on all {}", fmt::join(compared, ", "), drift_plural(nodes, "node")));
  if (!not_compared.empty())
    f.add("not compared",
          fmt::format("{}: no node reported them (not read there, or none set in the environment checked)", fmt::join(not_compared, ", ")));
  f.metric("settings_compared", static_cast<double>(values.size()));
  return f;
}

// The node check that judges each setting of node.settings: where a node's value fails its
// check and another value passes it, the fleet's most common value is not what to aim for.
constexpr std::pair<std::string_view, std::string_view> kSettingJudges[] = {
    {"governor", "cpu.governor"},         {"turbo", "cpu.turbo"},           {"deepest_idle_state", "cpu.cstate.deep_idle"},
    {"idle_driver", "cpu.cstate.deep_idle"}, {"page_size_kb", "mem.page_size"}, {"iommu_mode", "iommu.dma_mode"},
    {"numa_balancing", "numa.balancing"}, {"nccl_topo_file", "nccl.topo_file"},
};

std::string_view setting_judge(std::string_view setting) {
  for (const auto& [name, check] : kSettingJudges)
    if (name == setting) return check;
  return {};
}

// How a value's nodes stand on the check judging it: pass when every node that ran the check
// passed it, fail when every one warned or failed, mixed when some did each (the value passes
// somewhere, so it is not what fails the others), unjudged when none ran it (not run, skipped).
enum class Judged { unjudged, pass, fail, mixed };
struct Standing {
  Judged verdict = Judged::unjudged;
  std::size_t passing = 0;
  std::vector<std::string_view> failing;  // the nodes that warned or failed it
};
Standing judged_by(std::string_view check, const std::vector<std::uint32_t>& idx, const std::vector<NodeReport>& nodes) {
  Standing st;
  for (auto i : idx) {
    std::optional<Status> worst;
    for (const auto& f : nodes[i].findings)
      if (f.id == check && f.status != Status::skip && f.status != Status::error &&
          (!worst || report::severity(f.status) > report::severity(*worst)))
        worst = f.status;
    if (!worst) continue;
    if (*worst == Status::pass) ++st.passing;
    else st.failing.push_back(nodes[i].name);
  }
  if (st.passing > 0) st.verdict = st.failing.empty() ? Judged::pass : Judged::mixed;
  else if (!st.failing.empty()) st.verdict = Judged::fail;
  return st;
}

// One setting's values, most common first, each with its nodes and how they stand on its check.
struct DriftValue {
  std::string value;
  std::vector<std::uint32_t> nodes;
  Standing standing;
};

// "C2, C6, C3 and 2 more": values named in a title or expected line.
std::string drift_value_names(const std::vector<const DriftValue*>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size() && k < 4; ++k) out += (k ? ", " : "") + values[k]->value;
  if (values.size() > 4) out += fmt::format(" and {} more", values.size() - 4);
  return out;
}

// "C1 on 1 node, NHM-C3 on 1 node"
std::string drift_value_counts(const std::vector<const DriftValue*>& values) {
  std::string out;
  for (std::size_t k = 0; k < values.size() && k < 4; ++k)
    out += fmt::format("{}{} on {}", k ? ", " : "", values[k]->value, drift_plural(values[k]->nodes.size(), "node"));
  if (values.size() > 4) out += fmt::format(" and {} more", values.size() - 4);
  return out;
}

// A setting whose check several values pass (a fleet of different machines: intel_idle and
// acpi_idle, C2 and C6): a node is never told to change a value its check passes; only the values
// it warns or fails on everywhere are drift, their expected any value it passes with. The title,
// status, fix and count of nodes to change are set here; the evidence lines by the caller.
void drift_judged_many(Finding& f, std::string_view judge, const std::vector<DriftValue>& values, std::size_t compared) {
  std::vector<const DriftValue*> passing, failing, unjudged;
  std::vector<std::string_view> fail_nodes;
  std::size_t unjudged_nodes = 0;
  for (const auto& v : values) {
    if (v.standing.verdict == Judged::pass || v.standing.verdict == Judged::mixed) passing.push_back(&v);
    else if (v.standing.verdict == Judged::fail) failing.push_back(&v);
    else unjudged.push_back(&v);
    if (v.standing.verdict == Judged::unjudged) unjudged_nodes += v.nodes.size();
    if (v.standing.verdict == Judged::fail) fail_nodes.insert(fail_nodes.end(), v.standing.failing.begin(), v.standing.failing.end());
  }
  const std::string passes_with = drift_value_names(passing);
  if (!failing.empty()) {
    f.status = Status::warn;
    f.title = fmt::format("{} of {} {} a value {} warns or fails on ({}); it passes with {} ({} values)", fail_nodes.size(),
                          drift_plural(compared, "node"), fail_nodes.size() == 1 ? "has" : "have", judge, drift_value_counts(failing),
                          passes_with, values.size());
    std::sort(fail_nodes.begin(), fail_nodes.end());
    f.fix = fmt::format(
        "On the nodes where {} warns or fails with their value ({}), apply {}'s fix (perfgap check on one of them shows it); "
        "it passes with {} on the other nodes, which need no change for it.",
        judge, parsers::compress_hostlist(fail_nodes), judge, passes_with);
  } else if (!unjudged.empty()) {
    f.status = Status::warn;
    f.title = fmt::format("{} values across {}: {} passes with {}, and did not judge {} ({}): those nodes' value is not known to be right",
                          values.size(), drift_plural(compared, "node"), judge, passes_with, drift_value_names(unjudged),
                          drift_plural(unjudged_nodes, "node"));
    f.fix = fmt::format(
        "Run perfgap check on the nodes of {} to see why {} did not judge them there; the nodes where it passes need no change for it.",
        drift_value_names(unjudged), judge);
  } else {
    f.status = Status::pass;
    f.title = fmt::format("{} values across {}, and {} passes with each where it ran ({}): the machines differ, no node needs to change it",
                          values.size(), drift_plural(compared, "node"), judge, passes_with);
  }
  f.metric("nodes_off_majority", static_cast<double>(fail_nodes.size()));
}

// The evidence line of one value: its nodes, how they stand on the check judging it.
std::string drift_value_line(const DriftValue& v, std::string_view judge, const std::vector<NodeReport>& nodes) {
  std::vector<std::string_view> names;
  names.reserve(v.nodes.size());
  for (auto i : v.nodes) names.push_back(nodes[i].name);
  std::string observed = fmt::format("{} on {}: {}", v.value, drift_plural(names.size(), "node"), parsers::compress_hostlist(names));
  switch (v.standing.verdict) {
    case Judged::pass: observed += fmt::format(" ({} passes there)", judge); break;
    case Judged::fail: observed += fmt::format(" ({} warns or fails there)", judge); break;
    case Judged::mixed:
      observed += fmt::format(" ({} passes on {} of them, warns or fails on {})", judge, v.standing.passing,
                              parsers::compress_hostlist(v.standing.failing));
      break;
    case Judged::unjudged: break;
  }
  return observed;
}
}  // namespace

std::vector<Finding> drift(const std::vector<NodeReport>& nodes) {
  if (nodes.size() < 2)
    return {drift_make(Status::skip, "", fmt::format("{}: no other node to compare settings with", drift_plural(nodes.size(), "node")))};
  // (section, name) -> value -> node indices. Sections in report order: kernel, settings,
  // environment, nccl_conf.
  using Key = std::pair<int, std::string_view>;
  std::map<Key, std::unordered_map<std::string_view, std::vector<std::uint32_t>>> values;
  for (std::uint32_t i = 0; i < nodes.size(); ++i) {
    const auto& n = nodes[i];
    if (!n.kernel.empty()) values[{0, "kernel"}][n.kernel].push_back(i);
    for (const auto& [k, v] : n.settings)
      if (v != report::kSettingUnknown) values[{1, k}][v].push_back(i);
    for (const auto& [k, v] : n.environment) values[{2, k}][v].push_back(i);
    for (const auto& [k, v] : n.nccl_conf) values[{3, k}][v].push_back(i);
  }
  static constexpr const char* kSection[] = {"", "settings.", "environment.", "nccl_conf."};
  static constexpr const char* kSource[] = {"node.kernel", "node.settings.", "node.environment.", "node.nccl_conf."};
  std::vector<Finding> out;
  for (const auto& [key, by_value] : values) {
    std::vector<DriftValue> groups;
    std::size_t present = 0;
    for (const auto& [v, idx] : by_value) {
      present += idx.size();
      groups.push_back({v.empty() ? "(empty)" : std::string(v), idx, {}});
    }
    // Nodes without the entry: for a variable, unset there (NCCL's default applies), which is
    // a value of its own; for the kernel or a setting, not readable there, which says nothing
    // about drift and is only listed when the others differ.
    const bool unset_is_value = key.first >= 2;
    std::vector<std::uint32_t> missing;
    if (present < nodes.size()) {
      std::vector<bool> has(nodes.size(), false);
      for (const auto& [v, idx] : by_value)
        for (auto i : idx) has[i] = true;
      for (std::uint32_t i = 0; i < nodes.size(); ++i)
        if (!has[i]) missing.push_back(i);
      if (unset_is_value) groups.push_back({"(unset)", std::exchange(missing, {}), {}});
    }
    if (groups.size() < 2) continue;
    std::sort(groups.begin(), groups.end(), [](const auto& a, const auto& b) {
      return a.nodes.size() != b.nodes.size() ? a.nodes.size() > b.nodes.size() : a.value < b.value;
    });
    // How each value's nodes stand on the node check judging the setting, where one does.
    const std::string_view judge = key.first == 1 ? setting_judge(key.second) : std::string_view();
    std::size_t passing_values = 0;
    bool any_judged = false;
    if (!judge.empty())
      for (auto& g : groups) {
        g.standing = judged_by(judge, g.nodes, nodes);
        any_judged |= g.standing.verdict != Judged::unjudged;
        passing_values += g.standing.verdict == Judged::pass || g.standing.verdict == Judged::mixed;
      }
    // The values its check passes with first (most common first), then the others.
    if (any_judged)
      std::stable_partition(groups.begin(), groups.end(),
                            [](const DriftValue& g) { return g.standing.verdict == Judged::pass || g.standing.verdict == Judged::mixed; });
    const bool many_pass = passing_values > 1;
    // One value to aim for: the only one its check passes with (the fleet mostly wrong: it comes
    // first even where another is more common), else, unjudged, the most common one; a tie is
    // none, and a value its check fails is never one.
    const bool judged_first = passing_values == 1 && std::any_of(groups.begin() + 1, groups.end(),
                                                                 [](const DriftValue& g) { return g.standing.verdict == Judged::fail; });
    std::size_t most = 0;
    for (std::size_t g = 1; g < groups.size(); ++g) most = std::max(most, groups[g].nodes.size());
    const bool majority = groups[0].nodes.size() > most;
    const bool aimed = !many_pass && groups[0].standing.verdict != Judged::fail && (majority || passing_values == 1);
    const std::string subject = kSection[key.first] + std::string(key.second);
    const std::string source = key.first == 0 ? kSource[0] : kSource[key.first] + std::string(key.second);
    std::size_t compared = 0;
    for (const auto& g : groups) compared += g.nodes.size();
    std::size_t off = compared - groups[0].nodes.size();
    Finding f = drift_make(Status::warn, subject, "");
    f.metric("values", static_cast<double>(groups.size()));
    if (many_pass) {
      drift_judged_many(f, judge, groups, compared);
    } else if (aimed && !majority) {
      f.title = fmt::format("{} of {} differ from {}, the value {} passes on {} ({} values)", off, drift_plural(compared, "node"),
                            groups[0].value, judge, drift_plural(groups[0].nodes.size(), "node"), groups.size());
    } else if (aimed) {
      f.title = fmt::format("{} of {} differ from the most common value {} ({} values)", off, drift_plural(compared, "node"),
                            groups[0].value, groups.size());
    } else {
      f.title = fmt::format("{} values, none more common than the others across the {}", groups.size(), drift_plural(compared, "node"));
    }
    // Every node of a value its check passes with is left alone; the other values' lines say
    // what to aim for: the one value, or any value the check passes with.
    std::vector<const DriftValue*> passing;
    for (const auto& g : groups)
      if (g.standing.verdict == Judged::pass || g.standing.verdict == Judged::mixed) passing.push_back(&g);
    for (std::size_t g = 0; g < groups.size(); ++g) {
      std::string observed = drift_value_line(groups[g], judge, nodes);
      const Judged v = groups[g].standing.verdict;
      if (g > 0 && aimed && v != Judged::pass && v != Judged::mixed) f.add(source, std::move(observed), groups[0].value);
      else if (many_pass && v == Judged::fail)
        f.add(source, std::move(observed), fmt::format("a value {} passes with (here: {})", judge, drift_value_names(passing)));
      else f.add(source, std::move(observed));
    }
    if (!missing.empty()) {
      std::vector<std::string_view> names;
      names.reserve(missing.size());
      for (auto i : missing) names.push_back(nodes[i].name);
      f.add(source, fmt::format("not reported by {} (not readable there; not compared): {}", drift_plural(names.size(), "node"),
                                parsers::compress_hostlist(names)));
    }
    if (!many_pass) {
      f.fix =
          "Make the setting the same on every node: the kernel and driver through the node image, NCCL_/UCX_ variables "
          "in the job environment or /etc/nccl.conf, CPU and IOMMU settings as the node checks' fixes say.";
      if (judged_first)
        f.fix = fmt::format("Set {} to {} on the other nodes, the value {} passes with (perfgap check on one of them shows {}'s fix).",
                            subject, groups[0].value, judge, judge);
      f.metric("nodes_off_majority", static_cast<double>(aimed ? off : compared));
    }
    if (f.status != Status::pass)
      f.impact = "Nodes that differ run collectives and steps at different speeds; the slowest sets the pace of the job.";
    out.push_back(std::move(f));
  }
  if (out.empty()) out.push_back(drift_pass(values.count({0, "kernel"}) > 0, values, nodes.size()));
  return out;
}

}  // namespace perfgap::fleet
