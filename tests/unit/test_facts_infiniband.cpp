#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <stdexcept>
#include <string>
#include <vector>

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
