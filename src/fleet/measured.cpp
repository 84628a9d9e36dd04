#include "fleet/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>

#include "parsers/hostlist.hpp"

namespace perfgap::fleet {
namespace {

// A node's measured figures, per measure.
struct PaceNode {
  std::vector<double> values;
  std::vector<std::string> files;
};

std::string measured_stem(const std::string& path) {
  std::string_view base = path;
  if (auto slash = base.rfind('/'); slash != std::string_view::npos) base.remove_prefix(slash + 1);
  if (auto dot = base.find('.'); dot != std::string_view::npos && dot > 0) base = base.substr(0, dot);
  return std::string(base);
}

std::string pace_value(double v) { return std::fabs(v) >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.2f}", v); }

// Every setting of a check report that the join compares: name -> value ("(unset)" for an
// NCCL_/UCX_ variable not set; settings not read there are left out).
std::map<std::string, std::string> pace_config(const NodeReport& n, const std::set<std::string>& variables) {
  std::map<std::string, std::string> out;
  if (!n.kernel.empty()) out["kernel"] = n.kernel;
  for (const auto& [k, v] : n.settings)
    if (v != report::kSettingUnknown) out["settings." + k] = v;
  for (const auto& var : variables) {
    auto it = n.environment.find(var);
    out["environment." + var] = it == n.environment.end() ? "(unset)" : it->second;
  }
  for (const auto& [k, v] : n.nccl_conf) out["nccl_conf." + k] = v;
  for (const auto& f : n.findings)
    if (f.status == report::Status::fail) out["fails " + std::string(f.id)] = "yes";
  return out;
}

// What every outlier has and no other node with a check report has: "environment.NCCL_X unset".
std::vector<std::string> pace_shared_configuration(const std::vector<std::string>& outliers, const std::vector<std::string>& others,
                                              const std::vector<NodeReport>& nodes) {
  std::map<std::string, const NodeReport*> by_name;
  for (const auto& n : nodes) by_name.emplace(std::string(short_node_name(n.name)), &n);
  std::set<std::string> variables;
  for (const auto& n : nodes)
    for (const auto& [k, v] : n.environment) variables.insert(k);
  std::vector<std::map<std::string, std::string>> in, out;
  for (const auto& o : outliers) {
    auto it = by_name.find(o);
    if (it == by_name.end()) return {};  // an outlier without a check report: nothing can be said
    in.push_back(pace_config(*it->second, variables));
  }
  for (const auto& o : others)
    if (auto it = by_name.find(o); it != by_name.end()) out.push_back(pace_config(*it->second, variables));
  std::vector<std::string> shared;
  if (in.empty() || out.empty()) return shared;
  for (const auto& kv : in.front()) {
    const std::string& key = kv.first;  // plain references: lambdas capture them (clang 14 cannot capture a binding)
    const std::string& value = kv.second;
    bool all = std::all_of(in.begin(), in.end(), [&](const auto& c) {
      auto it = c.find(key);
      return it != c.end() && it->second == value;
    });
    bool none = std::none_of(out.begin(), out.end(), [&](const auto& c) {
      auto it = c.find(key);
      return it != c.end() && it->second == value;
    });
    if (!all || !none) continue;
    if (key.starts_with("fails ")) shared.push_back(key);
    else if (value == "(unset)") shared.push_back(key.substr(key.find('.') + 1) + " unset");
    else shared.push_back(key + "=" + value);
  }
  return shared;
}

}  // namespace

const std::vector<Measure>& measures() {
  static const std::vector<Measure> m = {
      {"nccl_tests.busbw", "max_busbw_gbps", "peak busbw", "GB/s", true},
      {"steps.gap", "median_ms", "step time", "ms", false},
      {"steps.gap", "median_throughput", "throughput", "/s", true},
      {"profile.iterations", "iteration_ms", "iteration time", "ms", false},
  };
  return m;
}

std::string_view short_node_name(std::string_view name) {
  auto dot = name.find('.');
  return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

std::vector<report::Finding> pace(const std::vector<NodeReport>& measured, const std::vector<NodeReport>& nodes,
                                  const OutlierRule& rule, std::vector<Unreadable>& bad) {
  const auto& ms = measures();
  std::vector<std::map<std::string, PaceNode>> per(ms.size());
  for (const auto& r : measured) {
    bool any = false;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      for (const auto& f : r.findings) {
        if (f.id != ms[i].finding) continue;
        std::optional<double> value;
        for (const auto& m : r.metrics_of(f))
          if (m.name == ms[i].metric) value = m.value;
        if (!value) continue;
        std::vector<std::string> names;
        if (f.id == "nccl_tests.busbw") {
          if (r.hosts.empty()) {
            bad.push_back({r.file, "an nccl-tests measurement whose log shows no host (no '#  Rank N ... on HOST' line for every "
                                   "rank): the node is unknown"});
            any = true;  // named as unreadable, not twice
            continue;
          }
          for (const auto& h : r.hosts) names.emplace_back(short_node_name(h));
        } else {
          names.push_back(measured_stem(f.subject.empty() ? r.file : f.subject));
        }
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        for (const auto& n : names) {
          per[i][n].values.push_back(*value);
          per[i][n].files.push_back(r.file);
        }
        any = true;
      }
    }
    if (!any)
      bad.push_back({r.file, "an analyze report with no per-node measurement (fleet reads analyze nccl-tests, steps, nsys and "
                             "kineto reports: nccl_tests.busbw, steps.gap, profile.iterations)"});
  }

  std::vector<report::Finding> out;
  for (std::size_t i = 0; i < ms.size(); ++i) {
    if (per[i].empty()) continue;
    const auto& m = ms[i];
    report::Finding f;
    f.id = "fleet.pace";
    f.layer = "fleet";
    f.subject = fmt::format("{}.{}", m.finding, m.metric);
    std::vector<std::pair<std::string, double>> figures;  // node, its figure (median of its runs)
    std::vector<double> values;
    for (const auto& [node, pn] : per[i]) {
      double v = *median(pn.values);
      figures.emplace_back(node, v);
      values.push_back(v);
    }
    // Worst first: the pace is the first.
    std::stable_sort(figures.begin(), figures.end(),
                     [&](const auto& a, const auto& b) { return m.higher_is_better ? a.second < b.second : a.second > b.second; });
    const auto s = *spread(values);
    const auto& [pace_node, pace_fig] = figures.front();
    const double cost = s.median != 0 ? (m.higher_is_better ? 1 - pace_fig / s.median : pace_fig / s.median - 1) : 0;
    std::vector<std::string> outliers, others;
    for (const auto& [node, v] : figures) {
      bool worse = m.higher_is_better ? v < s.median : v > s.median;
      (values.size() >= rule.min_nodes && worse && is_outlier(v, s, rule) ? outliers : others).push_back(node);
    }
    f.metric("nodes", static_cast<double>(figures.size()));
    f.metric("median", s.median);
    f.metric("mad", s.mad);
    f.metric("pace", pace_fig);
    f.metric("pace_cost_pct", 100 * std::max(0.0, cost));
    f.metric("outliers", static_cast<double>(outliers.size()));
    const std::string pace_line = fmt::format("{} sets the pace: {} {} {} against the fleet's median {} ({:.1f}% {})", pace_node, m.what,
                                              pace_value(pace_fig), m.unit, pace_value(s.median), 100 * std::fabs(cost),
                                              (cost >= 0) == m.higher_is_better ? "below" : "above");
    if (values.size() < rule.min_nodes) {
      f.status = report::Status::skip;
      f.title = fmt::format("{} node{} measured ({} {}): at least {} are needed to judge outliers; {}", figures.size(),
                            figures.size() == 1 ? "" : "s", m.finding, m.metric, rule.min_nodes, pace_line);
    } else if (outliers.empty()) {
      f.status = report::Status::pass;
      f.title = fmt::format("no {} outlier among {} nodes; {}", m.what, figures.size(), pace_line);
    } else {
      f.status = report::Status::warn;
      std::vector<std::string_view> views(outliers.begin(), outliers.end());
      auto shared = pace_shared_configuration(outliers, others, nodes);
      const std::string list = parsers::compress_hostlist(views);
      std::string who = m.higher_is_better
                            ? (outliers.size() == 1 ? fmt::format("the node of lowest {} ({})", m.what, list)
                                                    : fmt::format("the {} nodes of lowest {} ({})", outliers.size(), m.what, list))
                            : (outliers.size() == 1 ? fmt::format("the slowest node ({})", list)
                                                    : fmt::format("the {} slowest nodes ({})", outliers.size(), list));
      f.title = shared.empty() ? fmt::format("{} {} far from the fleet's {} (median/MAD); {}", who,
                                             outliers.size() == 1 ? "is" : "are", m.what, pace_line)
                               : fmt::format("{} {} the {} with {}; {}", who, outliers.size() == 1 ? "is" : "are",
                                             outliers.size() == 1 ? "one" : std::to_string(outliers.size()),
                                             fmt::join(shared, ", "), pace_line);
      for (const auto& sh : shared) f.add("check reports", fmt::format("{}: on every outlier, on no other node", sh));
      f.fix = "compare the outliers' configuration with the others' (perfgap fleet over their check reports: fleet.drift), "
              "run perfgap fanout --pairs to confirm a slow node or link, and take it out of the job";
    }
    for (const auto& [node, v] : figures) {
      bool is_out = std::find(outliers.begin(), outliers.end(), node) != outliers.end();
      if (!is_out && node != pace_node) continue;
      auto z = modified_z(v, s);
      const auto& files = per[i][node].files;
      f.add(files.front(), fmt::format("{}: {} {} {}{}{}", node, m.what, pace_value(v), m.unit,
                                       z ? fmt::format(" (modified z {:.1f})", *z) : std::string(),
                                       files.size() > 1 ? fmt::format(", median of {} runs", files.size()) : std::string()),
            fmt::format("near the median {} {}", pace_value(s.median), m.unit));
      f.metric("node." + node, v);
    }
    f.table.push_back({"node", fmt::format("{} {}", m.what, m.unit), "runs"});
    for (std::size_t k = 0; k < figures.size() && k < 10; ++k)
      f.table.push_back({figures[k].first, pace_value(figures[k].second), std::to_string(per[i][figures[k].first].values.size())});
    f.table_always = true;
    out.push_back(std::move(f));
  }
  return out;
}

}  // namespace perfgap::fleet
