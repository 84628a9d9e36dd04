// The /proc text parsers on strings: real formats (x86 and arm64, old and new kernels) and the
// edge cases the kernel really prints.
#include <gtest/gtest.h>

#include <string>

#include "parsers/procfs.hpp"

using namespace perfgap::parsers;
using namespace std::string_literals;

// ---- /proc/stat ------------------------------------------------------------------------

TEST(ProcStatParser, TenColumnKernel) {
  const char* text =
      "cpu  9321475 1253 2376417 370573883 58393 0 58411 12874 0 0\n"
      "cpu0 2330394 312 594145 92643312 14600 0 14602 3219 0 0\n"
      "cpu1 2330367 313 594104 92643469 14597 0 14603 3218 5 7\n"
      "intr 843873828 0 9 0 0 0\n"
      "ctxt 1596712843\n"
      "btime 1716812345\n"
      "softirq 389293013 0 118373623 68\n";
  auto r = parse_proc_stat(text);
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_TRUE(r->all);
  EXPECT_EQ(r->all->cpu, -1);
  EXPECT_EQ(r->all->fields.size(), 10u);
  EXPECT_TRUE(r->all->has_steal());
  EXPECT_EQ(r->all->steal(), 12874u);
  EXPECT_EQ(r->all->total(), 9321475u + 1253 + 2376417 + 370573883 + 58393 + 0 + 58411 + 12874);
  ASSERT_EQ(r->cpus.size(), 2u);
  EXPECT_EQ(r->cpus[0].cpu, 0);
  EXPECT_EQ(r->cpus[1].cpu, 1);
  EXPECT_EQ(r->cpus[1].steal(), 3218u);
  // guest and guest_nice are already inside user/nice: not added again.
  EXPECT_EQ(r->cpus[1].total(), 2330367u + 313 + 594104 + 92643469 + 14597 + 0 + 14603 + 3218);
}

TEST(ProcStatParser, OldFourColumnKernel) {
  // Linux 2.4: user nice system idle, no iowait/irq/softirq/steal.
  auto r = parse_proc_stat("cpu  1215 0 2303 176235\ncpu0 1215 0 2303 176235\npage 5741 1808\n");
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_TRUE(r->all);
  EXPECT_EQ(r->all->fields.size(), 4u);
  EXPECT_FALSE(r->all->has_steal());
  EXPECT_EQ(r->all->steal(), 0u);
  EXPECT_EQ(r->all->total(), 1215u + 2303 + 176235);
  ASSERT_EQ(r->cpus.size(), 1u);
  EXPECT_FALSE(r->cpus[0].has_steal());
}

TEST(ProcStatParser, SevenColumnKernelHasNoSteal) {
  auto r = parse_proc_stat("cpu 1 2 3 4 5 6 7\ncpu0 1 2 3 4 5 6 7\n");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->all->has_steal());
  EXPECT_EQ(r->all->total(), 28u);
  auto eight = parse_proc_stat("cpu 1 2 3 4 5 6 7 8\n");
  ASSERT_TRUE(eight);
  EXPECT_TRUE(eight->all->has_steal());
  EXPECT_EQ(eight->all->steal(), 8u);
}

TEST(ProcStatParser, OfflineCpusLeaveGapsInNumbering) {
  auto r = parse_proc_stat("cpu 4 0 4 8\ncpu0 2 0 2 4\ncpu3 2 0 2 4\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->cpus.size(), 2u);
  EXPECT_EQ(r->cpus[1].cpu, 3);
}

TEST(ProcStatParser, NoTrailingNewline) {
  auto r = parse_proc_stat("cpu  1 2 3 4 5 6 7 8 9 10");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->all->fields.size(), 10u);
  EXPECT_TRUE(r->cpus.empty());
}

TEST(ProcStatParser, HugeCountersFit) {
  auto r = parse_proc_stat("cpu 18446744073709551615 0 0 0\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->all->fields[0], 18446744073709551615u);
}

TEST(ProcStatParser, Errors) {
  auto none = parse_proc_stat("intr 1 2 3\nctxt 5\n");
  ASSERT_FALSE(none);
  EXPECT_NE(none.error().message.find("no cpu"), std::string::npos);

  auto few = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 3\n");
  ASSERT_FALSE(few);
  EXPECT_EQ(few.error().line, 2);

  auto bad = parse_proc_stat("cpu 1 2 3 4\ncpu0 1 2 x 4\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 2);
  EXPECT_NE(bad.error().message.find("'x'"), std::string::npos);

  auto label = parse_proc_stat("cpuX 1 2 3 4\n");
  ASSERT_FALSE(label);
  EXPECT_EQ(label.error().line, 1);

  EXPECT_FALSE(parse_proc_stat(""));
  EXPECT_FALSE(parse_proc_stat("cpu 1 2 3 -4\n"));
}

// ---- /proc/cpuinfo ---------------------------------------------------------------------

TEST(CpuinfoParser, X86Guest) {
  const char* text =
      "processor\t: 0\n"
      "vendor_id\t: GenuineIntel\n"
      "cpu family\t: 6\n"
      "model\t\t: 143\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu vme de pse tsc msr pae mce lm x2apic hypervisor lahf_lm abm\n"
      "vmx flags\t: vnmi preemption_timer\n"
      "bugs\t\t: spectre_v1\n"
      "power management:\n"
      "\n"
      "processor\t: 1\n"
      "vendor_id\t: GenuineIntel\n"
      "model name\t: Intel(R) Xeon(R) Platinum 8480+\n"
      "flags\t\t: fpu vme hypervisor\n";
  auto r = parse_cpuinfo(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->arch_hint, "x86_64");
  EXPECT_EQ(r->model_name, "Intel(R) Xeon(R) Platinum 8480+");
  EXPECT_TRUE(r->hypervisor_flag);
  EXPECT_EQ(r->processors, 2);
  EXPECT_FALSE(r->implementer);
  EXPECT_FALSE(r->part);
}

TEST(CpuinfoParser, X86BareMetalHasNoHypervisorFlag) {
  auto r = parse_cpuinfo(
      "processor\t: 0\nvendor_id\t: AuthenticAMD\nmodel name\t: AMD EPYC 7763 64-Core Processor\n"
      "flags\t\t: fpu vme de pse tsc msr lm hypervisor_x\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->arch_hint, "x86_64");
  EXPECT_FALSE(r->hypervisor_flag);  // whole words only
  EXPECT_EQ(r->model_name, "AMD EPYC 7763 64-Core Processor");
}

TEST(CpuinfoParser, OnlyTheFirstFlagsLineCounts) {
  auto r = parse_cpuinfo("processor : 0\nflags : fpu\nprocessor : 1\nflags : fpu hypervisor\n");
  ASSERT_TRUE(r);
  EXPECT_FALSE(r->hypervisor_flag);
  EXPECT_EQ(r->processors, 2);
}

TEST(CpuinfoParser, Arm64NeoverseV2) {
  const char* text =
      "processor\t: 0\n"
      "BogoMIPS\t: 2000.00\n"
      "Features\t: fp asimd evtstrm aes pmull sha1 sha2 crc32 atomics sve sve2\n"
      "CPU implementer\t: 0x41\n"
      "CPU architecture: 8\n"
      "CPU variant\t: 0x0\n"
      "CPU part\t: 0xd4f\n"
      "CPU revision\t: 0\n"
      "\n"
      "processor\t: 1\n"
      "BogoMIPS\t: 2000.00\n"
      "CPU implementer\t: 0x41\n"
      "CPU part\t: 0xd4f\n";
  auto r = parse_cpuinfo(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->arch_hint, "aarch64");
  ASSERT_TRUE(r->implementer);
  ASSERT_TRUE(r->part);
  EXPECT_EQ(*r->implementer, 0x41u);
  EXPECT_EQ(*r->part, 0xd4fu);
  EXPECT_EQ(r->model_name, "Neoverse-V2");
  EXPECT_FALSE(r->hypervisor_flag);
  EXPECT_EQ(r->processors, 2);
}

TEST(CpuinfoParser, Arm64UnknownPartIsNamedByNumbers) {
  auto r = parse_cpuinfo("processor\t: 0\nCPU implementer\t: 0x41\nCPU part\t: 0xd0c\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model_name, "arm implementer 0x41 part 0xd0c");
  auto other = parse_cpuinfo("processor\t: 0\nCPU implementer\t: 0x61\nCPU part\t: 0x022\n");
  ASSERT_TRUE(other);
  EXPECT_EQ(other->model_name, "arm implementer 0x61 part 0x022");
}

TEST(CpuinfoParser, Arm64WithModelNameKeepsIt) {
  // Some arm64 kernels and emulators print a "model name" line; it wins over the derived name.
  auto r = parse_cpuinfo("processor : 0\nmodel name : ARMv8 Processor rev 0 (v8l)\n"
                         "Features : fp asimd evtstrm\nCPU implementer : 0x41\nCPU part : 0xd4f\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->model_name, "ARMv8 Processor rev 0 (v8l)");
  EXPECT_EQ(r->arch_hint, "aarch64");
}

TEST(CpuinfoParser, ImplementerAloneNamesNoWordSize) {
  // ARM, but 32 or 64 bit? Without Features or CPU architecture the parser does not guess.
  auto r = parse_cpuinfo("processor : 0\nCPU implementer : 0x41\nCPU part : 0xd4f\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->arch_hint, "");
  EXPECT_EQ(r->model_name, "Neoverse-V2");
}

// Each architecture's own keys, as its kernel prints them (shapes of real captures).
TEST(CpuinfoParser, ArchitectureFromEachKernelsOwnFields) {
  struct Case {
    const char* text;
    const char* arch;
  } cases[] = {
      {"vendor_id       : IBM/S390\n# processors    : 3\nfeatures\t: esan3 zarch stfle msa\n"
       "processor 0: version = FF,  identification = 29AA14,  machine = 2817\n", "s390x"},
      {"Processor\t: ARMv7 Processor rev 4 (v7l)\nprocessor\t: 0\nBogoMIPS\t: 1694.10\n\n"
       "Features\t: swp half thumb fastmult vfp edsp thumbee neon vfpv3 tls vfpv4 idiva idivt\n"
       "CPU implementer\t: 0x41\nCPU architecture: 7\nCPU part\t: 0xc0f\n", "arm"},
      {"processor\t: 0\nFeatures\t: fp asimd evtstrm aes pmull\nCPU implementer\t: 0x41\n"
       "CPU architecture: 8\nCPU part\t: 0xd46\n", "aarch64"},
      {"system type\t\t: generic-loongson-machine\n\nprocessor\t\t: 0\npackage\t\t\t: 0\n"
       "CPU Family\t\t: Loongson-64bit\nModel Name\t\t: Loongson-3A5000\n", "loongarch64"},
      {"processor\t: 0\ncpu\t\t: POWER9, altivec supported\nclock\t\t: 3450.000000MHz\n\n"
       "timebase\t: 512000000\nplatform\t: PowerNV\n", "powerpc"},
      {"processor\t: 0\nhart\t\t: 0\nisa\t\t: rv64imafdc\nmmu\t\t: sv39\n", "riscv64"},
      {"cpu\t\t: UltraSparc T2 (Niagara2)\nfpu\t\t: UltraSparc T2 integrated FPU\ntype\t\t: sun4v\n", "sparc64"},
      {"system type\t\t: Lemote Loongson-3\nprocessor\t\t: 0\ncpu model\t\t: ICT Loongson-3 V0.13  FPU V0.1\n"
       "isa\t\t\t: mips1 mips2 mips3 mips4 mips5 mips32r1 mips32r2 mips64r1 mips64r2\n", "mips64"},
      {"processor\t: 0\nvendor_id\t: GenuineIntel\nflags\t\t: fpu vme de pse tsc msr pae\n", "i686"},
      {"processor\t: 0\nvendor_id\t: AuthenticAMD\nflags\t\t: fpu vme de pse tsc msr pae lm\n", "x86_64"},
  };
  for (const auto& c : cases) {
    auto r = parse_cpuinfo(c.text);
    ASSERT_TRUE(r) << c.arch;
    EXPECT_EQ(r->arch_hint, c.arch) << c.text;
    EXPECT_TRUE(known_arch(r->arch_hint));
    EXPECT_FALSE(r->hypervisor_flag);
  }
  // s390's "features" is not x86's "flags": no hypervisor flag from it.
  auto s390 = parse_cpuinfo("vendor_id : IBM/S390\nfeatures : esan3 zarch hypervisor\n");
  ASSERT_TRUE(s390);
  EXPECT_FALSE(s390->hypervisor_flag);
}

TEST(CpuinfoParser, Errors) {
  EXPECT_FALSE(parse_cpuinfo(""));
  EXPECT_FALSE(parse_cpuinfo("no colons here\nat all\n"));
  auto odd = parse_cpuinfo("something : else\n");  // unknown keys parse, with nothing found
  ASSERT_TRUE(odd);
  EXPECT_EQ(odd->arch_hint, "");
  EXPECT_EQ(odd->processors, 0);
}

// ---- /proc/<pid>/environ ---------------------------------------------------------------

TEST(EnvironParser, NulSeparatedEntries) {
  auto env = parse_environ("PATH=/usr/bin:/bin\0HOME=/root\0CUDA_VISIBLE_DEVICES=0,1\0"s);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0], (std::pair<std::string, std::string>{"PATH", "/usr/bin:/bin"}));
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"HOME", "/root"}));
  EXPECT_EQ(env[2], (std::pair<std::string, std::string>{"CUDA_VISIBLE_DEVICES", "0,1"}));
}

TEST(EnvironParser, EntriesWithoutEqualsKeepEmptyValue) {
  auto env = parse_environ("A=1\0NOEQUALS\0\0B==x\0EMPTY=\0LAST=no-nul"s);
  ASSERT_EQ(env.size(), 5u);
  EXPECT_EQ(env[0].first, "A");
  EXPECT_EQ(env[1], (std::pair<std::string, std::string>{"NOEQUALS", ""}));
  EXPECT_EQ(env[2], (std::pair<std::string, std::string>{"B", "=x"}));  // first '=' splits
  EXPECT_EQ(env[3], (std::pair<std::string, std::string>{"EMPTY", ""}));
  EXPECT_EQ(env[4], (std::pair<std::string, std::string>{"LAST", "no-nul"}));
}

TEST(EnvironParser, KeepsOrderAndDuplicates) {
  auto env = parse_environ("X=1\0Y=2\0X=3\0"s);
  ASSERT_EQ(env.size(), 3u);
  EXPECT_EQ(env[0].second, "1");
  EXPECT_EQ(env[2].second, "3");
}

TEST(EnvironParser, EmptyAndOnlyNuls) {
  EXPECT_TRUE(parse_environ("").empty());
  EXPECT_TRUE(parse_environ("\0\0\0"s).empty());
}

TEST(EnvironParser, ValuesMayHoldNewlinesAndSpaces) {
  auto env = parse_environ("MSG=hello world\nsecond line\0"s);
  ASSERT_EQ(env.size(), 1u);
  EXPECT_EQ(env[0].second, "hello world\nsecond line");
}

// ---- "Key: value" files ----------------------------------------------------------------

TEST(KeyValuesParser, ProcStatus) {
  auto kv = parse_key_values(
      "Name:\tpython3\nState:\tS (sleeping)\nTgid:\t4242\nCpus_allowed:\tffffffff,ffffffff\n"
      "Cpus_allowed_list:\t0-63\nMems_allowed_list:\t0-1\n");
  EXPECT_EQ(kv.at("Name"), "python3");
  EXPECT_EQ(kv.at("State"), "S (sleeping)");
  EXPECT_EQ(kv.at("Cpus_allowed_list"), "0-63");
  EXPECT_EQ(kv.at("Cpus_allowed"), "ffffffff,ffffffff");
  EXPECT_EQ(kv.size(), 6u);
}

TEST(KeyValuesParser, Meminfo) {
  auto kv = parse_key_values("MemTotal:       2113224268 kB\nHugePages_Total:       0\n");
  EXPECT_EQ(kv.at("MemTotal"), "2113224268 kB");
  EXPECT_EQ(kv.at("HugePages_Total"), "0");
}

TEST(KeyValuesParser, ValueWithColonsAndLinesWithout) {
  auto kv = parse_key_values("Key: a:b:c\nno colon line\n\nEmpty:\n");
  EXPECT_EQ(kv.at("Key"), "a:b:c");  // split at the first colon only
  EXPECT_EQ(kv.at("Empty"), "");
  EXPECT_EQ(kv.size(), 2u);
}

TEST(KeyValuesParser, DuplicateKeyFirstWins) {
  auto kv = parse_key_values("A: 1\nA: 2\n");
  EXPECT_EQ(kv.at("A"), "1");
}

TEST(KeyValuesParser, CrLfIsTrimmed) {
  auto kv = parse_key_values("A: 1\r\nB:\t2 \r\n");
  EXPECT_EQ(kv.at("A"), "1");
  EXPECT_EQ(kv.at("B"), "2");
}

// ---- /proc/cmdline ---------------------------------------------------------------------

TEST(CmdlineParser, WordsAndValues) {
  auto c = parse_cmdline(
      "BOOT_IMAGE=/boot/vmlinuz-6.8.0 root=UUID=1234-abcd ro quiet intel_idle.max_cstate=1 "
      "isolcpus=2-7 nohz_full=2-7\n");
  ASSERT_EQ(c.words.size(), 7u);
  EXPECT_EQ(c.words[2], "ro");
  EXPECT_EQ(c.value("root"), "UUID=1234-abcd");  // the first '=' splits
  EXPECT_EQ(c.value("intel_idle.max_cstate"), "1");
  EXPECT_EQ(c.value("isolcpus"), "2-7");
  EXPECT_FALSE(c.value("ro"));     // a bare word has no value
  EXPECT_FALSE(c.value("iso"));    // no prefix matches
  EXPECT_FALSE(c.value("nohz"));
  EXPECT_TRUE(c.has("quiet"));
  EXPECT_TRUE(c.has("isolcpus"));  // name= form
  EXPECT_FALSE(c.has("qui"));
  EXPECT_FALSE(c.has("splash"));
}

TEST(CmdlineParser, QuotedValuesStayWhole) {
  auto c = parse_cmdline("console=ttyS0 dyndbg=\"file drivers/usb/* +p\" \"quoted word\" x\n");
  ASSERT_EQ(c.words.size(), 4u);
  EXPECT_EQ(c.words[1], "dyndbg=file drivers/usb/* +p");
  EXPECT_EQ(c.value("dyndbg"), "file drivers/usb/* +p");
  EXPECT_EQ(c.words[2], "quoted word");
  EXPECT_EQ(c.words[3], "x");
}

TEST(CmdlineParser, EmptyQuotedValueIsPresent) {
  auto c = parse_cmdline("foo=\"\" bar= baz");
  EXPECT_EQ(c.value("foo"), "");
  EXPECT_EQ(c.value("bar"), "");
  EXPECT_TRUE(c.has("bar"));
  EXPECT_FALSE(c.value("baz"));
}

TEST(CmdlineParser, LastValueWins) {
  auto c = parse_cmdline("mitigations=off quiet mitigations=auto intel_pstate=disable intel_pstate=passive");
  EXPECT_EQ(c.value("mitigations"), "auto");
  EXPECT_EQ(c.value("intel_pstate"), "passive");
}

TEST(CmdlineParser, WhitespaceRunsTabsAndNuls) {
  auto c = parse_cmdline("  a\t\tb  c\0d\n\n"s);
  EXPECT_EQ(c.words, (std::vector<std::string>{"a", "b", "c", "d"}));
  EXPECT_TRUE(parse_cmdline("").words.empty());
  EXPECT_TRUE(parse_cmdline(" \n").words.empty());
}

TEST(CmdlineParser, UnterminatedQuoteRunsToTheEnd) {
  auto c = parse_cmdline("a=\"b c\n");
  ASSERT_EQ(c.words.size(), 1u);
  ASSERT_TRUE(c.value("a"));
  EXPECT_EQ(c.value("a")->substr(0, 3), "b c");
}

// ---- /proc/<pid>/task/<tid>/stat -------------------------------------------------------

namespace {
// Fields 3.. of a stat line: state S, utime 18 (14), stime 11 (15), starttime 2201 (22),
// processor 3 (39).
const std::string kStatRest =
    "S 1 1234 1234 0 -1 4194624 3157 0 0 0 18 11 0 0 20 0 1 0 2201 11264000 1057 "
    "18446744073709551615 1 1 0 0 0 0 0 4096 134433283 0 0 0 17 3 0 0 0 0 0 0 0 0 0 0 0 0 0\n";
}  // namespace

TEST(TaskStatParser, Plain) {
  auto r = parse_task_stat("4242 (python3) " + kStatRest);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->pid, 4242);
  EXPECT_EQ(r->comm, "python3");
  EXPECT_EQ(r->state, 'S');
  EXPECT_EQ(r->utime, 18u);
  EXPECT_EQ(r->stime, 11u);
  EXPECT_EQ(r->starttime, 2201u);
  EXPECT_EQ(r->processor, 3);
}

TEST(TaskStatParser, CommWithSpacesAndColon) {
  auto r = parse_task_stat("1234 (tmux: server) " + kStatRest);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->pid, 1234);
  EXPECT_EQ(r->comm, "tmux: server");
  EXPECT_EQ(r->state, 'S');
  EXPECT_EQ(r->utime, 18u);
  EXPECT_EQ(r->processor, 3);
}

TEST(TaskStatParser, CommWithClosingParen) {
  auto r = parse_task_stat("77 (a) b) " + kStatRest);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->comm, "a) b");
  EXPECT_EQ(r->state, 'S');
  EXPECT_EQ(r->starttime, 2201u);
  auto nested = parse_task_stat("78 ((sd-pam)) " + kStatRest);
  ASSERT_TRUE(nested);
  EXPECT_EQ(nested->comm, "(sd-pam)");
  auto fake = parse_task_stat("79 (x) R 1 2 3) " + kStatRest);  // a comm that mimics fields
  ASSERT_TRUE(fake);
  EXPECT_EQ(fake->comm, "x) R 1 2 3");
  EXPECT_EQ(fake->state, 'S');
}

TEST(TaskStatParser, EmptyComm) {
  auto r = parse_task_stat("5 () " + kStatRest);
  ASSERT_TRUE(r);
  EXPECT_EQ(r->comm, "");
}

TEST(TaskStatParser, ShortLineWithoutProcessor) {
  // Kernels before 2.2.8 stop before field 39: the processor stays unknown.
  auto r = parse_task_stat("9 (old) R 1 1 1 0 -1 0 0 0 0 0 7 8 0 0 20 0 1 0 99\n");
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->utime, 7u);
  EXPECT_EQ(r->stime, 8u);
  EXPECT_EQ(r->starttime, 99u);
  EXPECT_EQ(r->processor, -1);
}

TEST(TaskStatParser, Errors) {
  EXPECT_FALSE(parse_task_stat(""));
  EXPECT_FALSE(parse_task_stat("1234 python3 S 1"));         // no parentheses
  EXPECT_FALSE(parse_task_stat("1234 (python3 S 1 2 3"));    // no ')'
  EXPECT_FALSE(parse_task_stat("x (a) " + kStatRest));      // bad pid
  EXPECT_FALSE(parse_task_stat("1 (a) SS 1 2"));             // state is one letter
  EXPECT_FALSE(parse_task_stat("1 (a) S 1 2 3 4 5 6 7 8 9 10"));  // cut before utime
  EXPECT_FALSE(parse_task_stat("1 (a) S 1 1 1 0 -1 0 0 0 0 0 x 8 0 0 20 0 1 0 99"));
  auto r = parse_task_stat("1 (a) S 1 2 3 4 5 6 7 8 9 10");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("too few"), std::string::npos) << r.error().message;
}

// ---- /proc/<pid>/numa_maps -------------------------------------------------------------

TEST(NumaMapsParser, MixedPageSizesSumPerNode) {
  const char* text =
      "00400000 default file=/usr/bin/python3.10 mapped=640 N0=640 kernelpagesize_kB=4\n"
      "7f0000000000 default anon=512 dirty=512 N0=256 N1=256 kernelpagesize_kB=4\n"
      "7f2000000000 bind:1 file=/dev/hugepages/buf huge dirty=4 N1=4 kernelpagesize_kB=2048\n"
      "7f3000000000 prefer:0 anon=1 dirty=1 N0=1 kernelpagesize_kB=1048576\n"
      "7fff00000000 default stack anon=33 dirty=33 N0=33 kernelpagesize_kB=4\n"
      "7fff10000000 default\n";
  auto r = parse_numa_maps(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->mappings, 6);
  ASSERT_EQ(r->bytes_per_node.size(), 2u);
  EXPECT_EQ(r->bytes_per_node.at(0), (640u + 256 + 33) * 4096ull + 1024ull * 1024 * 1024);
  EXPECT_EQ(r->bytes_per_node.at(1), 256u * 4096ull + 4ull * 2048 * 1024);
}

TEST(NumaMapsParser, SparseNodeNumbers) {
  auto r = parse_numa_maps("7f0000000000 default anon=3 N2=1 N7=2 kernelpagesize_kB=64\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->bytes_per_node.at(2), 65536u);
  EXPECT_EQ(r->bytes_per_node.at(7), 131072u);
  EXPECT_EQ(r->bytes_per_node.count(0), 0u);
}

TEST(NumaMapsParser, EmptyAndBlankLines) {
  auto empty = parse_numa_maps("");
  ASSERT_TRUE(empty);
  EXPECT_EQ(empty->mappings, 0);
  EXPECT_TRUE(empty->bytes_per_node.empty());
  auto blanks = parse_numa_maps("\n7f00 default N0=1 kernelpagesize_kB=4\n\n");
  ASSERT_TRUE(blanks);
  EXPECT_EQ(blanks->mappings, 1);
}

TEST(NumaMapsParser, CutShortLineNamesItsLine) {
  // Read with a size limit, the last line ends before kernelpagesize_kB.
  auto r = parse_numa_maps(
      "00400000 default file=/usr/bin/bash mapped=200 N0=200 kernelpagesize_kB=4\n"
      "7f0000000000 default anon=10 dirty=10 N0=10\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 2);
  EXPECT_NE(r.error().message.find("cut short"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().describe().find("line 2:"), std::string::npos);
}

TEST(NumaMapsParser, CutInsideAToken) {
  auto r = parse_numa_maps("00400000 default N0=2 kernelpagesize_kB=4\n\n7f00 default anon=10 N0");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 3);  // blank lines count
  auto policy = parse_numa_maps("00400000 default N0=2 kernelpagesize_kB=4\n7f0000000000");
  ASSERT_FALSE(policy);
  EXPECT_EQ(policy.error().line, 2);
}

TEST(NumaMapsParser, BadFields) {
  EXPECT_FALSE(parse_numa_maps("zzzz default N0=1 kernelpagesize_kB=4\n"));
  EXPECT_FALSE(parse_numa_maps("7f00 default N0=x kernelpagesize_kB=4\n"));
  EXPECT_FALSE(parse_numa_maps("7f00 default N0=1 kernelpagesize_kB=0\n"));
  EXPECT_FALSE(parse_numa_maps("7f00 default N0=1 kernelpagesize_kB=\n"));
}

// ---- /proc/interrupts ------------------------------------------------------------------

TEST(InterruptsParser, X86WithErrMisRows) {
  const char* text =
      "            CPU0       CPU1       CPU2       CPU3       \n"
      "   0:         22          0          0          0  IR-IO-APIC    2-edge      timer\n"
      " 124:     312458          0          0      12045  IR-PCI-MSI-0000:01:00.0    0-edge      nvme0q0\n"
      " 125:          0    2391094          0          0  IR-PCI-MSIX-0000:17:00.0  524288-edge      "
      "mlx5_comp0@pci:0000:17:00.0\n"
      "NMI:        112        109         98        101   Non-maskable interrupts\n"
      "LOC:   43242344   39293232   38929832   38282831   Local timer interrupts\n"
      "ERR:          0\n"
      "MIS:          7\n";
  auto r = parse_interrupts(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->cpus, (std::vector<int>{0, 1, 2, 3}));
  ASSERT_EQ(r->rows.size(), 7u);
  EXPECT_EQ(r->rows[0].irq, "0");
  EXPECT_EQ(r->rows[0].counts, (std::vector<std::uint64_t>{22, 0, 0, 0}));
  EXPECT_EQ(r->rows[0].description, "IR-IO-APIC 2-edge timer");
  EXPECT_EQ(r->rows[1].counts, (std::vector<std::uint64_t>{312458, 0, 0, 12045}));
  EXPECT_EQ(r->rows[2].irq, "125");
  EXPECT_EQ(r->rows[2].description, "IR-PCI-MSIX-0000:17:00.0 524288-edge mlx5_comp0@pci:0000:17:00.0");
  EXPECT_EQ(r->rows[3].irq, "NMI");
  EXPECT_EQ(r->rows[3].description, "Non-maskable interrupts");
  EXPECT_EQ(r->rows[5].irq, "ERR");
  EXPECT_EQ(r->rows[5].counts, (std::vector<std::uint64_t>{0, 0, 0, 0}));
  EXPECT_EQ(r->rows[5].description, "");
  EXPECT_EQ(r->rows[6].irq, "MIS");
  EXPECT_EQ(r->rows[6].counts, (std::vector<std::uint64_t>{7, 0, 0, 0}));
}

TEST(InterruptsParser, Arm64DescriptionStartsWithANumber) {
  const char* text =
      "           CPU0       CPU1       \n"
      " 11:    9983421    9881283     GICv3  27 Level     arch_timer\n"
      " 45:      10234          0   ITS-MSI 524288 Edge      nvme0q0\n"
      " 46:          5          6   12 Edge      numbered-first\n"
      "IPI0:      2342       2123       Rescheduling interrupts\n"
      "Err:          0\n";
  auto r = parse_interrupts(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->cpus, (std::vector<int>{0, 1}));
  ASSERT_EQ(r->rows.size(), 5u);
  EXPECT_EQ(r->rows[0].counts, (std::vector<std::uint64_t>{9983421, 9881283}));
  EXPECT_EQ(r->rows[0].description, "GICv3 27 Level arch_timer");
  EXPECT_EQ(r->rows[1].description, "ITS-MSI 524288 Edge nvme0q0");
  // The counts stop at the header's column count, so a leading number stays description.
  EXPECT_EQ(r->rows[2].counts, (std::vector<std::uint64_t>{5, 6}));
  EXPECT_EQ(r->rows[2].description, "12 Edge numbered-first");
  EXPECT_EQ(r->rows[3].irq, "IPI0");
  EXPECT_EQ(r->rows[4].irq, "Err");
  EXPECT_EQ(r->rows[4].counts, (std::vector<std::uint64_t>{0, 0}));
}

TEST(InterruptsParser, OfflineCpuColumnsKeepTheirNumbers) {
  auto r = parse_interrupts("            CPU0       CPU2       CPU5\n  24:  100  200  300  PCI-MSI 1048576-edge  eth0\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->cpus, (std::vector<int>{0, 2, 5}));
  EXPECT_EQ(r->rows[0].counts, (std::vector<std::uint64_t>{100, 200, 300}));
}

TEST(InterruptsParser, Errors) {
  EXPECT_FALSE(parse_interrupts(""));
  auto hdr = parse_interrupts("  24:  1 2 foo\n");
  ASSERT_FALSE(hdr);
  EXPECT_EQ(hdr.error().line, 1);
  EXPECT_FALSE(parse_interrupts("   CPU0  CPUx\n"));
  EXPECT_FALSE(parse_interrupts("   \n 0: 1\n"));  // no CPU columns
}

TEST(InterruptsParser, LinesWithoutColonAreSkipped) {
  auto r = parse_interrupts("   CPU0\n  garbage without colon\n  1: 5 x\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->rows.size(), 1u);
  EXPECT_EQ(r->rows[0].irq, "1");
}

// ---- /proc/<pid>/maps ------------------------------------------------------------------

TEST(MapsMentionParser, MatchesFileNames) {
  const char* maps =
      "55d4c3a00000-55d4c3a21000 r--p 00000000 103:02 1311768                   /usr/bin/python3.10\n"
      "7f1b2c000000-7f1b2c021000 rw-p 00000000 00:00 0 \n"
      "7f1b30000000-7f1b31000000 r-xp 00000000 103:02 2621522                   "
      "/usr/lib/x86_64-linux-gnu/libcuda.so.535.104.05\n"
      "7f1b32000000-7f1b32800000 r-xp 00000000 103:02 2621600                   "
      "/opt/conda/lib/python3.10/site-packages/nvidia/nccl/lib/libnccl.so.2\n"
      "7ffd9e5e6000-7ffd9e607000 rw-p 00000000 00:00 0                          [stack]\n";
  EXPECT_TRUE(maps_mention(maps, {"libcuda.so"}));
  EXPECT_TRUE(maps_mention(maps, {"libnccl"}));
  EXPECT_TRUE(maps_mention(maps, {"nothing", "libnccl"}));  // any needle
  EXPECT_FALSE(maps_mention(maps, {"site-packages"}));      // directories do not count
  EXPECT_FALSE(maps_mention(maps, {"stack"}));             // pseudo-paths are not files
  EXPECT_FALSE(maps_mention(maps, {"libtorch"}));
  EXPECT_FALSE(maps_mention(maps, {}));
}

TEST(MapsMentionParser, DeletedAndSpacedNamesAndNoNewline) {
  const char* maps = "7f2c5e5d6000-7f2c5e5d7000 r--p 00000000 08:02 1311 /tmp/my libfoo.so (deleted)";
  EXPECT_TRUE(maps_mention(maps, {"libfoo"}));
  EXPECT_FALSE(maps_mention("", {"libfoo"}));
  EXPECT_FALSE(maps_mention("00e03000-00e24000 rw-p 00000000 00:00 0 [heap]\n", {"heap"}));
}

// ---- /proc/<pid>/smaps, /proc/driver/nvidia/version, /proc/bus/pci/devices, /proc/sysinfo --
TEST(ParsersProcfs, SmapsKernelPageSize) {
  EXPECT_EQ(parse_smaps_page_size_kb("aaaab1e00000-aaaab1e2c000 r--p 00000000 fc:02 1234 /usr/bin/x\nSize:  176 kB\n"
                                     "KernelPageSize:       64 kB\nMMUPageSize:  64 kB\nKernelPageSize: 4 kB\n"),
            64);
  auto none = parse_smaps_page_size_kb("Size: 4 kB\n");
  ASSERT_FALSE(none);
  EXPECT_EQ(none.error(), "no KernelPageSize line");
  auto bad = parse_smaps_page_size_kb("KernelPageSize:   4 MB  \n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error(), "unreadable KernelPageSize line 'KernelPageSize:   4 MB'");
  EXPECT_FALSE(parse_smaps_page_size_kb("KernelPageSize: 0 kB\n"));
}

TEST(ParsersProcfs, NvidiaDriverVersion) {
  auto prop = parse_nvidia_driver_version(
      "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024\nGCC version:  gcc version 12.2.0\n");
  EXPECT_EQ(prop.version, "550.90.07");
  EXPECT_FALSE(prop.open_module);
  EXPECT_EQ(prop.first_line, "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  Fri May 31 09:35:42 UTC 2024");
  auto open = parse_nvidia_driver_version("  NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build\n");
  EXPECT_TRUE(open.open_module);
  EXPECT_FALSE(open.version);  // the version is read from lines that start with "NVRM version:" only
  auto none = parse_nvidia_driver_version("GCC version: 12\nNVRM version: NVIDIA UNIX Kernel Module 1.2\n");
  EXPECT_FALSE(none.version);  // "1.2" is too short to be a driver version
  EXPECT_EQ(none.first_line, "GCC version: 12");
  EXPECT_EQ(parse_nvidia_driver_version("").first_line, "");
}

TEST(ParsersProcfs, ProcBusPciVendors) {
  auto v = parse_proc_bus_pci_vendors("0000\t80861237\t0\t0\n0010\t80eebeef\t12\n0018\t10de\t0\nshort\n");
  ASSERT_EQ(v.size(), 2u);
  EXPECT_EQ(v[0], (std::pair<std::string, std::uint32_t>{"0000", 0x8086}));
  EXPECT_EQ(v[1], (std::pair<std::string, std::uint32_t>{"0010", 0x80ee}));
  EXPECT_TRUE(parse_proc_bus_pci_vendors("0000\tzzzzzzzz\n").empty());
}

TEST(ParsersProcfs, S390Sysinfo) {
  auto s = parse_sysinfo(
      "Manufacturer:         IBM\nLPAR Name:            LP01\nVM00 Name:            GUEST\n"
      "VM00 Control Program: KVM/Linux\nVM01 Control Program: z/VM    7.1.0\nLPAR Name: LP02\n");
  EXPECT_EQ(s.control_program, "KVM/Linux");  // the first one: the hypervisor right above this guest
  EXPECT_EQ(s.lpar_name, "LP01");
  auto lpar = parse_sysinfo("LPAR Name:            LP01\n");
  EXPECT_EQ(lpar.control_program, "");
  EXPECT_EQ(lpar.lpar_name, "LP01");
}
