// Small text helpers shared by the parsers.
#pragma once

#include <charconv>
#include <cstdint>
#include <ctime>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::sys {

inline std::string_view trim_ws(std::string_view s) {
  const char* ws = " \t\r\n";
  auto b = s.find_first_not_of(ws);
  if (b == std::string_view::npos) return {};
  auto e = s.find_last_not_of(ws);
  return s.substr(b, e - b + 1);
}

// Lines without their '\n'; a final line without '\n' is still a line.
std::vector<std::string_view> split_lines(std::string_view text);
// Fields separated by runs of spaces/tabs.
std::vector<std::string_view> split_ws(std::string_view line);
// split_ws into a vector the caller keeps across lines (no allocation per line on hot loops).
void split_ws_into(std::string_view line, std::vector<std::string_view>& out);
std::vector<std::string_view> split(std::string_view text, char sep);

template <class Int>
std::optional<Int> to_int(std::string_view s, int base = 10) {
  s = trim_ws(s);
  Int v{};
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, base);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return v;
}
std::optional<double> to_double(std::string_view s);

// A transparent hash (sets and maps of owned strings searched by view) that is cheap on the
// short keys parsers count: host names, symbols, settings (FNV-1a; std::hash runs murmur
// over the bytes, which costs more than the lookup on a 6-byte host name).
struct ViewHash {
  using is_transparent = void;
  std::size_t operator()(std::string_view v) const {
    std::uint64_t h = 14695981039346656037ULL;
    for (char c : v) h = (h ^ static_cast<unsigned char>(c)) * 1099511628211ULL;
    return static_cast<std::size_t>(h ^ (h >> 29));
  }
};

// Inline, with a byte loop: parsers call it several times a line with short prefixes, where
// a memcmp call costs more than the compare.
inline bool starts_with(std::string_view s, std::string_view prefix) {
  if (prefix.size() > s.size()) return false;
  for (std::size_t i = 0; i < prefix.size(); ++i)
    if (s[i] != prefix[i]) return false;
  return true;
}
// s.find(needle, from), anchored on the needle's first non-blank byte: string_view::find
// stops at every occurrence of the first byte (every blank, for " via "). Hot parser loops
// use it.
std::size_t find(std::string_view s, std::string_view needle, std::size_t from = 0);
std::string lower(std::string_view s);
// 2026-11-30T12:00:00Z: the report's generated_at and every log line.
std::string rfc3339_utc(std::time_t t);

}  // namespace perfgap::sys
