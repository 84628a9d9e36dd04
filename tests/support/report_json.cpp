#include "report_json.hpp"

#include <gtest/gtest.h>

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

}  // namespace perfgap::fixture
