#include "parsers/kernel_log.hpp"

#include <algorithm>
#include <optional>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

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
void bracket_stamp(std::string_view& line, KernelRecord& rec) {
  if (line.empty() || line.front() != '[') return;
  auto close = line.find(']');
  if (close == std::string_view::npos || close >= 48) return;
  auto inside = sys::trim_ws(line.substr(1, close - 1));
  if (auto s = sys::to_double(inside); s && *s >= 0) rec.since_boot_s = *s;
  else if (!inside.empty() && inside.find_first_of("0123456789") != std::string_view::npos) rec.wall = printable(inside, 48);
  line.remove_prefix(close + 1);
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
    KernelRecord rec;
    if (auto p = kmsg_prefix(line)) {
      if (auto usec = sys::to_int<unsigned long long>(p->second)) rec.since_boot_s = static_cast<double>(*usec) / 1e6;
      line.remove_prefix(p->first);
      prev_kmsg = true;
    } else if (!line.empty() && line.front() == '[') {
      bracket_stamp(line, rec);
    } else if (auto k = line.find(" kernel: "); k != std::string_view::npos && k < 80) {
      // journalctl -k / syslog: "<stamp> <host> kernel: [  12.3] message"; the stamp is what
      // precedes the host name.
      auto head = sys::trim_ws(line.substr(0, k));
      auto host = head.rfind(' ');
      if (host != std::string_view::npos) rec.wall = printable(sys::trim_ws(head.substr(0, host)), 48);
      line.remove_prefix(k + 9);
      line = sys::trim_ws(line);
      bracket_stamp(line, rec);
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
