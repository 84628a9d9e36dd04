#include "report_json.hpp"

#include <gtest/gtest.h>

#include <map>
#include <set>

#include "contract.hpp"
#include "run.hpp"

namespace perfgap::fixture {

nlohmann::json json_report(const std::string& binary, std::vector<std::string> args, int want_status,
                           const std::vector<std::pair<std::string, std::string>>& extra_env) {
  args.push_back("--format");
  args.push_back("json");
  auto r = run_binary(binary, args, extra_env);
  EXPECT_EQ(r.status, want_status) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out, nullptr, false);
  EXPECT_FALSE(j.is_discarded()) << r.out;
  if (j.is_discarded()) return {};
  auto v = contract_violations(j);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
  return j;
}

const nlohmann::json* finding(const nlohmann::json& report, const std::string& id, const std::string& subject) {
  if (!report.contains("findings")) return nullptr;
  for (const auto& f : report["findings"])
    if (f["id"] == id && (subject.empty() || f.value("subject", "") == subject)) return &f;
  return nullptr;
}

const nlohmann::json& required_finding(const nlohmann::json& report, const std::string& id) {
  if (const auto* f = finding(report, id)) return *f;
  ADD_FAILURE() << "no finding " << id << " in " << report.dump(2);
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

nlohmann::json masked_report(nlohmann::json report) {
  report["generated_at"] = "<masked>";
  report["tool"]["version"] = "<masked>";
  report["source"]["root"] = "<masked>";
  return report;
}

namespace {

std::string short_text(const nlohmann::json& v) {
  std::string t = v.dump();
  return t.size() > 300 ? t.substr(0, 297) + "..." : t;
}

// Leaf paths of two JSON values that differ ("node.kernel: "a" -> "b"").
void value_diff(const std::string& path, const nlohmann::json& a, const nlohmann::json& b, std::string& out) {
  if (a == b) return;
  if (a.is_object() && b.is_object()) {
    std::set<std::string> keys;
    for (auto it = a.begin(); it != a.end(); ++it) keys.insert(it.key());
    for (auto it = b.begin(); it != b.end(); ++it) keys.insert(it.key());
    for (const auto& k : keys) {
      const std::string p = path.empty() ? k : path + "." + k;
      if (!a.contains(k)) out += "  + " + p + ": " + short_text(b[k]) + "\n";
      else if (!b.contains(k)) out += "  - " + p + ": " + short_text(a[k]) + "\n";
      else value_diff(p, a[k], b[k], out);
    }
    return;
  }
  out += "  ~ " + path + ": " + short_text(a) + " -> " + short_text(b) + "\n";
}

// Findings by "id@subject", a repeated key numbered in report order ("#2").
std::map<std::string, nlohmann::json> findings_by_key(const nlohmann::json& report) {
  std::map<std::string, nlohmann::json> out;
  if (!report.contains("findings") || !report["findings"].is_array()) return out;
  for (const auto& f : report["findings"]) {
    std::string key = f.value("id", std::string("?")) + "@" + (f.contains("subject") && f["subject"].is_string() ? f["subject"].get<std::string>() : "");
    std::string unique = key;
    for (int n = 2; out.count(unique); ++n) unique = key + "#" + std::to_string(n);
    out.emplace(unique, f);
  }
  return out;
}

}  // namespace

std::string report_diff(const nlohmann::json& expected, const nlohmann::json& actual) {
  if (expected == actual) return "";
  std::string out;
  const auto was = findings_by_key(expected), now = findings_by_key(actual);
  for (const auto& [key, f] : now)
    if (!was.count(key)) out += "+ " + key + " " + f.value("status", "?") + ": " + f.value("title", "") + "\n";
  for (const auto& [key, f] : was)
    if (!now.count(key)) out += "- " + key + " " + f.value("status", "?") + ": " + f.value("title", "") + "\n";
  for (const auto& [key, f] : was) {
    auto it = now.find(key);
    if (it == now.end() || it->second == f) continue;
    out += "~ " + key + "\n";
    value_diff("", f, it->second, out);
  }
  // Same findings in another order, and everything outside the findings.
  if (was.size() == now.size() && out.empty() && expected.value("findings", nlohmann::json()) != actual.value("findings", nlohmann::json()))
    out += "~ findings: the same findings in another order\n";
  nlohmann::json rest_a = expected, rest_b = actual;
  if (rest_a.is_object()) rest_a.erase("findings");
  if (rest_b.is_object()) rest_b.erase("findings");
  std::string rest;
  value_diff("", rest_a, rest_b, rest);
  if (!rest.empty()) out += "report fields:\n" + rest;
  return out;
}

}  // namespace perfgap::fixture
