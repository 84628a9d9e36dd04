#include "parsers/nvml_json.hpp"

#include <algorithm>
#include <cstdint>
#include <optional>

#include <nlohmann/json.hpp>

namespace perfgap::parsers {

namespace {
// Named inside the anonymous namespace: unity builds batch this file with the other parsers,
// whose file-local helpers have the same names.
namespace nvml_json {

using nlohmann::json;

// A field of the wrong type is an error naming it; a missing one is an absent fact.
struct Bad {
  std::string what;
};

const json* field(const json& o, const char* k) {
  auto it = o.find(k);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

const json* object(const json& o, const char* k, const std::string& where) {
  const json* v = field(o, k);
  if (v && !v->is_object()) throw Bad{where + "." + k + ": not an object"};
  return v;
}

std::optional<double> number(const json* o, const char* k, const std::string& where) {
  if (!o) return std::nullopt;
  const json* v = field(*o, k);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw Bad{where + "." + k + ": not a number"};
  return v->get<double>();
}

std::optional<std::uint64_t> count(const json* o, const char* k, const std::string& where) {
  if (!o) return std::nullopt;
  const json* v = field(*o, k);
  if (!v) return std::nullopt;
  if (!v->is_number_unsigned()) throw Bad{where + "." + k + ": not a count"};
  return v->get<std::uint64_t>();
}

std::optional<int> small(const json* o, const char* k, const std::string& where) {
  auto n = count(o, k, where);
  if (n && *n > 1'000'000) throw Bad{where + "." + k + ": out of range"};
  return n ? std::optional<int>(static_cast<int>(*n)) : std::nullopt;
}

std::optional<bool> flag(const json* o, const char* k, const std::string& where) {
  if (!o) return std::nullopt;
  const json* v = field(*o, k);
  if (!v) return std::nullopt;
  if (!v->is_boolean()) throw Bad{where + "." + k + ": not true/false"};
  return v->get<bool>();
}

std::optional<std::string> str(const json* o, const char* k, const std::string& where) {
  if (!o) return std::nullopt;
  const json* v = field(*o, k);
  if (!v) return std::nullopt;
  if (!v->is_string()) throw Bad{where + "." + k + ": not a string"};
  return v->get<std::string>();
}

// NVML_GPU_FABRIC_HEALTH_MASK_* fields in nvidia-smi's -q -x names: 2-bit fields are
// 0 not supported, 1 true, 2 false.
void decode_health(unsigned mask, std::map<std::string, std::string>& h) {
  auto two = [&](const char* name, int shift, const char* yes, const char* no) {
    unsigned v = (mask >> shift) & 0x3u;
    if (v == 1) h[name] = yes;
    else if (v == 2) h[name] = no;
  };
  two("bandwidth", 0, "Degraded", "Full");
  two("route_recovery_in_progress", 2, "True", "False");
  two("route_unhealthy", 4, "True", "False");
  two("access_timeout_recovery", 6, "True", "False");
  // A 4-bit field: 1 correct, 2.. which check found the configuration wrong.
  static const char* const kIncorrect[] = {
      "sysguid",          "chassis serial number", "no partition", "insufficient NVLinks", "incompatible GPU firmware",
      "invalid location", "GPU state invalid"};
  unsigned ic = (mask >> 8) & 0xfu;
  if (ic == 1) h["incorrect_configuration"] = "False";
  else if (ic >= 2) {
    h["incorrect_configuration"] = "True";
    h["incorrect_configuration_reason"] = ic - 2 < std::size(kIncorrect) ? kIncorrect[ic - 2] : "code " + std::to_string(ic);
  }
  two("partition_assigned", 12, "True", "False");
}

std::string format_uuid(const std::string& hex) {
  if (hex.size() != 32) return hex;
  return hex.substr(0, 8) + "-" + hex.substr(8, 4) + "-" + hex.substr(12, 4) + "-" + hex.substr(16, 4) + "-" + hex.substr(20);
}

GpuFabric read_fabric(const json& fb, const std::string& where) {
  GpuFabric f;
  auto state = count(&fb, "state", where);
  if (state && *state != 0) {
    static const char* const kStates[] = {"Not Supported", "Not Started", "In Progress", "Completed"};
    f.state = *state < 4 ? kStates[*state] : "Unknown (" + std::to_string(*state) + ")";
    // NVML: the status means something only once the probe completed.
    if (*state == 3) {
      const json* st = field(fb, "status");
      if (st && !st->is_number_integer()) throw Bad{where + ".status: not an NVML return code"};
      if (st) f.status = st->get<long long>() == 0 ? std::string("Success") : "NVML error " + std::to_string(st->get<long long>());
    }
  }
  if (auto c = count(&fb, "clique_id", where); c && f.state) f.clique_id = std::to_string(*c);
  if (auto u = str(&fb, "cluster_uuid", where); u && f.state) f.cluster_uuid = format_uuid(*u);
  if (auto m = count(&fb, "health_mask", where)) decode_health(static_cast<unsigned>(*m), f.health);
  if (auto s = count(&fb, "health_summary", where)) {
    static const char* const kSummary[] = {nullptr, "Healthy", "Unhealthy", "Limited Capacity"};
    if (*s >= 1 && *s <= 3) f.health_summary = kSummary[*s];
  }
  return f;
}

GpuFacts read_gpu(const json& g, const std::string& where) {
  GpuFacts f;
  f.name = str(&g, "name", where).value_or("");
  f.uuid = str(&g, "uuid", where).value_or("");
  f.pci_bus_id = str(&g, "pci_bus_id", where).value_or("");
  f.persistence = flag(&g, "persistence", where);
  f.mig_enabled = flag(&g, "mig_enabled", where);
  if (auto p = small(&g, "performance_state", where)) f.performance_state = "P" + std::to_string(*p);
  f.gpu_util_pct = number(&g, "gpu_util_pct", where);

  const json* c = object(g, "clocks", where);
  std::string cw = where + ".clocks";
  f.clocks.sm_mhz = number(c, "sm_mhz", cw);
  f.clocks.mem_mhz = number(c, "mem_mhz", cw);
  f.clocks.app_sm_mhz = number(c, "app_sm_mhz", cw);
  f.clocks.app_mem_mhz = number(c, "app_mem_mhz", cw);
  f.clocks.default_app_sm_mhz = number(c, "default_app_sm_mhz", cw);
  f.clocks.default_app_mem_mhz = number(c, "default_app_mem_mhz", cw);
  f.clocks.max_sm_mhz = number(c, "max_sm_mhz", cw);
  f.clocks.max_mem_mhz = number(c, "max_mem_mhz", cw);
  if (const json* ev = object(g, "clock_events", where))
    for (const auto& [k, v] : ev->items()) {
      if (!v.is_boolean()) throw Bad{where + ".clock_events." + k + ": not true/false"};
      f.clock_events[k] = v.get<bool>();
    }
  if (const json* vn = object(g, "violation_ns", where))
    for (const auto& [k, v] : vn->items()) {
      if (!v.is_number_unsigned()) throw Bad{where + ".violation_ns." + k + ": not a count"};
      f.violation_ns[k] = v.get<std::uint64_t>();
    }

  const json* p = object(g, "power", where);
  std::string pw = where + ".power";
  f.power.draw_w = number(p, "draw_w", pw);
  f.power.enforced_limit_w = number(p, "enforced_limit_w", pw);
  f.power.default_limit_w = number(p, "default_limit_w", pw);
  f.power.max_limit_w = number(p, "max_limit_w", pw);
  f.temp_c = number(&g, "temp_c", where);
  f.slowdown_temp_c = number(&g, "slowdown_temp_c", where);
  f.shutdown_temp_c = number(&g, "shutdown_temp_c", where);

  if (const json* e = object(g, "ecc", where)) {
    std::string ew = where + ".ecc";
    f.ecc_enabled = flag(e, "enabled", ew);
    f.ecc_pending_enabled = flag(e, "pending_enabled", ew);
    const json* vol = object(*e, "volatile", ew);
    const json* agg = object(*e, "aggregate", ew);
    f.ecc_volatile = {count(vol, "corrected", ew + ".volatile"), count(vol, "uncorrected", ew + ".volatile")};
    f.ecc_aggregate = {count(agg, "corrected", ew + ".aggregate"), count(agg, "uncorrected", ew + ".aggregate")};
  }
  if (const json* rr = object(g, "remapped_rows", where)) {
    std::string rw = where + ".remapped_rows";
    f.remapped_rows =
        GpuRemappedRows{count(rr, "correctable", rw), count(rr, "uncorrectable", rw), flag(rr, "pending", rw), flag(rr, "failure", rw)};
  }
  f.retirement_pending = flag(&g, "retirement_pending", where);

  const json* l = object(g, "pcie", where);
  std::string lw = where + ".pcie";
  f.pcie.gen_current = small(l, "gen_current", lw);
  f.pcie.gen_max = small(l, "gen_max", lw);
  f.pcie.width_current = small(l, "width_current", lw);
  f.pcie.width_max = small(l, "width_max", lw);
  f.pcie.replay_counter = count(l, "replay_counter", lw);

  if (const json* links = field(g, "nvlinks")) {
    if (!links->is_array()) throw Bad{where + ".nvlinks: not an array"};
    std::vector<GpuNvLink> out;
    for (std::size_t i = 0; i < links->size(); ++i) {
      const json& x = (*links)[i];
      std::string xw = where + ".nvlinks[" + std::to_string(i) + "]";
      if (!x.is_object()) throw Bad{xw + ": not an object"};
      GpuNvLink n;
      auto link = small(&x, "link", xw);
      if (!link) throw Bad{xw + ": no link number"};
      n.link = *link;
      n.up = flag(&x, "up", xw);
      auto flit = count(&x, "crc_flit", xw), data = count(&x, "crc_data", xw);
      if (flit || data) n.crc_errors = flit.value_or(0) + data.value_or(0);
      n.replay_errors = count(&x, "replay", xw);
      n.recovery_errors = count(&x, "recovery", xw);
      out.push_back(n);
    }
    f.nvlinks = std::move(out);
  }
  if (auto mbps = count(&g, "nvlink_speed_mbps", where)) f.nvlink_speed_gbps = static_cast<double>(*mbps) / 1000.0;
  if (const json* fb = object(g, "fabric", where)) f.fabric = read_fabric(*fb, where + ".fabric");
  return f;
}

int line_of(std::string_view text, std::size_t byte) {
  byte = std::min(byte, text.size());
  return 1 + static_cast<int>(std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(byte), '\n'));
}

}  // namespace nvml_json
}  // namespace

Parsed<NvmlHelperOutput> parse_nvml_json(std::string_view text) {
  // Declarations, not a using-directive: other parsers' helpers of these names stay hidden.
  using nvml_json::Bad, nvml_json::field, nvml_json::flag, nvml_json::json, nvml_json::line_of, nvml_json::object, nvml_json::read_gpu,
      nvml_json::str;
  json doc;
  try {
    doc = json::parse(text.begin(), text.end());
  } catch (const json::parse_error& e) {
    return parse_fail(std::string("not JSON: ") + e.what(), line_of(text, e.byte > 0 ? e.byte - 1 : 0));
  } catch (const json::exception& e) {
    // A number beyond a double ("8e999"): out_of_range, with no position.
    return parse_fail(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) return parse_fail("not a perfgap-gpu document: the top level is not an object", 1);
  auto schema = doc.find("schema");
  if (schema == doc.end() || !schema->is_number_unsigned() || schema->get<std::uint64_t>() != 1)
    return parse_fail("not a perfgap-gpu schema 1 document (\"schema\" missing or not 1)", 1);
  NvmlHelperOutput out;
  auto& snap = out.snapshot;
  snap.schema = "perfgap-gpu/1";
  try {
    snap.driver_version = str(&doc, "driver_version", "document").value_or("");
    out.forced = flag(&doc, "forced", "document").value_or(false);
    if (const json* m = field(doc, "missing_calls")) {
      if (!m->is_array()) throw Bad{"missing_calls: not an array"};
      for (const auto& x : *m)
        if (x.is_string()) out.missing_calls.push_back(x.get<std::string>());
    }
    const json* gpus = field(doc, "gpus");
    if (!gpus || !gpus->is_array()) throw Bad{"gpus: missing or not an array"};
    snap.attached_gpus = static_cast<int>(gpus->size());
    for (std::size_t i = 0; i < gpus->size(); ++i) {
      const json& g = (*gpus)[i];
      std::string where = "gpus[" + std::to_string(i) + "]";
      if (!g.is_object()) throw Bad{where + ": not an object"};
      GpuFacts f = read_gpu(g, where);
      std::string id = !f.uuid.empty() ? f.uuid : !f.pci_bus_id.empty() ? f.pci_bus_id : where;
      if (auto why = str(&g, "skipped", where)) out.skipped[id] = *why;
      if (const json* e = object(g, "errors", where))
        for (const auto& [call, code] : e->items()) {
          if (!code.is_number_integer()) throw Bad{where + ".errors." + call + ": not an NVML return code"};
          out.errors[id][call] = code.get<int>();
        }
      // A GPU without even a handle has nothing to judge.
      if (f.uuid.empty() && f.pci_bus_id.empty()) continue;
      snap.gpus.push_back(std::move(f));
    }
  } catch (const Bad& b) {
    return parse_fail(b.what);
  } catch (const json::exception& e) {
    return parse_fail(std::string("unreadable value: ") + e.what());
  }
  return out;
}

}  // namespace perfgap::parsers
