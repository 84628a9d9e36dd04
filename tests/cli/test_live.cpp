// perfgap check on the machine running the tests (CI: a VM without cpuidle/cpufreq control):
// a valid report, skips with reasons, never exit 2.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "run.hpp"

TEST(Live, CheckOnThisMachineGivesAValidReport) {
  auto r = perfgap::fixture::run_binary(PERFGAP_BINARY, {"check", "--format", "json"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << "exit " << r.status << ": " << r.err;
  auto j = nlohmann::json::parse(r.out);
  auto problems = perfgap::fixture::contract_violations(j);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  EXPECT_EQ(j["source"]["kind"], "live");
  EXPECT_TRUE(j["source"]["root"].is_null());
  EXPECT_FALSE(j["node"]["kernel"].get<std::string>().empty());
  EXPECT_FALSE(j["node"]["arch"].get<std::string>().empty());
  std::set<std::string> ids;
  auto listed = perfgap::fixture::run_binary(PERFGAP_BINARY, {"check", "--list", "--format", "json"});
  std::set<std::string> registered;
  for (const auto& c : nlohmann::json::parse(listed.out)) registered.insert(c["id"].get<std::string>());
  for (const auto& f : j["findings"]) {
    ids.insert(f["id"].get<std::string>());
    EXPECT_NE(f["status"], "error") << f.dump();
    if (f["status"] == "skip") { EXPECT_GT(f["title"].get<std::string>().size(), 10u) << "a skip must say why: " << f.dump(); }
  }
  EXPECT_EQ(ids, registered) << "every check gives at least one finding";
}

TEST(Live, TextOnThisMachineHasNoColourWhenPiped) {
  auto r = perfgap::fixture::run_binary(PERFGAP_BINARY, {"check", "--only", "virt.*,cpu.turbo"});
  ASSERT_TRUE(r.status == 0 || r.status == 1) << r.err;
  EXPECT_EQ(r.out.find("\x1b["), std::string::npos);
  EXPECT_EQ(r.out.rfind("perfgap check on ", 0), 0u) << r.out;
}
