// Text parsers for /proc files. Each takes the file's text and returns a struct or a
// ParseError with the line; none touches the file system (they are unit-tested and fuzzed).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "parsers/cpuset.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// /proc/stat: the per-CPU lines ("cpuN user nice system idle iowait irq softirq steal ...").
struct CpuTimes {
  int cpu = -1;                  // -1: the aggregate "cpu" line
  std::vector<std::uint64_t> fields;  // as many columns as this kernel prints
  bool has_steal() const { return fields.size() >= 8; }
  std::uint64_t steal() const { return has_steal() ? fields[7] : 0; }
  // user+nice+system+idle+iowait+irq+softirq+steal (guest time is already inside user).
  std::uint64_t total() const;
};
struct ProcStat {
  std::vector<CpuTimes> cpus;    // per-CPU lines only
  std::optional<CpuTimes> all;
};
Parsed<ProcStat> parse_proc_stat(std::string_view text);

// /proc/cpuinfo: the few fields the checks use, from the first processor block.
// Every architecture prints its own keys; `arch_hint` is decided from them field by field and
// stays "" when they do not say (never a guess): x86_64, i686, aarch64, arm, s390x, s390,
// powerpc (cpuinfo says neither word size nor byte order), riscv64, riscv32, loongarch64,
// sparc64, mips64, mips.
struct CpuInfo {
  std::string arch_hint;
  std::string model_name;        // "model name" (x86), "Model Name" (LoongArch), "cpu" (POWER, SPARC), or derived (arm)
  bool hypervisor_flag = false;  // x86 "flags ... hypervisor"
  std::optional<unsigned> implementer;  // arm "CPU implementer"
  std::optional<unsigned> part;         // arm "CPU part"
  std::string power_platform;    // POWER "platform": PowerNV (bare metal), pSeries (LPAR or KVM guest)
  std::string power_model;       // POWER "model", e.g. "IBM pSeries (emulated by qemu)"
  int processors = 0;
};
// The architecture names parse_cpuinfo and the node identity use.
bool known_arch(std::string_view arch);
Parsed<CpuInfo> parse_cpuinfo(std::string_view text);

// NUL-separated KEY=VALUE (/proc/<pid>/environ). Entries without '=' are kept with an empty
// value; the order is the process's.
using EnvList = std::vector<std::pair<std::string, std::string>>;
EnvList parse_environ(std::string_view text);

// "Key:\tvalue" lines (/proc/<pid>/status, /proc/meminfo).
std::map<std::string, std::string, std::less<>> parse_key_values(std::string_view text);

// /proc/cmdline: words, with double-quoted values kept whole.
struct KernelCmdline {
  std::vector<std::string> words;
  // The value of the last "name=value" (the kernel uses the last), or nullopt.
  std::optional<std::string> value(std::string_view name) const;
  bool has(std::string_view word) const;  // a bare word or any name= form
};
KernelCmdline parse_cmdline(std::string_view text);

// /proc/<pid>/task/<tid>/stat (also /proc/<pid>/stat).
struct TaskStat {
  int pid = 0;
  std::string comm;
  char state = '?';
  std::uint64_t utime = 0, stime = 0;  // clock ticks
  std::uint64_t starttime = 0;         // ticks after boot
  int processor = -1;                  // CPU last run on
};
Parsed<TaskStat> parse_task_stat(std::string_view text);

// /proc/<pid>/numa_maps: resident bytes per NUMA node, summed over all mappings.
struct NumaMaps {
  std::map<int, std::uint64_t> bytes_per_node;
  int mappings = 0;
};
// A line with page counts but no kernelpagesize_kB is cut short: an error naming the line.
Parsed<NumaMaps> parse_numa_maps(std::string_view text);

// /proc/interrupts: rows of per-CPU counts with their name.
struct InterruptRow {
  std::string irq;                  // "24", "NMI", ...
  std::vector<std::uint64_t> counts;  // per CPU column, in the header's order
  std::string description;          // chip, hwirq, trigger and action names as printed
};
struct Interrupts {
  std::vector<int> cpus;            // header: CPU numbers of the columns
  std::vector<InterruptRow> rows;
};
Parsed<Interrupts> parse_interrupts(std::string_view text);

struct Limit {
  std::optional<std::uint64_t> soft, hard;  // nullopt: unlimited
  std::string text;                         // as printed
};
// The "Max locked memory" row of /proc/<pid>/limits.
tl::expected<Limit, std::string> parse_memlock_limit(std::string_view limits_text);

// /proc/<pid>/smaps: the first KernelPageSize ("KernelPageSize:        4 kB"), in kB; the
// error says why not ("no KernelPageSize line", or the line that could not be read).
tl::expected<long, std::string> parse_smaps_page_size_kb(std::string_view smaps_text);

// /proc/driver/nvidia/version: "NVRM version: NVIDIA UNIX x86_64 Kernel Module  550.90.07  ..."
// or "NVRM version: NVIDIA UNIX Open Kernel Module for x86_64  570.86.15  Release Build ...".
struct NvidiaDriverVersion {
  std::string first_line;              // trimmed, as evidence shows it
  std::optional<std::string> version;  // "550.90.07"; nullopt when no NVRM line names one
  bool open_module = false;            // the open GPU kernel modules (dma-buf capable)
};
NvidiaDriverVersion parse_nvidia_driver_version(std::string_view text);

// /proc/bus/pci/devices: (bus id field, vendor id) of each line ("0018\t10de2330 ...").
std::vector<std::pair<std::string, std::uint32_t>> parse_proc_bus_pci_vendors(std::string_view text);

// s390 /proc/sysinfo: the first "VMnn Control Program" value (the hypervisor above the
// LPAR, "" when none) and the "LPAR Name".
struct SysInfo {
  std::string control_program, lpar_name;
};
SysInfo parse_sysinfo(std::string_view text);

// /proc/<pid>/maps: whether any mapped file's name contains one of the needles.
bool maps_mention(std::string_view maps_text, std::initializer_list<std::string_view> needles);

}  // namespace perfgap::parsers
