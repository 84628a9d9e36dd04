// Hardware events in the kernel log: NVIDIA Xid and NVSwitch SXid, PCIe AER, mlx5 link and
// module events, GPUs fallen off the bus, CPU thermal throttling, EDAC memory errors, soft
// lockups and hung tasks. Text in (the formats parse_kernel_records reads), events out, each
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
  bool nonfatal = false; // an Xid line saying "Nonfatal" ("145, RLW_REMAP Nonfatal XC0 i0 Link 00 (...)")
  std::string recovery;  // Xid 154: the recovery action it changed to ("GPU Reset Required", "None")
  std::string detail;    // the text after the code / what the line adds ("Cable unplugged")
  std::optional<double> since_boot_s;
  std::string wall;
  std::string line;      // the record's message
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
