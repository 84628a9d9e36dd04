#include "fleet/text_view.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <string_view>

#include "parsers/hostlist.hpp"
#include "report/informational.hpp"
#include "report/model.hpp"
#include "report/outgoing.hpp"
#include "report/text_style.hpp"

namespace perfgap::fleet {
namespace {

using report::Finding;
using report::Status;

// A layer's cell: the most severe status of the layer's findings on the node, as
// report::severity() numbers it (fail 4 ... skip 0), -1 when the layer has none.
std::string_view cell_text(int severity_or_none) {
  switch (severity_or_none) {
    case 4: return "FAIL";
    case 3: return "ERR";
    case 2: return "WARN";
    case 1: return "ok";
    case 0: return "skip";
  }
  return "-";
}

Status status_of_severity(int s) {
  switch (s) {
    case 4: return Status::fail;
    case 3: return Status::error;
    case 2: return Status::warn;
    case 1: return Status::pass;
    default: return Status::skip;
  }
}

std::string short_layer(std::string_view layer) {
  static const std::map<std::string_view, std::string_view> names = {
      {"virtualization", "virt"}, {"cpu-power", "cpu"}, {"placement", "place"}, {"runtime-topology", "rt-topo"},
      {"network", "net"},         {"gpu", "gpu"},       {"pcie", "pcie"},       {"workload", "work"}};
  if (auto it = names.find(layer); it != names.end()) return std::string(it->second);
  return std::string(layer.substr(0, 7));
}

std::size_t width_of(std::string_view s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

// Cuts a line to `width` display columns, marking the cut.
std::string fit(std::string s, std::size_t width) {
  if (width_of(s) <= width) return s;
  std::size_t keep = width > 3 ? width - 3 : 0, w = 0, i = 0;
  for (; i < s.size(); ++i) {
    if ((static_cast<unsigned char>(s[i]) & 0xC0) != 0x80) {
      if (w == keep) break;
      ++w;
    }
  }
  s.resize(i);
  return s + "...";
}

// Splits a hostlist at its top-level commas into lines of at most `width` (for -v).
std::vector<std::string> wrap_hostlist(const std::string& list, std::size_t width) {
  std::vector<std::string> tokens;
  int depth = 0;
  std::string cur;
  for (char c : list) {
    if (c == '[') ++depth;
    if (c == ']') --depth;
    if (c == ',' && depth == 0) {
      tokens.push_back(std::move(cur));
      cur.clear();
    } else {
      cur += c;
    }
  }
  tokens.push_back(std::move(cur));
  std::vector<std::string> lines(1);
  for (auto& t : tokens) {
    if (!lines.back().empty() && lines.back().size() + 1 + t.size() > width) {
      lines.back() += ',';
      lines.emplace_back();
    }
    lines.back() += (lines.back().empty() ? "" : ",") + t;
  }
  return lines;
}

constexpr std::size_t kGroupRows = 30;        // node groups shown without -v
constexpr std::size_t kFailingGroups = 20;    // failing-node lines shown without -v
constexpr std::size_t kFindingsPerId = 10;    // fleet findings of one id shown without -v
constexpr std::size_t kEvidenceLines = 3;     // evidence lines per finding without -v

// The node groups by per-layer status: one row per group, its count, its cells and its names.
std::string fleet_text_node_groups(const std::map<std::vector<int>, std::vector<std::string_view>>& groups,
                                   const std::vector<std::string_view>& cols, std::size_t width, const TextViewOptions& opts) {
  auto paint = [&](Status s, std::string_view text) { return report::paint(s, text, opts.color); };
  std::string out;
  std::vector<std::pair<const std::vector<int>*, const std::vector<std::string_view>*>> rows;
  rows.reserve(groups.size());
  for (const auto& [row, names] : groups) rows.emplace_back(&row, &names);
  auto worst = [](const std::vector<int>& row) {
    int best = 9;
    for (int cell : row)
      if (cell >= 0) best = std::min(best, report::action_rank(status_of_severity(cell)));
    return best;
  };
  std::stable_sort(rows.begin(), rows.end(), [&](const auto& a, const auto& b) {
    int ra = worst(*a.first), rb = worst(*b.first);
    return ra != rb ? ra < rb : a.second->size() > b.second->size();
  });
  std::vector<std::size_t> cw;
  std::string header = "   nodes";
  for (auto c : cols) {
    auto name = report::printable(short_layer(c));
    cw.push_back(std::max<std::size_t>(name.size(), 4));
    header += fmt::format("  {:<{}}", name, cw.back());
  }
  const std::size_t names_at = header.size() + 2;
  header += "  names";
  out += fmt::format("\nnodes by layer (worst status of each layer's findings; - none)\n{}\n", header);
  std::size_t shown = opts.verbose ? rows.size() : std::min(rows.size(), kGroupRows);
  for (std::size_t r = 0; r < shown; ++r) {
    const auto& [row, names] = rows[r];
    std::string text = fmt::format("  {:>6}", names->size());
    for (std::size_t c = 0; c < cols.size(); ++c) {
      std::string_view cell = cell_text((*row)[c]);
      std::string pad(cw[c] - cell.size(), ' ');
      text += "  " + ((*row)[c] >= 0 && (*row)[c] != 1 ? paint(status_of_severity((*row)[c]), cell) : std::string(cell)) + pad;
    }
    text += "  ";
    if (opts.verbose) {
      auto wrapped = wrap_hostlist(parsers::compress_hostlist(*names), width > names_at + 20 ? width - names_at : 20);
      out += text + wrapped[0] + "\n";
      for (std::size_t i = 1; i < wrapped.size(); ++i) out += std::string(names_at, ' ') + wrapped[i] + "\n";
    } else {
      const std::size_t room = width > names_at + 20 ? width - names_at : 20;
      out += text + fit(parsers::compress_hostlist_fit(*names, room), room) + "\n";
    }
  }
  if (shown < rows.size()) out += fmt::format("  ... {} more groups (-v shows all)\n", rows.size() - shown);
  return out;
}

// The failing nodes, grouped by their failing ids.
std::string fleet_text_failing_nodes(const std::map<std::vector<std::string_view>, std::vector<std::string_view>>& failing,
                                     std::size_t failing_nodes, std::size_t width, const TextViewOptions& opts) {
  auto line = [&](std::string s) { return (opts.verbose ? s : fit(std::move(s), width)) + "\n"; };
  std::string out;
  std::vector<std::pair<const std::vector<std::string_view>*, const std::vector<std::string_view>*>> rows;
  rows.reserve(failing.size());
  for (const auto& [ids, names] : failing) rows.emplace_back(&ids, &names);
  std::stable_sort(rows.begin(), rows.end(), [](const auto& a, const auto& b) { return a.second->size() > b.second->size(); });
  out += fmt::format("\nfailing nodes ({})\n", failing_nodes);
  std::size_t shown = opts.verbose ? rows.size() : std::min(rows.size(), kFailingGroups);
  for (std::size_t r = 0; r < shown; ++r) {
    std::string ids;
    for (auto id : *rows[r].first) ids += (ids.empty() ? "" : ", ") + std::string(id);
    std::string count = fmt::format(" ({})", rows[r].second->size());
    std::string names = opts.verbose ? parsers::compress_hostlist(*rows[r].second)
                                     : parsers::compress_hostlist_fit(*rows[r].second, std::max<std::size_t>(width / 2, 20));
    out += line(fmt::format("  {}{}  {}", names, count, ids));
  }
  if (shown < rows.size()) out += fmt::format("  ... {} more (-v shows all)\n", rows.size() - shown);
  return out;
}

}  // namespace

std::string render_fleet_text(const Fleet& fleet, const InputCounts& inputs, const std::vector<Finding>& given,
                              const TextViewOptions& opts) {
  const std::vector<Finding> findings = report::outgoing(given);  // redacted, as every renderer shows findings
  const std::size_t width = std::max<std::size_t>(opts.width, 60);
  auto paint = [&](Status s, std::string_view text) {
    return report::paint(s, text, opts.color);
  };
  auto line = [&](std::string s) { return (opts.verbose ? s : fit(std::move(s), width)) + "\n"; };
  const auto& nodes = fleet.nodes;

  // Header: the verdict and the counts an operator reads first.
  Status verdict = Status::pass;
  std::size_t drifting = 0, outlier_nodes = 0, failing_nodes = 0;
  for (const auto& f : findings) {
    if (report::action_rank(f.status) < report::action_rank(verdict)) verdict = f.status;
    drifting += f.id == "fleet.drift" && f.status == Status::warn;
    outlier_nodes += f.id == "fleet.outliers" && f.status == Status::warn;
  }
  std::vector<std::string_view> layers(std::begin(report::kLayers), std::end(report::kLayers));
  std::vector<bool> layer_used(layers.size(), false);
  for (const auto& n : nodes)
    for (const auto& f : n.findings) {
      auto it = std::find(layers.begin(), layers.end(), f.layer);
      if (it == layers.end()) {
        layers.push_back(f.layer);
        layer_used.push_back(true);
      } else {
        layer_used[static_cast<std::size_t>(it - layers.begin())] = true;
      }
    }
  std::vector<std::string_view> cols;
  for (std::size_t i = 0; i < layers.size(); ++i)
    if (layer_used[i]) cols.push_back(layers[i]);

  // Names and ids as a terminal may show them (a report can hold any bytes).
  std::vector<std::string> safe_names;
  safe_names.reserve(nodes.size());
  for (const auto& n : nodes) safe_names.push_back(report::printable(n.name));
  // Per node: the most severe status per layer (-1: no finding), and its failing ids.
  std::map<std::vector<int>, std::vector<std::string_view>> groups;
  std::map<std::vector<std::string_view>, std::vector<std::string_view>> failing;
  std::map<std::string_view, std::string> id_text;
  for (std::size_t ni = 0; ni < nodes.size(); ++ni) {
    const auto& n = nodes[ni];
    std::vector<int> row(cols.size(), -1);
    std::vector<std::string_view> fails;
    for (const auto& f : n.findings) {
      auto c = static_cast<std::size_t>(std::find(cols.begin(), cols.end(), f.layer) - cols.begin());
      // An informational summary's pass (virt.hypervisor, container.detect) judged nothing: the
      // layer shows `ok` only where a check of it passed.
      row[c] = std::max(row[c], report::severity(report::decides(f.id, f.status) ? f.status : Status::skip));
      if (f.status == Status::fail) {
        auto [it, fresh] = id_text.try_emplace(f.id);
        if (fresh) it->second = report::printable(f.id);
        fails.push_back(it->second);
      }
    }
    groups[row].push_back(safe_names[ni]);
    if (!fails.empty()) {
      std::sort(fails.begin(), fails.end());
      fails.erase(std::unique(fails.begin(), fails.end()), fails.end());
      failing[fails].push_back(safe_names[ni]);
      ++failing_nodes;
    }
  }

  std::string verdict_text = verdict == Status::fail ? "FAIL" : verdict == Status::error ? "ERROR" : verdict == Status::warn ? "WARN" : "OK";
  auto plural = [](std::size_t n, std::string_view one) { return fmt::format("{} {}{}", n, one, n == 1 ? "" : "s"); };
  const std::size_t node_reports = nodes.size() + fleet.superseded.size();
  std::string out = fmt::format("perfgap fleet: {}  ", paint(verdict, verdict_text));
  // Measurements alone make no node rows: the headline says what was read, not "0 nodes".
  if (node_reports > 0 || inputs.measurements == 0)
    out += fmt::format("{} from {}", plural(nodes.size(), "node"), plural(node_reports + inputs.unreadable - inputs.unusable, "report"));
  // A measurement that was read but sets no pace (no host, one rank) is counted among the
  // measurements (fleet.measured counts its verdict) and said apart from files that gave nothing.
  if (inputs.measurements > 0)
    out += fmt::format("{}{}{}", node_reports > 0 || inputs.measurements == 0 ? ", " : "", plural(inputs.measurements, "measurement report"),
                       inputs.unusable ? fmt::format(" ({} unusable)", inputs.unusable) : std::string());
  if (inputs.unreadable > inputs.unusable) out += fmt::format(" ({} unreadable)", inputs.unreadable - inputs.unusable);
  if (!nodes.empty())
    out += fmt::format("\n  {}, {}, {}\n", plural(failing_nodes, "failing node"), plural(drifting, "drifting setting"),
                       plural(outlier_nodes, "outlier node"));
  else
    out += "\n  no node reports (`perfgap check --format json`): the findings below are the measurements'\n";
  // The nodes to take out for hardware, as fleet.drain names them: what an operator acts on first.
  for (const auto& f : findings)
    if (f.id == "fleet.drain" && f.status == Status::fail) out += line("  " + paint(Status::fail, "to drain") + ": " + report::printable(f.title.substr(f.title.find(": ") + 2)));
  // Machines that shared a node name, kept apart: the node count above depends on it.
  for (const auto& f : findings)
    if (f.id == "fleet.node_names" && f.status == Status::warn) out += line("  " + paint(Status::warn, "same name") + ": " + report::printable(f.title));
  // The measurements' own verdicts and the pace outliers: the fleet's verdict counts them too.
  for (const auto& f : findings) {
    const bool judged = f.status == Status::fail || f.status == Status::warn;
    if (judged && (f.id == "fleet.measured" || f.id == "fleet.pace"))
      out += line("  " + paint(f.status, f.id == "fleet.pace" ? "pace" : "measured") + ": " + report::printable(f.title));
  }

  // Node groups by per-layer status.
  if (!nodes.empty()) out += fleet_text_node_groups(groups, cols, width, opts);

  // Failing nodes, grouped by their failing ids.
  if (!failing.empty()) out += fleet_text_failing_nodes(failing, failing_nodes, width, opts);

  // The fleet findings, as the node report's text shows findings.
  out += "\nfleet\n";
  std::map<std::string_view, std::size_t> per_id;
  std::map<std::string_view, std::size_t> hidden;
  for (const auto& f : findings) {
    if (!opts.verbose && per_id[f.id]++ >= kFindingsPerId) {
      ++hidden[f.id];
      continue;
    }
    std::string id = report::printable(f.id) + (f.subject.empty() ? "" : " [" + report::printable(f.subject) + "]");
    std::string rest = fmt::format(" {}  {}", id, report::printable(f.title));
    out += "  " + paint(f.status, fmt::format("{:<5}", report::status_word(f.status))) +
           (opts.verbose ? rest : fit(rest, width > 7 ? width - 7 : width)) + "\n";
    bool actionable = f.status == Status::fail || f.status == Status::warn || f.status == Status::error;
    if (!actionable && !opts.verbose) continue;
    std::size_t limit = opts.verbose ? f.evidence.size() : std::min(kEvidenceLines, f.evidence.size());
    for (std::size_t i = 0; i < limit; ++i) {
      const auto& e = f.evidence[i];
      out += line(fmt::format("        {}: {}{}", report::printable(e.source), report::printable(e.observed),
                              e.expected ? " (expected " + report::printable(*e.expected) + ")" : ""));
    }
    if (limit < f.evidence.size()) out += fmt::format("        ... {} more (-v shows all)\n", f.evidence.size() - limit);
    if (opts.verbose && !f.fix.empty() && actionable) out += fmt::format("        fix: {}\n", report::printable(f.fix));
    if (opts.verbose && !f.impact.empty() && actionable) out += fmt::format("        impact: {}\n", report::printable(f.impact));
  }
  for (const auto& [id, n] : hidden) out += fmt::format("  ... {} more {} findings (-v shows all)\n", n, report::printable(id));
  return out;
}

}  // namespace perfgap::fleet
