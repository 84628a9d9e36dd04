// /proc/mounts, tmpfs sizes, /proc/<pid>/limits, and enroot's environ.d / mounts.d lines.
#include <gtest/gtest.h>

#include "facts/runtime.hpp"

using namespace perfgap;

TEST(RuntimeParsers, Mounts) {
  auto m = facts::parse_mounts(
      "overlay / overlay rw,relatime,lowerdir=/a:/b 0 0\n"
      "shm /dev/shm tmpfs rw,nosuid,nodev,size=65536k,inode64 0 0\n"
      "/dev/sda1 /mnt/with\\040space ext4 rw 0 0\n"
      "short line\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].target, "/dev/shm");
  EXPECT_EQ(m[1].fstype, "tmpfs");
  EXPECT_EQ(facts::mount_option(m[1].options, "size"), "65536k");
  EXPECT_FALSE(facts::mount_option(m[1].options, "nr_blocks"));
  EXPECT_EQ(m[2].target, "/mnt/with space");
  EXPECT_EQ(facts::mount_option("size=1g,size=2g", "size"), "2g");
}

TEST(RuntimeParsers, TmpfsSize) {
  EXPECT_EQ(facts::parse_tmpfs_size("65536k", std::nullopt), 64ull << 20);
  EXPECT_EQ(facts::parse_tmpfs_size("16G", std::nullopt), 16ull << 30);
  EXPECT_EQ(facts::parse_tmpfs_size("1048576", std::nullopt), 1ull << 20);
  EXPECT_EQ(facts::parse_tmpfs_size("50%", 1000), 500u);
  EXPECT_FALSE(facts::parse_tmpfs_size("50%", std::nullopt));
  EXPECT_FALSE(facts::parse_tmpfs_size("lots", 1000));
  EXPECT_FALSE(facts::parse_tmpfs_size("", 1000));
  EXPECT_FALSE(facts::parse_tmpfs_size("99999999999999999999e", 1000));
  EXPECT_FALSE(facts::parse_tmpfs_size("16385p", 1000));  // overflows 64 bits
}

TEST(RuntimeParsers, MemlockLimit) {
  auto l = facts::parse_memlock_limit(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         65536                unlimited            bytes     \n");
  ASSERT_TRUE(l) << l.error();
  EXPECT_EQ(l->soft, 65536u);
  EXPECT_FALSE(l->hard);
  auto u = facts::parse_memlock_limit("Max locked memory         unlimited            unlimited            bytes\n");
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->soft);
  EXPECT_FALSE(facts::parse_memlock_limit("Max open files 1 1 files\n"));
  EXPECT_FALSE(facts::parse_memlock_limit("Max locked memory         lots                 lots                 bytes\n"));
  EXPECT_FALSE(facts::parse_memlock_limit("Max locked memory\n"));
}

TEST(RuntimeParsers, EnrootEnvironAndMounts) {
  EXPECT_EQ(facts::enroot_environ_name("NCCL_TOPO_FILE=/etc/nccl/topo.xml"), "NCCL_TOPO_FILE");
  EXPECT_EQ(facts::enroot_environ_name("export NCCL_TOPO_FILE"), "NCCL_TOPO_FILE");
  EXPECT_EQ(facts::enroot_environ_name("# NCCL_TOPO_FILE=x"), "");
  EXPECT_EQ(facts::enroot_environ_name("1BAD=x"), "");
  EXPECT_TRUE(facts::enroot_mount_carries("/etc/nccl/topo.xml /etc/nccl/topo.xml none x-create=file,bind,ro", "/etc/nccl/topo.xml"));
  EXPECT_TRUE(facts::enroot_mount_carries("/etc/nccl etc/nccl none bind", "/etc/nccl/topo.xml"));
  EXPECT_TRUE(facts::enroot_mount_carries("/etc/nccl/ /etc/nccl/ none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(facts::enroot_mount_carries("/etc/nccl/topo.xml /opt/topo.xml none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(facts::enroot_mount_carries("/etc/ncc /etc/ncc none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(facts::enroot_mount_carries("# /etc/nccl /etc/nccl none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(facts::enroot_mount_carries("tmpfs /etc/nccl tmpfs rw", "/etc/nccl/topo.xml"));
}
