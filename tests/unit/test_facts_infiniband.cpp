#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

#include "checks/network/counters.hpp"
#include "facts/infiniband.hpp"
#include "facts/platform.hpp"
#include "facts/runtime.hpp"
#include "tree.hpp"

using namespace perfgap;

TEST(InfinibandFacts, ReadsDevicesPortsAndVerbsNodes) {
  fixture::TempDir tmp;
  std::string tree = tmp.path() + "/t.tree";
  std::ofstream(tree) << "== link sys/class/infiniband/mlx5_0 -> ../../devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0\n"
                         "== link sys/devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0/device -> ../../../0000:2a:00.0\n"
                         "== file sys/devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0/ports/1/state\n4: ACTIVE\n"
                         "== file sys/devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0/ports/1/phys_state\n5: LinkUp\n"
                         "== file sys/devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0/ports/1/rate\n400 Gb/sec (4X NDR)\n"
                         "== file sys/devices/pci0000:29/0000:29:01.0/0000:2a:00.0/infiniband/mlx5_0/ports/1/link_layer\nInfiniBand\n"
                         "== file sys/class/infiniband_verbs/uverbs0/ibdev\nmlx5_0\n";
  auto spec = fixture::unpack_tree(tree, tmp.path() + "/root");
  ASSERT_TRUE(spec) << spec.error();
  facts::Facts f(*sys::Sysroot::at(tmp.path() + "/root"), {});
  const auto& ib = facts::infiniband(f);
  ASSERT_TRUE(ib) << ib.error();
  ASSERT_EQ(ib->size(), 1u);
  const auto& d = ib->front();
  EXPECT_EQ(d.name, "mlx5_0");
  EXPECT_EQ(d.bdf, "0000:2a:00.0");
  EXPECT_EQ(d.uverbs, "uverbs0");
  ASSERT_EQ(d.ports.size(), 1u);
  EXPECT_EQ(d.ports[0].state, "ACTIVE");
  EXPECT_EQ(d.ports[0].phys_state, "LinkUp");
  EXPECT_EQ(d.ports[0].rate_gbps, 400.0);
  EXPECT_EQ(d.ports[0].link_layer, "InfiniBand");
  // No /sys/class/infiniband at all: no RDMA devices, not "unknown".
  facts::Facts none(*sys::Sysroot::at(tmp.path()), {});
  ASSERT_TRUE(facts::infiniband(none));
  EXPECT_TRUE(facts::infiniband(none)->empty());
}

// The facts the NCCL and runtime checks used to read themselves (issue 15): interfaces by
// name (a link whose target was not captured still names one), loaded modules and device
// nodes by stat, each read once.
TEST(NodeFacts, InterfacesModulesAndDeviceNodes) {
  fixture::TempDir tmp;
  std::string tree = tmp.path() + "/t.tree";
  std::ofstream(tree) << "== link sys/class/net/eth0 -> ../../devices/pci0000:00/0000:00:03.0/net/eth0\n"
                         "== dir sys/class/net/lo\n"
                         "== dir sys/module/nvidia_peermem\n"
                         "== file dev/nvidia0\n\n"
                         "== dir dev/infiniband\n";
  auto spec = fixture::unpack_tree(tree, tmp.path() + "/root");
  ASSERT_TRUE(spec) << spec.error();
  facts::Facts f(*sys::Sysroot::at(tmp.path() + "/root"), {});
  const auto& ifs = facts::net_interfaces(f);
  ASSERT_TRUE(ifs) << ifs.error();
  EXPECT_EQ(*ifs, (std::vector<std::string>{"eth0", "lo"}));
  EXPECT_TRUE(facts::kernel_module_loaded(f, "nvidia_peermem"));
  EXPECT_FALSE(facts::kernel_module_loaded(f, "nv_peer_mem"));
  EXPECT_TRUE(facts::device_node_present(f, "/dev"));
  EXPECT_TRUE(facts::device_node_present(f, "/dev/nvidia0"));
  EXPECT_FALSE(facts::device_node_present(f, "/dev/nvidiactl"));
  EXPECT_FALSE(facts::device_node_present(f, "/dev/infiniband/uverbs0"));
  // Anything outside /dev is another fact's, with its own declared reads.
  EXPECT_THROW(facts::device_node_present(f, "/sys/module/nvidia_peermem"), std::invalid_argument);
  // No /sys/class/net: unknown, with why, not "no interfaces".
  facts::Facts bare(*sys::Sysroot::at(tmp.path()), {});
  const auto& none = facts::net_interfaces(bare);
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().find("/sys/class/net"), std::string::npos) << none.error();
  EXPECT_FALSE(facts::device_node_present(bare, "/dev"));
}

// net.ib.counters' judgement over two counter samples as the sample window takes them:
// growing link errors, a wrapped (or cleared) counter, a saturated one, send waits, a port
// without hw_counters and ports whose counters cannot be read.
namespace ib_counters_test {
namespace {

facts::RdmaPortCounters port(const std::string& dev, std::map<std::string, std::uint64_t, std::less<>> values, bool hw = true) {
  facts::RdmaPortCounters p;
  p.device = dev;
  p.port = 1;
  p.dir = "/sys/class/infiniband/" + dev + "/ports/1";
  p.values = std::move(values);
  p.has_counters = true;
  p.has_hw_counters = hw;
  return p;
}

facts::RdmaCounterSample sample(std::vector<facts::RdmaPortCounters> ports, double uptime = 36000) {
  facts::RdmaCounterSample s;
  s.ports = std::move(ports);
  s.uptime_s = uptime;
  return s;
}

const report::Finding& of(const std::vector<report::Finding>& f, const std::string& subject) {
  for (const auto& x : f)
    if (x.subject == subject) return x;
  static report::Finding none;
  ADD_FAILURE() << "no finding for " << subject;
  return none;
}

std::string evidence(const report::Finding& f) {
  std::string s;
  for (const auto& e : f.evidence) s += e.source + " = " + e.observed + "\n";
  return s;
}

}  // namespace

TEST(IbCounters, GrowingSymbolErrorsFailWrappedCounterIsNoGrowth) {
  std::map<std::string, checks::IbPortContext> ctx = {{"mlx5_0:1", {"0000:2a:00.0", "NUMA node of GPU 0", 400.0}}, {"mlx5_1:1", {"0000:ae:00.0", "", 400.0}}};
  auto a = sample({port("mlx5_0", {{"counters/symbol_error", 100}, {"counters/link_downed", 1}, {"hw_counters/out_of_buffer", 0}}),
                   port("mlx5_1", {{"counters/symbol_error", 0}, {"hw_counters/local_ack_timeout_err", 4000000000ULL}})});
  auto b = sample({port("mlx5_0", {{"counters/symbol_error", 112}, {"counters/link_downed", 1}, {"hw_counters/out_of_buffer", 0}}),
                   port("mlx5_1", {{"counters/symbol_error", 0}, {"hw_counters/local_ack_timeout_err", 12}})});
  auto f = checks::judge_ib_counters(a, b, true, 0.1, ctx, {});
  ASSERT_EQ(f.size(), 2u);
  const auto& grow = of(f, "mlx5_0:1");
  EXPECT_EQ(grow.status, report::Status::fail) << grow.title;
  EXPECT_NE(grow.title.find("symbol_error +12"), std::string::npos) << grow.title;
  EXPECT_NE(grow.title.find("0000:2a:00.0, NUMA node of GPU 0"), std::string::npos) << grow.title;
  EXPECT_FALSE(grow.fix.empty());
  const auto& wrap = of(f, "mlx5_1:1");
  EXPECT_NE(evidence(wrap).find("wrapped or cleared during the window: 4000000000 -> 12"), std::string::npos) << evidence(wrap);
  EXPECT_EQ(wrap.title.find("grew"), std::string::npos) << wrap.title;  // never a negative growth
  EXPECT_EQ(wrap.status, report::Status::pass) << wrap.title;          // 12 since boot over 10 h: under the rate
}

TEST(IbCounters, SinceBootRatesSaturationAndSendWaits) {
  std::map<std::string, checks::IbPortContext> ctx = {{"mlx5_0:1", {"0000:2a:00.0", "", 400.0}}, {"mlx5_1:1", {"0000:ae:00.0", "", 400.0}},
                                                      {"mlx5_2:1", {"", "", 400.0}}};
  // 10 h of uptime: 40 link errors = 4/h (warn), 65535 symbol errors = saturated, send waits
  // of 8 bytes each at 50 GB/s for a tenth of the uptime.
  const std::uint64_t wait = static_cast<std::uint64_t>(0.10 * 36000 * 50e9 / 8);
  auto s = sample({port("mlx5_0", {{"counters/link_error_recovery", 40}}), port("mlx5_1", {{"counters/symbol_error", 65535}}, false),
                   port("mlx5_2", {{"counters/port_xmit_wait", wait}, {"counters/symbol_error", 0}})});
  auto f = checks::judge_ib_counters(s, s, false, 0, ctx, {});
  EXPECT_EQ(of(f, "mlx5_0:1").status, report::Status::warn) << of(f, "mlx5_0:1").title;
  EXPECT_NE(of(f, "mlx5_0:1").title.find("per hour of uptime"), std::string::npos);
  const auto& sat = of(f, "mlx5_1:1");
  EXPECT_NE(evidence(sat).find("saturated at its 16-bit maximum"), std::string::npos) << evidence(sat);
  EXPECT_NE(evidence(sat).find("hw_counters = absent"), std::string::npos) << evidence(sat);
  const auto& w = of(f, "mlx5_2:1");
  EXPECT_EQ(w.status, report::Status::warn) << w.title;
  EXPECT_NE(w.title.find("waited to send 10.0% of the uptime"), std::string::npos) << w.title;

  checks::IbCounterParams loose;
  loose.link_errors_per_hour_warn = 10;
  loose.xmit_wait_share_warn = 0.5;
  auto g = checks::judge_ib_counters(s, s, false, 0, ctx, loose);
  // mlx5_0 has link_error_recovery alone: no symbol_error, no port_rcv_errors, so no verdict.
  EXPECT_EQ(of(g, "mlx5_0:1").status, report::Status::skip) << of(g, "mlx5_0:1").title;
  EXPECT_EQ(of(g, "mlx5_2:1").status, report::Status::pass);
}

// Found on node_exporter's tree: mlx4_0:2 passed "0 link errors since boot" on
// link_error_recovery and link_downed alone. The counters not read are named; without both
// core counters (symbol_error, port_rcv_errors) the port skips; with one it passes on what was
// read and says what was not.
TEST(IbCounters, MissingPortCountersAreNamedAndCoreOnesSkip) {
  auto s = sample({port("mlx4_0", {{"counters/link_error_recovery", 0}, {"counters/link_downed", 0}}, false),
                   port("mlx4_1", {{"counters/symbol_error", 0}, {"counters/link_downed", 0}}, false)});
  auto f = checks::judge_ib_counters(s, s, false, 0, {}, {});
  const auto& partial = of(f, "mlx4_0:1");
  EXPECT_EQ(partial.status, report::Status::skip) << partial.title;
  EXPECT_NE(partial.title.find("symbol_error and port_rcv_errors not present: link errors unknown"), std::string::npos) << partial.title;
  EXPECT_EQ(partial.title.find("0 link errors since boot"), std::string::npos) << partial.title;
  EXPECT_NE(evidence(partial).find("counters = not present: symbol_error, port_rcv_errors, port_rcv_remote_physical_errors"), std::string::npos)
      << evidence(partial);
  const auto& one = of(f, "mlx4_1:1");
  EXPECT_EQ(one.status, report::Status::pass) << one.title;
  EXPECT_NE(one.title.find("0 link errors since boot in the PortCounters read (not present: link_error_recovery, port_rcv_errors"),
            std::string::npos) << one.title;
}

// Found on node_exporter's fixture tree: 5 port_xmit_discards since boot and no /proc/uptime
// gave `pass`; without the uptime their rate cannot be judged.
TEST(IbCounters, ErrorsSinceBootWithoutUptimeSkip) {
  auto s = sample({port("mlx4_0", {{"counters/port_xmit_discards", 5}}, false), port("mlx4_1", {{"counters/symbol_error", 0}}, false)});
  s.uptime_s.reset();
  auto f = checks::judge_ib_counters(s, s, false, 0, {}, {});
  EXPECT_EQ(of(f, "mlx4_0:1").status, report::Status::skip) << of(f, "mlx4_0:1").title;
  EXPECT_NE(of(f, "mlx4_0:1").title.find("rate is unknown"), std::string::npos);
  EXPECT_EQ(of(f, "mlx4_1:1").status, report::Status::pass);  // nothing counted: nothing to rate
}

TEST(IbCounters, UnreadableCountersSkipWithWhy) {
  facts::RdmaPortCounters none;
  none.device = "mlx5_0";
  none.port = 1;
  none.dir = "/sys/class/infiniband/mlx5_0/ports/1";
  none.counters_error = "/sys/class/infiniband/mlx5_0/ports/1/counters: permission denied";
  facts::RdmaPortCounters garbage = none;
  garbage.device = "mlx5_1";
  garbage.has_counters = true;
  garbage.counters_error.clear();
  garbage.unreadable = {"counters/symbol_error: 'x' is not a counter"};
  auto s = sample({none, garbage});
  auto f = checks::judge_ib_counters(s, s, false, 0, {}, {});
  EXPECT_EQ(of(f, "mlx5_0:1").status, report::Status::skip);
  EXPECT_NE(of(f, "mlx5_0:1").title.find("permission denied"), std::string::npos);
  EXPECT_EQ(of(f, "mlx5_1:1").status, report::Status::skip);
  EXPECT_NE(of(f, "mlx5_1:1").title.find("not a counter"), std::string::npos);

  facts::RdmaCounterSample broken;
  broken.error = "/sys/class/infiniband: permission denied";
  auto b = checks::judge_ib_counters(broken, broken, false, 0, {}, {});
  ASSERT_EQ(b.size(), 1u);
  EXPECT_EQ(b[0].status, report::Status::skip);
  auto e = checks::judge_ib_counters({}, {}, false, 0, {}, {});
  ASSERT_EQ(e.size(), 1u);
  EXPECT_EQ(e[0].status, report::Status::skip);
}


// gpud's H100 sysfs capture: link_downed saturated at 255 beside 14 receive errors. Judged by the
// error rate alone it passed after a year of uptime and skipped without /proc/uptime; each
// link_downed is an outage of the rail, so the count warns on its own, whatever the uptime.
TEST(IbCounters, LinkDownsWarnOnTheirOwnCountWhateverTheUptime) {
  auto p = [](std::uint64_t downed) {
    return port("mlx5_1", {{"counters/symbol_error", 0}, {"counters/port_rcv_errors", 14}, {"counters/link_downed", downed}});
  };
  const double year = 365.0 * 24 * 3600;
  for (std::optional<double> uptime : {std::optional<double>(year), std::optional<double>()}) {
    auto s = sample({p(255)});
    s.uptime_s = uptime;
    auto f = checks::judge_ib_counters(s, s, false, 0, {}, {});
    ASSERT_EQ(f.size(), 1u);
    EXPECT_EQ(f[0].status, report::Status::warn) << f[0].title;
    EXPECT_NE(f[0].title.find("the link went down at least 255 times since boot"), std::string::npos) << f[0].title;
  }
  auto s = sample({p(3)}, year);
  auto f = checks::judge_ib_counters(s, s, false, 0, {}, {});
  EXPECT_NE(f[0].title.find("the link went down 3 times"), std::string::npos) << f[0].title;
  s = sample({p(2)}, year);  // below link_downed_warn, and 16 errors in a year: pass
  f = checks::judge_ib_counters(s, s, false, 0, {}, {});
  EXPECT_EQ(f[0].status, report::Status::pass) << f[0].title;
}

}  // namespace ib_counters_test
