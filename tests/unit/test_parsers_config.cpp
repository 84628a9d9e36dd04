// parse_config on strings: thresholds, only/skip, check_timeout_s, and errors that name the
// file and line. It must never throw, whatever YAML it is given.
#include <gtest/gtest.h>

#include "core/check.hpp"
#include "core/config.hpp"

using perfgap::core::builtin_registry;
using perfgap::core::parse_config;

TEST(ConfigParser, FullConfig) {
  auto r = parse_config(
      "# comment\n"
      "cpu.steal: {fail_pct: 5}\n"
      "numa.remote_memory:\n"
      "  warn_pct: 10\n"
      "only: [cpu.*, numa.*]\n"
      "skip:\n"
      "  - cpu.turbo\n"
      "check_timeout_s: 2.5\n",
      "perfgap.yaml", builtin_registry());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->source, "perfgap.yaml");
  EXPECT_EQ(r->thresholds.at("cpu.steal").at("fail_pct"), 5);
  EXPECT_EQ(r->thresholds.at("numa.remote_memory").at("warn_pct"), 10);
  EXPECT_EQ(r->only, (std::vector<std::string>{"cpu.*", "numa.*"}));
  EXPECT_EQ(r->skip, (std::vector<std::string>{"cpu.turbo"}));
  ASSERT_TRUE(r->check_timeout_s);
  EXPECT_DOUBLE_EQ(*r->check_timeout_s, 2.5);
  const auto* steal = builtin_registry().find("cpu.steal");
  ASSERT_NE(steal, nullptr);
  EXPECT_EQ(r->thresholds_for(*steal).get("fail_pct"), 5);
}

TEST(ConfigParser, EmptyTextConfiguresNothing) {
  auto r = parse_config("", "c.yaml", builtin_registry());
  ASSERT_TRUE(r) << r.error();
  EXPECT_TRUE(r->thresholds.empty());
  EXPECT_TRUE(r->only.empty());
  EXPECT_FALSE(r->check_timeout_s);
  EXPECT_TRUE(parse_config("# only a comment\n", "c.yaml", builtin_registry()));
}

TEST(ConfigParser, CommaSeparatedOnly) {
  auto r = parse_config("only: cpu.steal,virt.hypervisor\n", "c.yaml", builtin_registry());
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->only, (std::vector<std::string>{"cpu.steal", "virt.hypervisor"}));
}

TEST(ConfigParser, ErrorsNameFileAndLine) {
  auto unknown = parse_config("cpu.steal: {fail_pct: 1}\nno.such.check: {x: 1}\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(unknown);
  EXPECT_EQ(unknown.error().rfind("c.yaml:2:", 0), 0u) << unknown.error();
  EXPECT_NE(unknown.error().find("unknown check 'no.such.check'"), std::string::npos);

  auto param = parse_config("cpu.steal:\n  nope: 1\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(param);
  EXPECT_EQ(param.error().rfind("c.yaml:2:", 0), 0u) << param.error();
  EXPECT_NE(param.error().find("fail_pct"), std::string::npos) << param.error();

  auto negative = parse_config("cpu.steal:\n  fail_pct: -1\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(negative);
  auto nan = parse_config("cpu.steal:\n  fail_pct: .nan\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(nan);
  auto text = parse_config("cpu.steal:\n  fail_pct: lots\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(text);
  EXPECT_NE(text.error().find("must be a number"), std::string::npos) << text.error();

  auto yaml = parse_config("cpu.steal: [\n", "c.yaml", builtin_registry());
  ASSERT_FALSE(yaml);
  EXPECT_NE(yaml.error().find("not valid YAML"), std::string::npos) << yaml.error();

  EXPECT_FALSE(parse_config("- a\n- b\n", "c.yaml", builtin_registry()));  // not a mapping
  EXPECT_FALSE(parse_config("check_timeout_s: 0\n", "c.yaml", builtin_registry()));
  EXPECT_FALSE(parse_config("check_timeout_s: soon\n", "c.yaml", builtin_registry()));
  EXPECT_FALSE(parse_config("only: {a: 1}\n", "c.yaml", builtin_registry()));
  EXPECT_FALSE(parse_config("cpu.steal: 3\n", "c.yaml", builtin_registry()));
}

// Found by fuzz/fuzz_config: a key that is not a scalar makes YAML::Node::as<std::string>()
// throw YAML::TypedBadConversion outside parse_config's try blocks (config.cpp: the top-level
// key and the threshold name). It must be an error naming the file instead.
namespace {
// parse_config must answer an error, not throw; a throw is reported and fails the test.
void expect_error_not_throw(const std::string& text) {
  try {
    auto r = parse_config(text, "c.yaml", builtin_registry());
    ASSERT_FALSE(r) << "accepted: " << text;
    EXPECT_EQ(r.error().rfind("c.yaml", 0), 0u) << r.error();
  } catch (const std::exception& e) {
    ADD_FAILURE() << "parse_config threw " << e.what() << " on:\n" << text;
  }
}
}  // namespace

TEST(ConfigParser, NonScalarTopLevelKeyIsAnErrorNotAnException) {
  expect_error_not_throw("[a]: 1\n");
  expect_error_not_throw("{a: 1}: 2\n");
  expect_error_not_throw("? - x\n: 1\n");
  expect_error_not_throw(std::string("? as`: &\0\0\0\0 !", 14));  // the fuzzer's reproducer
}

TEST(ConfigParser, NonScalarThresholdNameIsAnErrorNotAnException) {
  expect_error_not_throw("cpu.steal:\n  [fail_pct]: 1\n");
  expect_error_not_throw("cpu.steal:\n  ? {a: b}\n  : 1\n");
}
