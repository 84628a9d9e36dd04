// The kernel log line reader on the forms a user feeds as --dmesg besides the stamped ones
// (tested in test_parsers_kernel.cpp): syslog and journal lines of user-space processes that
// quote the driver's words (left out), dmesg -t / journalctl -k -o cat lines without stamps
// (read by their driver prefix), and the indented continuation lines of a multi-line printk
// (the time of the record they continue). Lines written for these tests in each format.
#include <gtest/gtest.h>

#include <string>
#include <string_view>

#include "parsers/kernel_events.hpp"
#include "parsers/kernel_log.hpp"

using namespace perfgap;
using parsers::KernelEventKind;

namespace {
bool sys_starts(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }
}  // namespace

// Daemons that watch the kernel log (a health agent, the persistence daemon, DCGM) log the
// Xid lines they saw under their own syslog tag: those lines are theirs, not the kernel's.
TEST(ParsersKernelLog, UserSpaceSyslogAndJournalLinesAreNoRecords) {
  const std::string text =
      "Mar 14 09:12:01 node-a kernel: [ 912.500000] NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s of "
      "waiting for RPC response from GPU1 GSP!\n"
      "Mar 14 09:12:02 node-a healthd[7001]: W0314 09:12:02 watcher.go:88] saw line=\"NVRM: Xid (PCI:0000:3b:00): 119, pid=4242\"\n"
      "Mar 14 09:12:02 node-a nvidia-persistenced[1180]: NVRM: Xid (PCI:0000:3b:00): 119, quoted\n"
      "Mar  4 09:12:03 node-a nv-hostengine[2290]: NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n"
      "Mar 14 09:12:03.123456 node-a agent[31]: NVRM: Xid (PCI:0000:3b:00): 48, short-precise\n"
      "2026-03-14T09:12:04+0000 node-a agent[31]: NVRM: Xid (PCI:0000:3b:00): 48, short-iso\n"
      "2026-03-14T09:12:04.250000+00:00 node-a agent[31]: NVRM: Xid (PCI:0000:3b:00): 48, rsyslog ISO\n"
      "[  912.600000] node-a agent[31]: NVRM: Xid (PCI:0000:3b:00): 48, short-monotonic\n"
      "Mar 14 09:12:05 node-a sudo: NVRM: Xid (PCI:0000:3b:00): 48, a tag without a pid\n"
      "2026-03-14T09:12:06+0000 node-a kernel: mlx5_core 0000:5c:00.0 ibp92s0: Link up\n";
  parsers::KernelLogDropped dropped;
  auto records = parsers::parse_kernel_records(text, &dropped);
  ASSERT_EQ(records.size(), 2u);
  EXPECT_EQ(records[0].message.rfind("NVRM: Xid (PCI:0000:3b:00): 119", 0), 0u) << records[0].message;
  EXPECT_EQ(records[1].message, "mlx5_core 0000:5c:00.0 ibp92s0: Link up");
  EXPECT_EQ(dropped.user_space, 8u);
  EXPECT_EQ(dropped.first_tag, "healthd");
  auto events = parsers::kernel_events(records);
  ASSERT_EQ(events.size(), 2u);
  EXPECT_EQ(events[0].kind, KernelEventKind::xid);
  EXPECT_EQ(events[0].code, 119);
  EXPECT_EQ(events[1].kind, KernelEventKind::link_up);
  // No fallen-off-bus event: the only Xid 79 was a daemon's line.
  for (const auto& e : events) EXPECT_NE(e.kind, KernelEventKind::fallen_off_bus) << e.line;
}

// Lines that only look like "host TAG[pid]: " are kept: the kernel's own words after a dmesg
// stamp, dmesg --time-format iso (no host follows its stamp), a tag that is a driver's prefix
// (a forwarder that dropped "kernel:"), and a syslog line without a tag.
TEST(ParsersKernelLog, KernelLinesThatLookLikeTagsAreKept) {
  for (std::string_view line : {"[    1.200000] usb 1-1: new high-speed USB device number 2 using xhci_hcd",
                                "[    1.300000] pci 0000:00:01.0: [8086:1237] type 00 class 0x060000",
                                "[    2.100000] systemd[1]: Started Journal Service.",
                                "[  300.000000] python3[4242]: segfault at 0 ip 00007f0000000000 sp 00007ffd00000000 error 4",
                                "[  301.000000] Call Trace:",
                                "2026-03-14T09:12:04,250000+00:00 mlx5_core 0000:5c:00.0: Port module event: module 1, Cable plugged",
                                "kern  :info  : [   12.120331] mlx5_core 0000:ae:00.0 ibp174s0: Link up",
                                "Mar 14 09:12:05 node-a NVRM: Xid (PCI:0000:3b:00): 48, forwarded without its tag",
                                "Mar 14 09:12:05 node-a nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32",
                                "2026-03-14T09:12:05+0000 node-a mlx5_core 0000:5c:00.0 ibp92s0: Link down",
                                "Mar 14 09:12:06 node-a -- MARK --"}) {
    parsers::KernelLogDropped dropped;
    auto r = parsers::parse_kernel_records(line, &dropped);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_EQ(dropped.user_space, 0u) << line;
  }
  auto fwd = parsers::parse_kernel_records("Mar 14 09:12:05 node-a NVRM: Xid (PCI:0000:3b:00): 48, forwarded without its tag\n");
  ASSERT_EQ(fwd.size(), 1u);
  EXPECT_EQ(fwd[0].message, "NVRM: Xid (PCI:0000:3b:00): 48, forwarded without its tag");
  EXPECT_EQ(fwd[0].wall, "Mar 14 09:12:05");
  EXPECT_TRUE(fwd[0].layout);
  auto mlx = parsers::parse_kernel_events("2026-03-14T09:12:05+0000 node-a mlx5_core 0000:5c:00.0 ibp92s0: Link down\n");
  ASSERT_EQ(mlx.size(), 1u);
  EXPECT_EQ(mlx[0].kind, KernelEventKind::link_down);
  // journalctl -o short-full: a weekday first.
  auto full = parsers::parse_kernel_records("Sat 2026-03-14 09:12:05 UTC node-a kernel: NVRM: Xid (PCI:0000:3b:00): 48, full\n");
  ASSERT_EQ(full.size(), 1u);
  EXPECT_EQ(full[0].message, "NVRM: Xid (PCI:0000:3b:00): 48, full");
  EXPECT_TRUE(full[0].layout);
}

// dmesg -t and journalctl -k -o cat print no stamp: such a line is a kernel record when it
// starts with a kernel driver's prefix; other text without a stamp is no kernel log's.
TEST(ParsersKernelLog, StamplessLinesReadByTheirDriverPrefix) {
  for (std::string_view line : {"NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s",
                                "NVRM: GPU at PCI:0000:3b:00: GPU-00000000-1111-2222-3333-444444444444",
                                "nvidia-nvswitch3: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 32 egress non-posted PRIV error",
                                "mlx5_core 0000:5c:00.0 ibp92s0: Link down",
                                "mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 1): Detected insufficient power on the PCIe slot (27W).",
                                "mlx5_port_module_event:1131:(pid 0): Port module event[error]: module 0, Cable error, High Temperature",
                                "pcieport 0000:00:01.0: AER: Corrected error received: 0000:01:00.0",
                                "nvidia 0000:3b:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)",
                                "mce: CPU4: Core temperature is above threshold, cpu clock is throttled (total events = 12)",
                                "CPU12: Core temperature above threshold, cpu clock throttled (total events = 41)",
                                "EDAC MC0: 1 CE memory read error on CPU_SrcID#0_MC#0_Chan#0_DIMM#0",
                                "watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [python3:4242]",
                                "INFO: task python3:4242 blocked for more than 122 seconds.",
                                "task kworker/u256:3:1187 blocked for more than 245 seconds."}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_TRUE(r[0].driver) << line;
    EXPECT_FALSE(r[0].layout) << line;
  }
  // A syslog line with its stamp cut off: "host kernel: " / "kernel: " before a driver's prefix.
  for (std::string_view line : {"node-a kernel: mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 1): Detected insufficient power",
                                "kernel: NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s"}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_TRUE(r[0].layout) << line;
    EXPECT_TRUE(sys_starts(r[0].message, "mlx5_core ") || sys_starts(r[0].message, "NVRM: ")) << r[0].message;
  }
  for (std::string_view line : {"node-a kernel: CPU temperature threshold exceeded", "kernel: something"}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_FALSE(r[0].layout || r[0].driver) << line;
  }
  // lspci -vvv, Fabric Manager's log, an NCCL log, nvidia-smi, a daemon's words: no driver prefix.
  for (std::string_view line : {"3b:00.0 3D controller: NVIDIA Corporation GH100 [H100 SXM5 80GB] (rev a1)",
                                "\tKernel driver in use: nvidia", "\tKernel modules: nvidiafb, nouveau, nvidia_drm, nvidia",
                                "0000:3b:00.0 3D controller: NVIDIA Corporation Device 2330",
                                "[Mar 14 2026 09:12:01] [INFO] [tid 1929] Fabric Manager version is : 550.54.15",
                                "node-a:4242:4242 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB", "mlx5_0:1 ACTIVE",
                                "nvidia-smi: command not found", "CPU: 12", "Error: NVRM: quoted", "task done"}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_FALSE(r[0].driver) << line;
    EXPECT_FALSE(r[0].layout) << line;
  }
  // A stampless Xid log is read: five reports, five events, no time.
  std::string notime;
  for (int i = 0; i < 5; ++i)
    notime += "NVRM: Xid (PCI:0000:3b:00): 119, pid=4242, name=python3, Timeout after 6s of waiting for RPC response from GPU1 GSP!\n"
              "NVRM: GPU1 GSP RPC buffer contains function 103 (GSP_RM_ALLOC)\n";
  auto ev = parsers::parse_kernel_events(notime);
  ASSERT_EQ(ev.size(), 5u);
  EXPECT_EQ(ev[0].device, "0000:3b:00.0");
  EXPECT_FALSE(ev[0].since_boot_s);
  EXPECT_TRUE(ev[0].wall.empty());
}

// dmesg prints the lines of one multi-line printk under the first, indented by the stamp's
// width; journalctl indents them under its prefix. They are the stamped record's: its time.
TEST(ParsersKernelLog, IndentedContinuationLinesHaveTheirRecordsTime) {
  const std::string dmesg = "[ 2210.441873] NVRM: The NVIDIA GPU 0000:86:00.0\n"
                            "               NVRM: (PCI ID: 10de:2330) installed in this system has\n"
                            "               NVRM: fallen off the bus and is not responding to commands.\n"
                            "[ 2211.000000] next record\n"
                            "    an indented line of it\n";
  auto r = parsers::parse_kernel_records(dmesg);
  ASSERT_EQ(r.size(), 5u);
  for (std::size_t i = 0; i < 3; ++i) {
    ASSERT_TRUE(r[i].since_boot_s) << i;
    EXPECT_DOUBLE_EQ(*r[i].since_boot_s, 2210.441873) << i;
    EXPECT_TRUE(r[i].layout) << i;
  }
  EXPECT_EQ(r[1].message, "NVRM: (PCI ID: 10de:2330) installed in this system has");
  ASSERT_TRUE(r[4].since_boot_s);
  EXPECT_DOUBLE_EQ(*r[4].since_boot_s, 2211.0);
  auto ev = parsers::kernel_events(r);
  ASSERT_EQ(ev.size(), 1u);
  EXPECT_EQ(ev[0].kind, KernelEventKind::fallen_off_bus);
  EXPECT_EQ(ev[0].device, "0000:86:00.0");
  ASSERT_TRUE(ev[0].since_boot_s);
  EXPECT_DOUBLE_EQ(*ev[0].since_boot_s, 2210.441873);

  const std::string journal = "Mar 14 09:12:01 node-a kernel: NVRM: The NVIDIA GPU 0000:86:00.0\n"
                              "                               NVRM: (PCI ID: 10de:2330) installed in this system has\n"
                              "                               NVRM: fallen off the bus and is not responding to commands.\n";
  auto j = parsers::kernel_events(parsers::parse_kernel_records(journal));
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].wall, "Mar 14 09:12:01");

  // A daemon's multi-line message is left out whole; indented lines after an unstamped line
  // stay without a time; /dev/kmsg's " KEY=value" lines are still no records.
  parsers::KernelLogDropped dropped;
  auto d = parsers::parse_kernel_records("Mar 14 09:12:02 node-a healthd[7001]: matched:\n"
                                         "                                       NVRM: Xid (PCI:0000:3b:00): 79, GPU has fallen off the bus.\n",
                                         &dropped);
  EXPECT_TRUE(d.empty());
  EXPECT_EQ(dropped.user_space, 1u);
  auto plain = parsers::parse_kernel_records("plain words\n  NVRM: indented\n");
  ASSERT_EQ(plain.size(), 2u);
  EXPECT_FALSE(plain[1].since_boot_s);
  EXPECT_TRUE(plain[1].wall.empty());
  auto kmsg = parsers::parse_kernel_records("6,513,1912530,-;first\n SUBSYSTEM=pci\n DEVICE=+pci:0000:3b:00.0\n");
  ASSERT_EQ(kmsg.size(), 1u);
}
