// What real logs showed (issue 11): each defect's fixture in tests/fixtures/logs/, run through
// the real binary. Every fixture reproduced its defect before the fix.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

std::string fixture(const char* rel) { return (fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/logs" / rel).string(); }

nlohmann::json report(std::vector<std::string> args, int want_status) {
  args.push_back("--format");
  args.push_back("json");
  auto r = run_binary(PERFGAP_BINARY, args);
  EXPECT_EQ(r.status, want_status) << r.err << r.out;
  auto j = nlohmann::json::parse(r.out);
  auto v = perfgap::fixture::contract_violations(j);
  EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
  return j;
}

const nlohmann::json& finding(const nlohmann::json& j, const std::string& id) {
  for (const auto& f : j["findings"])
    if (f["id"] == id) return f;
  ADD_FAILURE() << "no finding " << id << " in " << j.dump(2);
  static const nlohmann::json none = nlohmann::json::object();
  return none;
}

std::string evidence_text(const nlohmann::json& f) {
  std::string s;
  for (const auto& e : f.value("evidence", nlohmann::json::array())) s += e.value("observed", "") + "\n";
  return s;
}

}  // namespace

// perf report --sort comm,sym: native_queued_spin_lock_slowpath on two rows (python 4%,
// pt_data_worker 3%). Only the last row used to count (3%: pass) and the name was listed twice.
TEST(AnalyzeFieldDefects, PerfRowsOfOneSymbolAreSummed) {
  auto j = report({"analyze", "perf", fixture("perf/comm-sym-spinlock.txt")}, 0);
  const auto& hot = finding(j, "perf.hot_kernel");
  EXPECT_EQ(hot["status"], "warn");
  auto title = hot["title"].get<std::string>();
  EXPECT_NE(title.find("native_queued_spin_lock_slowpath 7.00%"), std::string::npos) << title;
  EXPECT_EQ(title.find("native_queued_spin_lock_slowpath"), title.rfind("native_queued_spin_lock_slowpath")) << "named twice: " << title;
  EXPECT_DOUBLE_EQ(hot["metrics"]["pct.native_queued_spin_lock_slowpath"].get<double>(), 7.0);
  EXPECT_NE(evidence_text(hot).find("4.00% python, 3.00% pt_data_worker"), std::string::npos) << evidence_text(hot);
}
