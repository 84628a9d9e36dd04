// `perfgap analyze` over the real logs of ../shared/field/logs (one directory per log: the
// prefix says the kind, `nt-` nccl-tests, `nl-` nccl-log, `st-` steps; a `reference.txt`
// beside `input.txt` is the reference run). No expected verdicts: invariants any report on
// real logs must hold. Skipped when ../shared is absent.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <map>
#include <nlohmann/json.hpp>
#include <sstream>

#include "contract.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

const fs::path kLogs = fs::path(PERFGAP_SHARED_DIR) / "field" / "logs";

std::string kind_of(const std::string& dir) {
  static const std::map<std::string, std::string> kinds = {{"nt-", "nccl-tests"}, {"nl-", "nccl-log"}, {"st-", "steps"}};
  for (const auto& [prefix, kind] : kinds)
    if (dir.rfind(prefix, 0) == 0) return kind;
  return "";
}

std::size_t words(const std::string& s) {
  std::istringstream in(s);
  std::size_t n = 0;
  for (std::string w; in >> w;) ++n;
  return n;
}

}  // namespace

TEST(AnalyzeFieldLogs, InvariantsOnEveryRealLog) {
  if (!fs::is_directory(kLogs)) GTEST_SKIP() << kLogs << " is absent";
  int judged = 0;
  std::vector<fs::path> dirs;
  for (const auto& e : fs::directory_iterator(kLogs))
    if (e.is_directory()) dirs.push_back(e.path());
  std::sort(dirs.begin(), dirs.end());
  for (const auto& dir : dirs) {
    const auto name = dir.filename().string();
    const auto kind = kind_of(name);
    SCOPED_TRACE(name);
    ASSERT_FALSE(kind.empty()) << "unknown kind prefix";
    ASSERT_TRUE(fs::exists(dir / "input.txt"));
    std::vector<std::string> args = {"analyze", kind, (dir / "input.txt").string()};
    if (fs::exists(dir / "reference.txt")) {
      args.push_back("--reference");
      args.push_back((dir / "reference.txt").string());
    }
    auto text = run_binary(PERFGAP_BINARY, args);
    EXPECT_TRUE(text.status == 0 || text.status == 1) << "exit " << text.status << ": " << text.err;
    args.push_back("--format");
    args.push_back("json");
    auto r = run_binary(PERFGAP_BINARY, args);
    ASSERT_TRUE(r.status == 0 || r.status == 1) << "exit " << r.status << ": " << r.err;
    EXPECT_EQ(r.status, text.status) << "text and JSON disagree";
    nlohmann::json j;
    ASSERT_NO_THROW(j = nlohmann::json::parse(r.out)) << r.out;
    auto v = perfgap::fixture::contract_violations(j);
    EXPECT_TRUE(v.empty()) << ::testing::PrintToString(v);
    ASSERT_TRUE(j["findings"].is_array());
    EXPECT_FALSE(j["findings"].empty());
    bool any_fail = false;
    for (const auto& f : j["findings"]) {
      auto status = f.value("status", "");
      auto title = f.value("title", "");
      SCOPED_TRACE(f.value("id", "?") + ": " + title);
      EXPECT_NE(status, "error");
      any_fail = any_fail || status == "fail";
      if (status == "skip") { EXPECT_GE(words(title), 5u) << "a skip must say why in its title"; }
      if (status == "pass") { EXPECT_FALSE(f.value("evidence", nlohmann::json::array()).empty()) << "a pass must show its evidence"; }
    }
    EXPECT_EQ(r.status, any_fail ? 1 : 0);
    ++judged;
  }
  EXPECT_GT(judged, 0);
}
