// Text parsers the platform and RDMA facts use, on strings: kernel config, gzip, kernel log
// formats and the hardware events in them (lines written for these tests in the drivers'
// formats), PCIe link and RDMA port attributes.
#include <gtest/gtest.h>

#include <string>

#include "parsers/gunzip.hpp"
#include "parsers/kernel_config.hpp"
#include "core/kb.hpp"
#include "parsers/kernel_events.hpp"
#include "parsers/kernel_log.hpp"
#include "parsers/sysfs_values.hpp"

using namespace perfgap;

namespace {

// gzip -9 of "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_TEGRA241_CMDQV=y\n"
const std::string kConfigGz(
    "\x1f\x8b\x08\x00\x00\x00\x00\x00\x02\x03\x73\xf6\xf7\x73\xf3\x74\x8f\x77\xb4\xad\xe4\x52\x56\x70\x86\x70\x9c\x14"
    "\x32\x8b\x15\xf2\xf2\x4b\x14\x8a\x53\x4b\xb8\xa0\x62\x21\xae\xee\x41\x8e\x46\x26\x86\xf1\xce\xbe\x2e\x81\x61\x40"
    "\xd5\x00\x05\x35\xba\x9e\x39\x00\x00\x00",
    66);

}  // namespace

TEST(ParsersKernelConfig, ValuesAndUnsetOptions) {
  auto c = parsers::parse_kernel_config("#\n# Linux/arm64 Kernel Configuration\n#\nCONFIG_ARM64=y\nCONFIG_NR_CPUS=512\n"
                                      "# CONFIG_TEGRA241_CMDQV is not set\nCONFIG_CMDLINE=\"a b\"\nnot a line\nCONFIG_=x\n");
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->get("ARM64"), "y");
  EXPECT_EQ(c->get("CONFIG_NR_CPUS"), "512");
  EXPECT_EQ(c->get("TEGRA241_CMDQV"), "n");
  EXPECT_EQ(c->get("CMDLINE"), "\"a b\"");
  EXPECT_FALSE(c->get("ARM_SMMU_V3"));
  EXPECT_FALSE(parsers::parse_kernel_config(""));
  EXPECT_FALSE(parsers::parse_kernel_config("hello\n# comment\n"));
}

TEST(ParsersGunzip, WholeTruncatedCorruptAndLimited) {
  auto text = parsers::gunzip(kConfigGz);
  ASSERT_TRUE(text) << text.error();
  EXPECT_EQ(*text, "CONFIG_A=y\n# CONFIG_B is not set\nCONFIG_TEGRA241_CMDQV=y\n");
  // Every truncation is an error with a reason, never a crash or a partial success.
  for (std::size_t n = 0; n < kConfigGz.size(); ++n) {
    auto cut = parsers::gunzip(std::string_view(kConfigGz).substr(0, n));
    EXPECT_FALSE(cut) << "cut at " << n;
  }
  auto cut = parsers::gunzip(std::string_view(kConfigGz).substr(0, 40));
  ASSERT_FALSE(cut);
  EXPECT_NE(cut.error().find("truncated"), std::string::npos) << cut.error();
  EXPECT_FALSE(parsers::gunzip("CONFIG_A=y\n"));
  std::string corrupt = kConfigGz;
  corrupt[20] = static_cast<char>(corrupt[20] ^ 0x55);
  EXPECT_FALSE(parsers::gunzip(corrupt));
  EXPECT_FALSE(parsers::gunzip(kConfigGz, 10));  // beyond the output limit
}

TEST(ParsersKernelLog, KmsgDmesgJournalAndBinary) {
  auto dmesg = parsers::parse_kernel_log("[    1.912530] acpi NVDA200C:00: Falling back to standard SMMU CMDQ\n[Mon Nov 30 12:00:00 2026] x\n");
  ASSERT_EQ(dmesg.size(), 2u);
  EXPECT_EQ(dmesg[0], "acpi NVDA200C:00: Falling back to standard SMMU CMDQ");
  EXPECT_EQ(dmesg[1], "x");
  auto kmsg = parsers::parse_kernel_log("6,513,1912530,-,caller=T1;tegra241_cmdqv: hello\n SUBSYSTEM=acpi\n DEVICE=+acpi:NVDA200C:00\n4,514,1,c;second\n");
  ASSERT_EQ(kmsg.size(), 2u);
  EXPECT_EQ(kmsg[0], "tegra241_cmdqv: hello");
  EXPECT_EQ(kmsg[1], "second");
  auto journal = parsers::parse_kernel_log("Nov 30 12:00:00 gpu01 kernel: arm-smmu-v3: probe\n");
  ASSERT_EQ(journal.size(), 1u);
  EXPECT_EQ(journal[0], "arm-smmu-v3: probe");
  auto binary = parsers::parse_kernel_log(std::string("\x7f" "ELF\x00\xff\xfe\r\n\x1b[31mred\n", 15));
  for (const auto& m : binary)
    for (char c : m) EXPECT_TRUE(c >= 0x20 && c < 0x7f) << m;
  EXPECT_EQ(parsers::parse_kernel_log(std::string(2000, 'a')).front().size(), 512u);
  EXPECT_TRUE(parsers::parse_kernel_log("\n\n  \n").empty());
}

// Which lines have a kernel log's layout (--dmesg FILE stands for the kernel log only when
// some line does), and binary lines are no records at all.
TEST(ParsersKernelLog, LayoutOfEveryFormatAndBinaryLinesDropped) {
  for (std::string_view line : {"[    1.912530] x", "[Mon Nov 30 12:00:00 2026] x", "6,513,1912530,-;x", "Nov 30 12:00:00 gpu01 kernel: x",
                                "2025-01-21T04:41:44,283302+00:00 x", "2025-01-21T04:41:44+0000 gpu01 kernel: x", "kern  :warn  : x",
                                "<4>[   12.000001] x", "[   12.300000] gpu01 kernel: x"}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_TRUE(r[0].layout) << line;
  }
  for (std::string_view line : {"gpu01:1234:1234 [0] NCCL INFO Bootstrap", "[0] rank 0 ready", "[rank3]: step 10", "plain words", "<4>x",
                                "[2024-04-06 03:02:12] iteration 71/ 100 | elapsed time per iteration (ms): 5361.6"}) {
    auto r = parsers::parse_kernel_records(line);
    ASSERT_EQ(r.size(), 1u) << line;
    EXPECT_FALSE(r[0].layout) << line;
  }
  // A perf.data-like blob: NULs and control bytes, high bytes; none of it is a record.
  const char raw[] = "PERFILE2\x00\x00\x68\x00\n\x01\x02" "ab\n\xff\xfe\xfd\xfc" "z\n";
  std::string blob(raw, sizeof raw - 1);
  EXPECT_TRUE(parsers::parse_kernel_records(blob).empty());
  EXPECT_EQ(parsers::parse_kernel_records("caf\xc3\xa9 [ 1.0] \x1b[31mred\n").size(), 1u);  // UTF-8 and colour are text
}

TEST(ParsersSysfsValues, LinkSpeedAndWidth) {
  EXPECT_EQ(parsers::parse_link_speed("16.0 GT/s PCIe\n"), 16.0);
  EXPECT_EQ(parsers::parse_link_speed("8 GT/s"), 8.0);
  EXPECT_EQ(parsers::parse_link_speed("2.5 GT/s PCIe"), 2.5);
  EXPECT_FALSE(parsers::parse_link_speed("Unknown"));
  EXPECT_FALSE(parsers::parse_link_speed("fast GT/s"));
  EXPECT_FALSE(parsers::parse_link_speed("-8 GT/s"));
  EXPECT_FALSE(parsers::parse_link_speed(""));
  EXPECT_EQ(parsers::parse_link_width("16\n"), 16);
  EXPECT_EQ(parsers::parse_link_width("x8"), 8);
  EXPECT_EQ(parsers::parse_link_width("0"), 0);
  EXPECT_FALSE(parsers::parse_link_width("x1?6"));
  EXPECT_FALSE(parsers::parse_link_width("64"));
  EXPECT_FALSE(parsers::parse_link_width("-1"));
  EXPECT_FALSE(parsers::parse_link_width(""));
}

TEST(ParsersSysfsValues, IbRateAndStateText) {
  EXPECT_EQ(parsers::parse_ib_rate("400 Gb/sec (4X NDR)\n"), 400.0);
  EXPECT_EQ(parsers::parse_ib_rate("2.5 Gb/sec"), 2.5);
  EXPECT_FALSE(parsers::parse_ib_rate("fast"));
  EXPECT_FALSE(parsers::parse_ib_rate("-1 Gb/sec"));
  EXPECT_EQ(parsers::strip_state_number("4: ACTIVE\n"), "ACTIVE");
  EXPECT_EQ(parsers::strip_state_number("5: LinkUp"), "LinkUp");
  EXPECT_EQ(parsers::strip_state_number("DOWN"), "DOWN");
}

using parsers::KernelEventKind;

namespace {

// One line in, the one event it names.
parsers::KernelEvent one_event(const std::string& line) {
  auto ev = parsers::parse_kernel_events(line + "\n");
  EXPECT_EQ(ev.size(), 1u) << line;
  return ev.empty() ? parsers::KernelEvent{} : ev.front();
}

}  // namespace

TEST(ParsersKernelEvents, XidNumbersDevicesAndDetails) {
  const struct {
    const char* line;
    long code;
    const char* device;
  } cases[] = {
      {"[ 101.5] NVRM: Xid (PCI:0000:18:00): 13, pid=3101, name=python3, Graphics SM Warp Exception on (GPC 1, TPC 0, SM 1): Illegal Instruction Encoding", 13, "0000:18:00.0"},
      {"[ 101.6] NVRM: Xid (PCI:0000:18:00): 31, pid=3101, name=python3, Ch 00000008, intr 10000000. MMU Fault: ENGINE GRAPHICS GPCCLIENT_T1_0 faulted @ 0x7f12_3456c000. Fault is of type FAULT_PDE ACCESS_TYPE_READ", 31, "0000:18:00.0"},
      {"[ 101.7] NVRM: Xid (PCI:0000:18:00): 43, pid=3101, name=python3, Ch 00000008", 43, "0000:18:00.0"},
      {"[ 202.0] NVRM: Xid (PCI:0000:AF:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 1.", 48, "0000:af:00.0"},
      {"[ 202.1] NVRM: Xid (PCI:0000:af:00): 63, pid=2211, name=python3, Row Remapper: New row (0x0000000000ab1200) marked for remapping, reset gpu to activate.", 63, "0000:af:00.0"},
      {"[ 202.2] NVRM: Xid (PCI:0000:af:00): 64, pid=2211, name=python3, Row Remapper: Failed to record new row (0x0000000000ab1300) for remapping.", 64, "0000:af:00.0"},
      {"[ 303.0] NVRM: Xid (PCI:0000:18:00): 74, pid=4100, name=python3, NVLink: fatal error detected on link 5(0x0, 0x0, 0x10000, 0x0, 0x0, 0x0, 0x0)", 74, "0000:18:00.0"},
      {"[ 404.0] NVRM: Xid (PCI:0000:3b:00): 79, pid=1201, name=python3, GPU has fallen off the bus.", 79, "0000:3b:00.0"},
      {"[ 505.0] NVRM: Xid (PCI:0000:18:00): 92, pid=4100, name=python3, High single-bit ECC error rate detected.", 92, "0000:18:00.0"},
      {"[ 606.0] NVRM: Xid (PCI:0000:18:00): 94, pid=4100, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No", 94, "0000:18:00.0"},
      {"[ 606.1] NVRM: Xid (PCI:0000:18:00): 95, pid=4100, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No", 95, "0000:18:00.0"},
      {"[ 707.0] NVRM: Xid (0000:01:00): 3, C 00000005 SC 00000007 M 00001ffc Data ffffffff", 3, "0000:01:00.0"},
  };
  for (const auto& c : cases) {
    auto e = one_event(c.line);
    EXPECT_EQ(e.kind, KernelEventKind::xid) << c.line;
    EXPECT_EQ(e.code, c.code) << c.line;
    EXPECT_EQ(e.device, c.device) << c.line;
    ASSERT_TRUE(e.since_boot_s) << c.line;
    EXPECT_FALSE(e.detail.empty()) << c.line;
  }
  EXPECT_EQ(one_event(cases[7].line).detail, "pid=1201, name=python3, GPU has fallen off the bus.");
  // Every number the tests name is in the built-in table, with a severity.
  for (long code : {13L, 31L, 43L, 48L, 63L, 64L, 74L, 79L, 92L, 94L, 95L}) {
    auto it = core::builtin_kb().xids.find(code);
    ASSERT_NE(it, core::builtin_kb().xids.end()) << code;
    EXPECT_TRUE(it->second.severity == "fail" || it->second.severity == "warn");
  }
  EXPECT_EQ(core::builtin_kb().xids.at(48).severity, "fail");
  EXPECT_EQ(core::builtin_kb().xids.at(13).severity, "warn");
}

TEST(ParsersKernelEvents, SxidAerLinksThermalEdacLockups) {
  auto s = one_event("[ 1.0] nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up");
  EXPECT_EQ(s.kind, KernelEventKind::sxid);
  EXPECT_EQ(s.code, 20034);
  EXPECT_TRUE(s.fatal);
  EXPECT_EQ(s.device, "0000:07:00.0");
  auto s2 = one_event("[ 1.0] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, Link 46 egress non-posted PRIV error (First)");
  EXPECT_FALSE(s2.fatal);
  EXPECT_TRUE(s2.nonfatal);
  EXPECT_FALSE(s.nonfatal);

  auto c = one_event("[ 9.0] nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)");
  EXPECT_EQ(c.kind, KernelEventKind::aer_corrected);
  EXPECT_EQ(c.device, "0000:18:00.0");
  EXPECT_EQ(c.detail, "type=Physical Layer, (Receiver ID)");
  auto u = one_event("[ 9.1] pcieport 0000:17:01.0: PCIe Bus Error: severity=Uncorrected (Non-Fatal), type=Transaction Layer, (Requester ID)");
  EXPECT_EQ(u.kind, KernelEventKind::aer_uncorrected);
  EXPECT_EQ(u.device, "0000:17:01.0");
  EXPECT_FALSE(u.fatal);
  EXPECT_TRUE(one_event("[ 9.2] nvidia 0000:18:00.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Inaccessible, (Unregistered Agent ID)").fatal);
  // The "AER: ... received" line before them is not an event of its own (one error, one count).
  EXPECT_TRUE(parsers::parse_kernel_events("[ 9.0] pcieport 0000:17:01.0: AER: Corrected error received: 0000:18:00.0\n").empty());

  auto d = one_event("[ 20.0] mlx5_core 0000:2a:00.0 ibp42s0: Link down");
  EXPECT_EQ(d.kind, KernelEventKind::link_down);
  EXPECT_EQ(d.device, "0000:2a:00.0");
  EXPECT_EQ(d.netdev, "ibp42s0");
  EXPECT_EQ(one_event("[ 22.0] mlx5_core 0000:2a:00.0 ibp42s0: Link up").kind, KernelEventKind::link_up);
  auto m = one_event("[ 23.0] mlx5_core 0000:2a:00.0: mlx5_port_module_event:1157:(pid 0): Port module event[error]: module 0, Cable error, Bad or shorted cable/module");
  EXPECT_EQ(m.kind, KernelEventKind::module_event);
  EXPECT_TRUE(m.fatal);
  EXPECT_EQ(m.detail, "module 0, Cable error, Bad or shorted cable/module");
  auto m2 = one_event("[ 24.0] mlx5_core 0000:2a:00.0: mlx5_port_module_event:1157:(pid 0): Port module event: module 0, Cable unplugged");
  EXPECT_FALSE(m2.fatal);
  EXPECT_EQ(m2.detail, "module 0, Cable unplugged");

  auto t = one_event("[ 30.0] CPU12: Core temperature above threshold, cpu clock throttled (total events = 1234)");
  EXPECT_EQ(t.kind, KernelEventKind::thermal_throttle);
  EXPECT_EQ(t.device, "CPU12");
  EXPECT_EQ(t.detail, "Core");
  EXPECT_EQ(t.code, 1234);
  EXPECT_TRUE(parsers::parse_kernel_events("[ 31.0] CPU12: Core temperature/speed normal\n").empty());

  auto ce = one_event("[ 40.0] EDAC MC0: 2 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1234 offset:0x0 grain:32 syndrome:0x0)");
  EXPECT_EQ(ce.kind, KernelEventKind::edac_corrected);
  EXPECT_EQ(ce.device, "MC0");
  EXPECT_EQ(ce.code, 2);
  auto ue = one_event("[ 41.0] EDAC skx MC1: 1 UE memory read error on CPU_SrcID#1_MC#0_Chan#0_DIMM#1 (channel:0 slot:1 page:0x5678 offset:0x0 grain:32)");
  EXPECT_EQ(ue.kind, KernelEventKind::edac_uncorrected);
  EXPECT_EQ(ue.device, "MC1");

  auto sl = one_event("[ 50.0] watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [python3:4242]");
  EXPECT_EQ(sl.kind, KernelEventKind::soft_lockup);
  EXPECT_EQ(sl.device, "CPU7");
  auto h = one_event("[ 60.0] INFO: task python3:4243 blocked for more than 122 seconds.");
  EXPECT_EQ(h.kind, KernelEventKind::hung_task);
  EXPECT_EQ(h.device, "python3:4243");

  auto f = one_event("[ 70.0] NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.");
  EXPECT_EQ(f.kind, KernelEventKind::fallen_off_bus);
  EXPECT_EQ(f.device, "0000:3b:00.0");
  EXPECT_EQ(one_event("[ 70.1] NVRM: The NVIDIA GPU 0000:3b:00.0 (PCI ID: 10de:2330) installed in this system has fallen off the bus and is not responding to commands.").device,
            "0000:3b:00.0");
}

TEST(ParsersKernelEvents, TimesFromEveryFormat) {
  auto kmsg = parsers::parse_kernel_events("4,9001,812114532,-;NVRM: Xid (PCI:0000:af:00): 48, DBE\n SUBSYSTEM=pci\n");
  ASSERT_EQ(kmsg.size(), 1u);
  EXPECT_DOUBLE_EQ(*kmsg[0].since_boot_s, 812.114532);
  auto t = parsers::parse_kernel_events("[Tue Dec  1 10:12:01 2026] mlx5_core 0000:2a:00.0 ibp42s0: Link down\n");
  ASSERT_EQ(t.size(), 1u);
  EXPECT_EQ(t[0].wall, "Tue Dec  1 10:12:01 2026");
  EXPECT_FALSE(t[0].since_boot_s);
  auto j = parsers::parse_kernel_events("Dec 01 10:12:01 gpu001 kernel: [ 5.25] NVRM: Xid (PCI:0000:18:00): 13, x\n");
  ASSERT_EQ(j.size(), 1u);
  EXPECT_EQ(j[0].wall, "Dec 01 10:12:01");
  EXPECT_DOUBLE_EQ(*j[0].since_boot_s, 5.25);
  EXPECT_EQ(parsers::parse_boot_time("cpu  1 2 3\nbtime 1764583200\nprocesses 9\n"), 1764583200LL);
  EXPECT_FALSE(parsers::parse_boot_time("cpu  1 2 3\n"));
}

TEST(ParsersKernelEvents, NearMissesAreNoEvents) {
  for (const char* line : {"NVRM: Xid (PCI:0000:18:00)", "NVRM: Xid (PCI:0000:18:00): abc", "mlx5_core 0000:2a:00.0 ibp42s0: Link state changed",
                           "EDAC MC0: HANDLING MCE MEMORY ERROR", "mlx5_core bogus: Link down", "INFO: task python3:1 is fine",
                           "PCIe Bus Error: severity=Whatever, type=x"})
    EXPECT_TRUE(parsers::parse_kernel_events(line).empty()) << line;
  EXPECT_EQ(parsers::normalize_bdf("0000:18:00"), "0000:18:00.0");
  EXPECT_EQ(parsers::normalize_bdf("18:00.1"), "0000:18:00.1");
  EXPECT_EQ(parsers::normalize_bdf("0000:1G:00.0"), "");
  EXPECT_EQ(parsers::normalize_bdf("0000:18:00.9"), "");
}

// Every log form perfgap is given, around every event kind: one line reader strips the
// prefixes once for all of them, and reads the time each form carries. The forms are
// util-linux dmesg's (plain, -r, -x, --time-format iso, -T), journalctl's (-o short,
// short-monotonic, short-iso), rsyslog's kern.log (RFC 3339), pstore's dmesg-ramoops, a
// CONFIG_PRINTK_CALLER kernel's "[  T1]" field and /dev/kmsg records.
TEST(ParsersKernelEvents, EveryPrefixAroundEveryEvent) {
  const struct {
    const char* name;
    std::string head;  // put before the message
    bool boot_time;    // the form carries seconds since boot (else a wall stamp)
  } forms[] = {
      {"dmesg", "[  812.114532] ", true},
      {"dmesg -r / pstore", "<4>[  812.114532] ", true},
      {"dmesg -r, no stamp", "<12>", false},
      {"dmesg -x", "kern  :warn  : [  812.114532] ", true},
      {"dmesg -x --time-format iso", "kern  :warn  : 2025-01-21T04:41:44,283302+00:00 ", false},
      {"dmesg --time-format iso", "2025-01-21T04:41:44,283302+00:00 ", false},
      {"dmesg -T", "[Tue Jan 21 04:41:44 2025] ", false},
      {"dmesg, printk caller", "[  812.114532] [    T1] ", true},
      {"journalctl -k", "Jan 21 04:41:44 gpu001 kernel: ", false},
      {"syslog with printk time", "Jan 21 04:41:44 gpu001 kernel: [  812.114532] ", true},
      {"journalctl -o short-monotonic", "[  812.114532] gpu001 kernel: ", true},
      {"journalctl -o short-iso", "2025-01-21T04:41:44+0000 gpu001 kernel: ", false},
      {"rsyslog RFC 3339", "2025-01-21T04:41:44.283302+00:00 gpu001 kernel: [  812.114532] ", true},
      {"/dev/kmsg", "4,9001,812114532,-;", true},
  };
  const struct {
    const char* message;
    KernelEventKind kind;
    const char* device;
  } events[] = {
      {"NVRM: Xid (PCI:0000:18:00): 48, pid=2211, name=python3, An uncorrectable double bit error (DBE) has been detected on GPU in the framebuffer at partition 2, subpartition 1.", KernelEventKind::xid, "0000:18:00.0"},
      {"nvidia-nvswitch2: SXid (PCI:0000:07:00.0): 20034, Fatal, Link 32 LTSSM Fault Up", KernelEventKind::sxid, "0000:07:00.0"},
      {"NVRM: GPU 0000:3b:00.0: GPU has fallen off the bus.", KernelEventKind::fallen_off_bus, "0000:3b:00.0"},
      {"nvidia 0000:18:00.0: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)", KernelEventKind::aer_corrected, "0000:18:00.0"},
      {"pcieport 0000:17:01.0: PCIe Bus Error: severity=Uncorrected (Fatal), type=Transaction Layer, (Requester ID)", KernelEventKind::aer_uncorrected, "0000:17:01.0"},
      {"mlx5_core 0000:2a:00.0 ibp42s0: Link down", KernelEventKind::link_down, "0000:2a:00.0"},
      {"mlx5_core 0000:2a:00.0 ibp42s0: Link up", KernelEventKind::link_up, "0000:2a:00.0"},
      {"mlx5_core 0000:2a:00.0: mlx5_port_module_event:1157:(pid 0): Port module event: module 0, Cable unplugged", KernelEventKind::module_event, "0000:2a:00.0"},
      {"CPU12: Core temperature above threshold, cpu clock throttled (total events = 1234)", KernelEventKind::thermal_throttle, "CPU12"},
      {"EDAC MC0: 2 CE memory read error on CPU_SrcID#0_MC#0_Chan#1_DIMM#0 (channel:1 slot:0 page:0x1234 offset:0x0 grain:32 syndrome:0x0)", KernelEventKind::edac_corrected, "MC0"},
      {"EDAC skx MC1: 1 UE memory read error on CPU_SrcID#1_MC#0_Chan#0_DIMM#1 (channel:0 slot:1 page:0x5678 offset:0x0 grain:32)", KernelEventKind::edac_uncorrected, "MC1"},
      {"watchdog: BUG: soft lockup - CPU#7 stuck for 23s! [python3:4242]", KernelEventKind::soft_lockup, "CPU7"},
      {"INFO: task python3:4243 blocked for more than 122 seconds.", KernelEventKind::hung_task, "python3:4243"},
      {"Kernel panic - not syncing: Fatal machine check", KernelEventKind::kernel_panic, ""},
      {"BUG: kernel NULL pointer dereference, address: 0000000000000010", KernelEventKind::kernel_oops, ""},
      {"mce: [Hardware Error]: CPU 5: Machine Check Exception: 5 Bank 7: bea0000000400135", KernelEventKind::machine_check, "CPU5"},
      {"mlx5_core 0000:ae:00.0: poll_health:1071:(pid 0): device's health compromised - reached miss count", KernelEventKind::nic_failure, "0000:ae:00.0"},
      {"NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!", KernelEventKind::gpu_driver_failure, ""},
      {"NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.", KernelEventKind::gsp_rate_limit, "0000:9b:00.0"},
  };
  for (const auto& f : forms)
    for (const auto& ev : events) {
      const std::string line = f.head + ev.message;
      auto got = parsers::parse_kernel_events(line + "\n");
      ASSERT_EQ(got.size(), 1u) << f.name << ": " << line;
      EXPECT_EQ(got[0].kind, ev.kind) << f.name << ": " << line;
      EXPECT_EQ(got[0].device, ev.device) << f.name << ": " << line;
      EXPECT_EQ(got[0].line, ev.message) << f.name;
      if (f.boot_time) {
        ASSERT_TRUE(got[0].since_boot_s) << f.name;
        EXPECT_DOUBLE_EQ(*got[0].since_boot_s, 812.114532) << f.name;
      } else if (std::string(f.name) != "dmesg -r, no stamp") {
        EXPECT_FALSE(got[0].wall.empty()) << f.name;
        EXPECT_NE(got[0].wall.find("04:41:44"), std::string::npos) << f.name << ": " << got[0].wall;
      }
    }
  // A prefix is removed once, and words that only look like one stay the message's.
  EXPECT_EQ(parsers::parse_kernel_log("<4><5>x\n").front(), "<5>x");
  EXPECT_EQ(parsers::parse_kernel_log("[ 1.0] [drm] Initialized\n").front(), "[drm] Initialized");
  EXPECT_EQ(parsers::parse_kernel_log("[ 1.0] nvme:abc: kernel: x\n").front(), "nvme:abc: kernel: x");
  EXPECT_EQ(parsers::parse_kernel_log("NVRM: loading kernel: module\n").front(), "NVRM: loading kernel: module");
  EXPECT_EQ(parsers::parse_kernel_log("kern  :bogus : x\n").front(), "kern  :bogus : x");
}

// Today's kernels' words: therm_throt.c's "mce: CPUn: ... temperature is above threshold, cpu
// clock is throttled", aer.c's "severity=Correctable", mlx5's module events without the
// function name or without a PCI address, hung_task.c's report without "INFO: ".
TEST(ParsersKernelEvents, TodaysWording) {
  auto t = one_event("[ 1300.0] mce: CPU4: Core temperature is above threshold, cpu clock is throttled (total events = 12)");
  EXPECT_EQ(t.kind, KernelEventKind::thermal_throttle);
  EXPECT_EQ(t.device, "CPU4");
  EXPECT_EQ(t.detail, "Core");
  EXPECT_EQ(t.code, 12);
  EXPECT_EQ(one_event("[ 1308.0] mce: CPU5: Package temperature is above threshold, cpu clock is throttled from last 8000 milli seconds (total events = 14)").code, 14);
  EXPECT_TRUE(parsers::parse_kernel_events("[ 1310.0] mce: CPU4: Core temperature/speed normal (total events = 14)\n").empty());

  auto c = one_event("[ 9.0] nvidia 0000:18:00.0: PCIe Bus Error: severity=Correctable, type=Physical Layer, (Receiver ID)");
  EXPECT_EQ(c.kind, KernelEventKind::aer_corrected);
  EXPECT_EQ(c.device, "0000:18:00.0");
  auto u = one_event("[ 9.1] pcieport 0000:17:01.0: PCIe Bus Error: severity=Uncorrectable (Non-Fatal), type=Transaction Layer, (Requester ID)");
  EXPECT_EQ(u.kind, KernelEventKind::aer_uncorrected);
  EXPECT_FALSE(u.fatal);

  auto m = one_event("[ 2201.0] mlx5_core 0000:ae:00.0: Port module event: module 0, Cable unplugged");
  EXPECT_EQ(m.kind, KernelEventKind::module_event);
  EXPECT_EQ(m.device, "0000:ae:00.0");
  EXPECT_EQ(m.detail, "module 0, Cable unplugged");
  EXPECT_FALSE(m.fatal);
  auto hot = one_event("[ 2301.0] mlx5_core: Port module event[error]: module 1, Cable error, High Temperature");
  EXPECT_EQ(hot.kind, KernelEventKind::module_event);
  EXPECT_EQ(hot.device, "");
  EXPECT_TRUE(hot.fatal);
  EXPECT_EQ(hot.detail, "module 1, Cable error, High Temperature");

  auto h = one_event("[ 3600.0] task kworker/u256:3:1187 blocked for more than 245 seconds.");
  EXPECT_EQ(h.kind, KernelEventKind::hung_task);
  EXPECT_EQ(h.device, "kworker/u256:3:1187");
  for (const char* line : {"[ 1.0] systemd[1]: Started task scheduler blocked for more than a moment", "[ 1.0] the task python3:1 blocked for more than 5 seconds."})
    EXPECT_TRUE(parsers::parse_kernel_events(line).empty()) << line;
}

// Reports the driver spreads over several lines: the lost GPU's three-line block is about the
// GPU its first line names (and groups with that GPU's Xid 79); an SXid report's Severity and
// Data lines are the head line's, not events of their own (even interleaved with another
// switch's report).
TEST(ParsersKernelEvents, MultiLineReports) {
  auto fob = parsers::parse_kernel_events(
      "[ 4040.000000] NVRM: Xid (PCI:0000:b3:00): 79, pid=1201, name=python3, GPU has fallen off the bus.\n"
      "[ 4040.000100] NVRM: The NVIDIA GPU 0000:b3:00.0\n"
      "[ 4040.000100] NVRM: (PCI ID: 10de:2330) installed in this system has\n"
      "[ 4040.000100] NVRM: fallen off the bus and is not responding to commands.\n");
  ASSERT_EQ(fob.size(), 2u);
  EXPECT_EQ(fob[1].kind, KernelEventKind::fallen_off_bus);
  EXPECT_EQ(fob[1].device, "0000:b3:00.0");
  EXPECT_EQ(fob[0].device, fob[1].device);
  // A "fallen off the bus" line far from any naming line stays unnamed.
  auto far = parsers::parse_kernel_events("NVRM: The NVIDIA GPU 0000:b3:00.0\na\nb\nc\nNVRM: fallen off the bus and is not responding to commands.\n");
  ASSERT_EQ(far.size(), 1u);
  EXPECT_EQ(far[0].device, "");

  auto sx = parsers::parse_kernel_events(
      "[131453.740743] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Fatal, Link 30 LTSSM Fault Up\n"
      "[131453.740750] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 12028, Non-fatal, Link 46 egress non-posted PRIV error (First)\n"
      "[131453.740754] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Severity 1 Engine instance 30 Sub-engine instance 00\n"
      "[131453.740756] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 12028, Severity 0 Engine instance 46 Sub-engine instance 00\n"
      "[131453.740758] nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 20034, Data {0x50610002, 0x10100030, 0x00000000, 0x10100030}\n"
      "[131453.740760] nvidia-nvswitch1: SXid (PCI:0000:06:00.0): 12028, Data {0x00000000, 0x00000000}\n");
  ASSERT_EQ(sx.size(), 2u);
  EXPECT_TRUE(sx[0].fatal);
  EXPECT_FALSE(sx[1].fatal);
  EXPECT_EQ(sx[1].device, "0000:06:00.0");
}

// What an Xid line says of itself (formats: Blackwell NVLink Xids as gpud's and NVSentinel's
// tests show them, Xid 94/95's RST field, Xid 154's recovery action).
TEST(ParsersKernelEvents, XidLineWords) {
  auto nf = one_event("NVRM: Xid (PCI:0000:b9:00): 145, RLW_REMAP Nonfatal XC0 i0 Link 00 (0x00000004 0x00000001 0x00000000 0x00000000)");
  EXPECT_TRUE(nf.nonfatal);
  EXPECT_FALSE(nf.fatal);
  auto f = one_event("NVRM: Xid (PCI:0000:b9:00): 149, NETIR_LINK_DOWN Fatal XC0 i0 Link 03 (0x00086226 0x00000001 0x00000000 0x00000000)");
  EXPECT_TRUE(f.fatal);
  EXPECT_FALSE(f.nonfatal);
  EXPECT_TRUE(one_event("NVRM: Xid (PCI:0000:b9:00): 145, RLW, nonfatal, cross-contain=0, injected=0, Link 3 (0x00000004)").nonfatal);
  EXPECT_TRUE(one_event("NVRM: Xid (PCI:0000:18:00): 74, pid=4100, name=python3, NVLink: fatal error detected on link 5(0x0, 0x0)").fatal);
  EXPECT_TRUE(one_event("NVRM: Xid (PCI:0000:18:00): 95, pid=4100, name=python3, Uncontained: FBHUB. RST: Yes, D-RST: No").fatal);
  auto contained = one_event("NVRM: Xid (PCI:0000:18:00): 94, pid=4100, name=python3, Contained: CE User Channel (0x9). RST: No, D-RST: No");
  EXPECT_FALSE(contained.fatal);
  EXPECT_FALSE(contained.nonfatal);
  // A word deep in the text is the application's, not the line's severity.
  EXPECT_FALSE(one_event("NVRM: Xid (PCI:0000:18:00): 13, pid=1, name=python3, Graphics Exception: the fatal flag of ESR 0x504648").fatal);
  EXPECT_EQ(one_event("NVRM: Xid (PCI:0008:01:00): 154, GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)").recovery, "GPU Reset Required");
  EXPECT_EQ(one_event("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed from 0x2 (Node Reboot Required) to 0x0 (None)").recovery, "None");
  EXPECT_EQ(one_event("NVRM: Xid (PCI:0000:01:00): 154, GPU recovery action changed").recovery, "");
}

// The Xid table is NVIDIA's catalogue: every number 1-162 with the catalogue's resolution, and
// the severities the issue named checked against the catalogue by hand (not from the table).
TEST(ParsersKernelEvents, XidTableIsTheCatalogue) {
  const auto& kb = core::builtin_kb();
  EXPECT_NE(kb.xid_catalogue.find("1-162"), std::string::npos) << kb.xid_catalogue;
  for (long code = 1; code <= 162; ++code) {
    auto it = kb.xids.find(code);
    ASSERT_NE(it, kb.xids.end()) << code;
    EXPECT_FALSE(it->second.name.empty()) << code;
    EXPECT_FALSE(core::xid_resolution_action(it->second.resolution).empty()) << code << " " << it->second.resolution;
    EXPECT_EQ(it->second.severity, core::xid_resolution_fails(it->second.resolution) ? "fail" : "warn") << code;
  }
  for (long code : {46L, 48L, 62L, 64L, 95L, 109L, 110L, 119L, 120L, 136L, 140L, 143L, 150L, 155L, 156L, 158L})
    EXPECT_EQ(kb.xids.at(code).severity, "fail") << code;
  for (long code : {13L, 31L, 43L, 45L, 63L, 92L, 94L, 121L, 137L, 154L}) EXPECT_EQ(kb.xids.at(code).severity, "warn") << code;
  EXPECT_EQ(kb.xids.at(79).resolution, "RESTART_BM");
  EXPECT_EQ(kb.xids.at(154).resolution, "XID_154");
  EXPECT_EQ(kb.xids.at(150).resolution, "WORKFLOW_NVLINK5_ERR");
  EXPECT_EQ(kb.xids.at(54).resolution, "CHECK_MECHANICALS");
  EXPECT_EQ(kb.xids.at(151).resolution, "RESTART_VM");
  EXPECT_TRUE(core::xid_resolution_action("NOT_A_BUCKET").empty());
  // The file form: a resolution from the catalogue's buckets, no hand-set severity.
  auto ok = core::parse_kb("xid_catalogue: test v1\nxids:\n  - {code: 7, name: x, resolution: RESET_GPU}\n", "t.yaml");
  ASSERT_TRUE(ok) << ok.error();
  ASSERT_EQ(ok->xids.size(), 1u);
  EXPECT_EQ(ok->xids[0].severity, "fail");
  EXPECT_EQ(ok->xid_catalogue, "test v1");
  EXPECT_FALSE(core::parse_kb("xids:\n  - {code: 7, name: x, resolution: BOGUS}\n", "t.yaml"));
  EXPECT_FALSE(core::parse_kb("xids:\n  - {code: 7, name: x, severity: fail, resolution: IGNORE}\n", "t.yaml"));
  EXPECT_FALSE(core::parse_kb("xids:\n  - {code: 7, name: x}\n", "t.yaml"));
}

// The SXid table: the Fabric Manager guide's entries whose severity the line's word does not
// settle (12028 printed Non-fatal resets; 22013 can be ignored), its file form and its errors.
TEST(ParsersKernelEvents, SxidTableOverrulesTheLinesWordWhereTheGuideDoes) {
  const auto& kb = core::builtin_kb();
  EXPECT_NE(kb.sxid_guide.find("Fabric Manager"), std::string::npos) << kb.sxid_guide;
  for (long code : {11004L, 12028L, 19084L}) EXPECT_EQ(kb.sxids.at(code).severity, "fail") << code;
  EXPECT_EQ(kb.sxids.at(22013).severity, "ignore");
  EXPECT_EQ(kb.sxids.count(20034), 0u);  // printed Fatal: the line's word is enough
  auto ok = core::parse_kb("sxid_guide: test v1\nsxids:\n  - {code: 7, name: x, severity: ignore, action: none}\n", "t.yaml");
  ASSERT_TRUE(ok) << ok.error();
  ASSERT_EQ(ok->sxids.size(), 1u);
  EXPECT_EQ(ok->sxid_guide, "test v1");
  auto bad = core::parse_kb("sxids:\n  - {code: 7, name: x, severity: maybe, action: none}\n", "t.yaml");
  ASSERT_FALSE(bad);
  EXPECT_NE(bad.error().find("t.yaml:2"), std::string::npos) << bad.error();
  EXPECT_NE(bad.error().find("fail, warn or ignore"), std::string::npos) << bad.error();
  EXPECT_FALSE(core::parse_kb("sxids:\n  - {code: 7, name: x, severity: fail}\n", "t.yaml"));  // no action
  EXPECT_FALSE(core::parse_kb("sxids:\n  - {code: 7, name: x, severity: fail, action: a}\n  - {code: 7, name: y, severity: warn, action: b}\n", "t.yaml"));
}

// Kernel crashes (formats: kernel/panic.c, arch/x86/mm/fault.c, arch/x86/kernel/cpu/mce): a
// panic's reason; a BUG line and its Oops line as one event, with the CPU and task of the
// "CPU: N PID: ..." line after them; a machine check's CPU and bank, uncorrected by the
// Exception word or MCi_STATUS bit 61; the closing "---[ end Kernel panic" line no second panic.
TEST(ParsersKernelEvents, PanicsOopsesAndMachineChecks) {
  auto oops = parsers::parse_kernel_events(
      "[  100.0] BUG: unable to handle kernel NULL pointer dereference at 0000000000000008\n"
      "[  100.1] IP: nv_dma_unmap_pages+0x2a/0x90 [nvidia]\n"
      "[  100.2] Oops: 0002 [#1] SMP\n"
      "[  100.3] CPU: 3 PID: 4242 Comm: python3 Tainted: P           OE     5.15.0-91-generic #101-Ubuntu\n"
      "[  100.4] Kernel panic - not syncing: Fatal exception\n"
      "[  100.5] ---[ end Kernel panic - not syncing: Fatal exception ]---\n");
  ASSERT_EQ(oops.size(), 2u);
  EXPECT_EQ(oops[0].kind, KernelEventKind::kernel_oops);
  EXPECT_EQ(oops[0].detail, "BUG: unable to handle kernel NULL pointer dereference at 0000000000000008 (Oops: 0002 [#1] SMP)");
  EXPECT_EQ(oops[0].device, "CPU3");
  EXPECT_EQ(oops[0].task, "python3 (pid 4242)");
  EXPECT_EQ(oops[1].kind, KernelEventKind::kernel_panic);
  EXPECT_EQ(oops[1].detail, "Fatal exception");
  // Newer kernels' CPU line has the UID; an Oops line alone is an event.
  auto alone = one_event("[ 5.0] Oops: general protection fault, probably for non-canonical address 0xdead000000000122: 0000 [#1] SMP NOPTI");
  EXPECT_EQ(alone.kind, KernelEventKind::kernel_oops);
  auto uid = parsers::parse_kernel_events("[ 5.0] kernel BUG at mm/slub.c:435!\n[ 5.1] CPU: 12 UID: 0 PID: 77 Comm: kworker/12:1 Not tainted\n");
  ASSERT_EQ(uid.size(), 1u);
  EXPECT_EQ(uid[0].device, "CPU12");
  EXPECT_EQ(uid[0].task, "kworker/12:1 (pid 77)");

  auto fatal = one_event("[ 456.7] mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 4: be00000000800400");
  EXPECT_EQ(fatal.kind, KernelEventKind::machine_check);
  EXPECT_EQ(fatal.device, "CPU3");
  EXPECT_EQ(fatal.code, 4);
  EXPECT_TRUE(fatal.fatal);
  // Logged at boot from the banks (no Exception): uncorrected by the status word's UC bit.
  EXPECT_TRUE(one_event("[ 9.0] mce: [Hardware Error]: CPU 0: Machine Check: 0 Bank 5: be00000000800400").fatal);
  auto corrected = one_event("[ 9.0] mce: [Hardware Error]: CPU 12: Machine Check: 0 Bank 13: 9c00004001010091");
  EXPECT_FALSE(corrected.fatal);
  EXPECT_EQ(corrected.code, 13);
  EXPECT_FALSE(one_event("[ 9.0] mce: [Hardware Error]: Machine check events logged").fatal);
  EXPECT_TRUE(one_event("[ 9.0] mce: [Hardware Error]: Machine check: Processor context corrupt").fatal);
  for (const char* line : {"[ 9.0] mce: [Hardware Error]: RIP !INEXACT! 10:<ffffffff8100a0b0> {intel_idle+0x80/0xe0}",
                           "[ 9.0] mce: [Hardware Error]: TSC 0 ADDR 12345678 MISC 0", "[ 9.0] mce: CPU0: Thermal monitoring enabled (TM1)",
                           "[ 9.0] BUG: scheduling while atomic: swapper/0/0/0x00000002", "[ 9.0] general protection fault handler installed",
                           "[ 9.0] ---[ end Kernel panic - not syncing: Fatal exception ]---"})
    EXPECT_TRUE(parsers::parse_kernel_events(line).empty()) << line;
}

// Driver failures that are no Xid or link event: mlx5's firmware health, command timeouts and
// slot power (the NIC named by its PCI address, or not named), NVRM's NVLink discovery and GPU
// initialisation, and the GSP RPC print rate limit (its GPU and the 1-in-N).
TEST(ParsersKernelEvents, DriverFailures) {
  auto power = one_event("[ 100.0] mlx5_core 0000:5c:00.0: mlx5_pcie_event:299:(pid 268269): Detected insufficient power on the PCIe slot (27W).");
  EXPECT_EQ(power.kind, KernelEventKind::nic_failure);
  EXPECT_EQ(power.device, "0000:5c:00.0");
  EXPECT_EQ(power.detail, "Detected insufficient power on the PCIe slot (27W).");
  auto cmd = one_event("[ 8000.0] mlx5_core 0000:5c:00.0: wait_func:1151:(pid 12345): ACCESS_REG(0x805) timeout. Will cause a leak of a command resource");
  EXPECT_EQ(cmd.kind, KernelEventKind::nic_failure);
  EXPECT_EQ(cmd.detail, "ACCESS_REG(0x805) timeout. Will cause a leak of a command resource");
  EXPECT_EQ(one_event("[ 8002.0] mlx5_core 0000:5c:00.0: print_health_info:431:(pid 0): Health issue observed, firmware internal error, "
                      "severity(3) ERROR: unrecoverable hardware error").kind,
            KernelEventKind::nic_failure);
  EXPECT_EQ(one_event("mlx5_core: Detected insufficient power on the PCIe slot (1W).").device, "");
  // Command errors the firmware answered are no failure; neither is a module or link line.
  EXPECT_TRUE(parsers::parse_kernel_events("[ 1.0] mlx5_core 0000:d2:00.0: mlx5_cmd_out_err:838:(pid 268269): ACCESS_REG(0x805) op_mod(0x1) failed\n").empty());

  auto nvl = one_event("[ 61.2] NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!");
  EXPECT_EQ(nvl.kind, KernelEventKind::gpu_driver_failure);
  EXPECT_EQ(nvl.code, 1);
  EXPECT_EQ(nvl.device, "");
  auto init = one_event("[ 330.1] NVRM: GPU 0000:41:00.0: RmInitAdapter failed! (0x62:0x40:2404)");
  EXPECT_EQ(init.kind, KernelEventKind::gpu_driver_failure);
  EXPECT_EQ(init.code, 0);
  EXPECT_EQ(init.device, "0000:41:00.0");

  auto limit = one_event("[Sun Feb 23 16:24:36 2025] NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every 30).  The GPU likely needs to be reset.");
  EXPECT_EQ(limit.kind, KernelEventKind::gsp_rate_limit);
  EXPECT_EQ(limit.device, "0000:9b:00.0");
  EXPECT_EQ(limit.code, 30);
}
