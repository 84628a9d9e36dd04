#include "parsers/nvidia_smi.hpp"

#include <algorithm>
#include <cctype>
#include <cstdlib>
#include <map>
#include <optional>

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
  f.virtualization_mode = value(g, "gpu_virtualization_mode/virtualization_mode");
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
  f.retired_pages_sbe = count(g, "retired_pages/multiple_single_bit_retirement/retired_count");
  f.retired_pages_dbe = count(g, "retired_pages/double_bit_retirement/retired_count");
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
// The facts of every <gpu> under a -q -x root (or the one made from -q text).
GpuSnapshot read_log(const pugi::xml_node& root) {
  GpuSnapshot s;
  s.driver_version = value(root, "driver_version").value_or("");
  s.cuda_version = value(root, "cuda_version").value_or("");
  s.timestamp = value(root, "timestamp").value_or("");
  s.attached_gpus = small_int(root, "attached_gpus");
  for (auto g = root.child("gpu"); g; g = g.next_sibling("gpu")) s.gpus.push_back(read_gpu(g));
  return s;
}

// "Pending Page Blacklist" -> "pending_page_blacklist", "SEC-DED" -> "secded".
std::string snake(std::string_view name) {
  std::string out;
  for (char c : name) {
    if (c == ' ') out += '_';
    else if (c != '-' && c != '.') out += static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  }
  return out;
}

// The -q -x element of a -q text line, by its sections ("PCI/GPU Link Info/Link Width/") and
// key: only the elements read_gpu and read_log read (the texts' names are nvidia-smi's; the
// elements' its DTD's). nullopt: not one perfgap reads.
std::optional<std::string> query_text_element(bool top, const std::string& sections, const std::string& key) {
  static const std::map<std::string, std::string, std::less<>> kTop = {
      {"Timestamp", "timestamp"}, {"Driver Version", "driver_version"}, {"CUDA Version", "cuda_version"}, {"Attached GPUs", "attached_gpus"}};
  static const std::map<std::string, std::string, std::less<>> kGpu = {
      {"Product Name", "product_name"},
      {"Product Architecture", "product_architecture"},
      {"Persistence Mode", "persistence_mode"},
      {"GPU UUID", "uuid"},
      {"MIG Mode/Current", "mig_mode/current_mig"},
      {"Performance State", "performance_state"},
      {"GPU Virtualization Mode/Virtualization Mode", "gpu_virtualization_mode/virtualization_mode"},
      {"Utilization/Gpu", "utilization/gpu_util"},
      {"Clocks/SM", "clocks/sm_clock"},
      {"Clocks/Memory", "clocks/mem_clock"},
      {"Applications Clocks/Graphics", "applications_clocks/graphics_clock"},
      {"Applications Clocks/Memory", "applications_clocks/mem_clock"},
      {"Default Applications Clocks/Graphics", "default_applications_clocks/graphics_clock"},
      {"Default Applications Clocks/Memory", "default_applications_clocks/mem_clock"},
      {"Max Clocks/SM", "max_clocks/sm_clock"},
      {"Max Clocks/Memory", "max_clocks/mem_clock"},
      {"Temperature/GPU Current Temp", "temperature/gpu_temp"},
      {"Temperature/Memory Current Temp", "temperature/memory_temp"},
      {"Temperature/GPU Slowdown Temp", "temperature/gpu_temp_slow_threshold"},
      {"Temperature/GPU Shutdown Temp", "temperature/gpu_temp_max_threshold"},
      {"ECC Mode/Current", "ecc_mode/current_ecc"},
      {"ECC Mode/Pending", "ecc_mode/pending_ecc"},
      // The same NVML flag under its old and new names.
      {"Retired Pages/Pending Page Blacklist", "retired_pages/pending_retirement"},
      {"Retired Pages/Pending Page Retirement", "retired_pages/pending_retirement"},
      {"Retired Pages/Single Bit ECC", "retired_pages/multiple_single_bit_retirement/retired_count"},
      {"Retired Pages/Double Bit ECC", "retired_pages/double_bit_retirement/retired_count"},
      {"Remapped Rows/Correctable Error", "remapped_rows/remapped_row_corr"},
      {"Remapped Rows/Uncorrectable Error", "remapped_rows/remapped_row_unc"},
      {"Remapped Rows/Pending", "remapped_rows/remapped_row_pending"},
      {"Remapped Rows/Remapping Failure Occurred", "remapped_rows/remapped_row_failure"},
      {"PCI/Bus Id", "pci/pci_bus_id"},
      {"PCI/GPU Link Info/PCIe Generation/Max", "pci/pci_gpu_link_info/pcie_gen/max_link_gen"},
      {"PCI/GPU Link Info/PCIe Generation/Current", "pci/pci_gpu_link_info/pcie_gen/current_link_gen"},
      {"PCI/GPU Link Info/Link Width/Max", "pci/pci_gpu_link_info/link_widths/max_link_width"},
      {"PCI/GPU Link Info/Link Width/Current", "pci/pci_gpu_link_info/link_widths/current_link_width"},
      {"PCI/Replays Since Reset", "pci/replay_counter"},
      {"PCI/Replay Number Rollovers", "pci/replay_rollover_counter"},
      {"Fabric/State", "fabric/state"},
      {"Fabric/Status", "fabric/status"},
      {"Fabric/CliqueId", "fabric/cliqueId"},
      {"Fabric/ClusterUUID", "fabric/clusterUuid"},
      {"Fabric/Health/Summary", "fabric/health/summary"},
  };
  const std::string path = sections + key;
  if (top) {
    auto it = kTop.find(path);
    return it == kTop.end() ? std::nullopt : std::optional<std::string>(it->second);
  }
  if (auto it = kGpu.find(path); it != kGpu.end()) return it->second;
  // Named alike in both: the clock event reasons (HW Thermal Slowdown under HW Slowdown is at
  // the reasons' level), the power readings, the ECC counts, the fabric's health mask.
  if (sections == "Clocks Event Reasons/" || sections == "Clocks Throttle Reasons/")
    return "clocks_event_reasons/clocks_event_reason_" + (key == "Idle" ? std::string("gpu_idle") : snake(key));
  if (sections == "GPU Power Readings/" || sections == "Power Readings/") return snake(sections.substr(0, sections.size() - 1)) + "/" + snake(key);
  if (sections.starts_with("ECC Errors/")) {
    std::string el;
    for (std::size_t a = 0, b; (b = sections.find('/', a)) != std::string::npos; a = b + 1) el += snake(sections.substr(a, b - a)) + "/";
    return el + snake(key);
  }
  if (sections == "Fabric/Health/") return "fabric/health/" + snake(key);
  return std::nullopt;
}

// `value` at `path` ("pci/pci_gpu_link_info/pcie_gen/max_link_gen") under `node`.
void set_path(pugi::xml_node node, const std::string& path, const std::string& value) {
  std::size_t a = 0;
  while (true) {
    const auto b = path.find('/', a);
    const std::string name = path.substr(a, b == std::string::npos ? std::string::npos : b - a);
    auto child = node.child(name.c_str());
    if (!child) child = node.append_child(name.c_str());
    node = child;
    if (b == std::string::npos) break;
    a = b + 1;
  }
  node.text().set(value.c_str());
}

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
  GpuSnapshot s = read_log(root);
  s.schema = doctype_schema(text);
  if (s.gpus.empty()) return parse_fail("nvidia-smi -q -x log without a <gpu> element");
  return s;
}

Parsed<GpuSnapshot> parse_nvidia_smi_query_text(std::string_view text) {
  pugi::xml_document doc;
  auto root = doc.append_child("nvidia_smi_log");
  pugi::xml_node gpu;
  // The sections open above the current line: (indent, name).
  std::vector<std::pair<std::size_t, std::string>> open;
  bool banner = false;
  int lineno = 0, gpus = 0;
  for_each_line(text, [&](std::string_view raw) {
    ++lineno;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const auto start = raw.find_first_not_of(" \t");
    if (start == std::string_view::npos) return;
    const auto line = sys::trim_ws(raw);
    if (line.starts_with("====")) {
      banner = banner || line.find("NVSMI LOG") != std::string_view::npos;
      return;
    }
    // "Key     : value" (the key padded to a column), or a section's name alone.
    const auto sep = line.find(" :");
    const bool pair = sep != std::string_view::npos && (sep + 2 == line.size() || line[sep + 2] == ' ');
    const std::string key(pair ? sys::trim_ws(line.substr(0, sep)) : line);
    const std::string val(pair ? sys::trim_ws(line.substr(sep + 2)) : std::string_view());
    if (start == 0) {
      open.clear();
      if (!pair && key.starts_with("GPU ")) {
        gpu = root.append_child("gpu");
        gpu.append_attribute("id").set_value(std::string(sys::trim_ws(std::string_view(key).substr(4))).c_str());
        ++gpus;
        return;
      }
      gpu = pugi::xml_node();
      if (pair)
        if (auto el = query_text_element(true, "", key)) set_path(root, *el, val);
      return;
    }
    if (!gpu) return;
    while (!open.empty() && open.back().first >= start) open.pop_back();
    if (!pair) {
      open.emplace_back(start, key);
      return;
    }
    std::string path;
    for (const auto& [indent, name] : open) path += name + "/";
    if (auto el = query_text_element(false, path, key)) set_path(gpu, *el, val);
  });
  if (!banner) return parse_fail("no nvidia-smi -q output (its ==============NVSMI LOG============== banner)");
  if (gpus == 0) return parse_fail("nvidia-smi -q output without a GPU section (a line \"GPU 00000000:01:00.0\")");
  return read_log(root);
}

Parsed<GpuSnapshot> parse_nvidia_smi_nvlink(std::string_view text) {
  GpuSnapshot s;
  int lineno = 0;
  std::optional<ParseError> bad;
  for_each_line(text, [&](std::string_view raw) {
    ++lineno;
    if (bad) return;
    const auto line = sys::trim_ws(raw);
    if (line.empty()) return;
    // "GPU 0: NVIDIA A100-SXM4-80GB (UUID: GPU-5269b708-...)"
    if (line.starts_with("GPU ")) {
      const auto colon = line.find(": "), uuid = line.rfind("(UUID: ");
      if (colon == std::string_view::npos || uuid == std::string_view::npos || uuid < colon || !line.ends_with(")")) {
        bad = ParseError{"not a GPU line of nvidia-smi nvlink -s (GPU N: NAME (UUID: ...))", lineno};
        return;
      }
      GpuFacts g;
      g.name = std::string(sys::trim_ws(line.substr(colon + 2, uuid - colon - 2)));
      g.uuid = std::string(line.substr(uuid + 7, line.size() - uuid - 8));
      g.nvlinks.emplace();
      s.gpus.push_back(std::move(g));
      return;
    }
    if (s.gpus.empty()) {
      bad = ParseError{"nvidia-smi nvlink -s output starts with its GPU lines (GPU N: NAME (UUID: ...))", lineno};
      return;
    }
    // "Link 3: 25 GB/s", "Link 3: <inactive>"; NVML's "Unable to retrieve NVLink information as
    // all links are inactive": no link up, their number not said.
    if (line.starts_with("NVML:") && line.find("inactive") != std::string_view::npos) return;
    if (line.starts_with("Link ")) {
      const auto colon = line.find(':');
      auto n = colon == std::string_view::npos ? std::nullopt : sys::to_int<int>(sys::trim_ws(line.substr(5, colon - 5)));
      if (n && *n >= 0 && *n < 1024) {
        const auto state = sys::trim_ws(line.substr(colon + 1));
        auto speed = tooltext::number(state.substr(0, state.find(' ')));
        if (state == "<inactive>" || (speed && state.ends_with("/s"))) {
          GpuNvLink l;
          l.link = *n;
          l.up = state != "<inactive>" && *speed > 0;
          if (l.up.value_or(false) && state.ends_with(" GB/s")) l.speed_gbps = *speed;
          s.gpus.back().nvlinks->push_back(l);
          return;
        }
      }
    }
    bad = ParseError{"not a line of nvidia-smi nvlink -s (Link N: 25 GB/s, Link N: <inactive>)", lineno};
  });
  if (bad) return tl::unexpected(*bad);
  if (s.gpus.empty()) return parse_fail("no GPU line of nvidia-smi nvlink -s (GPU N: NAME (UUID: ...))");
  return s;
}

Parsed<GpuTopology> parse_nvidia_smi_topo(std::string_view text) {
  GpuTopology t;
  enum class At { before, matrix, after } at = At::before;
  bool nic_legend = false;
  bool p2p_cells = false;  // cells of nvidia-smi topo -p2p's capability matrix (OK, NS, ...)
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
      if (cells.empty()) {
        for (std::string_view w : {"OK", "NS", "CNS", "GNS", "TNS", "U"}) p2p_cells = p2p_cells || tok[i] == w;
        break;
      }
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
  if (!gpu_row && p2p_cells)
    return parse_fail("an nvidia-smi topo -p2p capability matrix (cells OK, NS, CNS, GNS, TNS, U), not topo -m's link matrix: capture "
                      "`nvidia-smi topo -m` (the links between GPUs and NICs) for perfgap",
                      header_line);
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
  // The form, by the first line: -q's banner, nvlink -s's first GPU line, else a matrix.
  const auto first_line = sys::trim_ws(body.substr(first, body.find('\n', first) - first));
  if (first_line.starts_with("====") && first_line.find("NVSMI LOG") != std::string_view::npos) {
    auto q = parse_nvidia_smi_query_text(text);
    if (!q) return tl::unexpected(q.error());
    out.form = "nvidia-smi -q";
    out.query = std::move(*q);
    return out;
  }
  if (first_line.starts_with("GPU ") && first_line.find("(UUID: ") != std::string_view::npos) {
    auto n = parse_nvidia_smi_nvlink(text);
    if (!n) return tl::unexpected(n.error());
    out.kind = NvidiaSmi::Kind::nvlink;
    out.form = "nvidia-smi nvlink -s";
    out.query = std::move(*n);
    return out;
  }
  if (!xml) {
    auto t = parse_nvidia_smi_topo(text);
    if (t) {
      out.kind = NvidiaSmi::Kind::topo;
      out.form = "nvidia-smi topo -m";
      out.topo = std::move(*t);
      return out;
    }
    // A command echo or prompt before the XML.
    auto root = body.find("<nvidia_smi_log");
    if (root == std::string_view::npos) return tl::unexpected(t.error());
    auto x = parse_nvidia_smi_xml(body.substr(root));
    if (!x)
      return parse_fail(x.error().message, x.error().line ? x.error().line + line_of(text, root + (body.data() - text.data())) - 1 : 0);
    out.form = "nvidia-smi -q -x";
    out.query = std::move(*x);
    return out;
  }
  if (body.substr(first).starts_with("<system") || (body.find("<system") != std::string_view::npos && body.find("<nvidia_smi_log") == std::string_view::npos)) {
    if (text.size() > kMaxTopoBytes) return parse_fail("an NCCL topology file over 4 MiB");
    auto t = parse_nccl_topo(text);
    if (!t) return parse_fail("NCCL topology file: " + t.error());
    out.kind = NvidiaSmi::Kind::nccl_topo;
    out.form = "NCCL topology file";
    out.nccl_topo = std::move(*t);
    return out;
  }
  auto x = parse_nvidia_smi_xml(text);
  if (!x) return tl::unexpected(x.error());
  out.form = "nvidia-smi -q -x";
  out.query = std::move(*x);
  return out;
}

}  // namespace perfgap::parsers
