#include "parsers/kernel_log.hpp"

#include <algorithm>
#include <optional>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

// "6,1234,5678901,-;" or "6,1234,5678901,-,caller=T1;" : /dev/kmsg's record prefix.
std::optional<std::size_t> kmsg_prefix(std::string_view line) {
  auto semi = line.find(';');
  if (semi == std::string_view::npos || semi == 0 || semi > 64) return std::nullopt;
  auto fields = sys::split(line.substr(0, semi), ',');
  if (fields.size() < 4) return std::nullopt;
  for (std::size_t i = 0; i < 3; ++i)
    if (fields[i].empty() || fields[i].find_first_not_of("0123456789") != std::string_view::npos) return std::nullopt;
  return semi + 1;
}

std::string printable(std::string_view s, std::size_t max) {
  std::string out;
  out.reserve(std::min(s.size(), max));
  for (char ch : s) {
    if (out.size() >= max) break;
    auto c = static_cast<unsigned char>(ch);
    out.push_back(c == '\t' ? ' ' : (c < 0x20 || c >= 0x7f) ? '?' : ch);
  }
  return out;
}

}  // namespace

std::vector<std::string> parse_kernel_log(std::string_view text) {
  std::vector<std::string> out;
  bool prev_kmsg = false;
  for (auto line : sys::split_lines(text)) {
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    if (prev_kmsg && !line.empty() && line.front() == ' ') continue;  // " SUBSYSTEM=..." dictionary lines
    prev_kmsg = false;
    if (auto p = kmsg_prefix(line)) {
      line.remove_prefix(*p);
      prev_kmsg = true;
    } else if (!line.empty() && line.front() == '[') {
      auto close = line.find(']');
      if (close != std::string_view::npos && close < 48) line.remove_prefix(close + 1);
    } else if (auto k = line.find(" kernel: "); k != std::string_view::npos && k < 80) {
      line.remove_prefix(k + 9);  // journalctl -k / syslog
    }
    auto msg = printable(sys::trim_ws(line), 512);
    auto trimmed = sys::trim_ws(msg);
    if (!trimmed.empty()) out.emplace_back(trimmed);
  }
  return out;
}

}  // namespace perfgap::parsers
