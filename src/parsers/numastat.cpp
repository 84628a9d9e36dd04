#include "parsers/numastat.hpp"

#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

// "Node 0 Node 1 Total" / "node0 node1" -> node numbers; has_total set when a Total column ends it.
bool node_header(const std::vector<std::string_view>& f, std::size_t from, std::vector<int>& nodes, bool& has_total) {
  nodes.clear();
  has_total = false;
  for (std::size_t i = from; i < f.size(); ++i) {
    auto t = f[i];
    if (t == "Node" && i + 1 < f.size()) {
      auto n = sys::to_int<int>(f[i + 1]);
      if (!n) return false;
      nodes.push_back(*n);
      ++i;
    } else if (sys::starts_with(t, "node") && t.size() > 4) {
      auto n = sys::to_int<int>(t.substr(4));
      if (!n) return false;
      nodes.push_back(*n);
    } else if (t == "Total" && i + 1 == f.size()) {
      has_total = true;
    } else {
      return false;
    }
  }
  return !nodes.empty();
}

bool dashes(std::string_view line) {
  auto t = sys::trim_ws(line);
  if (t.empty()) return false;
  for (char c : t)
    if (c != '-' && c != ' ' && c != '\t') return false;
  return true;
}

// "Per-node process memory usage (in MBs) for PID 914487 (python)": the PID and the name.
void numastat_title_pid(std::string_view line, std::string& pid, std::string& name) {
  pid.clear();
  name.clear();
  auto p = line.find("for PID ");
  if (p != std::string_view::npos) {
    auto rest = sys::split_ws(line.substr(p + 8));
    if (!rest.empty()) pid = std::string(rest[0]);
    if (rest.size() > 1) {
      name = std::string(rest[1]);
      if (name.size() >= 2 && name.front() == '(' && name.back() == ')') name = name.substr(1, name.size() - 2);
    }
  }
}

// Raw sysfs counters: "numa_hit 31409426", one node's file; false when the line is not one.
bool numastat_raw_counter(const std::vector<std::string_view>& f, NumastatCounters& raw, int lineno) {
  auto v = tooltext::number(f[1]);
  static const std::string_view keys[] = {"numa_hit", "numa_miss", "numa_foreign", "interleave_hit", "local_node", "other_node"};
  bool known = false;
  for (auto k : keys) known = known || f[0] == k;
  if (!known || !v) return false;
  if (raw.nodes.empty()) {
    raw.nodes = {0};
    raw.line = lineno;
  }
  raw.rows[std::string(f[0])] = {*v};
  return true;
}

// A data row's per-node values (the last `want` fields, less the total); false on a
// non-numeric cell.
bool numastat_row_values(const std::vector<std::string_view>& f, std::size_t want, bool has_total, std::vector<double>& vals) {
  for (std::size_t i = f.size() - want; i < f.size() - (has_total ? 1 : 0); ++i) {
    auto v = tooltext::number(f[i]);
    if (!v) return false;
    vals.push_back(*v);
  }
  return true;
}

// A row of the all-processes table: "3567 (qemu-kvm)" and its per-node values.
NumastatProcess numastat_process_row(const std::string& label, const std::vector<double>& vals, const std::vector<int>& nodes, int lineno) {
  NumastatProcess p;
  auto sp = label.find(' ');
  p.pid = label.substr(0, sp);
  if (sp != std::string::npos) {
    p.name = label.substr(sp + 1);
    if (p.name.size() >= 2 && p.name.front() == '(' && p.name.back() == ')') p.name = p.name.substr(1, p.name.size() - 2);
  }
  p.per_node = vals;
  p.nodes = nodes;
  p.line = lineno;
  return p;
}

}  // namespace

Parsed<Numastat> parse_numastat(std::string_view text) {
  Numastat out;
  enum class Table { none, process_one, process_rows, counters, meminfo } table = Table::none;
  std::vector<int> nodes;
  bool has_total = false;
  std::string pid, name;
  NumastatProcess cur;
  bool cur_open = false, cur_total = false;
  std::vector<double> sum;
  bool meminfo_title = false;
  NumastatCounters raw;  // sysfs node file
  int lineno = 0;
  auto close_process = [&]() {
    if (cur_open && (cur_total || !sum.empty())) {
      if (!cur_total) cur.per_node = sum;
      out.processes.push_back(cur);
    }
    cur_open = false;
    cur_total = false;
    sum.clear();
  };
  for (auto rawline : sys::split_lines(text)) {
    ++lineno;
    auto line = tooltext::chomp(rawline);
    auto f = sys::split_ws(line);
    if (f.empty()) continue;
    // Shell prompts and the command echoed ("$ numastat -p 914487", "[root@h x]# numastat").
    if (f[0] == "$" || f[0] == "#" || f[0].back() == '$' || f[0].back() == '#' || line.find("numastat ") != std::string_view::npos ||
        (f[0].front() == '[' && line.find("]#") != std::string_view::npos))
      continue;
    if (line.find("Per-node process memory usage") != std::string_view::npos) {
      close_process();
      table = Table::none;
      numastat_title_pid(line, pid, name);
      meminfo_title = false;
      out.layout = Numastat::Layout::process;
      table = pid.empty() ? Table::process_rows : Table::process_one;
      nodes.clear();
      continue;
    }
    if (line.find("Per-node system memory usage") != std::string_view::npos) {
      close_process();
      meminfo_title = true;
      table = Table::meminfo;
      nodes.clear();
      continue;
    }
    if (line.find("Per-node numastat info") != std::string_view::npos) {
      close_process();
      table = Table::counters;
      nodes.clear();
      continue;
    }
    if (dashes(line) || (f[0].find_first_not_of('-') == std::string_view::npos && f.size() > 1 && dashes(line.substr(f[0].size())))) continue;
    // Column header.
    {
      std::vector<int> n;
      bool tot = false;
      std::size_t from = (f[0] == "PID") ? 1 : 0;
      if (node_header(f, from, n, tot)) {
        nodes = n;
        has_total = tot;
        if (table == Table::none) table = Table::counters;  // plain numastat
        if (f[0] == "PID") table = Table::process_rows;
        if (table == Table::process_one) {
          close_process();
          cur = {};
          cur.pid = pid;
          cur.name = name;
          cur.nodes = nodes;
          cur.line = lineno;
          cur_open = true;
        }
        if (table == Table::counters) {
          out.counters = NumastatCounters{};
          out.counters->nodes = nodes;
          out.counters->line = lineno;
        }
        continue;
      }
    }
    // Raw sysfs counters: "numa_hit 31409426".
    if (f.size() == 2 && nodes.empty() && table == Table::none && numastat_raw_counter(f, raw, lineno)) continue;
    if (nodes.empty()) continue;
    // A data row: label (may hold spaces: "3567 (qemu-kvm)") then one value per node [+ total].
    std::size_t want = nodes.size() + (has_total ? 1 : 0);
    if (f.size() < want + 1) {
      if (table != Table::none && tooltext::number(f.back())) out.damaged.push_back({"row with fewer columns than nodes", lineno});
      continue;
    }
    std::vector<double> vals;
    if (!numastat_row_values(f, want, has_total, vals)) {
      if (table != Table::none && table != Table::meminfo) out.damaged.push_back({"non-numeric cell", lineno});
      continue;
    }
    std::string label;
    for (std::size_t i = 0; i < f.size() - want; ++i) label += (i ? " " : "") + std::string(f[i]);
    switch (table) {
      case Table::process_one:
        if (!cur_open) break;
        if (label == "Total") {
          cur.per_node = vals;
          cur_total = true;
        } else {
          if (label == "Huge") cur.huge = vals;
          if (sum.empty()) sum.assign(vals.size(), 0.0);
          for (std::size_t i = 0; i < vals.size(); ++i) sum[i] += vals[i];
        }
        break;
      case Table::process_rows: {
        if (label == "Total") break;
        out.processes.push_back(numastat_process_row(label, vals, nodes, lineno));
        break;
      }
      case Table::counters:
        if (out.counters) out.counters->rows[label] = vals;
        break;
      case Table::meminfo:
      case Table::none:
        break;
    }
  }
  close_process();
  if (!out.processes.empty()) {
    out.layout = Numastat::Layout::process;
  } else if (out.counters && !out.counters->rows.empty()) {
    out.layout = Numastat::Layout::counters;
  } else if (!raw.rows.empty()) {
    out.layout = Numastat::Layout::counters;
    out.counters = std::move(raw);
  } else if (meminfo_title) {
    out.layout = Numastat::Layout::meminfo;
  } else {
    return parse_fail("no numastat table (per-process, per-node counters or meminfo)");
  }
  (void)has_total;
  return out;
}

}  // namespace perfgap::parsers
