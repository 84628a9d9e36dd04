#include "parsers/kernel_log.hpp"

#include <algorithm>
#include <optional>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

bool weekday(std::string_view s) {
  for (std::string_view d : {"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "})
    if (sys::starts_with(s, d)) return true;
  return false;
}

bool month_name(std::string_view s) {
  for (std::string_view m : {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"})
    if (sys::starts_with(s, m)) return true;
  return false;
}

// A line of a binary file, not text: a NUL or another control byte (tab and ESC, a terminal's
// colours, are text), or more bytes above 0x7f than not.
bool binary_line(std::string_view line) {
  std::size_t high = 0;
  for (char ch : line) {
    auto c = static_cast<unsigned char>(ch);
    if ((c < 0x20 && c != '\t' && c != 0x1b) || c == 0x7f) return true;
    if (c >= 0x80) ++high;
  }
  return high * 2 > line.size();
}

// "6,1234,5678901,-;" or "6,1234,5678901,-,caller=T1;" : /dev/kmsg's record prefix. Returns
// the message's offset and the record's microseconds since boot.
std::optional<std::pair<std::size_t, std::string_view>> kmsg_prefix(std::string_view line) {
  auto semi = line.find(';');
  if (semi == std::string_view::npos || semi == 0 || semi > 64) return std::nullopt;
  // Three numeric fields, then flags: scanned in place (no split: this runs on every line).
  std::size_t pos = 0;
  std::string_view usec;
  for (int field = 0; field < 3; ++field) {
    const std::size_t start = pos;
    while (pos < semi && line[pos] >= '0' && line[pos] <= '9') ++pos;
    if (pos == start || pos >= semi || line[pos] != ',') return std::nullopt;
    if (field == 2) usec = line.substr(start, pos - start);
    ++pos;
  }
  return std::make_pair(semi + 1, usec);
}

std::string printable(std::string_view s, std::size_t max) {
  s = s.substr(0, max);
  // Most lines are plain ASCII: copied whole, not a byte at a time.
  if (std::all_of(s.begin(), s.end(), [](char ch) { return static_cast<unsigned char>(ch) >= 0x20 && static_cast<unsigned char>(ch) < 0x7f; }))
    return std::string(s);
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char ch : s) {
    if (out.size() >= max) break;
    auto c = static_cast<unsigned char>(ch);
    out.push_back(c == '\t' ? ' ' : (c < 0x20 || c >= 0x7f) ? '?' : ch);
  }
  return out;
}

// "[    1.234567] " (seconds since boot) or dmesg -T's "[Mon Dec  1 10:00:00 2025] " (wall
// time) at the start of `line`: removed, and the time kept in `rec`.
bool bracket_stamp(std::string_view& line, KernelRecord& rec) {
  if (line.empty() || line.front() != '[') return false;
  auto close = line.find(']');
  if (close == std::string_view::npos || close >= 48) return false;
  auto inside = sys::trim_ws(line.substr(1, close - 1));
  if (auto s = sys::to_double(inside); s && *s >= 0) {
    rec.since_boot_s = *s;
    // dmesg prints "%5lu.%06lu": "[0]" or "[12]" (a rank, an index) is no kernel stamp.
    if (inside.find('.') != std::string_view::npos) rec.layout = true;
  } else if (!inside.empty() && inside.find_first_of("0123456789") != std::string_view::npos) {
    rec.wall = printable(inside, 48);
    // dmesg -T (ctime): "Mon Dec  1 10:00:00 2025", a weekday first and a clock time in it
    // ("[2024-04-06 03:02:12]", a training log's stamp, is not one)
    auto colon = inside.find(':');
    if (weekday(inside) && colon != std::string_view::npos && colon >= 2 && colon + 5 < inside.size() && is_digit(inside[colon - 1]) &&
        is_digit(inside[colon + 1]) && is_digit(inside[colon + 2]) && inside[colon + 3] == ':')
      rec.layout = true;
  } else {
    return false;
  }
  line.remove_prefix(close + 1);
  return true;
}


// CONFIG_PRINTK_CALLER's "[    T1] " / "[  C12] " after the stamp.
bool caller_field(std::string_view& line) {
  if (line.size() < 4 || line.front() != '[') return false;
  auto close = line.find(']');
  if (close == std::string_view::npos || close > 16) return false;
  auto inside = sys::trim_ws(line.substr(1, close - 1));
  if (inside.size() < 2 || (inside.front() != 'T' && inside.front() != 'C')) return false;
  for (char c : inside.substr(1))
    if (!is_digit(c)) return false;
  line.remove_prefix(close + 1);
  return true;
}

// dmesg -r / pstore (console-ramoops, dmesg-ramoops) "<4>": the raw priority.
bool priority_field(std::string_view& line) {
  if (line.size() < 3 || line.front() != '<') return false;
  std::size_t n = 1;
  while (n < line.size() && n < 5 && is_digit(line[n])) ++n;
  if (n == 1 || n >= line.size() || line[n] != '>') return false;
  line.remove_prefix(n + 1);
  return true;
}

// dmesg -x / --decode "kern  :warn  : ": a facility and a level (syslog's names), each padded
// with blanks and ended by ':'.
bool decode_field(std::string_view& line) {
  static constexpr std::string_view facilities[] = {"kern", "user", "mail", "daemon", "auth", "syslog", "lpr", "news",
                                                    "uucp", "cron", "authpriv", "ftp", "local0", "local1", "local2",
                                                    "local3", "local4", "local5", "local6", "local7"};
  static constexpr std::string_view levels[] = {"emerg", "alert", "crit", "err", "warn", "notice", "info", "debug"};
  std::size_t pos = 0;
  auto word = [&](const auto& names) {
    const std::size_t start = pos;
    while (pos < line.size() && is_lower(line[pos]) && pos - start < 9) ++pos;
    while (pos < line.size() && is_digit(line[pos]) && pos - start < 9) ++pos;
    const auto w = line.substr(start, pos - start);
    if (std::find(std::begin(names), std::end(names), w) == std::end(names)) return false;
    while (pos < line.size() && line[pos] == ' ') ++pos;
    if (pos >= line.size() || line[pos] != ':') return false;
    ++pos;
    return true;
  };
  if (!word(facilities) || !word(levels)) return false;
  if (pos < line.size() && line[pos] != ' ') return false;
  line.remove_prefix(pos);
  return true;  // the caller marks the layout
}

// dmesg --time-format iso "2025-01-21T04:41:44,283302+00:00 " (a comma before the
// microseconds, the message next), journalctl -o short-iso "2025-01-21T04:41:44+0000 " and
// rsyslog's "2025-01-21T04:41:44.283302+00:00 " (a host and a tag next): a wall stamp.
enum class IsoStamp { none, dmesg, journal };
IsoStamp iso_stamp(std::string_view& line, KernelRecord& rec) {
  if (line.size() < 20 || line[4] != '-' || line[7] != '-' || line[10] != 'T' || line[13] != ':' || line[16] != ':') return IsoStamp::none;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (!is_digit(line[i])) return IsoStamp::none;
  auto end = line.find(' ');
  if (end == std::string_view::npos || end > 40) return IsoStamp::none;
  rec.wall = printable(line.substr(0, end), 48);
  const bool dmesg = line[19] == ',';
  line.remove_prefix(end);
  return dmesg ? IsoStamp::dmesg : IsoStamp::journal;
}

// syslog / journalctl "Dec 01 10:00:00 host kernel: " (the stamp before the host kept as the
// wall time) and, once a stamp was read (journalctl -o short-monotonic's "[ 12.3] host
// kernel: ", short-iso), the bare "host kernel: ". Without a stamp, "host kernel: " or
// "kernel: " only before a kernel driver's prefix (a syslog line with its stamp cut off). A
// head holding ": " is a message's words.
bool syslog_head(std::string_view& line, KernelRecord& rec, bool stamp_read) {
  if (!stamp_read && sys::starts_with(line, "kernel: ") && kernel_driver_prefix(line.substr(8))) {
    line.remove_prefix(8);
    return true;
  }
  auto k = line.find(" kernel: ");
  if (k == std::string_view::npos || k >= 80) return false;
  auto head = sys::trim_ws(line.substr(0, k));
  if (head.empty() || head.find(": ") != std::string_view::npos) return false;
  auto host = head.rfind(' ');
  auto name = host == std::string_view::npos ? head : head.substr(host + 1);
  for (char c : name)  // a host name's characters
    if (!is_digit(c) && !is_lower(static_cast<char>(c | 0x20)) && c != '-' && c != '.' && c != '_') return false;
  if (host == std::string_view::npos) {
    if (!stamp_read && !kernel_driver_prefix(line.substr(k + 9))) return false;
  } else {
    if (!month_name(head) && !weekday(head) && !is_digit(head.front())) return false;
    if (rec.wall.empty()) rec.wall = printable(sys::trim_ws(head.substr(0, host)), 48);
  }
  line.remove_prefix(k + 9);
  return true;
}

// What strip_prefixes read: a seconds-since-boot bracket stamp, a journal/rsyslog ISO stamp
// (a host and a tag follow it), and whether the syslog tag was "kernel".
struct Prefixes {
  bool stamp = false;
  bool journal_iso = false;
  bool kernel_tag = false;
};

// Every known prefix of a kernel log line, each at most once and in any order the formats
// combine them ("<6>[ 1.0] ", "kern  :info  : [ 1.0] ", "Dec 01 10:00:00 host kernel: [ 1.0] "):
// removed, and the times they carry kept in `rec`. One reader for every event kind.
Prefixes strip_prefixes(std::string_view& line, KernelRecord& rec) {
  bool pri = false, decode = false, stamp = false, caller = false, syslog = false;
  IsoStamp iso = IsoStamp::none;
  for (bool again = true; again;) {
    line = sys::trim_ws(line);
    again = (!pri && (pri = priority_field(line))) || (!decode && (decode = decode_field(line))) ||
            (!stamp && (stamp = bracket_stamp(line, rec))) || (stamp && !caller && (caller = caller_field(line))) ||
            (iso == IsoStamp::none && !stamp && (iso = iso_stamp(line, rec)) != IsoStamp::none) ||
            (!syslog && (syslog = syslog_head(line, rec, stamp || iso != IsoStamp::none)));
  }
  if (decode || iso != IsoStamp::none || syslog) rec.layout = true;  // a bracket stamp marked it when it is dmesg's
  return {stamp && rec.since_boot_s.has_value(), iso == IsoStamp::journal, syslog};
}

// "Dec  1 10:00:00" / journalctl short-precise "Dec 01 10:00:00.123456" at the start of a
// syslog line: its length, 0 when the line does not start so.
std::size_t month_stamp(std::string_view line) {
  if (line.size() < 16 || !month_name(line) || line[3] != ' ') return 0;
  std::size_t pos = 4;
  if (line[pos] == ' ') ++pos;
  const std::size_t day = pos;
  while (pos < line.size() && pos - day < 2 && is_digit(line[pos])) ++pos;
  if (pos == day || pos + 9 > line.size() || line[pos] != ' ') return 0;
  ++pos;
  for (std::size_t i = 0; i < 8; ++i)
    if ((i == 2 || i == 5) ? line[pos + i] != ':' : !is_digit(line[pos + i])) return 0;
  pos += 8;
  if (pos < line.size() && line[pos] == '.') {
    ++pos;
    while (pos < line.size() && is_digit(line[pos])) ++pos;
  }
  return pos;
}

// A syslog/journal line's "host " (a host name's characters, then a blank): its length, 0
// when `rest` does not start so.
std::size_t syslog_host(std::string_view rest) {
  std::size_t pos = 0;
  while (pos < rest.size() && pos < 64 && (is_digit(rest[pos]) || is_lower(static_cast<char>(rest[pos] | 0x20)) || rest[pos] == '-' ||
                                           rest[pos] == '.' || rest[pos] == '_'))
    ++pos;
  return pos > 0 && pos < rest.size() && rest[pos] == ' ' ? pos + 1 : 0;
}

// A syslog tag at the start of `s`: "TAG[pid]: " or "TAG: " ("nv-fabricmanager[1929]: ",
// "systemd-logind[812]: ", "(sd-pam)[3]: ", "sudo: "): the tag and whether a pid followed it;
// nullopt when `s` does not start with one.
struct SyslogTag {
  std::string_view tag;
  bool pid = false;
};
std::optional<SyslogTag> syslog_tag(std::string_view s) {
  std::size_t pos = 0;
  while (pos < s.size() && pos < 48 && s[pos] != '[' && s[pos] != ':' && s[pos] != ' ' && static_cast<unsigned char>(s[pos]) > 0x20) ++pos;
  if (pos == 0 || pos >= s.size()) return std::nullopt;
  SyslogTag t{s.substr(0, pos), false};
  if (s[pos] == '[') {
    const std::size_t digits = ++pos;
    while (pos < s.size() && is_digit(s[pos])) ++pos;
    if (pos == digits || pos >= s.size() || s[pos] != ']') return std::nullopt;
    ++pos;
    t.pid = true;
  }
  if (pos >= s.size() || s[pos] != ':' || (pos + 1 < s.size() && s[pos + 1] != ' ')) return std::nullopt;
  return t;
}

// A syslog/journal line of a user-space process, after strip_prefixes found no "kernel" tag:
// a syslog stamp (or the journal ISO / short-monotonic one strip_prefixes read), a host and a
// tag that is not the kernel's. The tag, or nullopt (a kernel line, or no tag to tell by).
// After a syslog or journal ISO stamp and the host, a kernel driver's own prefix ("host NVRM:
// Xid ...", "host mlx5_core 0000:5c:00.0: ...": a forwarder that dropped "kernel:") is the
// kernel's: the stamp and host are removed and the line kept.
std::optional<std::string_view> process_line(std::string_view& line, KernelRecord& rec, const Prefixes& p) {
  if (p.kernel_tag) return std::nullopt;
  std::size_t stamp = 0;
  if (!p.stamp && !p.journal_iso) {
    stamp = month_stamp(line);
    if (stamp == 0 || stamp >= line.size() || line[stamp] != ' ') return std::nullopt;
    ++stamp;
  }
  const std::size_t host = syslog_host(line.substr(stamp));
  if (host == 0) return std::nullopt;
  const auto rest = line.substr(stamp + host);
  // After dmesg's "[ 12.3] " only "host TAG[pid]: " is journalctl's: "usb 1-1: ", "pci
  // 0000:00:01.0: ", "Call Trace:" are the kernel's words.
  const bool monotonic = p.stamp && !p.journal_iso;
  if (!monotonic && kernel_driver_prefix(rest)) {
    if (stamp > 0 && rec.wall.empty()) rec.wall = printable(sys::trim_ws(line.substr(0, stamp)), 48);
    rec.layout = true;
    line = rest;
    return std::nullopt;
  }
  auto t = syslog_tag(rest);
  if (!t || (monotonic && !t->pid)) return std::nullopt;
  return t->tag;
}

}  // namespace

namespace {

// "0000:5c:00.0": a PCI address with its domain, as dev_printk prints it.
bool pci_address(std::string_view s) {
  if (s.size() < 12 || s[4] != ':' || s[7] != ':' || s[10] != '.' || s[11] < '0' || s[11] > '7') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9})
    if (!is_digit(s[i]) && !(s[i] >= 'a' && s[i] <= 'f') && !(s[i] >= 'A' && s[i] <= 'F')) return false;
  return true;
}

// The record a line continues: an indented line after a stamped record (dmesg and journalctl
// print the lines of a multi-line printk so, indented under the first) has its time, or is
// left out with a user-space line.
struct Continued {
  bool stamped = false, dropped = false, layout = false;
  std::optional<double> since_boot_s;
  std::string wall;
};

}  // namespace

bool kernel_driver_prefix(std::string_view m) {
  // dev_printk "mlx5_core 0000:5c:00.0: ", netdev_printk "mlx5_core 0000:5c:00.0 ibp92s0: ".
  if (auto sp = m.find(' '); sp != std::string_view::npos && sp > 0 && sp <= 32 && pci_address(m.substr(sp + 1))) {
    bool name = true;
    for (char c : m.substr(0, sp)) name = name && (is_digit(c) || is_lower(static_cast<char>(c | 0x20)) || c == '_' || c == '-');
    const auto after = m.substr(sp + 13);
    if (name && sys::starts_with(after, ":")) return true;
    if (name && sys::starts_with(after, " ")) {
      auto colon = after.find(':');
      if (colon != std::string_view::npos && colon <= 24 && after.substr(1, colon - 1).find(' ') == std::string_view::npos) return true;
    }
  }
  // The drivers' and kernel reports' own prefixes (pr_fmt), as the log checks read them.
  for (std::string_view p : {"NVRM: ", "nvidia: ", "nvidia-modeset: ", "nvidia-uvm: ", "nvidia-nvlink: ", "nvidia-peermem: ",
                             "nvidia-drm: ", "nvidia-fs: ", "mce: ", "EDAC ", "watchdog: ", "{1}[Hardware Error]: "})
    if (sys::starts_with(m, p)) return true;
  auto word_then_colon = [&](std::string_view head, auto&& ok) {
    if (!sys::starts_with(m, head)) return false;
    std::size_t pos = head.size();
    while (pos < m.size() && ok(m[pos])) ++pos;
    return pos > head.size() && pos < m.size() && m[pos] == ':';
  };
  // "nvidia-nvswitch3: ", "CPU12: Core temperature above threshold", mlx5's function names
  // ("mlx5_port_module_event:1131:(pid 0): ", "mlx5_core: ").
  if (word_then_colon("nvidia-nvswitch", is_digit) || word_then_colon("CPU", is_digit)) return true;
  if (m.size() > 5 && is_lower(m[5]) && word_then_colon("mlx5_", [](char c) { return is_lower(c) || is_digit(c) || c == '_'; }))
    return true;  // not a device name ("mlx5_0:1")
  // hung_task.c: "INFO: task python3:1234 blocked for more than 122 seconds." (newer kernels: no "INFO: ").
  return (sys::starts_with(m, "INFO: task ") || sys::starts_with(m, "task ")) && m.find(" blocked for more than ") != std::string_view::npos;
}

std::vector<KernelRecord> parse_kernel_records(std::string_view text, KernelLogDropped* dropped) {
  std::vector<KernelRecord> out;
  // One record a line at most: sized once (a 1 MiB tail is ~9,000 records).
  out.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  bool prev_kmsg = false;
  Continued prev;
  for (auto line : sys::split_lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (prev_kmsg && !line.empty() && line.front() == ' ') continue;  // " SUBSYSTEM=..." dictionary lines
    prev_kmsg = false;
    if (binary_line(line)) continue;
    const bool indented = !line.empty() && (line.front() == ' ' || line.front() == '\t');
    KernelRecord rec;
    if (auto p = kmsg_prefix(line)) {
      rec.layout = true;
      if (auto usec = sys::to_int<unsigned long long>(p->second)) rec.since_boot_s = static_cast<double>(*usec) / 1e6;
      line.remove_prefix(p->first);
      prev_kmsg = true;
    } else {
      // A /dev/kmsg record's message is the driver's text as printed: only other lines have prefixes.
      const auto prefixes = strip_prefixes(line, rec);
      if (auto tag = process_line(line, rec, prefixes)) {
        if (dropped && dropped->user_space++ == 0) dropped->first_tag = printable(*tag, 48);
        prev = Continued{};
        prev.dropped = true;
        continue;
      }
    }
    const bool own_time = rec.since_boot_s || !rec.wall.empty() || rec.layout;
    if (indented && !own_time && (prev.stamped || prev.dropped)) {
      if (prev.dropped) continue;
      rec.since_boot_s = prev.since_boot_s;
      rec.wall = prev.wall;
      rec.layout = prev.layout;
    } else {
      prev = Continued{own_time, false, rec.layout, rec.since_boot_s, rec.wall};
    }
    rec.message = printable(sys::trim_ws(line), 512);
    auto trimmed = sys::trim_ws(rec.message);
    if (trimmed.empty()) continue;
    if (trimmed.size() != rec.message.size()) rec.message = std::string(trimmed);
    rec.driver = !rec.layout && kernel_driver_prefix(rec.message);
    out.push_back(std::move(rec));
  }
  return out;
}

std::vector<std::string> parse_kernel_log(std::string_view text) {
  auto records = parse_kernel_records(text);
  std::vector<std::string> out;
  out.reserve(records.size());
  for (auto& r : records) out.push_back(std::move(r.message));
  return out;
}

}  // namespace perfgap::parsers
