// The measured aspect of expectations (expect.hpp): nccl-tests and probe figures given beside the
// check reports, joined to the nodes they name, and learned as floors from the kind's spread.
#include <algorithm>
#include <cmath>
#include <cstdio>
#include <set>

#include <fmt/format.h>

#include "fleet/expect.hpp"
#include "fleet/measured.hpp"
#include "fleet/stats.hpp"
#include "sys/text.hpp"

namespace perfgap::fleet {

namespace {

// "all_reduce_perf on 16 ranks, 2 nodes: peak busbw ..." -> "all_reduce_perf 16 ranks 2 nodes":
// a bus bandwidth means nothing without the collective and the scale it ran at.
std::string run_scale(const report::Finding& f) {
  // Without the collective's name in the log (nccl-tests prints it only where the launcher
  // echoes the command) the title says "nccl-tests": the key is then the scale alone.
  auto on = f.title.find(" on ");
  std::string out = on == std::string::npos || f.title.rfind("nccl-tests on ", 0) == 0 ? std::string() : " " + f.title.substr(0, on);
  if (auto r = metric_of(f, "ranks")) out += fmt::format(" {} ranks", static_cast<long long>(*r));
  if (auto n = metric_of(f, "nodes")) out += fmt::format(" {} node{}", static_cast<long long>(*n), *n == 1 ? "" : "s");
  return out;
}

// 22105 -> "2.21.5" (the analyzer's nccl_version metric, major x 10000 + minor x 100 + patch).
std::string nccl_version_text(double v) {
  const auto n = static_cast<long long>(v);
  return fmt::format("{}.{}.{}", n / 10000, n / 100 % 100, n % 100);
}

// The figures of one nccl-tests report: key -> value. Sizes of 1 MiB and more (below that a
// collective's time is its latency, not its bandwidth), and the NCCL version. A run
// with wrong results gives no figure: its bandwidth is no reference.
std::map<std::string, double> report_figures(const NodeReport& r, std::string& nccl) {
  std::map<std::string, double> out;
  for (const auto& f : r.report_findings) {
    if (f.id != "nccl_tests.busbw" || f.status == report::Status::error) continue;
    if (auto w = metric_of(f, "wrong"); w && *w > 0) continue;
    if (auto v = metric_of(f, "nccl_version")) nccl = nccl_version_text(*v);
    const std::string scale = "nccl-tests" + run_scale(f);
    for (const auto& [name, v] : f.metrics) {
      if (!sys::starts_with(name, "busbw_gbps.") || name.ends_with(".spread")) continue;
      auto size = sys::to_double(std::string_view(name).substr(11));
      if (size && *size >= 1048576.0) out[scale + " busbw_gbps " + name.substr(11)] = v;
    }
  }
  return out;
}

// The figures of one probe report (perfgap probe, of the node it names): what more is better.
// Memory triad GB/s per (CPU node, memory node) pair (a starved pair's figure is named apart and
// not taken), host<->GPU copy GB/s per GPU and host node, the all-core busy MHz. Launch latency
// is left out: a floor does not fit a figure where less is better.
std::map<std::string, double> probe_figures(const NodeReport& r) {
  std::map<std::string, double> out;
  for (const auto& f : r.report_findings) {
    if (f.status == report::Status::error) continue;
    for (const auto& [name, v] : f.metrics) {
      int a = 0, b = 0;
      char end = 0;
      if (f.id == "probe.memory_bw" && std::sscanf(name.c_str(), "gbps_cpu%d_mem%d%c", &a, &b, &end) == 2)
        out[fmt::format("probe memory cpu {} mem {} triad_gbps", a, b)] = v;
      else if (f.id == "probe.h2d" && !f.subject.empty() && std::sscanf(name.c_str(), "h2d_gbps_node%d%c", &a, &end) == 1)
        out[fmt::format("probe gpu {} node {} h2d_gbps", f.subject, a)] = v;
      else if (f.id == "probe.h2d" && !f.subject.empty() && std::sscanf(name.c_str(), "d2h_gbps_node%d%c", &a, &end) == 1)
        out[fmt::format("probe gpu {} node {} d2h_gbps", f.subject, a)] = v;
      else if (f.id == "probe.cpu_busy_mhz" && f.status != report::Status::skip && name == "busy_mhz")
        out["probe cpu busy_mhz"] = v;
    }
  }
  return out;
}

std::string figure_text(double v) { return fmt::format("{:.1f}", v); }

}  // namespace

bool from_measurement(std::string_view key) { return sys::starts_with(key, "nccl-tests ") || from_probe(key); }
bool from_probe(std::string_view key) { return sys::starts_with(key, "probe "); }

std::vector<std::size_t> add_measurements(std::span<const NodeReport> measured, std::vector<NodeFacts>& nodes) {
  std::map<std::string_view, NodeFacts*> by_name;
  for (auto& n : nodes) by_name[short_node_name(n.node)] = &n;
  // node -> key -> the figure of each run that named the node
  std::map<NodeFacts*, std::map<std::string, std::vector<double>>> runs;
  std::map<NodeFacts*, std::string> versions;
  std::set<NodeFacts*> tested_nodes, probed_nodes;  // which measurement each node was given
  std::vector<std::size_t> unused;
  for (std::size_t i = 0; i < measured.size(); ++i) {
    const auto& r = measured[i];
    const bool probe = r.kind == "probe";
    // A probe measured the node it names; an nccl-tests run, the hosts its log names.
    const std::vector<std::string> probed{r.name};
    const auto& hosts = probe ? probed : r.hosts;
    if ((r.kind != "analyze" && !probe) || hosts.empty() || hosts.front().empty()) {
      unused.push_back(i);
      continue;
    }
    std::string nccl;
    const auto figures = probe ? probe_figures(r) : report_figures(r, nccl);
    bool gave = false;
    for (const auto& h : hosts) {
      auto it = by_name.find(short_node_name(h));
      if (it == by_name.end() || (figures.empty() && nccl.empty())) continue;
      gave = true;
      for (const auto& [key, v] : figures) runs[it->second][key].push_back(v);
      if (!nccl.empty()) versions[it->second] = nccl;
      (probe ? probed_nodes : tested_nodes).insert(it->second);
    }
    if (!gave) unused.push_back(i);
  }
  for (auto& [node, keys] : runs)
    for (auto& [key, values] : keys) node->facts[Aspect::measured][key] = figure_text(*median(values));
  for (auto& [node, v] : versions) node->facts[Aspect::versions]["nccl-tests nccl_version"] = v;
  for (auto& n : nodes) {
    if (tested_nodes.count(&n)) n.sources_read.emplace_back("nccl-tests");
    if (probed_nodes.count(&n)) n.sources_read.emplace_back("probe");
  }
  return unused;
}

std::optional<double> floor_of(std::string_view value) {
  value = sys::trim_ws(value);
  if (!sys::starts_with(value, ">=")) return std::nullopt;
  return sys::to_double(sys::trim_ws(value.substr(2)));
}

std::optional<Entry> learn_floor(const std::vector<std::pair<std::string, double>>& node_values, std::size_t kind_nodes) {
  if (node_values.size() < 3 || node_values.size() * 2 <= kind_nodes) return std::nullopt;
  std::vector<double> values;
  values.reserve(node_values.size());
  for (const auto& nv : node_values) values.push_back(nv.second);
  const double m = *median(values);
  const double spread = 1.4826 * mad(values, m).value_or(0);
  const double margin = std::max(kMeasuredFloorPct / 100.0 * std::fabs(m), kMeasuredSpreads * spread);
  const double floor = m - margin;
  Entry e;
  e.value = ">= " + figure_text(floor);
  e.nodes = node_values.size();
  for (const auto& [node, v] : node_values)
    if (v < floor) e.others.emplace_back(node, figure_text(v) + ", below");
  e.agreed = e.nodes - e.others.size();
  e.note = fmt::format("median {} over {} of {} nodes, spread {} (1.4826 x MAD); floor = median - max({:g}%, {:g} x spread)",
                       figure_text(m), e.nodes, kind_nodes, figure_text(spread), kMeasuredFloorPct, kMeasuredSpreads);
  return e;
}

}  // namespace perfgap::fleet
