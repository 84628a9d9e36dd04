#include "sys/text.hpp"

#include <cstring>
#if defined(__SSE2__)
#include <emmintrin.h>
#endif

#include <algorithm>
#include <cctype>
#include <cstdint>
#include <cstdlib>

namespace perfgap::sys {

std::size_t find(std::string_view s, std::string_view needle, std::size_t from) {
  if (from > s.size()) return std::string_view::npos;
  if (needle.empty()) return from;
  if (needle.size() > s.size() - from) return std::string_view::npos;
  // memchr for the needle's first non-blank byte (an anchor that is rarely a hit), then a
  // compare: glibc's memmem sets up tables on every call, which costs more than a log
  // line's search.
  std::size_t k = 0;
  while (k + 1 < needle.size() && needle[k] == ' ') ++k;
  const char* base = s.data();
  const char* p = base + from + k;
  const char* last = base + s.size() - (needle.size() - k);  // the anchor's last possible place
  while (p <= last) {
    const void* hit = std::memchr(p, needle[k], static_cast<std::size_t>(last - p) + 1);
    if (!hit) break;
    const char* at = static_cast<const char*>(hit) - k;
    std::size_t i = 0;  // needles are short: a loop beats a memcmp call
    while (i < needle.size() && at[i] == needle[i]) ++i;
    if (i == needle.size()) return static_cast<std::size_t>(at - base);
    p = static_cast<const char*>(hit) + 1;
  }
  return std::string_view::npos;
}

std::vector<std::string_view> split_lines(std::string_view text) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    if (nl == std::string_view::npos) {
      out.push_back(text.substr(pos));
      break;
    }
    out.push_back(text.substr(pos, nl - pos));
    pos = nl + 1;
  }
  return out;
}

std::vector<std::string_view> split_ws(std::string_view line) {
  std::vector<std::string_view> out;
  split_ws_into(line, out);
  return out;
}

namespace {

// Bit i set when byte i of the 8 at `p` is a blank or a tab (SWAR: no branch per byte).
[[maybe_unused]] inline std::uint64_t blank_bits8(const char* p) {
  std::uint64_t w;
  std::memcpy(&w, p, 8);
  constexpr std::uint64_t lo7 = 0x7F7F7F7F7F7F7F7FULL;
  auto zero_bytes = [](std::uint64_t x) {  // high bit of each byte that is 0, exactly
    std::uint64_t t = (x & lo7) + lo7;
    return ~(t | x | lo7);
  };
  std::uint64_t m = zero_bytes(w ^ 0x2020202020202020ULL) | zero_bytes(w ^ 0x0909090909090909ULL);
  return ((m >> 7) * 0x0102040810204080ULL) >> 56;  // gather the 8 high bits into one byte
}

#if defined(__SSE2__)
// Bit i set when byte i of the 16 at `p` is a blank or a tab.
inline std::uint64_t blank_bits16(const char* p) {
  const __m128i v = _mm_loadu_si128(reinterpret_cast<const __m128i*>(p));
  const __m128i m = _mm_or_si128(_mm_cmpeq_epi8(v, _mm_set1_epi8(' ')), _mm_cmpeq_epi8(v, _mm_set1_epi8('\t')));
  return static_cast<unsigned>(_mm_movemask_epi8(m));
}
#endif

// Bit i set when byte i of the `len` (<= 64) at `p` is a blank or a tab; bits past len set.
inline std::uint64_t blank_bits64(const char* p, std::size_t len) {
#if defined(__SSE2__)
  // x86-64 always has SSE2: 16 bytes per compare, the mask in one movemask. A short tail is
  // read as the 16 bytes that end the line, shifted: copying it into a padded buffer first
  // made the loads wait on the copy's stores (a store-forwarding stall on every line).
  if (len >= 16) {
    std::uint64_t bits = 0;
    std::size_t k = 0;
    for (; k + 16 <= len; k += 16) bits |= blank_bits16(p + k) << k;
    if (k < len) bits |= (blank_bits16(p + len - 16) >> (16 - (len - k))) << k;
    return len < 64 ? bits | (~0ULL << len) : bits;
  }
#endif
  char pad[64];
  std::memset(pad, ' ', sizeof pad);
  std::memcpy(pad, p, len);
  std::uint64_t bits = 0;
  for (int k = 0; k < 8; ++k) bits |= blank_bits8(pad + 8 * k) << (8 * k);
  return bits;
}

}  // namespace

// Fields are found 64 bytes at a time from a mask of blanks: a field starts at a non-blank
// after a blank and ends at a blank after a non-blank. A byte loop mispredicts twice per
// field, and split_ws_into is the inner loop of every table parser. Within a chunk the starts
// and ends alternate, so after the end of a field carried in from the chunk before, the k-th
// end closes the k-th start: pairs are taken without comparing which comes first.
void split_ws_into(std::string_view line, std::vector<std::string_view>& out) {
  out.clear();
  const char* p = line.data();
  const std::size_t n = line.size();
  std::size_t start = 0;
  bool inside = false;  // the previous byte is part of a field
  for (std::size_t base = 0; base < n; base += 64) {
    std::size_t len = std::min<std::size_t>(64, n - base);
    std::uint64_t blank = blank_bits64(p + base, len);
    std::uint64_t word = ~blank;
    std::uint64_t prev_word = (word << 1) | (inside ? 1 : 0);  // bit i: byte i-1 is in a field
    std::uint64_t starts = word & ~prev_word, ends = blank & prev_word;
    if (inside && ends) {
      out.emplace_back(p + start, base + static_cast<std::size_t>(__builtin_ctzll(ends)) - start);
      ends &= ends - 1;
    }
    for (; ends; ends &= ends - 1, starts &= starts - 1) {
      const auto s = static_cast<std::size_t>(__builtin_ctzll(starts)), e = static_cast<std::size_t>(__builtin_ctzll(ends));
      out.emplace_back(p + base + s, e - s);
    }
    if (starts) start = base + static_cast<std::size_t>(__builtin_ctzll(starts));
    inside = (word >> 63) & 1;
  }
  if (inside) out.push_back(line.substr(start));
}

std::vector<std::string_view> split(std::string_view text, char sep) {
  std::vector<std::string_view> out;
  std::size_t pos = 0;
  for (;;) {
    auto p = text.find(sep, pos);
    if (p == std::string_view::npos) {
      out.push_back(text.substr(pos));
      return out;
    }
    out.push_back(text.substr(pos, p - pos));
    pos = p + 1;
  }
}

std::optional<double> to_double(std::string_view s) {
  s = trim_ws(s);
  if (s.empty() || s.size() > 64) return std::nullopt;
  std::string tmp(s);
  char* end = nullptr;
  double v = std::strtod(tmp.c_str(), &end);
  if (end != tmp.c_str() + tmp.size()) return std::nullopt;
  return v;
}

std::string lower(std::string_view s) {
  std::string out(s);
  for (auto& c : out) c = static_cast<char>(std::tolower(static_cast<unsigned char>(c)));
  return out;
}

std::string rfc3339_utc(std::time_t t) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[32];
  std::strftime(buf, sizeof buf, "%Y-%m-%dT%H:%M:%SZ", &tm);
  return buf;
}

}  // namespace perfgap::sys
