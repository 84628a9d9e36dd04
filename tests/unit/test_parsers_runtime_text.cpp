// /proc/mounts, tmpfs sizes, /proc/<pid>/limits, enroot's environ.d / mounts.d lines, and the
// host files the runtime facts read (/etc/passwd, /run/.containerenv, config files' lines).
#include <gtest/gtest.h>

#include "parsers/host_files.hpp"
#include "parsers/mounts.hpp"
#include "parsers/procfs.hpp"

using namespace perfgap;

TEST(ParsersRuntimeText, Mounts) {
  auto m = parsers::parse_mounts(
      "overlay / overlay rw,relatime,lowerdir=/a:/b 0 0\n"
      "shm /dev/shm tmpfs rw,nosuid,nodev,size=65536k,inode64 0 0\n"
      "/dev/sda1 /mnt/with\\040space ext4 rw 0 0\n"
      "short line\n");
  ASSERT_EQ(m.size(), 3u);
  EXPECT_EQ(m[1].target, "/dev/shm");
  EXPECT_EQ(m[1].fstype, "tmpfs");
  EXPECT_EQ(parsers::mount_option(m[1].options, "size"), "65536k");
  EXPECT_FALSE(parsers::mount_option(m[1].options, "nr_blocks"));
  EXPECT_EQ(m[2].target, "/mnt/with space");
  EXPECT_EQ(parsers::mount_option("size=1g,size=2g", "size"), "2g");
}

TEST(ParsersRuntimeText, TmpfsSize) {
  EXPECT_EQ(parsers::parse_tmpfs_size("65536k", std::nullopt), 64ull << 20);
  EXPECT_EQ(parsers::parse_tmpfs_size("16G", std::nullopt), 16ull << 30);
  EXPECT_EQ(parsers::parse_tmpfs_size("1048576", std::nullopt), 1ull << 20);
  EXPECT_EQ(parsers::parse_tmpfs_size("50%", 1000), 500u);
  EXPECT_FALSE(parsers::parse_tmpfs_size("50%", std::nullopt));
  EXPECT_FALSE(parsers::parse_tmpfs_size("lots", 1000));
  EXPECT_FALSE(parsers::parse_tmpfs_size("", 1000));
  EXPECT_FALSE(parsers::parse_tmpfs_size("99999999999999999999e", 1000));
  EXPECT_FALSE(parsers::parse_tmpfs_size("16385p", 1000));  // overflows 64 bits
}

TEST(ParsersRuntimeText, MemlockLimit) {
  auto l = parsers::parse_memlock_limit(
      "Limit                     Soft Limit           Hard Limit           Units     \n"
      "Max locked memory         65536                unlimited            bytes     \n");
  ASSERT_TRUE(l) << l.error();
  EXPECT_EQ(l->soft, 65536u);
  EXPECT_FALSE(l->hard);
  auto u = parsers::parse_memlock_limit("Max locked memory         unlimited            unlimited            bytes\n");
  ASSERT_TRUE(u);
  EXPECT_FALSE(u->soft);
  EXPECT_FALSE(parsers::parse_memlock_limit("Max open files 1 1 files\n"));
  EXPECT_FALSE(parsers::parse_memlock_limit("Max locked memory         lots                 lots                 bytes\n"));
  EXPECT_FALSE(parsers::parse_memlock_limit("Max locked memory\n"));
}

TEST(ParsersRuntimeText, EnrootEnvironAndMounts) {
  EXPECT_EQ(parsers::enroot_environ_name("NCCL_TOPO_FILE=/etc/nccl/topo.xml"), "NCCL_TOPO_FILE");
  EXPECT_EQ(parsers::enroot_environ_name("export NCCL_TOPO_FILE"), "NCCL_TOPO_FILE");
  EXPECT_EQ(parsers::enroot_environ_name("# NCCL_TOPO_FILE=x"), "");
  EXPECT_EQ(parsers::enroot_environ_name("1BAD=x"), "");
  EXPECT_TRUE(parsers::enroot_mount_carries("/etc/nccl/topo.xml /etc/nccl/topo.xml none x-create=file,bind,ro", "/etc/nccl/topo.xml"));
  EXPECT_TRUE(parsers::enroot_mount_carries("/etc/nccl etc/nccl none bind", "/etc/nccl/topo.xml"));
  EXPECT_TRUE(parsers::enroot_mount_carries("/etc/nccl/ /etc/nccl/ none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(parsers::enroot_mount_carries("/etc/nccl/topo.xml /opt/topo.xml none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(parsers::enroot_mount_carries("/etc/ncc /etc/ncc none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(parsers::enroot_mount_carries("# /etc/nccl /etc/nccl none bind", "/etc/nccl/topo.xml"));
  EXPECT_FALSE(parsers::enroot_mount_carries("tmpfs /etc/nccl tmpfs rw", "/etc/nccl/topo.xml"));
}

TEST(ParsersRuntimeText, PasswdHome) {
  const std::string passwd = "root:x:0:0:root:/root:/bin/bash\nbad line\nalice:x:1000:1000::/home/alice:/bin/sh\nbob:x:1000:1:::\n";
  EXPECT_EQ(parsers::passwd_home(passwd, "0"), "/root");
  EXPECT_EQ(parsers::passwd_home(passwd, "1000"), "/home/alice");  // the first line with the uid
  EXPECT_FALSE(parsers::passwd_home(passwd, "42"));
  EXPECT_FALSE(parsers::passwd_home("", "0"));
}

TEST(ParsersRuntimeText, ContainerenvEngineAndConfigLines) {
  EXPECT_EQ(parsers::containerenv_engine("engine=\"podman-4.9\"\nname=x\n"), "\"podman-4.9\"");
  EXPECT_EQ(parsers::containerenv_engine("name=x\n"), "");
  auto lines = parsers::config_lines("# comment\n\n  NCCL_A=1  \n\t# indented comment\nB\n");
  ASSERT_EQ(lines.size(), 2u);
  EXPECT_EQ(lines[0], (std::pair<int, std::string>{3, "NCCL_A=1"}));
  EXPECT_EQ(lines[1], (std::pair<int, std::string>{5, "B"}));
  EXPECT_TRUE(parsers::config_lines("").empty());
}
