// Readers of facts/platform: the kernel config (plain and gzip), Grace detection, the kernel
// log's sources, page size, IOMMU summary, the NVIDIA driver version. Their text parsers are
// tested on strings in test_parsers_kernel.cpp.
#include <gtest/gtest.h>

#include <chrono>
#include <fstream>

#include "facts/platform.hpp"
#include "tree.hpp"

using namespace perfgap;

namespace {

// gzip -9 of "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_TEGRA241_CMDQV=y\n"
const std::string kGz(
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x73\xf6\xf7\x73\xf3\x74\x8f\x77\xb4\xad\xe4\x52\x56\x70\x86\x70\x9c\x14"
    "\x32\x8b\x15\xf2\xf2\x4b\x14\x8a\x53\x4b\xb8\xa0\x62\x21\xae\xee\x41\x8e\x46\x26\x86\xf1\xce\xbe\x2e\x81\x61\x40"
    "\xd5\x00\x05\x35\xba\x9e\x39\x00\x00\x00",
    66);

struct Tree {
  fixture::TempDir tmp;
  std::string root;
  explicit Tree(const std::string& text) {
    std::string file = tmp.path() + "/t.tree";
    std::ofstream(file) << text;
    root = tmp.path() + "/root";
    auto spec = fixture::unpack_tree(file, root);
    EXPECT_TRUE(spec) << spec.error();
  }
  facts::Facts facts(facts::Options o = {}) const { return facts::Facts(*sys::Sysroot::at(root), std::move(o)); }
};

}  // namespace

TEST(PlatformFacts, KernelConfigFromBootThenConfigGz) {
  Tree t("== file proc/sys/kernel/osrelease\n6.8.0-1\n== file boot/config-6.8.0-1\nCONFIG_TEGRA241_CMDQV=m\n");
  auto f = t.facts();
  const auto& c = facts::kernel_config(f);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->source, "/boot/config-6.8.0-1");
  EXPECT_EQ(c->get("TEGRA241_CMDQV"), "m");

  std::string esc;
  for (unsigned char ch : kGz) {
    char buf[8];
    std::snprintf(buf, sizeof buf, "\\x%02x", ch);
    esc += buf;
  }
  Tree gz("== file proc/sys/kernel/osrelease\n6.8.0-1\n== file proc/config.gz noeol esc\n" + esc + "\n");
  auto g = gz.facts();
  const auto& c2 = facts::kernel_config(g);
  ASSERT_TRUE(c2) << c2.error();
  EXPECT_EQ(c2->source, "/proc/config.gz");
  EXPECT_EQ(c2->get("TEGRA241_CMDQV"), "y");

  Tree none("== file proc/sys/kernel/osrelease\n6.8.0-1\n");
  auto n = none.facts();
  const auto& c3 = facts::kernel_config(n);
  ASSERT_FALSE(c3);
  EXPECT_NE(c3.error().find("/boot/config-6.8.0-1: not present"), std::string::npos) << c3.error();
  EXPECT_NE(c3.error().find("/proc/config.gz: not present"), std::string::npos) << c3.error();
}

TEST(PlatformFacts, GraceDetection) {
  Tree soc("== file sys/devices/soc0/soc_id\njep106:036b:0241\n");
  auto f = soc.facts();
  ASSERT_TRUE(facts::grace(f));
  EXPECT_TRUE(facts::grace(f)->grace);

  Tree other("== file sys/devices/soc0/soc_id\njep106:0a16:0001\n== file proc/cpuinfo\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n");
  auto o = other.facts();
  ASSERT_TRUE(facts::grace(o));
  EXPECT_FALSE(facts::grace(o)->grace);

  const std::string v2 = "== file proc/cpuinfo\nprocessor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd4f\n";
  Tree guest(v2 + "== link sys/bus/pci/devices/0000:01:00.0 -> ../../../devices/p/0000:01:00.0\n"
                  "== file sys/devices/p/0000:01:00.0/vendor\n0x10de\n== file sys/devices/p/0000:01:00.0/class\n0x030200\n");
  auto g = guest.facts();
  ASSERT_TRUE(facts::grace(g)) << facts::grace(g).error();
  EXPECT_TRUE(facts::grace(g)->grace);

  Tree nogpu(v2 + "== dir sys/bus/pci/devices\n");
  auto n = nogpu.facts();
  ASSERT_TRUE(facts::grace(n));
  EXPECT_FALSE(facts::grace(n)->grace);

  Tree nothing("== dir proc\n");
  auto x = nothing.facts();
  EXPECT_FALSE(facts::grace(x));
}

TEST(PlatformFacts, KernelLogSources) {
  Tree t("== file .perfgap/dmesg.txt\n[ 1.0] from the tree\n== file saved.log\n[ 1.0] from the option\n");
  auto tree_log = t.facts();
  const auto& a = facts::kernel_log(tree_log);
  ASSERT_TRUE(a) << a.error();
  EXPECT_EQ(a->source, "/.perfgap/dmesg.txt");
  ASSERT_EQ(a->messages.size(), 1u);
  EXPECT_EQ(a->messages[0], "from the tree");

  facts::Options o;
  o.dmesg_path = t.root + "/saved.log";
  auto opt = t.facts(o);
  const auto& b = facts::kernel_log(opt);
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(b->source, t.root + "/saved.log");
  EXPECT_EQ(b->messages.at(0), "from the option");

  // A file given with --dmesg that is empty or holds no kernel log line: the log is missing
  // (its checks skip saying why), never a log without events.
  Tree files("== file empty.log\n\n== file nccl.log\ngpu01:1:1 [0] NCCL INFO Bootstrap\ngpu01:1:1 [0] NCCL INFO ring 0\n"
             "== file perf.data noeol esc\nPERFILE2\\x00\\x00\\x68\\x00\\x0a\\x01\\x02ab\\x0a\n");
  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"empty.log", ": empty"}, {"nccl.log", ": not a kernel log: no line in a kernel-log layout"},
           {"perf.data", ": not a kernel log: no line in a kernel-log layout"}}) {
    facts::Options fo;
    fo.dmesg_path = files.root + "/" + name;
    auto ff = files.facts(fo);
    const auto& l = facts::kernel_log(ff);
    ASSERT_FALSE(l) << name;
    EXPECT_NE(l.error().find(*fo.dmesg_path + why), std::string::npos) << l.error();
  }

  Tree empty("== dir proc\n");
  auto e = empty.facts();
  ASSERT_FALSE(facts::kernel_log(e));
  EXPECT_NE(facts::kernel_log(e).error().find("/.perfgap/dmesg.txt"), std::string::npos);
}

// What a user saves as a kernel log besides stamped dmesg: dmesg -t / journalctl -k -o cat
// (no stamps, lines starting with a driver's prefix) is the log; a file that holds no kernel
// line at all (lspci -vvv, a daemon's syslog lines) is no log, which check refuses for --dmesg
// (dmesg_not_a_log) and skips for a tree's own file.
TEST(PlatformFacts, StamplessLogsReadAndFilesWithoutKernelLinesRefused) {
  Tree files("== file notime.log\nNVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s\n"
             "NVRM: GPU1 GSP RPC buffer contains function 103 (GSP_RM_ALLOC)\n"
             "== file lspci.txt\n3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)\n"
             "\tSubsystem: NVIDIA Corporation Device 16c1\n\tKernel driver in use: nvidia\n"
             "== file daemons.log\nMar 14 09:12:02 node-a healthd[7001]: saw \"NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus\"\n"
             "Mar 14 09:12:03 node-a nv-hostengine[2290]: NVRM: Xid (PCI:0000:3b:00): 48\n"
             "== file empty.log\n\n");
  facts::Options o;
  o.dmesg_path = files.root + "/notime.log";
  auto ok = files.facts(o);
  const auto& log = facts::kernel_log(ok);
  ASSERT_TRUE(log) << log.error();
  ASSERT_EQ(log->events.size(), 1u);
  EXPECT_EQ(log->events[0].code, 119);
  EXPECT_FALSE(facts::dmesg_not_a_log(ok));

  for (const auto& [name, why] : std::vector<std::pair<std::string, std::string>>{
           {"lspci.txt", ": not a kernel log: no line in a kernel-log layout"},
           {"daemons.log", ": not a kernel log: its 2 syslog/journal lines are user-space programs' (the first tagged 'healthd')"}}) {
    facts::Options fo;
    fo.dmesg_path = files.root + "/" + name;
    auto ff = files.facts(fo);
    const auto& l = facts::kernel_log(ff);
    ASSERT_FALSE(l) << name;
    EXPECT_EQ(l.error().find(*fo.dmesg_path + why), 0u) << l.error();
    auto refused = facts::dmesg_not_a_log(ff);
    ASSERT_TRUE(refused) << name;
    EXPECT_EQ(*refused, l.error());
  }
  // An empty --dmesg FILE skips (nothing logged), it is not refused.
  facts::Options eo;
  eo.dmesg_path = files.root + "/empty.log";
  auto ef = files.facts(eo);
  EXPECT_FALSE(facts::kernel_log(ef));
  EXPECT_FALSE(facts::dmesg_not_a_log(ef));

  // A tree's own .perfgap/dmesg.txt that is no log: missing (the checks skip), never refused.
  Tree tree("== file .perfgap/dmesg.txt\n3b:00.0 3D controller: NVIDIA Corporation GH100\n");
  auto tf = tree.facts();
  const auto& tl = facts::kernel_log(tf);
  ASSERT_FALSE(tl);
  EXPECT_EQ(tl.error().find("/.perfgap/dmesg.txt: not a kernel log: "), 0u) << tl.error();
  EXPECT_FALSE(facts::dmesg_not_a_log(tf));
}

// Live /dev/kmsg: read without blocking, so this returns promptly whether the log is readable
// here (root, or dmesg_restrict=0) or not (a reason naming /dev/kmsg).
TEST(PlatformFacts, LiveKernelLogDoesNotBlock) {
  facts::Facts f(sys::Sysroot::live(), {});
  auto start = std::chrono::steady_clock::now();
  const auto& log = facts::kernel_log(f);
  auto took = std::chrono::steady_clock::now() - start;
  EXPECT_LT(took, std::chrono::seconds(5));
  if (log) EXPECT_EQ(log->source, "/dev/kmsg");
  else EXPECT_NE(log.error().find("/dev/kmsg"), std::string::npos) << log.error();
}

TEST(PlatformFacts, PageSizeAndIommuSummary) {
  Tree t("== link proc/self -> 10\n== file proc/10/smaps\naaaa-bbbb r--p 0 0 0 /x\nKernelPageSize:       64 kB\n"
         "== link sys/bus/pci/devices/0000:01:00.0 -> ../../../devices/p/0000:01:00.0\n"
         "== file sys/devices/p/0000:01:00.0/vendor\n0x10de\n== file sys/devices/p/0000:01:00.0/class\n0x030200\n"
         "== link sys/bus/pci/devices/0000:02:00.0 -> ../../../devices/p/0000:02:00.0\n"
         "== file sys/devices/p/0000:02:00.0/vendor\n0x15b3\n== file sys/devices/p/0000:02:00.0/class\n0x020700\n"
         "== file sys/kernel/iommu_groups/1/type\nidentity\n== dir sys/kernel/iommu_groups/1/devices/0000:01:00.0\n"
         "== file sys/kernel/iommu_groups/2/type\nDMA-FQ\n== dir sys/kernel/iommu_groups/2/devices/0000:02:00.0\n");
  auto f = t.facts();
  ASSERT_TRUE(facts::page_size(f));
  EXPECT_EQ(facts::page_size(f)->kb, 64);
  EXPECT_EQ(facts::iommu_mode_summary(f), "mixed");
  const auto& groups = facts::iommu_groups(f);
  ASSERT_TRUE(groups);
  ASSERT_EQ(groups->size(), 2u);
  EXPECT_EQ(groups->at(1).devices, std::vector<std::string>{"0000:02:00.0"});

  facts::Facts live(sys::Sysroot::live(), {});
  ASSERT_TRUE(facts::page_size(live));
  EXPECT_GE(facts::page_size(live)->kb, 4);
}

TEST(PlatformFacts, NvidiaDriverIsOneFact) {
  Tree t("== file proc/driver/nvidia/version\nNVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n");
  auto f = t.facts();
  const auto& d = facts::nvidia_driver(f);
  ASSERT_TRUE(d) << d.error();
  EXPECT_EQ(d->version, "570.86.15");
  EXPECT_TRUE(d->open_module);
  EXPECT_EQ(&d, &facts::nvidia_driver(f));  // read once per Facts

  Tree none("== dir proc\n");
  auto n = none.facts();
  ASSERT_FALSE(facts::nvidia_driver(n));
  EXPECT_NE(facts::nvidia_driver(n).error().find("/proc/driver/nvidia/version"), std::string::npos);
}

TEST(PlatformFacts, SysctlReadsOnceAndSaysWhy) {
  Tree t("== file proc/sys/kernel/numa_balancing\n 1 \n== file proc/sys/net/core/rmem_max\n212992\n");
  auto f = t.facts();
  EXPECT_EQ(facts::sysctl_path("kernel.numa_balancing"), "/proc/sys/kernel/numa_balancing");
  const auto& nb = facts::sysctl(f, "kernel.numa_balancing");
  ASSERT_TRUE(nb) << nb.error();
  EXPECT_EQ(*nb, "1");
  EXPECT_EQ(&nb, &facts::sysctl(f, "kernel.numa_balancing"));
  EXPECT_EQ(facts::sysctl(f, "net.core.rmem_max"), "212992");
  const auto& absent = facts::sysctl(f, "vm.zone_reclaim_mode");
  ASSERT_FALSE(absent);
  EXPECT_NE(absent.error().find("/proc/sys/vm/zone_reclaim_mode"), std::string::npos) << absent.error();
}
