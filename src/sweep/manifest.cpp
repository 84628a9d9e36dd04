#include "sweep/manifest.hpp"

#include <nlohmann/json.hpp>

namespace perfgap::sweep {

std::string manifest_json(const Manifest& m) {
  using json = nlohmann::ordered_json;
  auto setting_env = [](const Setting& s) {
    json e = json::object();
    for (const auto& [k, v] : s.values) e[k] = v == kUnset ? json(nullptr) : json(v);
    return e;
  };
  json j;
  j["schema"] = kManifestSchema;
  j["status"] = m.status;
  j["started_at"] = m.started_at;
  j["finished_at"] = m.finished_at.empty() ? json(nullptr) : json(m.finished_at);
  j["command"] = m.command;
  j["launcher"] = m.launcher;
  json grid = json::array();
  for (const auto& a : m.grid) grid.push_back({{"name", a.name}, {"values", a.values}});
  j["grid"] = grid;
  j["baseline"] = m.settings.empty() ? json(nullptr) : json(m.settings[0].label());
  json settings = json::array();
  for (const auto& s : m.settings) settings.push_back(s.label());
  j["settings"] = settings;
  j["repeat"] = m.repeat;
  j["timeout_s"] = m.timeout_s > 0 ? json(m.timeout_s) : json(nullptr);
  j["sizes"] = m.sizes;
  json order = json::array();
  for (const auto& p : m.order) order.push_back(m.settings.at(p.setting).label());
  j["order"] = order;
  json runs = json::array();
  for (const auto& r : m.runs) {
    const auto& p = r.process;
    json o;
    o["run"] = r.number;
    o["setting"] = m.settings.at(r.setting).label();
    o["repeat"] = r.repeat;
    o["env"] = setting_env(m.settings.at(r.setting));
    o["argv"] = r.argv;
    o["started_at"] = r.started_at;
    o["duration_s"] = p.duration_s;
    o["exit_code"] = p.exit_code ? json(*p.exit_code) : json(nullptr);
    o["signal"] = p.signal ? json(*p.signal) : json(nullptr);
    o["timed_out"] = p.timed_out;
    o["interrupted"] = p.interrupted;
    o["spawn_error"] = p.spawn_error.empty() ? json(nullptr) : json(p.spawn_error);
    o["file"] = r.outcome.file;
    o["output_bytes"] = p.output_bytes;
    o["truncated"] = p.truncated;
    o["outcome"] = p.interrupted ? "interrupted" : r.outcome.ok ? "ok" : "failed";
    o["problem"] = r.outcome.ok ? json(nullptr) : json(r.outcome.problem);
    o["sizes"] = r.outcome.busbw.size();
    o["unreadable_rows"] = r.outcome.unreadable_rows;
    runs.push_back(std::move(o));
  }
  j["runs"] = runs;
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace perfgap::sweep
