#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>

#include "facts/infiniband.hpp"
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
