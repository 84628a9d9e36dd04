// Hardware events in the kernel log: NVIDIA Xid and NVSwitch SXid, PCIe AER, mlx5 link and
// module events and failures, GPUs fallen off the bus, NVIDIA driver failures, CPU thermal
// throttling, EDAC memory errors, machine checks, soft lockups, hung tasks, Oopses and panics. Text in (the formats parse_kernel_records reads), events out, each
// with its record's time and line; facts/kernel_events judges nothing, the checks do.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/kernel_log.hpp"

namespace perfgap::parsers {

enum class KernelEventKind {
  xid,               // NVRM: Xid (PCI:0000:18:00): 79, ...
  sxid,              // nvidia-nvswitch0: SXid (PCI:0000:05:00.0): 12028, Non-fatal, ...
  fallen_off_bus,    // NVRM: GPU 0000:2b:00.0: GPU has fallen off the bus.
  aer_corrected,     // <drv> <bdf>: PCIe Bus Error: severity=Corrected, ...
  aer_uncorrected,   // severity=Uncorrected (Non-Fatal) / (Fatal)
  link_down,         // mlx5_core 0000:2a:00.0 ibp42s0: Link down
  link_up,
  module_event,      // mlx5_core 0000:2a:00.0: mlx5_port_module_event:...: Port module event: module 0, Cable unplugged
  thermal_throttle,  // CPU12: Core temperature above threshold, cpu clock throttled (total events = 12)
  edac_corrected,    // EDAC MC0: 1 CE memory read error on ...
  edac_uncorrected,  // EDAC MC1: 1 UE ...
  soft_lockup,       // watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python:4242]
  hung_task,         // INFO: task python:4242 blocked for more than 120 seconds.
  // mlx5 failures: firmware health ("device's health compromised - reached miss count",
  // "... unrecoverable hardware error"), a command the firmware never answered ("timeout. Will
  // cause a leak of a command resource"), "Detected insufficient power on the PCIe slot (27W)".
  nic_failure,
  // NVIDIA driver failures that are no Xid: "NVRM: knvlinkDiscoverPostRxDetLinks_GH100: Getting
  // peer0's postRxDetLinkMask failed!" (detail "nvlink"), "NVRM: GPU 0000:41:00.0: RmInitAdapter
  // failed! (0x62:0x40:2404)" (detail "init").
  gpu_driver_failure,
  // "NVRM: Rate limiting GSP RPC error prints for GPU at PCI:0000:9b:00 (printing 1 of every
  // 30)." (code: the 30): from here on the Xid 119 lines are a sample.
  gsp_rate_limit,
  kernel_panic,      // Kernel panic - not syncing: Fatal Machine check (detail: the reason)
  // An Oops: "BUG: unable to handle kernel NULL pointer dereference at ...", "BUG: kernel NULL
  // pointer dereference, address: ...", "kernel BUG at mm/slub.c:123!", "general protection
  // fault ...: 0000 [#1] SMP", "Oops: 0002 [#1] SMP" (an Oops: line right after a BUG line is
  // the same report, not a second event).
  kernel_oops,
  // "mce: [Hardware Error]: CPU 3: Machine Check Exception: 5 Bank 4: be00000000800400" (device
  // CPU3, code the bank, fatal when the MCi_STATUS says uncorrected or the line says Exception),
  // "mce: [Hardware Error]: Machine check: Processor context corrupt" (mce_panic's, fatal),
  // "mce: [Hardware Error]: Machine check events logged" (for mcelog/rasdaemon; not fatal by itself).
  machine_check,
};
std::string_view to_string(KernelEventKind k);

struct KernelEvent {
  KernelEventKind kind = KernelEventKind::xid;
  // What the event is about: a PCI function ("0000:18:00.0", lower case; NVRM's "0000:18:00"
  // is function 0), "CPU12", "MC0", a task "python:4242"; "" when the line does not say.
  std::string device;
  std::string netdev;    // link events: the interface ("ibp42s0")
  long code = 0;         // Xid/SXid number; EDAC error count; thermal "total events"; fatal SXid: 1
  bool fatal = false;    // SXid "Fatal", AER "Uncorrected (Fatal)"; an Xid line saying "Fatal" or "RST: Yes"
  bool nonfatal = false; // an Xid line saying "Nonfatal" ("145, RLW_REMAP Nonfatal XC0 i0 Link 00 (...)"), an SXid head "Non-fatal, ..."
  std::string recovery;  // Xid 154: the recovery action it changed to ("GPU Reset Required", "None")
  std::string detail;    // the text after the code / what the line adds ("Cable unplugged")
  std::optional<double> since_boot_s;
  std::string wall;
  std::string line;      // the record's message
  // Panics and Oopses: the task of the "CPU: 3 PID: 4242 Comm: python3 ..." line the kernel
  // prints after them (within a few records), "python3 (pid 4242)"; the CPU goes to `device`
  // ("CPU3"). Both "" when the log has no such line.
  std::string task;
};

// Events in record order. Lines that name no event are skipped; a line is at most one event.
std::vector<KernelEvent> kernel_events(const std::vector<KernelRecord>& records);
// The two in one (tests, the fuzzer).
std::vector<KernelEvent> parse_kernel_events(std::string_view text);

// "0000:18:00" -> "0000:18:00.0", "0000:18:00.0" kept, upper case lowered; "" when `s` is no
// PCI address (domain optional: "18:00.0" -> "0000:18:00.0").
std::string normalize_bdf(std::string_view s);

// /proc/stat's "btime" (seconds since the epoch when the node booted); nullopt without one.
std::optional<long long> parse_boot_time(std::string_view proc_stat);

}  // namespace perfgap::parsers
