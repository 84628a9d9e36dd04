// Every Prometheus output perfgap writes passes `promtool check metrics` (Prometheus' own
// parser and linter), and contrib/prometheus/perfgap-rules.yml passes `promtool check rules`
// and its own unit tests (`promtool test rules`). promtool comes from Debian's prometheus package, taken out of it by
// tools/setup-debian.sh --test into /var/tmp/perfgap-tools (or $PERFGAP_PROMTOOL, or $PATH).
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>

#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::run_binary;

namespace {

std::string promtool() {
  if (const char* p = std::getenv("PERFGAP_PROMTOOL"); p && *p) return p;
  if (fs::exists("/var/tmp/perfgap-tools/promtool")) return "/var/tmp/perfgap-tools/promtool";
  return perfgap::fixture::find_on_path("promtool");
}

// promtool reads the metrics on stdin: through a shell, from a file.
perfgap::fixture::RunResult check_metrics(const std::string& tool, const fs::path& file) {
  return run_binary("/bin/sh", {"-c", "\"$0\" check metrics < \"$1\"", tool, file.string()});
}

class Promtool : public ::testing::Test {
 protected:
  void SetUp() override {
    tool_ = promtool();
    if (tool_.empty()) GTEST_SKIP() << "promtool not found: run tools/setup-debian.sh --test";
  }
  // Writes an output to a file and has promtool check it; the output must also carry metrics.
  void expect_clean(const std::string& what, const std::string& out) {
    const fs::path file = fs::path(tmp_.path()) / "out.prom";
    std::ofstream(file) << out;
    auto r = check_metrics(tool_, file);
    EXPECT_EQ(r.status, 0) << what << ": promtool says\n" << r.out << r.err << "\non\n" << out.substr(0, 2000);
    EXPECT_NE(out.find("\nperfgap_findings{"), std::string::npos) << what;
  }
  std::string tool_;
  perfgap::fixture::TempDir tmp_;
};

TEST_F(Promtool, CheckOnEveryGoldenTreeAndLive) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}) {
    perfgap::fixture::TempDir tree;
    auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden" / (std::string(name) + ".tree")).string(), tree.path());
    ASSERT_TRUE(spec) << spec.error();
    auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tree.path(), "--format", "prometheus"});
    ASSERT_LE(r.status, 1) << r.err;
    expect_clean(name, r.out);
    EXPECT_NE(r.out.find("\nperfgap_metric{"), std::string::npos) << name << ": numeric metrics reach Prometheus";
  }
  auto live = run_binary(PERFGAP_BINARY, {"check", "--format", "prometheus"});
  ASSERT_LE(live.status, 1) << live.err;
  expect_clean("live check", live.out);
}

TEST_F(Promtool, FleetOfGoldenReports) {
  const fs::path src = PERFGAP_SOURCE_DIR;
  const fs::path dir = fs::path(tmp_.path()) / "reports";
  fs::create_directories(dir);
  int i = 0;
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}) {
    std::ifstream in(src / "tests/golden" / (std::string(name) + ".json"));
    std::string text((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
    // Goldens are masked; a fleet reads only real timestamps.
    auto pos = text.find("\"<masked>\"");
    while (pos != std::string::npos) {
      text.replace(pos, 10, "\"2026-11-30T12:00:00Z\"");
      pos = text.find("\"<masked>\"");
    }
    std::ofstream(dir / ("n" + std::to_string(i++) + ".json")) << text;
  }
  auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.string(), "--format", "prometheus"});
  ASSERT_LE(r.status, 1) << r.err;
  expect_clean("fleet", r.out);
}

TEST_F(Promtool, AlertRulesCheckAndUnitTests) {
  const fs::path dir = fs::path(PERFGAP_SOURCE_DIR) / "contrib/prometheus";
  auto check = run_binary(tool_, {"check", "rules", (dir / "perfgap-rules.yml").string()});
  EXPECT_EQ(check.status, 0) << check.out << check.err;
  auto test = run_binary(tool_, {"test", "rules", (dir / "perfgap-rules.test.yml").string()});
  EXPECT_EQ(test.status, 0) << test.out << test.err;
  EXPECT_NE(test.out.find("SUCCESS"), std::string::npos) << test.out;
}

TEST_F(Promtool, AlertRuleUnitTestsCatchAChangedRule) {
  // The unit tests decide: the same tests over rules whose failing-check alert waits one run
  // less must fail.
  const fs::path dir = fs::path(PERFGAP_SOURCE_DIR) / "contrib/prometheus";
  std::ifstream in(dir / "perfgap-rules.yml");
  std::string rules((std::istreambuf_iterator<char>(in)), std::istreambuf_iterator<char>());
  const std::string from = "perfgap:node_runs_35m >= 2\n        for: 30m";
  const auto at = rules.find(from);
  ASSERT_NE(at, std::string::npos) << "PerfgapCheckFailing's expression and `for` moved: update this test";
  rules.replace(at, from.size(), "perfgap:node_runs_35m >= 2\n        for: 15m");
  const fs::path copy = fs::path(tmp_.path());
  std::ofstream(copy / "perfgap-rules.yml") << rules;
  fs::copy_file(dir / "perfgap-rules.test.yml", copy / "perfgap-rules.test.yml");
  auto test = run_binary(tool_, {"test", "rules", (copy / "perfgap-rules.test.yml").string()});
  EXPECT_NE(test.status, 0) << test.out;
  EXPECT_NE((test.out + test.err).find("alertname: PerfgapCheckFailing"), std::string::npos) << test.out << test.err;
}

TEST_F(Promtool, ProbeOfThisMachine) {
  // The shortest live probe; its per-pair bandwidth metrics are what reaches Prometheus.
  auto r = run_binary(PERFGAP_BINARY, {"probe", "--memory", "--seconds-per-probe", "0.2", "--format", "prometheus"});
  ASSERT_LE(r.status, 1) << r.err;
  expect_clean("probe --memory", r.out);
}

}  // namespace
