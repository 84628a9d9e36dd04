// Kernel log text (/dev/kmsg records, dmesg output, journal lines) to records and plain
// messages, for the checks that look for a driver's words (parsers/kernel_events reads the
// hardware events out of them). facts/platform picks the source.
#pragma once

#include <cstddef>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::parsers {

// One kernel log record: its message (prefixes removed, made printable, at most 512 bytes)
// and when it was logged, as far as its format says.
struct KernelRecord {
  std::optional<double> since_boot_s;  // /dev/kmsg usec, dmesg "[  12.345678]"
  std::string wall;                    // dmesg -T "[Mon Dec  1 10:00:00 2025]", a journal/syslog stamp
  std::string message;
  bool layout = false;  // the line had a kernel log's prefix (a kmsg record, a dmesg/ISO/syslog stamp, dmesg -x), not plain text
  // No stamp, but the message starts with a kernel driver's prefix ("NVRM: ", "nvidia-nvswitch3: ",
  // "mlx5_core 0000:5c:00.0: "): a line of dmesg -t or journalctl -k -o cat.
  bool driver = false;
};

// What the reader left out of the records, for a caller that must say why a file holds none.
struct KernelLogDropped {
  // Lines with a syslog/journal prefix whose tag names a user-space process ("gpud[5555]: ",
  // "nvidia-persistenced[1111]: "), not the kernel; the first such tag.
  std::size_t user_space = 0;
  std::string first_tag;
};

// Kernel log text as /dev/kmsg records ("6,1234,5678,-;message" plus " KEY=value"
// continuation lines), dmesg output ("[    1.234] message", or -T's "[Mon Dec  1 10:00:00
// 2025] message"), journalctl -k / syslog lines ("Dec 01 10:00:00 host kernel: message") or
// plain lines; every known prefix is removed once: "<N>" priorities (dmesg -r, pstore), dmesg
// -x / --decode "kern  :warn  : ", dmesg --time-format iso and journalctl short-iso stamps,
// journalctl short-monotonic "[ 12.3] host kernel: ", CONFIG_PRINTK_CALLER "[  T12] ". Bytes outside printable ASCII become '?', so messages are safe in any report;
// lines longer than 512 bytes are cut. Records with an empty message are dropped, and so are
// binary lines (a NUL or another control byte but tab and ESC, or mostly bytes above 0x7f).
// A syslog/journal line ("Dec 01 10:00:00 host TAG[pid]: ", short-iso, rsyslog ISO,
// short-monotonic) whose tag is a user-space process's, not "kernel", is no kernel record
// (daemons such as gpud or DCGM quote the driver's Xid lines); a line whose tag is a kernel
// driver's prefix ("host NVRM: ...") or that has no tag is kept. Indented lines after a
// stamped record are its continuation lines (dmesg and journalctl print a multi-line printk
// so): records of their own with that record's time, or left out with a user-space line.
std::vector<KernelRecord> parse_kernel_records(std::string_view text, KernelLogDropped* dropped = nullptr);

// Whether a message (prefixes removed) starts with a kernel driver's prefix: a device's
// "driver 0000:5c:00.0: " (dev_printk, also "driver 0000:5c:00.0 ifname: "), or one of the
// prefixes of the drivers and kernel reports the log checks read ("NVRM: ", "nvidia-nvswitch3: ",
// "mlx5_core: ", "mce: ", "EDAC MC0: ", "watchdog: ", "INFO: task ...").
bool kernel_driver_prefix(std::string_view message);

// The records' messages.
std::vector<std::string> parse_kernel_log(std::string_view text);

}  // namespace perfgap::parsers
