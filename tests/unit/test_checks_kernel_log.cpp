// The kernel-log checks' numbers on logs written here: what a GPU's fall off the bus counts
// (events and the xid_79 metric health's drain_on_xids reads), the Xid count the GSP print rate
// limit makes a floor, module events at bring-up, crashes. Titles and statuses per case are in
// tests/fixtures/cases/<check>/.
#include <gtest/gtest.h>

#include <fstream>
#include <memory>
#include <optional>
#include <string>
#include <vector>

#include "core/config.hpp"
#include "core/runner.hpp"
#include "facts/facts.hpp"
#include "sys/sysroot.hpp"
#include "tree.hpp"

using namespace perfgap;

namespace {

// The findings of check `id` on a kernel log given as --dmesg FILE (an empty tree around it).
std::vector<report::Finding> run_on_log(const std::string& id, const std::string& log) {
  fixture::TempDir tmp;
  std::ofstream(tmp.file("dmesg.log")) << log;
  facts::Options o;
  o.dmesg_path = tmp.file("dmesg.log");
  auto root = sys::Sysroot::at(tmp.path());
  EXPECT_TRUE(root);
  const auto* info = core::builtin_registry().find(id);
  EXPECT_NE(info, nullptr) << id;
  if (!root || !info) return {};
  return core::run_checks({info}, std::make_shared<facts::Facts>(*root, o), core::Config{}, core::RunOptions{});
}

std::optional<double> metric(const report::Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.metrics)
    if (n == name) return v;
  return std::nullopt;
}

}  // namespace

// An Xid 79 line and the driver's own "fallen off the bus" lines for the same GPU are one loss:
// events 1 and xid_79 1, however many lines; a log spanning a reboot holds two.
TEST(KernelLogChecks, FallenOffBusCountsLossesNotLines) {
  auto one = run_on_log("gpu.fallen_off_bus",
                        "[6781741.548779] NVRM: Xid (PCI:0000:91:00): 79, pid='<unknown>', name=<unknown>, GPU has fallen off the bus.\n"
                        "[6781741.548783] NVRM: GPU 0000:91:00.0: GPU has fallen off the bus.\n"
                        "[6781790.000000] NVRM: The NVIDIA GPU 0000:91:00.0\n"
                        "[6781790.000000] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
                        "[6781790.000000] NVRM: fallen off the bus and is not responding to commands.\n");
  ASSERT_EQ(one.size(), 1u);
  EXPECT_EQ(metric(one[0], "xid_79"), 1.0);
  EXPECT_EQ(metric(one[0], "events"), 1.0);
  EXPECT_EQ(one[0].title, "0000:91:00.0 fell off the bus (3 kernel log lines)");

  // The driver's line alone (no Xid 79 printed): still a loss for drain_on_xids: [79].
  auto bare = run_on_log("gpu.fallen_off_bus", "[ 12.0] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.\n");
  ASSERT_EQ(bare.size(), 1u);
  EXPECT_EQ(metric(bare[0], "xid_79"), 1.0);
  EXPECT_EQ(bare[0].title, "0000:3b:00.0 fell off the bus (1 kernel log line)");

  auto two = run_on_log("gpu.fallen_off_bus",
                        "[ 4040.0] NVRM: Xid (PCI:0000:af:00): 79, pid=1, name=a, GPU has fallen off the bus.\n"
                        "[ 4040.1] NVRM: GPU 0000:af:00.0: GPU has fallen off the bus.\n"
                        "[    0.0] Linux version 6.8.0-49-generic\n"
                        "[  900.0] NVRM: GPU 0000:af:00.0: GPU has fallen off the bus.\n"
                        "[ 1900.0] NVRM: Xid (PCI:0000:af:00): 79, pid=2, name=b, GPU has fallen off the bus.\n");
  ASSERT_EQ(two.size(), 1u);
  EXPECT_EQ(metric(two[0], "xid_79"), 2.0);
  EXPECT_EQ(metric(two[0], "events"), 2.0);
}

// After the driver's rate-limit line the Xid 119 count is a floor: the title says so, the line
// is quoted, the events are the Xid lines (not the rate-limit line).
TEST(KernelLogChecks, GspRateLimitMakesTheXidCountAFloor) {
  const std::string limit = "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.";
  auto f = run_on_log("gpu.xid",
                      "[ 100.0] NVRM: Xid (PCI:0000:9b:00): 119, pid=1, name=a, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n"
                      "[ 106.0] NVRM: Xid (PCI:0000:9b:00): 119, pid=1, name=a, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n"
                      "[ 112.0] " + limit + "\n"
                      "[ 300.0] NVRM: Xid (PCI:0000:9b:00): 119, pid=2, name=b, Timeout after 6s of waiting for RPC response from GPU4 GSP!\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, report::Status::fail);
  EXPECT_EQ(metric(f[0], "xid_119"), 3.0);
  EXPECT_EQ(metric(f[0], "events"), 3.0);
  EXPECT_EQ(metric(f[0], "gsp_rpc_print_1_of"), 30.0);
  EXPECT_NE(f[0].title.find("Xid 119 x3 (GSP RPC timeout), more not printed: the driver rate-limited its GSP RPC error prints to 1 of every 30"),
            std::string::npos)
      << f[0].title;
  bool quoted = false;
  for (const auto& e : f[0].evidence) quoted = quoted || e.observed == limit;
  EXPECT_TRUE(quoted);
  // Without the line, no floor.
  auto plain = run_on_log("gpu.xid", "[ 100.0] NVRM: Xid (PCI:0000:9b:00): 119, pid=1, name=a, Timeout after 6s\n");
  ASSERT_EQ(plain.size(), 1u);
  EXPECT_EQ(plain[0].title.find("more not printed"), std::string::npos);
}

// A module's cable event at bring-up (an unused port's empty cage) is no flap and no module
// event; a finding with module events but no flap carries the module's fix, not the flap one.
TEST(KernelLogChecks, ModuleEventsAtBringUpAndTheirFix) {
  auto boot = run_on_log("net.link_flaps", "[    2.962781] mlx5_core 0000:41:00.1: Port module event: module 1, Cable unplugged\n"
                                           "[ 3600.000000] NVRM: loading NVIDIA UNIX x86_64 Kernel Module  550.127.05\n");
  ASSERT_EQ(boot.size(), 1u);
  EXPECT_EQ(boot[0].status, report::Status::pass) << boot[0].title;
  EXPECT_EQ(metric(boot[0], "module_events"), 0.0);
  EXPECT_TRUE(boot[0].fix.empty());

  auto later = run_on_log("net.link_flaps", "[   12.0] mlx5_core 0000:41:00.1 ibp65s0f1: Link up\n"
                                            "[ 2201.0] mlx5_core 0000:41:00.1: Port module event: module 1, Cable unplugged\n");
  ASSERT_EQ(later.size(), 1u);
  EXPECT_EQ(later[0].status, report::Status::warn);
  EXPECT_EQ(later[0].fix.find("drain the node while the link flaps"), std::string::npos) << later[0].fix;
  EXPECT_EQ(later[0].impact.find("Each flap"), std::string::npos) << later[0].impact;
  // After the port came up, even early, an unplug is no bring-up.
  auto early = run_on_log("net.link_flaps", "[   12.0] mlx5_core 0000:41:00.1 ibp65s0f1: Link up\n"
                                            "[   40.0] mlx5_core 0000:41:00.1: Port module event: module 1, Cable unplugged\n");
  ASSERT_EQ(early.size(), 1u);
  EXPECT_EQ(early[0].status, report::Status::warn);
}

// kernel.panic's numbers: panics, Oopses (a BUG line and its Oops line one), machine checks by
// kind; corrected machine checks alone warn.
TEST(KernelLogChecks, CrashCounts) {
  auto f = run_on_log("kernel.panic",
                      "[ 456.789000] mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 4: be00000000800400\n"
                      "[ 456.789012] Kernel panic - not syncing: Fatal Machine check\n"
                      "[ 500.000000] BUG: unable to handle kernel NULL pointer dereference at 0000000000000008\n"
                      "[ 500.000100] Oops: 0002 [#1] SMP\n");
  ASSERT_EQ(f.size(), 1u);
  EXPECT_EQ(f[0].status, report::Status::fail);
  EXPECT_EQ(metric(f[0], "panics"), 1.0);
  EXPECT_EQ(metric(f[0], "oopses"), 1.0);
  EXPECT_EQ(metric(f[0], "machine_checks_uncorrected"), 1.0);
  EXPECT_NE(f[0].title.find("uncorrected machine check on CPU3 (bank 4)"), std::string::npos) << f[0].title;
  EXPECT_NE(f[0].fix.find("hardware diagnostics"), std::string::npos);
  auto corrected = run_on_log("kernel.panic", "[ 9.0] mce: [Hardware Error]: Machine check events logged\n");
  ASSERT_EQ(corrected.size(), 1u);
  EXPECT_EQ(corrected[0].status, report::Status::warn);
}
