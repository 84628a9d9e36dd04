#include "parsers/gpu_probe_json.hpp"

#include <cmath>
#include <cstdint>

#include <nlohmann/json.hpp>

namespace perfgap::parsers {
namespace {
// Own namespace: unity builds batch this file with nvml_json.cpp, whose helpers share names.
namespace gpu_probe_json {

using nlohmann::json;

struct Bad {
  std::string what;
};

const json* field(const json& o, const char* k) {
  auto it = o.find(k);
  return it == o.end() || it->is_null() ? nullptr : &*it;
}

// Rates and latencies: finite, not negative.
std::optional<double> rate(const json& o, const char* k, const std::string& where) {
  const json* v = field(o, k);
  if (!v) return std::nullopt;
  if (!v->is_number()) throw Bad{where + "." + k + ": not a number"};
  double d = v->get<double>();
  if (!std::isfinite(d) || d < 0) throw Bad{where + "." + k + ": not a non-negative number"};
  return d;
}

std::string text(const json& o, const char* k, const std::string& where) {
  const json* v = field(o, k);
  if (!v) return {};
  if (!v->is_string()) throw Bad{where + "." + k + ": not a string"};
  return v->get<std::string>();
}

std::optional<int> small_int(const json& o, const char* k, const std::string& where, long long lo, long long hi) {
  const json* v = field(o, k);
  if (!v) return std::nullopt;
  if (!v->is_number_integer()) throw Bad{where + "." + k + ": not an integer"};
  auto n = v->get<long long>();
  if (n < lo || n > hi) throw Bad{where + "." + k + ": out of range"};
  return static_cast<int>(n);
}

int probe_line_of(std::string_view t, std::size_t byte) {
  int line = 1;
  for (std::size_t i = 0; i < byte && i < t.size(); ++i)
    if (t[i] == '\n') ++line;
  return line;
}

GpuProbeDevice read_device(const json& g, std::size_t i) {
  const std::string where = "gpus[" + std::to_string(i) + "]";
  if (!g.is_object()) throw Bad{where + ": not an object"};
  GpuProbeDevice d;
  d.index = small_int(g, "index", where, 0, 1 << 20).value_or(static_cast<int>(i));
  d.name = text(g, "name", where);
  d.bus_id = text(g, "pci_bus_id", where);
  d.error = text(g, "error", where);
  if (const json* c = field(g, "copies")) {
    if (!c->is_array()) throw Bad{where + ".copies: not an array"};
    for (std::size_t j = 0; j < c->size(); ++j) {
      const json& x = (*c)[j];
      const std::string w = where + ".copies[" + std::to_string(j) + "]";
      if (!x.is_object()) throw Bad{w + ": not an object"};
      GpuProbeCopy copy;
      auto node = small_int(x, "node", w, 0, 1 << 16);
      if (!node) throw Bad{w + ".node: missing"};
      copy.node = *node;
      copy.h2d_gbps = rate(x, "h2d_gbps", w);
      copy.d2h_gbps = rate(x, "d2h_gbps", w);
      copy.error = text(x, "error", w);
      d.copies.push_back(std::move(copy));
    }
  }
  if (const json* l = field(g, "launch")) {
    if (!l->is_object()) throw Bad{where + ".launch: not an object"};
    d.launch_p50_us = rate(*l, "p50_us", where + ".launch");
    d.launch_p99_us = rate(*l, "p99_us", where + ".launch");
    d.launches = small_int(*l, "count", where + ".launch", 0, 100'000'000).value_or(0);
  }
  return d;
}

}  // namespace gpu_probe_json
}  // namespace

Parsed<GpuProbeDoc> parse_gpu_probe_json(std::string_view t) {
  using gpu_probe_json::Bad, gpu_probe_json::field, gpu_probe_json::json, gpu_probe_json::text;
  json doc;
  try {
    doc = json::parse(t.begin(), t.end());
  } catch (const json::parse_error& e) {
    return parse_fail(std::string("not JSON: ") + e.what(), gpu_probe_json::probe_line_of(t, e.byte > 0 ? e.byte - 1 : 0));
  } catch (const json::exception& e) {
    return parse_fail(std::string("not JSON: ") + e.what());
  }
  if (!doc.is_object()) return parse_fail("not a perfgap-gpu probe document: the top level is not an object", 1);
  const json* kind = field(doc, "kind");
  const json* schema = field(doc, "schema");
  if (!kind || !kind->is_string() || kind->get<std::string>() != "probe" || !schema || !schema->is_number_unsigned() ||
      schema->get<std::uint64_t>() != 1)
    return parse_fail("not a perfgap-gpu probe document (\"kind\": \"probe\", \"schema\": 1 missing)", 1);
  GpuProbeDoc out;
  try {
    out.driver_version = text(doc, "driver_version", "document");
    out.error = text(doc, "error", "document");
    if (const json* g = field(doc, "gpus")) {
      if (!g->is_array()) throw Bad{"gpus: not an array"};
      for (std::size_t i = 0; i < g->size(); ++i) out.gpus.push_back(gpu_probe_json::read_device((*g)[i], i));
    }
  } catch (const Bad& b) {
    return parse_fail(b.what);
  }
  return out;
}

}  // namespace perfgap::parsers
