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

TEST(SlurmHealthConfig, DrainsOnListedXidsAndCounterThresholds) {
  auto c = parse(
      "drain_on_xids: [48, 79]\n"
      "drain_on_counters:\n"
      "  symbol_error: 1000\n"
      "  link_errors_per_hour: 10\n");
  ASSERT_TRUE(c.has_value()) << c.error();
  EXPECT_EQ(c->drain_on_xids, (std::vector<long>{48, 79}));
  ASSERT_EQ(c->drain_on_counters.size(), 2u);

  report::Finding xid;
  xid.id = "gpu.xid";
  xid.subject = "0000:af:00.0";
  xid.status = report::Status::warn;  // a listed Xid drains whatever the finding's status
  xid.metric("xid_13", 1).metric("xid_48", 2);
  report::Finding other = xid;
  other.subject = "0000:18:00.0";
  other.metrics = {{"xid_13", 4}};
  report::Finding port;
  port.id = "net.ib.counters";
  port.subject = "mlx5_1:1";
  port.metric("symbol_error", 2210).metric("link_errors_per_hour", 0.5);
  report::Finding quiet = port;
  quiet.subject = "mlx5_0:1";
  quiet.metrics = {{"symbol_error", 999}};
  auto reasons = hardware_drain_reasons(*c, {xid, other, port, quiet});
  EXPECT_EQ(reasons, (std::vector<std::string>{"gpu.xid@0000:af:00.0:xid_48", "net.ib.counters@mlx5_1:1:symbol_error>=1000"}));

  auto bad_xid = parse("drain_on_xids: [48, fortyeight]\n");
  ASSERT_FALSE(bad_xid.has_value());
  EXPECT_NE(bad_xid.error().find("health.yaml:1"), std::string::npos) << bad_xid.error();
  auto bad_counter = parse("drain_on_counters:\n  symbol_errors: 5\n");
  ASSERT_FALSE(bad_counter.has_value());
  EXPECT_NE(bad_counter.error().find("unknown counter 'symbol_errors'"), std::string::npos) << bad_counter.error();
  EXPECT_FALSE(parse("drain_on_counters:\n  symbol_error: -1\n").has_value());
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
