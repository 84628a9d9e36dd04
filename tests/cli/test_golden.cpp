// Golden reports of whole-node trees, produced by the real binary. Regenerate with
// tools/refresh-golden.sh (PERFGAP_UPDATE_GOLDEN=1); never edit the JSON by hand.
#include <gtest/gtest.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <nlohmann/json.hpp>

#include "contract.hpp"
#include "report_json.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::masked_report;
using perfgap::fixture::run_binary;

namespace {

struct Golden {
  const char* name;
  int exit_status;
  bool walk = false;  // PERFGAP_NO_OPENAT2=1: the tree walked by hand, as where openat2 is refused
};

void PrintTo(const Golden& g, std::ostream* os) { *os << g.name << (g.walk ? " (no openat2)" : ""); }

class GoldenTree : public ::testing::TestWithParam<Golden> {};

TEST_P(GoldenTree, MatchesGoldenReport) {
  const auto& g = GetParam();
  fs::path src = fs::path(PERFGAP_SOURCE_DIR);
  perfgap::fixture::TempDir tmp;
  auto spec = perfgap::fixture::unpack_tree((src / "tests/fixtures/golden" / (std::string(g.name) + ".tree")).string(), tmp.path());
  ASSERT_TRUE(spec) << spec.error();
  std::vector<std::pair<std::string, std::string>> env;
  if (g.walk) env.emplace_back("PERFGAP_NO_OPENAT2", "1");
  auto r = run_binary(PERFGAP_BINARY, {"check", "--root", tmp.path(), "--format", "json"}, env);
  ASSERT_EQ(r.status, g.exit_status) << r.err << r.out;
  auto report = nlohmann::json::parse(r.out);
  auto problems = perfgap::fixture::contract_violations(report);
  EXPECT_TRUE(problems.empty()) << ::testing::PrintToString(problems);
  auto actual = masked_report(report);
  fs::path golden = src / "tests/golden" / (std::string(g.name) + ".json");
  const char* update = std::getenv("PERFGAP_UPDATE_GOLDEN");
  if (update && std::string(update) == "1" && !g.walk) {
    std::ofstream(golden) << actual.dump(2) << "\n";
    GTEST_SKIP() << "updated " << golden;
  }
  std::ifstream in(golden);
  ASSERT_TRUE(in) << golden << " missing: run tools/refresh-golden.sh";
  auto expected = nlohmann::json::parse(in);
  EXPECT_TRUE(actual == expected) << "golden differs; if intended, run tools/refresh-golden.sh and review the diff\n"
                                  << perfgap::fixture::report_diff(expected, actual);
}

INSTANTIATE_TEST_SUITE_P(Trees, GoldenTree,
                         ::testing::Values(Golden{"healthy-x86", 0}, Golden{"h100-c1-remote-numa", 1}, Golden{"kvm-guest", 1},
                                           Golden{"gb200-vm", 1}, Golden{"healthy-x86", 0, true},
                                           Golden{"h100-c1-remote-numa", 1, true}, Golden{"kvm-guest", 1, true},
                                           Golden{"gb200-vm", 1, true}, Golden{"ib-hw-events", 1}, Golden{"ib-hw-events", 1, true}),
                         [](const auto& info) {
                           std::string n = info.param.name;
                           for (auto& c : n) if (c == '-') c = '_';
                           return info.param.walk ? n + "_no_openat2" : n;
                         });

}  // namespace
