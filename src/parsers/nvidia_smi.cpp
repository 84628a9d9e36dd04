#include "parsers/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include <pugixml.hpp>

#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

int line_of(std::string_view text, std::size_t offset) {
  offset = std::min(offset, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(offset), '\n'));
}

// ---- -q -x ---------------------------------------------------------------------------

// The element's text, trimmed; nullopt when absent or a placeholder (N/A, Not Supported,
// deprecated, errors): those say "not available", which the model keeps as not captured.
std::optional<std::string> value(const pugi::xml_node& n, const char* path) {
  auto e = std::string_view(path) == "." ? n : n.first_element_by_path(path);
  if (!e) return std::nullopt;
  std::string v(sys::trim_ws(e.child_value()));
  if (v.empty() || v == "N/A" || v == "[N/A]" || v == "None" || v.starts_with("Not Supported") || v.starts_with("Unknown") ||
      v.starts_with("Requested functionality") || v.starts_with("Insufficient") || v.starts_with("[") || v.starts_with("GPU requires"))
    return std::nullopt;
  return v;
}

// The leading number of "1275 MHz", "67.03 W", "16x", "27 C", "4251825415 us".
std::optional<double> number(const pugi::xml_node& n, const char* path) {
  auto v = value(n, path);
  if (!v) return std::nullopt;
  std::string_view s = *v;
  std::size_t end = 0;
  while (end < s.size() && (std::isdigit(static_cast<unsigned char>(s[end])) || s[end] == '.' || (end == 0 && s[end] == '-'))) ++end;
  auto d = tooltext::number(s.substr(0, end));
  if (!d) return std::nullopt;
  auto rest = sys::trim_ws(s.substr(end));
  // A unit may follow, another number may not ("1 2").
  if (!rest.empty() && std::isdigit(static_cast<unsigned char>(rest[0]))) return std::nullopt;
  return d;
}

std::optional<std::uint64_t> count(const pugi::xml_node& n, const char* path) {
  auto d = number(n, path);
  if (!d || *d < 0 || *d > 1.8e19) return std::nullopt;
  return static_cast<std::uint64_t>(*d);
}

std::optional<int> small_int(const pugi::xml_node& n, const char* path) {
  auto d = number(n, path);
  if (!d || *d < 0 || *d > 1e6) return std::nullopt;
  return static_cast<int>(*d);
}

std::optional<bool> flag(const pugi::xml_node& n, const char* path) {
  auto v = value(n, path);
  if (!v) return std::nullopt;
  if (*v == "Enabled" || *v == "Yes" || *v == "Active" || *v == "True" || *v == "Enable") return true;
  if (*v == "Disabled" || *v == "No" || *v == "Not Active" || *v == "False" || *v == "Disable") return false;
  return std::nullopt;
}

// Sums the present counts; nullopt when none is present.
std::optional<std::uint64_t> sum(std::initializer_list<std::optional<std::uint64_t>> xs) {
  std::optional<std::uint64_t> s;
  for (const auto& x : xs)
    if (x) s = s.value_or(0) + *x;
  return s;
}

GpuEccCounts ecc_counts(const pugi::xml_node& block) {
  GpuEccCounts c;
  if (!block) return c;
  if (block.child("single_bit") || block.child("double_bit")) {
    // Before Ampere-era drivers: single_bit/double_bit with a total.
    c.corrected = count(block, "single_bit/total");
    c.uncorrected = count(block, "double_bit/total");
    return c;
  }
  c.corrected = sum({count(block, "sram_correctable"), count(block, "dram_correctable")});
  // DTD v13 splits SRAM uncorrectable into parity and SEC-DED.
  c.uncorrected = sum({count(block, "sram_uncorrectable"), count(block, "sram_uncorrectable_parity"),
                       count(block, "sram_uncorrectable_secded"), count(block, "dram_uncorrectable")});
  return c;
}

// clocks_event_reason_hw_slowdown / clocks_throttle_reason_hw_slowdown -> hw_slowdown; the
// v13 counters' short names are mapped onto the reasons' names.
std::string reason_name(std::string_view element) {
  for (std::string_view p :
       {"clocks_event_reasons_counters_", "clocks_throttle_reasons_counters_", "clocks_event_reason_", "clocks_throttle_reason_"})
    if (element.starts_with(p)) {
      element.remove_prefix(p.size());
      break;
    }
  if (element == "sw_therm_slowdown") return "sw_thermal_slowdown";
  if (element == "hw_therm_slowdown") return "hw_thermal_slowdown";
  if (element == "hw_power_brake") return "hw_power_brake_slowdown";
  return std::string(element);
}

GpuFacts read_gpu(const pugi::xml_node& g) {
  GpuFacts f;
  f.pci_bus_id = value(g, "pci/pci_bus_id").value_or(g.attribute("id").value());
  f.name = value(g, "product_name").value_or("");
  f.uuid = value(g, "uuid").value_or("");
  f.architecture = value(g, "product_architecture");
  f.persistence = flag(g, "persistence_mode");
  f.mig_enabled = flag(g, "mig_mode/current_mig");
  f.performance_state = value(g, "performance_state");
  f.gpu_util_pct = number(g, "utilization/gpu_util");

  f.clocks.sm_mhz = number(g, "clocks/sm_clock");
  f.clocks.mem_mhz = number(g, "clocks/mem_clock");
  f.clocks.app_sm_mhz = number(g, "applications_clocks/graphics_clock");
  f.clocks.app_mem_mhz = number(g, "applications_clocks/mem_clock");
  f.clocks.default_app_sm_mhz = number(g, "default_applications_clocks/graphics_clock");
  f.clocks.default_app_mem_mhz = number(g, "default_applications_clocks/mem_clock");
  f.clocks.max_sm_mhz = number(g, "max_clocks/sm_clock");
  f.clocks.max_mem_mhz = number(g, "max_clocks/mem_clock");

  for (const char* block : {"clocks_event_reasons", "clocks_throttle_reasons"})
    for (auto r = g.child(block).first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element) continue;
      auto active = flag(r, ".");
      if (active) f.clock_events[reason_name(r.name())] = *active;
    }
  for (const char* block : {"clocks_event_reasons_counters", "clocks_throttle_reasons_counters"})
    for (auto r = g.child(block).first_child(); r; r = r.next_sibling()) {
      if (r.type() != pugi::node_element) continue;
      if (auto us = count(r, ".")) f.clock_event_us[reason_name(r.name())] = *us;
    }

  auto pw = g.child("gpu_power_readings");
  if (!pw) pw = g.child("power_readings");
  if (pw) {
    f.power.draw_w = number(pw, "power_draw");
    if (!f.power.draw_w) f.power.draw_w = number(pw, "instant_power_draw");
    if (!f.power.draw_w) f.power.draw_w = number(pw, "average_power_draw");
    f.power.enforced_limit_w = number(pw, "enforced_power_limit");
    if (!f.power.enforced_limit_w) f.power.enforced_limit_w = number(pw, "current_power_limit");
    f.power.default_limit_w = number(pw, "default_power_limit");
    f.power.max_limit_w = number(pw, "max_power_limit");
  }

  f.temp_c = number(g, "temperature/gpu_temp");
  f.mem_temp_c = number(g, "temperature/memory_temp");
  f.slowdown_temp_c = number(g, "temperature/gpu_temp_slow_threshold");
  f.shutdown_temp_c = number(g, "temperature/gpu_temp_max_threshold");

  f.ecc_enabled = flag(g, "ecc_mode/current_ecc");
  f.ecc_pending_enabled = flag(g, "ecc_mode/pending_ecc");
  f.ecc_volatile = ecc_counts(g.first_element_by_path("ecc_errors/volatile"));
  f.ecc_aggregate = ecc_counts(g.first_element_by_path("ecc_errors/aggregate"));
  f.retirement_pending = flag(g, "retired_pages/pending_retirement");
  auto rr = g.child("remapped_rows");
  if (rr && rr.child("remapped_row_corr")) {
    GpuRemappedRows r;
    r.correctable = count(rr, "remapped_row_corr");
    r.uncorrectable = count(rr, "remapped_row_unc");
    r.pending = flag(rr, "remapped_row_pending");
    r.failure = flag(rr, "remapped_row_failure");
    f.remapped_rows = r;
  }

  f.pcie.gen_current = small_int(g, "pci/pci_gpu_link_info/pcie_gen/current_link_gen");
  f.pcie.gen_max = small_int(g, "pci/pci_gpu_link_info/pcie_gen/max_link_gen");
  f.pcie.width_current = small_int(g, "pci/pci_gpu_link_info/link_widths/current_link_width");
  f.pcie.width_max = small_int(g, "pci/pci_gpu_link_info/link_widths/max_link_width");
  f.pcie.replay_counter = count(g, "pci/replay_counter");
  f.pcie.replay_rollovers = count(g, "pci/replay_rollover_counter");

  if (auto fb = g.child("fabric")) {
    GpuFabric fab;
    fab.state = value(fb, "state");
    fab.status = value(fb, "status");
    fab.clique_id = value(fb, "cliqueId");
    fab.cluster_uuid = value(fb, "clusterUuid");
    fab.health_summary = value(fb, "health/summary");
    for (auto h = fb.child("health").first_child(); h; h = h.next_sibling()) {
      if (h.type() != pugi::node_element || std::string_view(h.name()) == "summary") continue;
      if (auto v = value(h, ".")) fab.health[h.name()] = *v;
    }
    f.fabric = fab;
  }
  // nvidia-smi -q -x prints no NVLink state (that is `nvidia-smi nvlink -s/-e`): f.nvlinks stays nullopt.
  return f;
}

std::string doctype_schema(std::string_view text) {
  auto head = text.substr(0, 4096);
  auto d = head.find("<!DOCTYPE");
  if (d == std::string_view::npos) return {};
  auto q = head.find('"', d);
  if (q == std::string_view::npos) return {};
  auto e = head.find('"', q + 1);
  if (e == std::string_view::npos || e - q > 200) return {};
  return std::string(head.substr(q + 1, e - q - 1));
}

// ---- topo -m -------------------------------------------------------------------------

// Without ANSI escapes (nvidia-smi underlines the header on a terminal) and '\r'.
std::string clean_line(std::string_view raw) {
  std::string out;
  out.reserve(raw.size());
  for (std::size_t i = 0; i < raw.size(); ++i) {
    if (raw[i] == '\x1b' && i + 1 < raw.size() && raw[i + 1] == '[') {
      i += 2;
      while (i < raw.size() && !std::isalpha(static_cast<unsigned char>(raw[i]))) ++i;
      continue;
    }
    if (raw[i] != '\r') out += raw[i];
  }
  return out;
}

constexpr std::string_view kLinkTypes[] = {"NODE", "SYS", "PIX", "PXB", "PHB", "SOC", "NVB", "X"};

// A cell, or cells printed with no separator ("SYSSYS", "PIXNODE"): the link types in order;
// empty when the token is not made of link types.
std::vector<std::string> split_cells(std::string_view tok) {
  std::vector<std::string> out;
  while (!tok.empty()) {
    if (tok.size() > 2 && tok.starts_with("NV") && std::isdigit(static_cast<unsigned char>(tok[2]))) {
      std::size_t e = 2;
      while (e < tok.size() && std::isdigit(static_cast<unsigned char>(tok[e]))) ++e;
      out.emplace_back(tok.substr(0, e));
      tok.remove_prefix(e);
      continue;
    }
    bool hit = false;
    for (auto t : kLinkTypes)
      if (tok.starts_with(t)) {
        out.emplace_back(t);
        tok.remove_prefix(t.size());
        hit = true;
        break;
      }
    if (!hit) return {};
  }
  return out;
}

bool device_name(std::string_view t) {
  auto digits_after = [&](std::string_view p) {
    if (!t.starts_with(p) || t.size() == p.size()) return false;
    for (char c : t.substr(p.size()))
      if (!std::isdigit(static_cast<unsigned char>(c))) return false;
    return true;
  };
  // NIC columns: NICn (current), or the device names of old drivers (mlx5_0, mlx4_1, hfi1_0, ...).
  return digits_after("GPU") || digits_after("NIC") || (t.find('_') != std::string_view::npos && t != "CPU" && !t.starts_with("GPU"));
}

}  // namespace

int topo_link_rank(std::string_view link) {
  if (link == "X") return 0;
  if (link.starts_with("NV")) return 1;
  if (link == "PIX") return 2;
  if (link == "PXB") return 3;
  if (link == "PHB") return 4;
  if (link == "NODE") return 5;
  if (link == "SYS" || link == "SOC") return 6;
  return -1;
}

int topo_nvlinks(std::string_view link) {
  if (link.size() < 3 || !link.starts_with("NV")) return 0;
  return sys::to_int<int>(link.substr(2)).value_or(0);
}

Parsed<GpuSnapshot> parse_nvidia_smi_xml(std::string_view text) {
  pugi::xml_document doc;
  auto res = doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  if (!res)
    return parse_fail(std::string("not well-formed XML: ") + res.description(), line_of(text, static_cast<std::size_t>(res.offset)));
  auto root = doc.document_element();
  if (!root) return parse_fail("XML without a root element");
  std::string_view root_name = root.name();
  if (root_name != "nvidia_smi_log")
    return parse_fail("XML with root <" + std::string(root_name) + ">, not nvidia-smi -q -x (<nvidia_smi_log>)",
                      line_of(text, static_cast<std::size_t>(root.offset_debug())));
  GpuSnapshot s;
  s.schema = doctype_schema(text);
  s.driver_version = value(root, "driver_version").value_or("");
  s.cuda_version = value(root, "cuda_version").value_or("");
  s.timestamp = value(root, "timestamp").value_or("");
  s.attached_gpus = small_int(root, "attached_gpus");
  for (auto g = root.child("gpu"); g; g = g.next_sibling("gpu")) s.gpus.push_back(read_gpu(g));
  if (s.gpus.empty()) return parse_fail("nvidia-smi -q -x log without a <gpu> element");
  return s;
}

Parsed<GpuTopology> parse_nvidia_smi_topo(std::string_view text) {
  GpuTopology t;
  enum class At { before, matrix, after } at = At::before;
  bool nic_legend = false;
  int lineno = 0, header_line = 0;
  for_each_line(text, [&](std::string_view raw) {
    ++lineno;
    std::string line = clean_line(raw);
    auto tok = sys::split_ws(line);
    if (at == At::before) {
      // The header starts with blanks, then GPU0 (the row names' column has no title).
      if (tok.empty() || tok[0] != "GPU0" || !(line[0] == ' ' || line[0] == '\t')) return;
      std::size_t i = 0;
      for (; i < tok.size() && device_name(tok[i]); ++i) t.columns.emplace_back(tok[i]);
      // The rest are affinity titles of one to three words.
      while (i < tok.size()) {
        if (tok[i] == "CPU" && i + 1 < tok.size() && tok[i + 1] == "Affinity") t.affinity_columns.push_back("CPU Affinity"), i += 2;
        else if (tok[i] == "NUMA" && i + 1 < tok.size() && tok[i + 1] == "Affinity") t.affinity_columns.push_back("NUMA Affinity"), i += 2;
        else if (tok[i] == "GPU" && i + 2 < tok.size() && tok[i + 1] == "NUMA" && tok[i + 2] == "ID")
          t.affinity_columns.push_back("GPU NUMA ID"), i += 3;
        else t.affinity_columns.emplace_back(tok[i]), ++i;
      }
      at = At::matrix;
      header_line = lineno;
      return;
    }
    if (tok.empty()) {
      if (at == At::matrix && !t.rows.empty()) at = At::after;
      return;
    }
    if (tok[0] == "Legend:") {
      t.legend = true;
      at = At::after;
      return;
    }
    if (tok[0] == "NIC" && tok.size() > 1 && tok[1] == "Legend:") {
      nic_legend = true;
      at = At::after;
      return;
    }
    if (at == At::after) {
      // "  NIC0: mlx5_0"
      if (nic_legend && tok.size() == 2 && tok[0].size() > 4 && tok[0].back() == ':' && tok[0].starts_with("NIC"))
        t.nic_names[std::string(tok[0].substr(0, tok[0].size() - 1))] = std::string(tok[1]);
      return;
    }
    // A matrix row: a column's name, its cells, then the affinity values.
    if (std::find(t.columns.begin(), t.columns.end(), tok[0]) == t.columns.end()) {
      t.damaged.push_back({"not a row of the matrix (no device " + std::string(tok[0].substr(0, 40)) + " in the header)", lineno});
      return;
    }
    TopoRow r;
    r.name = std::string(tok[0]);
    r.line = lineno;
    std::size_t i = 1;
    for (; i < tok.size() && r.links.size() < t.columns.size(); ++i) {
      auto cells = split_cells(tok[i]);
      if (cells.empty()) break;
      for (auto& c : cells) r.links.push_back(std::move(c));
    }
    if (r.links.size() != t.columns.size()) {
      t.damaged.push_back(
          {r.name + ": " + std::to_string(r.links.size()) + " link cells, the header has " + std::to_string(t.columns.size()) + " devices",
           lineno});
      return;
    }
    std::vector<std::string> rest;
    for (; i < tok.size(); ++i) rest.emplace_back(tok[i]);
    for (std::size_t k = 0; k < rest.size() && k < t.affinity_columns.size(); ++k) {
      const auto& col = t.affinity_columns[k];
      if (col == "CPU Affinity") r.cpu_affinity = rest[k];
      else if (col == "NUMA Affinity") r.numa_affinity = rest[k];
      else if (col == "GPU NUMA ID") r.gpu_numa_id = rest[k];
    }
    // The diagonal is the device itself.
    auto self = static_cast<std::size_t>(std::find(t.columns.begin(), t.columns.end(), r.name) - t.columns.begin());
    if (r.links[self] != "X") t.damaged.push_back({r.name + ": its own cell is " + r.links[self] + ", not X", lineno});
    t.rows.push_back(std::move(r));
  });
  if (at == At::before) return parse_fail("no nvidia-smi topo -m matrix (a header line of GPU0 ... columns)");
  bool gpu_row = std::any_of(t.rows.begin(), t.rows.end(), [&](const TopoRow& r) { return t.is_gpu(r.name); });
  if (!gpu_row) return parse_fail("nvidia-smi topo -m header with no readable GPU row", header_line);
  return t;
}

Parsed<NvidiaSmi> parse_nvidia_smi(std::string_view text) {
  auto body = text;
  if (body.starts_with("\xEF\xBB\xBF")) body.remove_prefix(3);
  auto first = body.find_first_not_of(" \t\r\n");
  if (first == std::string_view::npos) return parse_fail("empty");
  NvidiaSmi out;
  bool xml = body[first] == '<';
  if (!xml) {
    auto t = parse_nvidia_smi_topo(text);
    if (t) {
      out.kind = NvidiaSmi::Kind::topo;
      out.topo = std::move(*t);
      return out;
    }
    // A command echo or prompt before the XML.
    auto root = body.find("<nvidia_smi_log");
    if (root == std::string_view::npos) return tl::unexpected(t.error());
    auto x = parse_nvidia_smi_xml(body.substr(root));
    if (!x)
      return parse_fail(x.error().message, x.error().line ? x.error().line + line_of(text, root + (body.data() - text.data())) - 1 : 0);
    out.query = std::move(*x);
    return out;
  }
  if (body.substr(first).starts_with("<system") || (body.find("<system") != std::string_view::npos && body.find("<nvidia_smi_log") == std::string_view::npos)) {
    if (text.size() > kMaxTopoBytes) return parse_fail("an NCCL topology file over 4 MiB");
    auto t = parse_nccl_topo(text);
    if (!t) return parse_fail("NCCL topology file: " + t.error());
    out.kind = NvidiaSmi::Kind::nccl_topo;
    out.nccl_topo = std::move(*t);
    return out;
  }
  auto x = parse_nvidia_smi_xml(text);
  if (!x) return tl::unexpected(x.error());
  out.query = std::move(*x);
  return out;
}

}  // namespace perfgap::parsers
