#include "contract.hpp"

#include "json_schema.hpp"

#include <set>

namespace perfgap::fixture {

std::vector<std::string> contract_violations(const nlohmann::json& j) {
  std::vector<std::string> bad;
  auto need = [&](const nlohmann::json& obj, const char* key, auto pred, const char* what) {
    if (!obj.is_object() || !obj.contains(key) || !pred(obj[key])) bad.push_back(std::string(key) + ": " + what);
  };
  auto is_str = [](const nlohmann::json& v) { return v.is_string(); };
  auto is_obj = [](const nlohmann::json& v) { return v.is_object(); };
  need(j, "schema", [](auto& v) { return v == "perfgap.report/1"; }, "must be perfgap.report/1");
  need(j, "tool", [](auto& v) { return v.is_object() && v.value("name", "") == "perfgap" && v.contains("version"); }, "name and version");
  need(j, "generated_at", [](auto& v) { return v.is_string() && v.template get<std::string>().size() == 20 && v.template get<std::string>().back() == 'Z'; }, "RFC 3339 UTC");
  need(j, "source", [](auto& v) {
    static const std::set<std::string> kinds{"live", "root", "analyze", "gap", "sweep", "fleet", "compare", "explain", "probe", "history", "whatif"};
    return v.is_object() && v.contains("kind") && kinds.count(v["kind"].template get<std::string>()) && v.contains("root") &&
           (v["root"].is_null() || v["root"].is_string()) && v.contains("inputs") && v["inputs"].is_array();
  }, "kind, root, inputs");
  if (j.contains("node") && j["node"].is_object()) {
    const auto& n = j["node"];
    for (auto k : {"name", "hostname", "arch", "kernel", "container"}) need(n, k, is_str, "string");
    need(n, "virtualized", [](auto& v) { return v.is_boolean() || v.is_null(); }, "bool or null");
    static const std::set<std::string> containers{"none", "docker", "podman", "kubernetes", "containerd", "runc", "enroot", "apptainer", "lxc", "systemd-nspawn", "bubblewrap", "other", "unknown"};
    if (n.contains("container") && n["container"].is_string() && !containers.count(n["container"].get<std::string>()))
      bad.push_back("node.container: not a runtime docs/CONTRACT.md lists");
    for (auto k : {"settings", "environment", "nccl_conf"}) {
      need(n, k, is_obj, "object");
      if (n.contains(k) && n[k].is_object())
        for (auto& [key, val] : n[k].items())
          if (!val.is_string()) bad.push_back(std::string("node.") + k + "." + key + ": not a string");
    }
  } else if (!j.contains("node") || !j["node"].is_null()) {
    bad.push_back("node: object or null");
  }
  static const std::set<std::string> statuses{"pass", "warn", "fail", "skip", "error"};
  static const std::set<std::string> layers{"virtualization", "cpu-power", "placement", "runtime-topology", "network",
                                            "gpu", "pcie", "workload", "fleet", "sweep"};
  std::map<std::string, int> counts;
  if (!j.contains("findings") || !j["findings"].is_array()) {
    bad.push_back("findings: array");
  } else {
    for (const auto& f : j["findings"]) {
      std::string id = f.value("id", "?");
      need(f, "id", [](auto& v) { return v.is_string() && !v.template get<std::string>().empty(); }, "non-empty string");
      need(f, "layer", [](auto& v) { return v.is_string() && layers.count(v.template get<std::string>()); }, "a contract layer");
      need(f, "status", [](auto& v) { return v.is_string() && statuses.count(v.template get<std::string>()); }, "a contract status");
      need(f, "title", [](auto& v) { return v.is_string() && !v.template get<std::string>().empty(); }, "non-empty title");
      need(f, "evidence", [](auto& v) {
        if (!v.is_array()) return false;
        for (auto& e : v)
          if (!e.is_object() || !e.contains("source") || !e.contains("observed") || !e["source"].is_string() || !e["observed"].is_string())
            return false;
        return true;
      }, "array of {source, observed[, expected]}");
      need(f, "metrics", [](auto& v) {
        if (!v.is_object()) return false;
        for (auto& [k, x] : v.items()) if (!x.is_number()) return false;
        return true;
      }, "object of numbers");
      if (f.contains("subject") && !f["subject"].is_string()) bad.push_back(id + ": subject not a string");
      if (f.contains("status") && f["status"].is_string()) counts[f["status"].get<std::string>()]++;
    }
  }
  if (j.contains("summary") && j["summary"].is_object()) {
    for (const auto& s : statuses)
      if (j["summary"].value(s, -1) != counts[s]) bad.push_back("summary." + s + " does not count the findings");
  } else {
    bad.push_back("summary: object");
  }
  // The published schema (docs/report.schema.json) too, so the file users validate against
  // cannot drift from what perfgap writes.
  for (auto& v : schema_violations(report_schema(), j)) bad.push_back("schema: " + v);
  return bad;
}

}  // namespace perfgap::fixture
