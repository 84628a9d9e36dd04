#include <string_view>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "report/outgoing.hpp"
#include "report/render.hpp"

namespace perfgap::report {

std::string render_json(const Report& shown) {
  using json = nlohmann::ordered_json;
  const Report r = outgoing(shown);
  json j;
  j["schema"] = kSchema;
  j["tool"] = {{"name", "perfgap"}, {"version", r.tool_version}};
  j["generated_at"] = r.generated_at;
  j["source"] = {{"kind", r.source.kind},
                 {"root", r.source.root ? json(*r.source.root) : json(nullptr)},
                 {"inputs", r.source.inputs}};
  if (r.node) {
    const auto& n = *r.node;
    j["node"] = {{"name", n.name},
                 {"hostname", n.hostname},
                 {"arch", n.arch},
                 {"kernel", n.kernel},
                 {"virtualized", n.virtualized ? json(*n.virtualized) : json(nullptr)},
                 {"container", n.container},
                 {"settings", json(n.settings)},
                 {"environment", json(n.environment)},
                 {"nccl_conf", json(n.nccl_conf)}};
  } else {
    j["node"] = nullptr;
  }
  auto s = r.summary();
  j["summary"] = {{"pass", s.pass}, {"warn", s.warn}, {"fail", s.fail}, {"skip", s.skip}, {"error", s.error}};
  // Only where the report decided nothing (the text's SKIP headline): why.
  if (auto why = r.undecided_why(); !why.empty()) j["undecided"] = std::move(why);
  json findings = json::array();
  for (const auto& f : r.findings) {
    json fj;
    fj["id"] = f.id;
    fj["layer"] = f.layer;
    fj["status"] = to_string(f.status);
    if (!f.subject.empty()) fj["subject"] = f.subject;
    fj["title"] = f.title;
    json ev = json::array();
    for (const auto& e : f.evidence) {
      json ej = {{"source", e.source}, {"observed", e.observed}};
      if (e.expected) ej["expected"] = *e.expected;
      ev.push_back(std::move(ej));
    }
    fj["evidence"] = std::move(ev);
    // Always present (empty when none), as the contract's example shows.
    fj["fix"] = f.fix;
    fj["impact"] = f.impact;
    // Appended, not inserted by key (ordered_json looks a key up linearly): linear in the
    // metrics; a repeated name keeps its first place and its last value, as m[k] = v did.
    json m = json::object();
    auto& members = m.get_ref<json::object_t&>();
    members.reserve(f.metrics.size());
    std::unordered_map<std::string_view, std::size_t> at;
    at.reserve(f.metrics.size());
    for (const auto& [k, v] : f.metrics) {
      auto [it, fresh] = at.try_emplace(k, members.size());
      if (fresh) members.emplace_back(k, v);
      else (members.begin() + static_cast<std::ptrdiff_t>(it->second))->second = v;
    }
    fj["metrics"] = std::move(m);
    findings.push_back(std::move(fj));
  }
  j["findings"] = std::move(findings);
  if (r.recommendation)
    j["recommendation"] = {{"setting", json(r.recommendation->setting)}, {"gain_pct", r.recommendation->gain_pct}};
  // Replace invalid UTF-8 (environment values, process names) instead of throwing.
  return j.dump(2, ' ', false, json::error_handler_t::replace) + "\n";
}

}  // namespace perfgap::report
