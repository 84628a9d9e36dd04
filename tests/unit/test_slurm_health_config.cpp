#include <gtest/gtest.h>

#include "slurm/health_config.hpp"

namespace perfgap::slurm {
namespace {

tl::expected<HealthConfig, std::string> parse(const std::string& text) {
  return parse_health_config(text, "health.yaml", core::builtin_registry());
}

TEST(SlurmHealthConfig, FullConfig) {
  auto c = parse(
      "checks: [cpu.cstate.deep_idle, \"numa.*\"]\n"
      "skip: numa.remote_memory\n"
      "drain_on: [cpu.cstate.deep_idle]\n"
      "drain_on_timeout: false\n"
      "time_limit_s: 12.5\n"
      "log_file: /var/log/perfgap-health.log\n"
      "state_dir: /var/lib/perfgap-health\n"
      "slurm_conf: /etc/slurm/slurm.conf\n"
      "scontrol: /usr/bin/scontrol\n"
      "check:\n"
      "  root: /captures/{node}\n"
      "  config: /etc/perfgap/config.yaml\n");
  ASSERT_TRUE(c.has_value()) << c.error();
  EXPECT_EQ(c->checks, (std::vector<std::string>{"cpu.cstate.deep_idle", "numa.*"}));
  EXPECT_EQ(c->skip, (std::vector<std::string>{"numa.remote_memory"}));
  EXPECT_EQ(c->drain_on, (std::vector<std::string>{"cpu.cstate.deep_idle"}));
  EXPECT_FALSE(c->drain_on_timeout);
  EXPECT_DOUBLE_EQ(c->time_limit_s, 12.5);
  EXPECT_EQ(c->check.root, "/captures/{node}");
  EXPECT_EQ(c->scontrol, "/usr/bin/scontrol");
}

TEST(SlurmHealthConfig, EmptyFileRunsEveryCheckWithTheDefaultLimit) {
  auto c = parse("");
  ASSERT_TRUE(c.has_value());
  EXPECT_TRUE(c->checks.empty());
  EXPECT_DOUBLE_EQ(c->time_limit_s, 30);
  EXPECT_TRUE(c->drain_on_timeout);
}

TEST(SlurmHealthConfig, ErrorsNameFileAndLine) {
  struct Case { std::string text, where, what; };
  for (const auto& c : std::vector<Case>{
           {"checks: [cpu.*]\nbogus: 1\n", "health.yaml:2:", "unknown key 'bogus'"},
           {"drain_on: [nope.*]\n", "health.yaml:1:", "'nope.*' matches no check"},
           {"\ntime_limit_s: 0\n", "health.yaml:2:", "time_limit_s"},
           {"time_limit_s: 99999\n", "health.yaml:1:", "at most 3600"},
           {"log_file: relative.log\n", "health.yaml:1:", "absolute path"},
           {"check:\n  pid: 4\n", "health.yaml:2:", "unknown check option 'pid'"},
           {"drain_on_timeout: maybe\n", "health.yaml:1:", "true or false"},
           {"checks: [a\n", "health.yaml:", "not valid YAML"},
           {"- a\n- b\n", "health.yaml", "expected a mapping"},
       }) {
    auto r = parse(c.text);
    ASSERT_FALSE(r.has_value()) << c.text;
    EXPECT_EQ(r.error().rfind(c.where, 0), 0u) << r.error();
    EXPECT_NE(r.error().find(c.what), std::string::npos) << r.error();
  }
}

}  // namespace
}  // namespace perfgap::slurm
