#include <gtest/gtest.h>

#include "core/config.hpp"
#include "facts/reads.hpp"

using namespace perfgap::core;

TEST(Config, EmptyTextConfiguresNothing) {
  auto c = parse_config("", "c.yaml", builtin_registry());
  ASSERT_TRUE(c) << c.error();
  EXPECT_TRUE(c->only.empty());
  EXPECT_TRUE(c->thresholds.empty());
}

TEST(Config, ThresholdsOverrideDefaults) {
  auto c = parse_config("cpu.steal: {fail_pct: 3.5}\nnuma.remote_memory:\n  warn_pct: 2\n", "c.yaml", builtin_registry());
  ASSERT_TRUE(c) << c.error();
  EXPECT_DOUBLE_EQ(c->thresholds_for(*builtin_registry().find("cpu.steal")).get("fail_pct"), 3.5);
  auto remote = c->thresholds_for(*builtin_registry().find("numa.remote_memory"));
  EXPECT_DOUBLE_EQ(remote.get("warn_pct"), 2);
  EXPECT_DOUBLE_EQ(remote.get("fail_pct"), 10);  // default kept
  EXPECT_THROW(remote.get("nonsense"), std::out_of_range);
}

TEST(Config, OnlySkipAndTimeout) {
  auto c = parse_config("only: [cpu.*, numa.balancing]\nskip: cpu.steal,cpu.turbo\ncheck_timeout_s: 5\n", "c.yaml", builtin_registry());
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->only, (std::vector<std::string>{"cpu.*", "numa.balancing"}));
  EXPECT_EQ(c->skip, (std::vector<std::string>{"cpu.steal", "cpu.turbo"}));
  EXPECT_DOUBLE_EQ(*c->check_timeout_s, 5);
}

TEST(Config, ErrorsNameFileAndLine) {
  struct Case { const char* text; const char* message; };
  for (auto [text, message] : {Case{"a: b\ncpu.nope: {x: 1}\n", "c.yaml:1: unknown check 'a'"},
                               Case{"cpu.steal:\n  fail_pct: lots\n", "c.yaml:2: 'cpu.steal.fail_pct' must be a number"},
                               Case{"cpu.steal:\n  fail_pct: -1\n", "must be a non-negative number"},
                               Case{"cpu.steal: 3\n", "c.yaml:1: thresholds of 'cpu.steal' must be a mapping"},
                               Case{"cpu.turbo: {x: 1}\n", "'cpu.turbo' has no threshold 'x' (it takes none)"},
                               Case{"only: {a: 1}\n", "'only' must be a list"},
                               Case{"check_timeout_s: 0\n", "check_timeout_s must be a positive"},
                               Case{"- just\n- a list\n", "expected a mapping"},
                               Case{"cpu.steal: [1, 2\n", "c.yaml:2: not valid YAML"}}) {
    auto c = parse_config(text, "c.yaml", builtin_registry());
    ASSERT_FALSE(c) << text;
    EXPECT_NE(c.error().find(message), std::string::npos) << "got: " << c.error();
  }
}

TEST(Config, LoadNamesMissingFile) {
  auto c = load_config("/nonexistent/perfgap.yaml", builtin_registry());
  ASSERT_FALSE(c);
  EXPECT_NE(c.error().find("/nonexistent/perfgap.yaml"), std::string::npos);
}

TEST(Selection, GlobsIdsAndOrder) {
  const auto& reg = builtin_registry();
  auto all = select_checks(reg, {}, {});
  ASSERT_TRUE(all);
  EXPECT_EQ(all->size(), reg.all().size());
  auto cpu = select_checks(reg, {"cpu.*"}, {"cpu.steal"});
  ASSERT_TRUE(cpu);
  std::vector<std::string> ids;
  for (auto* c : *cpu) ids.emplace_back(c->id);
  EXPECT_EQ(ids, (std::vector<std::string>{"cpu.cstate.deep_idle", "cpu.turbo", "cpu.governor", "cpu.thermal_throttle"}));
  auto bad = select_checks(reg, {"nothing.*"}, {});
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("'nothing.*' matches no check"), std::string::npos);
}

TEST(Registry, EveryCheckIsDocumentedAndDeclaresItsReads) {
  for (const auto& c : builtin_registry().all()) {
    EXPECT_FALSE(c.summary.empty()) << c.id;
    EXPECT_FALSE(c.rule.empty()) << c.id;
    EXPECT_FALSE(c.fix.empty()) << c.id;
    EXPECT_FALSE(c.reads.empty()) << c.id;
    // A path, or a placeholder for a file a setting names ($NCCL_TOPO_FILE, ~/.nccl.conf).
    for (auto r : c.reads) EXPECT_TRUE(r.front() == '/' || perfgap::facts::is_named_read(r)) << c.id << ": " << r;
    bool known_layer = false;
    for (auto l : perfgap::report::kLayers) known_layer = known_layer || l == c.layer;
    EXPECT_TRUE(known_layer) << c.id;
  }
}
