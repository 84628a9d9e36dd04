// perfgap-health passes the expectation file to its node check (check: expect:), as it does
// --baseline: an absolute path, {node} expanded by the health command.
#include <gtest/gtest.h>

#include "slurm/health_config.hpp"

namespace {

tl::expected<perfgap::slurm::HealthConfig, std::string> expect_health(const std::string& text) {
  return perfgap::slurm::parse_health_config(text, "health.yaml", perfgap::core::builtin_registry());
}

TEST(ExpectHealthConfig, CheckExpectIsReadAsAnAbsolutePath) {
  auto c = expect_health("check:\n  expect: /etc/perfgap/expect-{node}.yaml\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->check.expect, "/etc/perfgap/expect-{node}.yaml");
  EXPECT_TRUE(c->check.baseline.empty());
  auto relative = expect_health("check:\n  expect: expect.yaml\n");
  ASSERT_FALSE(relative);
  EXPECT_EQ(relative.error().rfind("health.yaml:2:", 0), 0u) << relative.error();
  auto typo = expect_health("check:\n  expcet: /etc/perfgap/expect.yaml\n");
  ASSERT_FALSE(typo);
  EXPECT_NE(typo.error().find("(root, config, dmesg, baseline, expect)"), std::string::npos) << typo.error();
}

}  // namespace
