#include "parsers/kernel_log.hpp"

#include <algorithm>
#include <optional>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

bool is_digit(char c) { return c >= '0' && c <= '9'; }
bool is_lower(char c) { return c >= 'a' && c <= 'z'; }

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
    bool weekday = false;
    for (std::string_view d : {"Mon ", "Tue ", "Wed ", "Thu ", "Fri ", "Sat ", "Sun "}) weekday |= sys::starts_with(inside, d);
    if (weekday && colon != std::string_view::npos && colon >= 2 && colon + 5 < inside.size() && is_digit(inside[colon - 1]) &&
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

// dmesg --time-format iso "2025-01-21T04:41:44,283302+00:00 " and journalctl -o short-iso
// "2025-01-21T04:41:44+0000 ": a wall stamp.
bool iso_stamp(std::string_view& line, KernelRecord& rec) {
  if (line.size() < 20 || line[4] != '-' || line[7] != '-' || line[10] != 'T' || line[13] != ':' || line[16] != ':') return false;
  for (std::size_t i : {0, 1, 2, 3, 5, 6, 8, 9, 11, 12, 14, 15, 17, 18})
    if (!is_digit(line[i])) return false;
  auto end = line.find(' ');
  if (end == std::string_view::npos || end > 40) return false;
  rec.wall = printable(line.substr(0, end), 48);
  line.remove_prefix(end);
  return true;
}

bool month_name(std::string_view s) {
  for (std::string_view m : {"Jan", "Feb", "Mar", "Apr", "May", "Jun", "Jul", "Aug", "Sep", "Oct", "Nov", "Dec"})
    if (sys::starts_with(s, m)) return true;
  return false;
}

// syslog / journalctl "Dec 01 10:00:00 host kernel: " (the stamp before the host kept as the
// wall time) and, once a stamp was read (journalctl -o short-monotonic's "[ 12.3] host
// kernel: ", short-iso), the bare "host kernel: ". A head holding ": " is a message's words.
bool syslog_head(std::string_view& line, KernelRecord& rec, bool stamp_read) {
  auto k = line.find(" kernel: ");
  if (k == std::string_view::npos || k >= 80) return false;
  auto head = sys::trim_ws(line.substr(0, k));
  if (head.empty() || head.find(": ") != std::string_view::npos) return false;
  auto host = head.rfind(' ');
  auto name = host == std::string_view::npos ? head : head.substr(host + 1);
  for (char c : name)  // a host name's characters
    if (!is_digit(c) && !is_lower(static_cast<char>(c | 0x20)) && c != '-' && c != '.' && c != '_') return false;
  if (host == std::string_view::npos) {
    if (!stamp_read) return false;
  } else {
    if (!month_name(head) && !is_digit(head.front())) return false;
    if (rec.wall.empty()) rec.wall = printable(sys::trim_ws(head.substr(0, host)), 48);
  }
  line.remove_prefix(k + 9);
  return true;
}

// Every known prefix of a kernel log line, each at most once and in any order the formats
// combine them ("<6>[ 1.0] ", "kern  :info  : [ 1.0] ", "Dec 01 10:00:00 host kernel: [ 1.0] "):
// removed, and the times they carry kept in `rec`. One reader for every event kind.
void strip_prefixes(std::string_view& line, KernelRecord& rec) {
  bool pri = false, decode = false, stamp = false, caller = false, iso = false, syslog = false;
  for (bool again = true; again;) {
    line = sys::trim_ws(line);
    again = (!pri && (pri = priority_field(line))) || (!decode && (decode = decode_field(line))) ||
            (!stamp && (stamp = bracket_stamp(line, rec))) || (stamp && !caller && (caller = caller_field(line))) ||
            (!iso && !stamp && (iso = iso_stamp(line, rec))) ||
            (!syslog && (syslog = syslog_head(line, rec, stamp || iso)));
  }
  if (decode || iso || syslog) rec.layout = true;  // a bracket stamp marked it when it is dmesg's
}

}  // namespace

std::vector<KernelRecord> parse_kernel_records(std::string_view text) {
  std::vector<KernelRecord> out;
  // One record a line at most: sized once (a 1 MiB tail is ~9,000 records).
  out.reserve(static_cast<std::size_t>(std::count(text.begin(), text.end(), '\n')) + 1);
  bool prev_kmsg = false;
  for (auto line : sys::split_lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (prev_kmsg && !line.empty() && line.front() == ' ') continue;  // " SUBSYSTEM=..." dictionary lines
    prev_kmsg = false;
    if (binary_line(line)) continue;
    KernelRecord rec;
    if (auto p = kmsg_prefix(line)) {
      rec.layout = true;
      if (auto usec = sys::to_int<unsigned long long>(p->second)) rec.since_boot_s = static_cast<double>(*usec) / 1e6;
      line.remove_prefix(p->first);
      prev_kmsg = true;
    } else {
      strip_prefixes(line, rec);  // a /dev/kmsg record's message is the driver's text as printed
    }
    rec.message = printable(sys::trim_ws(line), 512);
    auto trimmed = sys::trim_ws(rec.message);
    if (trimmed.empty()) continue;
    if (trimmed.size() != rec.message.size()) rec.message = std::string(trimmed);
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
