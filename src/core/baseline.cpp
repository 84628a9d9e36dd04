#include "core/baseline.hpp"

#include <nlohmann/json.hpp>

#include "sys/named_file.hpp"
#include "sys/json_depth.hpp"

namespace perfgap::core {

tl::expected<facts::Baseline, std::string> load_baseline(const std::string& path) {
  auto text = sys::read_named_file(path, sys::kMaxReportFileBytes);
  if (!text) return tl::unexpected(path + ": " + text.error());
  if (auto at = sys::json_too_deep(*text))
    return tl::unexpected(path + ": byte " + std::to_string(*at) + ": nested deeper than 64 levels: not a perfgap report");
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(*text);
  } catch (const nlohmann::json::parse_error& e) {
    return tl::unexpected(path + ": not JSON (byte " + std::to_string(e.byte) + ")");
  } catch (const nlohmann::json::exception& e) {  // a number beyond double's range (1e400)
    std::string what = e.what();
    return tl::unexpected(path + ": not a usable report: " + what.substr(what.find(']') + 2));
  }
  if (!j.is_object() || !j.contains("schema") || j["schema"] != "perfgap.report/1")
    return tl::unexpected(path + ": not a perfgap report (schema perfgap.report/1)");
  if (!j.contains("node") || !j["node"].is_object())
    return tl::unexpected(path + ": the report has no node (take it with perfgap check --format json)");
  facts::Baseline b;
  b.file = path;
  const auto& node = j["node"];
  if (node.contains("name") && node["name"].is_string()) b.node_name = node["name"].get<std::string>();
  for (auto [key, dest] : {std::pair{"environment", &b.environment}, {"nccl_conf", &b.nccl_conf}, {"settings", &b.settings}}) {
    if (!node.contains(key)) continue;
    if (!node[key].is_object()) return tl::unexpected(path + ": node." + key + " is not an object");
    for (const auto& [k, v] : node[key].items())
      if (v.is_string()) (*dest)[k] = v.get<std::string>();
  }
  return b;
}

}  // namespace perfgap::core
