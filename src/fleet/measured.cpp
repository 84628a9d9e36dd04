#include "fleet/measured.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <set>
#include <tuple>

#include "compare/compare.hpp"
#include "compare/run_shape.hpp"
#include "parsers/hostlist.hpp"
#include "parsers/nccl_tests.hpp"
#include "report/informational.hpp"
#include "report/text_style.hpp"

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

// The directory a path is in, by its last component ("runs/a/input.txt" -> "a"); "" at the top.
std::string measured_parent(const std::string& path) {
  std::string_view p = path;
  const auto slash = p.rfind('/');
  if (slash == std::string_view::npos || slash == 0) return {};
  p = p.substr(0, slash);
  if (auto up = p.rfind('/'); up != std::string_view::npos) p.remove_prefix(up + 1);
  return std::string(p);
}

// A measurement named from its file (a step log or profile shows no host): several files of one
// name (four jobs' input.txt) are no node's runs. Such names are kept apart, as their directory
// and name ("st-fsdp/input"; "input#2" where the directories are alike too), and said.
struct MeasuredNames {
  std::map<std::string, std::string> of;                       // source path -> the name used
  std::map<std::string, std::vector<std::string>> clashes;    // the file name -> its sources, in order
};

MeasuredNames measured_names(const std::vector<NodeReport>& measured) {
  MeasuredNames out;
  std::map<std::string, std::vector<std::string>> by_stem;
  for (const auto& r : measured) {
    if (is_job_report(r)) continue;
    for (const auto& f : r.findings) {
      if (f.id == "nccl_tests.busbw") continue;  // named by its hosts
      const std::string source = f.subject.empty() ? r.file : std::string(f.subject);
      auto& sources = by_stem[measured_stem(source)];
      if (std::find(sources.begin(), sources.end(), source) == sources.end()) sources.push_back(source);
    }
  }
  for (auto& [stem, sources] : by_stem) {
    if (sources.size() == 1) {
      out.of[sources.front()] = stem;
      continue;
    }
    std::set<std::string> parents;
    for (const auto& src : sources) parents.insert(measured_parent(src));
    const bool by_dir = parents.size() == sources.size() && !parents.count("");
    for (std::size_t k = 0; k < sources.size(); ++k)
      out.of[sources[k]] = by_dir ? measured_parent(sources[k]) + "/" + stem : (k == 0 ? stem : fmt::format("{}#{}", stem, k + 1));
    out.clashes[stem] = std::move(sources);
  }
  return out;
}

// fleet.node_names for measurements named alike (as for check reports of one name).
std::vector<report::Finding> measured_name_clashes(const MeasuredNames& names) {
  std::vector<report::Finding> out;
  for (const auto& [stem, sources] : names.clashes) {
    report::Finding f;
    f.id = "fleet.node_names";
    f.layer = "fleet";
    f.status = report::Status::warn;
    f.subject = stem;
    std::vector<std::string> kept;
    for (const auto& src : sources) kept.push_back(names.of.at(src));
    f.title = fmt::format("{} measurements of different files are named {} (a step log or profile shows no host: its node is its file's name): "
                          "kept apart as {}, not merged into one node's figure",
                          sources.size(), stem, fmt::join(kept, ", "));
    for (const auto& src : sources) f.add(src, fmt::format("{} (named from the file)", names.of.at(src)));
    f.fix = "Name each node's step log or profile after its node (n3.log, gpu017.nsys-rep), or give one job's measurements per fleet run: "
            "fleet names a measurement without hosts by its file.";
    f.metric("machines", static_cast<double>(sources.size()));
    out.push_back(std::move(f));
  }
  return out;
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
  // Which way each is better comes from the one table of metric directions (compare's, which
  // fleet.outliers reads too).
  auto higher = [](std::string_view metric) { return compare::metric_direction(metric) == compare::Direction::higher_is_better; };
  static const std::vector<Measure> m = {
      {"nccl_tests.busbw", "max_busbw_gbps", "peak busbw", "GB/s", higher("max_busbw_gbps")},
      {"steps.gap", "median_ms", "step time", "ms", higher("median_ms")},
      {"steps.gap", "median_throughput", "throughput", "/s", higher("median_throughput")},
      {"profile.iterations", "iteration_ms", "iteration time", "ms", higher("iteration_ms")},
  };
  return m;
}

std::string_view short_node_name(std::string_view name) {
  auto dot = name.find('.');
  return dot == std::string_view::npos || dot == 0 ? name : name.substr(0, dot);
}

namespace {

// Each group of the nodes' runs with its files ("AllReduce in a.json and 3 more"), `unnamed` for
// the group of reports that do not say.
std::vector<std::string> groups_said(const std::map<std::string, std::vector<std::string>>& groups, std::string_view unnamed) {
  std::vector<std::string> said;
  said.reserve(groups.size());
  for (const auto& [group, files] : groups)
    said.push_back(fmt::format("{} in {}{}", group.empty() ? unnamed : std::string_view(group), files.front(),
                               files.size() > 1 ? fmt::format(" and {} more", files.size() - 1) : std::string()));
  return said;
}

// The collective the nodes' busbw measured, as explain prices with it only that collective's
// exposed time: named where every nccl-tests report names the same one; else said, unnamed.
void pace_collective_evidence(const std::map<std::string, std::vector<std::string>>& collectives, report::Finding& f) {
  if (collectives.size() == 1 && !collectives.begin()->first.empty()) {
    f.add(std::string(parsers::kCollectiveMeasuredEvidence), collectives.begin()->first);
    return;
  }
  const auto said = groups_said(collectives, "a collective not named");
  f.add("collectives measured",
        collectives.size() == 1 ? fmt::format("{}: the reports do not say which collective their busbw measured", said.front())
                                : fmt::format("the nodes' busbw are of different collectives: {}", fmt::join(said, "; ")),
        "one collective's runs, named (analyze nccl-tests reports name it: collective measured)");
}

// What makes two nccl-tests runs' peaks one scale besides their collective: ranks, nodes, GPU
// model and the largest size measured (compare's RunShape, which compare also refuses to take
// for one run), said as "8 ranks on 1 node, NVIDIA H100 80GB HBM3, to 8 GiB".
compare::RunShape busbw_shape(const NodeReport& r, const NodeFinding& f) {
  compare::RunShape sh;
  sh.collective = r.collective;
  sh.gpus = r.gpus;
  for (const auto& m : r.metrics_of(f)) sh.read_metric(m.name, m.value);
  return sh;
}

// Where the nodes' runs are of several shapes (nccl-tests runs of other ranks, nodes, GPUs or
// sizes; step logs of other global batch sizes; profiles of other GPUs or world sizes: other
// jobs), each shape is its own pace: said, with the files of each.
void pace_shapes_evidence(std::string_view finding, const std::map<std::string, std::vector<std::string>>& shapes, const std::string& own,
                          report::Finding& f) {
  const auto said = groups_said(shapes, "a shape not said");
  if (finding == "nccl_tests.busbw") {
    f.add("run shapes",
          fmt::format("the nodes' nccl-tests runs are of different shapes: {}; this pace is of the runs of {} alone", fmt::join(said, "; "),
                      own),
          "one shape for every node's run (the same ranks, nodes, GPU model and sizes)");
  } else if (finding == "steps.gap") {
    f.add("job shapes",
          fmt::format("the nodes' step logs are of different jobs: {}; this pace is of the logs of {} alone", fmt::join(said, "; "), own),
          "one job's step logs (the same global batch size on every node)");
  } else {
    f.add(
        "job shapes",
        fmt::format("the nodes' profiles are of different jobs: {}; this pace is of the profiles of {} alone", fmt::join(said, "; "), own),
        "one job's profiles (the same GPU model and world size on every node)");
  }
}

// What a measure's files are called in its words: "runs", "logs", "profiles".
std::string_view pace_files_word(std::string_view finding) {
  return finding == "nccl_tests.busbw" ? "runs" : finding == "steps.gap" ? "logs" : "profiles";
}

// What makes two step logs' figures one scale: the job's global batch size (steps.gap's metric
// global_batch_size, where the log says it).
std::string steps_shape(const NodeReport& r, const NodeFinding& f) {
  for (const auto& m : r.metrics_of(f))
    if (m.name == "global_batch_size" && std::isfinite(m.value) && m.value > 0) return fmt::format("global batch size {:g}", m.value);
  return "global batch size not said";
}

// What makes two profiles' iteration times one scale: the GPU model and the job's world size
// (profile.summary's per-GPU lines and metric world_size, where the trace records them).
std::string profile_shape(const NodeReport& r) {
  long long world = 0;
  for (const auto& f : r.findings)
    if (f.id == "profile.summary")
      for (const auto& m : r.metrics_of(f))
        if (m.name == "world_size" && std::isfinite(m.value) && m.value > 0) world = std::llround(m.value);
  return fmt::format("{}, {}", r.gpus.empty() ? "GPU model not said" : r.gpus,
                     world > 0 ? fmt::format("{} rank{}", world, world == 1 ? "" : "s") : "ranks not said");
}

// Where the nodes' step logs report throughputs of different units, each unit's runs are their own
// pace: said, with the files of each, so a reader knows why the fleet was split.
void pace_units_evidence(const std::map<std::string, std::vector<std::string>>& units, const std::string& own, report::Finding& f) {
  const auto said = groups_said(units, "a unit not said");
  f.add("throughput units",
        fmt::format("the nodes' throughputs are in different units: {}; this pace is of the {} alone", fmt::join(said, "; "),
                    own.empty() ? "reports that do not say their unit (written before perfgap named it)" : own + " runs"),
        "one unit for every node's step log");
}

// The measurements grouped as fleet.pace compares them: per measure and, for busbw, per
// collective measured ("" where a report does not say) and shape; for throughputs, per unit.
// Busbw of different collectives are not one scale (an all_gather's peak is not an
// all_reduce's), nor are runs of other shapes (ranks, nodes, GPU model, largest size: a node's
// 8-GPU NVLink peak is not a 2-node pair's, an RTX's not an H100's, and a run that stopped at 64
// KiB never reached a peak); samples/s and tokens/s are not one scale either.
struct PaceGroups {
  std::map<std::tuple<std::size_t, std::string, std::string>, std::map<std::string, PaceNode>> per;
  // Per measure and group (collective, unit), each shape's files.
  std::map<std::pair<std::size_t, std::string>, std::map<std::string, std::vector<std::string>>> shapes;
  std::map<std::string, std::vector<std::string>> busbw_collectives;  // each collective's files
  std::map<std::string, std::vector<std::string>> throughput_units;   // each unit's files
};

// The reports that measure nothing fleet.pace can place are appended to `bad`.
PaceGroups pace_groups(const std::vector<NodeReport>& measured, const MeasuredNames& named, std::vector<Unreadable>& bad) {
  const auto& ms = measures();
  PaceGroups g;
  auto& per = g.per;
  auto& busbw_collectives = g.busbw_collectives;
  auto& throughput_units = g.throughput_units;
  for (const auto& r : measured) {
    if (is_job_report(r)) continue;  // a job's ranks: job_ranks
    bool any = false;
    for (std::size_t i = 0; i < ms.size(); ++i) {
      for (const auto& f : r.findings) {
        if (f.id != ms[i].finding) continue;
        std::optional<double> value;
        for (const auto& m : r.metrics_of(f))
          if (m.name == ms[i].metric) value = m.value;
        if (!value) continue;
        std::vector<std::string> names;
        std::string group, shape;
        if (f.id == "nccl_tests.busbw") {
          if (r.hosts.empty()) {
            bad.push_back({r.file, std::string(kNcclTestsNoHostWhy)});
            any = true;  // named as unreadable, not twice
            continue;
          }
          const compare::RunShape sh = busbw_shape(r, f);
          if (sh.ranks == 1) {
            bad.push_back({r.file, std::string(kNcclTestsOneRankWhy)});
            any = true;
            continue;
          }
          for (const auto& h : r.hosts) names.emplace_back(short_node_name(h));
          busbw_collectives[r.collective].push_back(r.file);
          group = r.collective;
          shape = sh.words();
        } else {
          // A log of start-up steps only (a first step, skipped iterations) is no steady state.
          if (f.id == "steps.gap" && !r.startup_only.empty()) {
            bad.push_back({r.file, fmt::format("{}: {}", kStepsStartupOnlyWhy, r.startup_only)});
            any = true;
            continue;
          }
          if (ms[i].metric == "median_throughput") {
            throughput_units[r.throughput_unit].push_back(r.file);
            group = r.throughput_unit;
          }
          shape = f.id == "steps.gap" ? steps_shape(r, f) : profile_shape(r);
          const std::string source = f.subject.empty() ? r.file : std::string(f.subject);
          auto it = named.of.find(source);
          names.push_back(it != named.of.end() ? it->second : measured_stem(source));
        }
        std::sort(names.begin(), names.end());
        names.erase(std::unique(names.begin(), names.end()), names.end());
        g.shapes[{i, group}][shape].push_back(r.file);
        auto& nodes_of = per[{i, group, shape}];
        for (const auto& n : names) {
          nodes_of[n].values.push_back(*value);
          nodes_of[n].files.push_back(r.file);
        }
        any = true;
      }
    }
    if (!any)
      bad.push_back({r.file, std::string(kNoMeasurementWhy)});
  }

  return g;
}

}  // namespace

std::vector<report::Finding> pace(const std::vector<NodeReport>& measured, const std::vector<NodeReport>& nodes,
                                  const OutlierRule& rule, std::vector<Unreadable>& bad) {
  const auto& ms = measures();
  const MeasuredNames named = measured_names(measured);
  PaceGroups groups = pace_groups(measured, named, bad);
  const auto& per = groups.per;
  const auto& busbw_collectives = groups.busbw_collectives;
  const auto& throughput_units = groups.throughput_units;
  std::vector<report::Finding> out = measured_name_clashes(named);
  const bool several_collectives = busbw_collectives.size() > 1;
  for (const auto& [key, nodes_of] : per) {
    const auto& [i, group, shape] = key;
    Measure m = ms[i];
    report::Finding f;
    f.id = "fleet.pace";
    f.layer = "fleet";
    f.subject = fmt::format("{}.{}", m.finding, m.metric);
    // Runs of several collectives: each collective's pace apart, named in its subject and words.
    std::string what;
    if (m.finding == "nccl_tests.busbw" && several_collectives) {
      const std::string coll = group.empty() ? "unnamed collective" : group;
      f.subject += fmt::format(" ({})", coll);
      what = fmt::format("peak {} busbw", coll);
      m.what = what;
    }
    const auto& shapes = groups.shapes.at({i, group});
    const bool several_shapes = shapes.size() > 1;
    if (several_shapes) {
      f.subject += fmt::format(" [{}]", shape);
      what = fmt::format("{} ({} of {})", m.what, pace_files_word(m.finding), shape);
      m.what = what;
    }
    const bool throughput = m.metric == "median_throughput";
    if (throughput && !group.empty()) m.unit = group;
    if (throughput && throughput_units.size() > 1) f.subject += fmt::format(" ({})", group.empty() ? "unit not said" : group);
    std::vector<std::pair<std::string, double>> figures;  // node, its figure (median of its runs)
    std::vector<double> values;
    for (const auto& [node, pn] : nodes_of) {
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
    // A node is named only when it is worse than the median: the worst of several equal figures
    // (one nccl-tests run over two nodes gives both the same) would be picked by its name.
    const bool paced = m.higher_is_better ? pace_fig < s.median : pace_fig > s.median;
    const std::string pace_line =
        paced ? fmt::format("{} sets the pace: {} {} {} against the fleet's median {} {} ({:.1f}% {})", pace_node, m.what, pace_value(pace_fig),
                            m.unit, pace_value(s.median), m.unit, 100 * std::fabs(cost), m.higher_is_better ? "below" : "above")
              : fmt::format("no node is {} the fleet's median {} {} {}", m.higher_is_better ? "below" : "above", m.what,
                            pace_value(s.median), m.unit);
    if (values.size() == 1) {
      // One node of its shape: no other node's figure of the same job to set a pace against.
      f.status = report::Status::skip;
      f.title = fmt::format("1 node measured ({} {}{}): no pace without another node's figure of the same {}", m.finding, m.metric,
                            several_shapes ? ", the only one of its shape" : "", m.finding == "nccl_tests.busbw" ? "run shape" : "job");
    } else if (values.size() < rule.min_nodes) {
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
      if (!is_out && (node != pace_node || !paced)) continue;
      auto z = modified_z(v, s);
      const auto& files = nodes_of.at(node).files;
      f.add(files.front(), fmt::format("{}: {} {} {}{}{}", node, m.what, pace_value(v), m.unit,
                                       z ? fmt::format(" (modified z {:.1f})", *z) : std::string(),
                                       files.size() > 1 ? fmt::format(", median of {} runs", files.size()) : std::string()),
            fmt::format("near the median {} {}", pace_value(s.median), m.unit));
      f.metric("node." + node, v);
    }
    if (throughput && throughput_units.size() > 1) pace_units_evidence(throughput_units, group, f);
    if (m.finding == "nccl_tests.busbw") {
      std::map<std::string, std::vector<std::string>> own;
      own.emplace(group, busbw_collectives.at(group));
      pace_collective_evidence(own, f);
    }
    if (several_shapes) pace_shapes_evidence(m.finding, shapes, shape, f);
    f.table.push_back({"node", fmt::format("{} {}", m.what, m.unit), "runs"});
    for (std::size_t k = 0; k < figures.size() && k < 10; ++k)
      f.table.push_back({figures[k].first, pace_value(figures[k].second), std::to_string(nodes_of.at(figures[k].first).values.size())});
    f.table_always = true;
    out.push_back(std::move(f));
  }
  return out;
}

std::vector<report::Finding> measurement_verdicts(const std::vector<NodeReport>& measured) {
  using report::Status;
  const MeasuredNames named = measured_names(measured);  // as fleet.pace and fleet.node_names name them
  struct Judged {
    std::size_t reports = 0, failing = 0, warning = 0, passing = 0;
    Status worst = Status::skip;
    std::vector<std::string> nodes;                        // those of its failing and warning reports
    std::vector<report::Evidence> evidence;               // file: its title
    std::string fix;
  };
  std::map<std::string, Judged> by_id;
  for (const auto& r : measured) {
    if (is_job_report(r)) continue;
    for (std::uint32_t i = 0; i < r.findings.size(); ++i) {
      const auto& f = r.findings[i];
      const auto& ms = measures();
      if (std::none_of(ms.begin(), ms.end(), [&](const Measure& m) { return m.finding == f.id; })) continue;
      // An informational summary (profile.iterations) measures and judges nothing: its pass is no
      // verdict to count ("passes in N reports"); what it measures is fleet.pace's.
      if (report::informational(f.id) && !report::decides(f.id, f.status)) continue;
      auto& j = by_id[std::string(f.id)];
      ++j.reports;
      if (f.status == Status::pass) ++j.passing;
      if (f.status != Status::fail && f.status != Status::warn) continue;
      ++(f.status == Status::fail ? j.failing : j.warning);
      if (report::action_rank(f.status) < report::action_rank(j.worst)) j.worst = f.status;
      if (f.id == "nccl_tests.busbw" && !r.hosts.empty()) {
        for (const auto& h : r.hosts) j.nodes.emplace_back(short_node_name(h));
      } else {
        const std::string source = f.subject.empty() ? r.file : std::string(f.subject);
        auto it = named.of.find(source);
        j.nodes.push_back(it != named.of.end() ? it->second : measured_stem(source));
      }
      for (const auto& v : r.verdicts)
        if (v.finding == i) {
          j.evidence.push_back({r.file, fmt::format("{}: {}", report::to_string(f.status), v.title), std::nullopt});
          if (j.fix.empty()) j.fix = v.fix;
        }
    }
  }
  std::vector<report::Finding> out;
  for (auto& entry : by_id) {
    const std::string& id = entry.first;
    Judged& j = entry.second;  // not a structured binding: the lambda below captures it (clang 14)
    report::Finding f;
    f.id = "fleet.measured";
    f.layer = "fleet";
    f.subject = id;
    f.metric("reports", static_cast<double>(j.reports));
    f.metric("failing", static_cast<double>(j.failing));
    f.metric("warning", static_cast<double>(j.warning));
    auto count = [&](std::size_t n) { return fmt::format("{} of {} measurement report{}", n, j.reports, j.reports == 1 ? "" : "s"); };
    if (j.failing + j.warning > 0) {
      f.status = j.worst;
      std::sort(j.nodes.begin(), j.nodes.end());
      j.nodes.erase(std::unique(j.nodes.begin(), j.nodes.end()), j.nodes.end());
      std::vector<std::string_view> views(j.nodes.begin(), j.nodes.end());
      f.title = fmt::format("{} {} in {}, measured on {}", id, j.failing > 0 ? "fails" : "warns", count(j.failing + j.warning),
                            parsers::compress_hostlist(views));
      f.evidence = std::move(j.evidence);
      f.fix = j.fix.empty() ? "read the measurement's own report (perfgap analyze on its input) for its evidence and fix" : j.fix;
    } else if (j.passing > 0) {
      f.status = Status::pass;
      f.title = fmt::format("{} passes in {}", id, count(j.passing));
      if (j.passing < j.reports) f.title += fmt::format(" ({} could not judge)", j.reports - j.passing);
    } else {
      f.status = Status::skip;
      f.title = fmt::format("{} judged in none of the {} measurement report{} (each says why in its own report)", id, j.reports,
                            j.reports == 1 ? "" : "s");
    }
    out.push_back(std::move(f));
  }
  return out;
}

namespace {

// What a finding of the job's NCCL reports says of the ranks it names, and how strongly the job
// waits on them: a stopped job first (RAS), then the Inspector's late and slow ranks.
struct JobKind {
  std::string_view id, label, key;
  int order;
};
const JobKind* job_kind(std::string_view id) {
  static const JobKind kinds[] = {
      {"nccl_ras.dead", "dead", "dead", 0},
      {"nccl_ras.missing", "missing (no communicator data)", "missing", 1},
      {"nccl_ras.comm_error", "reports its communicator in error", "comm_error", 2},
      {"nccl_inspector.late_rank", "late", "late", 3},
      {"nccl_inspector.slow_rank", "slow inside the collective", "slow", 4},
      {"nccl_inspector.slow_comm", "in a slow communicator", "slow_comm", 5},
      {"nccl_ras.mismatch", "behind its communicator", "mismatch", 6},
  };
  for (const auto& k : kinds)
    if (k.id == id) return &k;
  return nullptr;
}

struct JobRank {
  std::string node, what, address;  // address: RAS's, when the node is the Inspector's host of that pid
  const JobKind* kind = nullptr;
  const NodeReport* rep = nullptr;
  const NodeFinding* finding = nullptr;
};

// RAS prints node addresses: kept whole (short_node_name would cut 10.10.4.23 at its first dot).
bool job_is_address(std::string_view host) {
  return !host.empty() && (host.find(':') != std::string_view::npos ||
                           std::all_of(host.begin(), host.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; }));
}

std::optional<long> job_pid(std::string_view what) {
  auto p = what.find("pid ");
  if (p == std::string_view::npos) return std::nullopt;
  long v = 0;
  std::size_t i = p + 4, digits = 0;
  for (; i < what.size() && what[i] >= '0' && what[i] <= '9' && digits < 12; ++i, ++digits) v = v * 10 + (what[i] - '0');
  return digits ? std::optional<long>(v) : std::nullopt;
}

std::optional<double> job_metric(const NodeReport& r, const NodeFinding& f, std::string_view name) {
  for (const auto& m : r.metrics_of(f))
    if (m.name == name) return m.value;
  return std::nullopt;
}

// A process of the job: its node and pid (the item without one: the item).
std::string job_process(const JobRank& jr) {
  auto pid = job_pid(jr.what);
  return pid ? fmt::format("{} pid {}", jr.node, *pid) : jr.node + " " + jr.what;
}

// What a rank's finding measured, for its evidence line.
std::string job_detail(const JobRank& jr) {
  if (jr.kind->key == "late")
    if (auto w = job_metric(*jr.rep, *jr.finding, "wait_us_per_op")) return fmt::format(": the others wait {:.0f} us per operation for it", *w);
  if (jr.kind->key == "slow" || jr.kind->key == "slow_comm")
    if (auto r = job_metric(*jr.rep, *jr.finding, "busbw_ratio")) return fmt::format(": busbw {:.0f}% of its peers'", 100 * *r);
  return "";
}

// The check report's verdict on a node: "fails a, b; warns c".
std::string job_checks(const NodeReport& n) {
  std::vector<std::string_view> fails, warns;
  for (const auto& f : n.findings) {
    auto& into = f.status == report::Status::fail ? fails : warns;
    if (f.status != report::Status::fail && f.status != report::Status::warn) continue;
    if (std::find(into.begin(), into.end(), f.id) == into.end()) into.push_back(f.id);
  }
  if (fails.empty() && warns.empty()) return "every check passes or skips";
  std::string out;
  if (!fails.empty()) out = fmt::format("fails {}", fmt::join(fails, ", "));
  if (!warns.empty()) out += fmt::format("{}warns {}", out.empty() ? "" : "; ", fmt::join(warns, ", "));
  return out;
}

// The nodes as a Slurm host list; node addresses (RAS's) listed as they are.
std::string job_nodes(const std::vector<std::string>& names) {
  if (std::any_of(names.begin(), names.end(), [](const std::string& n) { return job_is_address(n); }))
    return fmt::format("{}", fmt::join(names, ", "));
  std::vector<std::string_view> views(names.begin(), names.end());
  return parsers::compress_hostlist(views);
}

// The ranks the job's reports name, each on its node (an address RAS gives is placed on the host
// the Inspector names for its process); `judged` is set when a report judged its ranks at all.
std::vector<JobRank> job_ranks_gather(const std::vector<const NodeReport*>& reps, const std::map<std::string, const NodeReport*>& checks,
                                      const std::map<long, std::set<std::string>>& pid_hosts, bool& judged) {
  std::vector<JobRank> ranks;
  for (const auto* r : reps) {
    for (const auto& f : r->findings)
      if ((f.id == "nccl_inspector.slow_rank" || f.id == "nccl_inspector.late_rank" || f.id == "nccl_ras.dead" || f.id == "nccl_ras.missing") &&
          f.status != report::Status::skip && f.status != report::Status::error)
        judged = true;
    for (const auto& ref : r->ranks) {
      const auto& f = r->findings[ref.finding];
      const JobKind* k = job_kind(f.id);
      if (!k) continue;
      JobRank jr{std::string(job_is_address(ref.host) ? std::string_view(ref.host) : short_node_name(ref.host)), ref.what, "", k, r, &f};
      if (job_is_address(ref.host) && !checks.count(jr.node))
        if (auto pid = job_pid(ref.what); pid && pid_hosts.count(*pid) && pid_hosts.at(*pid).size() == 1) {
          jr.address = jr.node;
          jr.node = *pid_hosts.at(*pid).begin();
        }
      ranks.push_back(std::move(jr));
    }
  }
  return ranks;
}

// fleet.job_ranks for one node: the processes on it the job's NCCL reports name, and its check report.
report::Finding job_ranks_node_finding(const std::string& node, const std::vector<const JobRank*>& rs,
                                       const std::map<std::string, const NodeReport*>& checks) {
  report::Finding f;
  f.id = "fleet.job_ranks";
  f.layer = "fleet";
  f.subject = node;
  f.status = report::Status::warn;
  // One line per process, its labels together (RAS names a dead process in several blocks,
  // the Inspector a process once per communicator), shown by its first item naming a rank.
  std::vector<std::string> order;
  std::map<std::string, std::vector<const JobRank*>> by_rank;
  std::map<std::string, std::string> shown;
  std::map<std::string, double> counts;
  for (const auto* jr : rs) {
    if (jr->finding->status == report::Status::fail) f.status = report::Status::fail;
    const std::string key = job_process(*jr);
    if (by_rank[key].empty()) order.push_back(key);
    by_rank[key].push_back(jr);
    auto& sh = shown[key];
    if (sh.empty() || (sh.find("rank ") == std::string::npos && jr->what.find("rank ") != std::string::npos)) sh = jr->what;
  }
  for (auto& [key, v] : by_rank)
    std::stable_sort(v.begin(), v.end(), [](const JobRank* a, const JobRank* b) { return a->kind->order < b->kind->order; });
  std::vector<std::string> parts;
  for (const auto& key : order) {
    const std::string& what = shown[key];
    std::vector<std::string_view> labels, ids;
    std::string details;
    std::set<std::string_view> keys;
    for (const auto* jr : by_rank[key]) {
      if (std::find(labels.begin(), labels.end(), jr->kind->label) == labels.end()) labels.push_back(jr->kind->label);
      if (std::find(ids.begin(), ids.end(), jr->finding->id) == ids.end()) ids.push_back(jr->finding->id);
      details += job_detail(*jr);
      keys.insert(jr->kind->key);
    }
    for (auto key : keys) counts[std::string(key)] += 1;
    parts.push_back(fmt::format("{} {}", what, fmt::join(labels, ", ")));
    f.add(by_rank[key].front()->rep->file, fmt::format("{}: {}{} ({})", what, fmt::join(labels, ", "), details, fmt::join(ids, ", ")));
  }
  std::string list;
  for (std::size_t i = 0; i < parts.size() && i < 4; ++i) list += (i ? "; " : "") + parts[i];
  if (parts.size() > 4) list += fmt::format("; and {} more", parts.size() - 4);
  f.title = fmt::format("{}: {} process{} the job's NCCL reports name: {}", node, parts.size(), parts.size() == 1 ? "" : "es", list);
  for (const auto* jr : rs)
    if (!jr->address.empty()) {
      f.add("node address", fmt::format("RAS names this node {}: {} is on {} in the Inspector's files", jr->address, jr->what, node));
      break;
    }
  if (auto it = checks.find(node); it != checks.end()) f.add(it->second->file, fmt::format("check report of {}: {}", node, job_checks(*it->second)));
  else f.add("check report", fmt::format("none of {} in the input: run perfgap check --format json there and add it", node));
  f.fix = fmt::format("look at {} first: perfgap check there (gpu.clocks, gpu.xid, net.ib.ports, placement.*), its ranks' logs and processes; "
                      "drain it if its hardware is at fault",
                      node);
  f.metric("processes", static_cast<double>(parts.size()));
  for (const auto& [k, v] : counts) f.metric("processes." + k, v);
  return f;
}

}  // namespace

bool is_job_report(const NodeReport& r) {
  return std::any_of(r.findings.begin(), r.findings.end(),
                     [](const NodeFinding& f) { return f.id.starts_with("nccl_inspector.") || f.id.starts_with("nccl_ras."); });
}

std::vector<report::Finding> job_ranks(const std::vector<NodeReport>& measured, const std::vector<NodeReport>& nodes) {
  std::vector<const NodeReport*> reps;
  for (const auto& r : measured)
    if (is_job_report(r)) reps.push_back(&r);
  if (reps.empty()) return {};

  // A process id the Inspector places on one host only: RAS's address of it is that host.
  std::map<long, std::set<std::string>> pid_hosts;
  for (const auto* r : reps)
    for (const auto& ref : r->ranks)
      if (!job_is_address(ref.host))
        if (auto pid = job_pid(ref.what)) pid_hosts[*pid].insert(std::string(short_node_name(ref.host)));
  std::map<std::string, const NodeReport*> checks;  // short name -> check report
  for (const auto& n : nodes) checks.emplace(std::string(short_node_name(n.name)), &n);

  bool judged = false;
  const std::vector<JobRank> ranks = job_ranks_gather(reps, checks, pid_hosts, judged);

  std::vector<report::Finding> out;
  // ---- fleet.job_ranks: per node
  std::map<std::string, std::vector<const JobRank*>> by_node;
  for (const auto& jr : ranks) by_node[jr.node].push_back(&jr);
  out.reserve(by_node.size() + 1);  // a finding per node, then fleet.waits_on
  for (const auto& [node, rs] : by_node) out.push_back(job_ranks_node_finding(node, rs, checks));

  // ---- fleet.waits_on: the job
  report::Finding w;
  w.id = "fleet.waits_on";
  w.layer = "fleet";
  w.subject = "job";
  w.impact = "in data-parallel training every collective waits for its last rank: the node named sets the pace of the whole job, or stops it";
  std::vector<std::string> check_names;
  check_names.reserve(checks.size());
  for (const auto& [name, n] : checks) check_names.push_back(name);
  auto with_checks = [&](const std::vector<std::string>& on) {
    std::vector<std::string> others;
    for (const auto& c : check_names)
      if (std::find(on.begin(), on.end(), c) == on.end()) others.push_back(c);
    auto shared = pace_shared_configuration(on, others, nodes);
    for (const auto& sh : shared)
      w.add("check reports", fmt::format("{}: on {}, on no other node", sh, on.size() == 1 ? on.front() : "every one of them"));
    for (const auto& n : on)
      if (auto it = checks.find(n); it != checks.end()) w.add(it->second->file, fmt::format("check report of {}: {}", n, job_checks(*it->second)));
      else w.add("check report", fmt::format("none of {} in the input", n));
    return shared;
  };
  if (ranks.empty()) {
    w.status = judged ? report::Status::pass : report::Status::skip;
    w.title = judged ? fmt::format("no rank, node or communicator the job waits on: the job's {} NCCL report{} name no slow, late, dead or missing rank",
                                   reps.size(), reps.size() == 1 ? "" : "s")
                     : "the job's NCCL reports judged no rank (too few ranks or collectives, or a RAS status cut short)";
    for (const auto* r : reps) w.add(r->file, "read");
    out.push_back(std::move(w));
    return out;
  }
  std::vector<std::string> stopped;
  int top = 99;
  for (const auto& jr : ranks) top = std::min(top, jr.kind->order);
  if (top <= 2) {
    // Stopped: the nodes of its dead and missing ranks (the ranks reporting an error are their peers).
    auto culprit = [top](const JobRank& jr) { return top <= 1 ? jr.kind->order <= 1 : jr.kind->order == 2; };
    for (const auto& jr : ranks)
      if (culprit(jr))
        if (std::find(stopped.begin(), stopped.end(), jr.node) == stopped.end()) stopped.push_back(jr.node);
    std::sort(stopped.begin(), stopped.end());
    // Processes: a dead one is counted dead, not missing too (it sends no data either).
    std::set<std::string> dead_set, missing_set;
    for (const auto& jr : ranks)
      if (jr.kind->order == 0) dead_set.insert(job_process(jr));
    for (const auto& jr : ranks)
      if (jr.kind->order == 1 && !dead_set.count(job_process(jr))) missing_set.insert(job_process(jr));
    const std::size_t dead = dead_set.size(), missing = missing_set.size();
    w.status = report::Status::fail;
    w.title = fmt::format("the job is stopped, not slow: it waits on {} ({}{}{})", job_nodes(stopped),
                          dead ? fmt::format("{} dead", dead) : "", dead && missing ? ", " : "",
                          missing ? fmt::format("{} missing", missing) : (dead ? "" : "ranks reporting their communicator in error"));
    for (const auto& jr : ranks)
      if (culprit(jr)) w.add(jr.rep->file, fmt::format("{}: {} {}", jr.node, jr.what, jr.kind->label));
    auto shared = with_checks(stopped);
    if (!shared.empty()) w.title += fmt::format("; {} the one{} with {}", stopped.size() == 1 ? "it is" : "they are", stopped.size() == 1 ? "" : "s",
                                                fmt::join(shared, ", "));
    w.fix = "restart the job without these nodes (drain them: scontrol update nodename=... state=drain) from its last checkpoint, then find why "
            "their processes died or hung (their logs, dmesg, perfgap check there)";
    w.metric("stopped", 1);
    w.metric("nodes", static_cast<double>(stopped.size()));
    w.metric("dead", static_cast<double>(dead));
    w.metric("missing", static_cast<double>(missing));
    out.push_back(std::move(w));
    return out;
  }
  // Slow, not stopped: the late rank the others wait for longest, else the slowest rank or communicator.
  const JobRank* pick = nullptr;
  double pick_score = 0;
  for (const auto& jr : ranks) {
    if (jr.kind->order != top) continue;
    double score = 0;
    if (jr.kind->key == "late") score = job_metric(*jr.rep, *jr.finding, "wait_ms_total").value_or(0);
    else score = 1 - job_metric(*jr.rep, *jr.finding, "busbw_ratio").value_or(1);
    if (!pick || score > pick_score) pick = &jr, pick_score = score;
  }
  std::vector<std::string> on;
  if (pick->kind->key == "slow_comm") {
    for (const auto& jr : ranks)
      if (jr.finding == pick->finding && std::find(on.begin(), on.end(), jr.node) == on.end()) on.push_back(jr.node);
  } else {
    on.push_back(pick->node);
  }
  std::sort(on.begin(), on.end());
  w.status = pick->finding->status == report::Status::fail ? report::Status::fail : report::Status::warn;
  if (pick->kind->key == "slow_comm")
    w.title = fmt::format("the job waits on communicator {} on {}{}", pick->finding->subject, job_nodes(on), job_detail(*pick));
  else
    w.title = fmt::format("the job waits on {}: {} {}{}", pick->node, pick->what, pick->kind->label, job_detail(*pick));
  w.add(pick->rep->file, fmt::format("{} {} ({}, {})", pick->finding->id, pick->finding->subject, report::to_string(pick->finding->status),
                                     pick->kind->label));
  auto shared = with_checks(on);
  if (!shared.empty()) w.title += fmt::format("; {} the one{} with {}", on.size() == 1 ? "it is" : "they are", on.size() == 1 ? "" : "s",
                                              fmt::join(shared, ", "));
  w.fix = fmt::format("look at {} first (perfgap check there: gpu.clocks, placement.*, net.ib.ports, pcie.link; its ranks' logs), compare it with a "
                      "peer (perfgap fleet over both check reports) and confirm with perfgap fanout --pairs",
                      job_nodes(on));
  w.metric("stopped", 0);
  w.metric("nodes", static_cast<double>(on.size()));
  if (auto v = job_metric(*pick->rep, *pick->finding, "wait_us_per_op")) w.metric("wait_us_per_op", *v);
  if (auto v = job_metric(*pick->rep, *pick->finding, "busbw_ratio")) w.metric("busbw_ratio", *v);
  out.push_back(std::move(w));
  return out;
}

}  // namespace perfgap::fleet
