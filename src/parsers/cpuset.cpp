#include "parsers/cpuset.hpp"

#include <bit>
#include <charconv>

#include "sys/text.hpp"
#include <string>

namespace perfgap::parsers {
namespace {
constexpr int kMaxCpu = 1 << 20;  // far above any kernel's NR_CPUS; bounds memory on garbage
}

void CpuSet::insert(int cpu) {
  if (cpu < 0) return;
  std::size_t word = static_cast<std::size_t>(cpu) / 64;
  if (bits_.size() <= word) bits_.resize(word + 1, 0);
  bits_[word] |= std::uint64_t{1} << (cpu % 64);
}

bool CpuSet::contains(int cpu) const {
  if (cpu < 0) return false;
  std::size_t word = static_cast<std::size_t>(cpu) / 64;
  return word < bits_.size() && (bits_[word] >> (cpu % 64)) & 1u;
}

bool CpuSet::empty() const {
  for (auto w : bits_)
    if (w) return false;
  return true;
}

std::size_t CpuSet::count() const {
  std::size_t n = 0;
  for (auto w : bits_) n += static_cast<std::size_t>(std::popcount(w));
  return n;
}

std::vector<int> CpuSet::members() const {
  std::vector<int> out;
  for (std::size_t w = 0; w < bits_.size(); ++w)
    for (int b = 0; b < 64; ++b)
      if ((bits_[w] >> b) & 1u) out.push_back(static_cast<int>(w * 64) + b);
  return out;
}

CpuSet CpuSet::intersect(const CpuSet& o) const {
  CpuSet r;
  r.bits_.resize(std::min(bits_.size(), o.bits_.size()));
  for (std::size_t i = 0; i < r.bits_.size(); ++i) r.bits_[i] = bits_[i] & o.bits_[i];
  return r;
}

CpuSet CpuSet::unite(const CpuSet& o) const {
  CpuSet r;
  r.bits_.resize(std::max(bits_.size(), o.bits_.size()), 0);
  for (std::size_t i = 0; i < r.bits_.size(); ++i)
    r.bits_[i] = (i < bits_.size() ? bits_[i] : 0) | (i < o.bits_.size() ? o.bits_[i] : 0);
  return r;
}

CpuSet CpuSet::minus(const CpuSet& o) const {
  CpuSet r = *this;
  for (std::size_t i = 0; i < r.bits_.size() && i < o.bits_.size(); ++i) r.bits_[i] &= ~o.bits_[i];
  return r;
}

bool CpuSet::operator==(const CpuSet& o) const {
  std::size_t n = std::max(bits_.size(), o.bits_.size());
  for (std::size_t i = 0; i < n; ++i) {
    auto a = i < bits_.size() ? bits_[i] : 0;
    auto b = i < o.bits_.size() ? o.bits_[i] : 0;
    if (a != b) return false;
  }
  return true;
}

std::string CpuSet::to_list() const {
  std::string out;
  auto m = members();
  for (std::size_t i = 0; i < m.size();) {
    std::size_t j = i;
    while (j + 1 < m.size() && m[j + 1] == m[j] + 1) ++j;
    if (!out.empty()) out.push_back(',');
    out += std::to_string(m[i]);
    if (j > i) out += "-" + std::to_string(m[j]);
    i = j + 1;
  }
  return out;
}

Parsed<CpuSet> parse_cpulist(std::string_view text) {
  CpuSet set;
  std::string_view s = sys::trim_ws(text);
  if (s.empty()) return set;
  std::size_t pos = 0;
  auto number = [&](int& out) -> bool {
    if (pos >= s.size() || s[pos] < '0' || s[pos] > '9') return false;  // from_chars takes '-'
    const char* b = s.data() + pos;
    const char* e = s.data() + s.size();
    auto [p, ec] = std::from_chars(b, e, out);
    if (ec != std::errc() || p == b || out < 0 || out >= kMaxCpu) return false;
    pos += static_cast<std::size_t>(p - b);
    return true;
  };
  while (pos < s.size()) {
    int first = 0, last = 0;
    if (!number(first)) return parse_fail("bad cpu list '" + std::string(s) + "' at column " + std::to_string(pos + 1));
    last = first;
    int stride = 1;
    if (pos < s.size() && s[pos] == '-') {
      ++pos;
      if (!number(last) || last < first)
        return parse_fail("bad cpu list '" + std::string(s) + "' at column " + std::to_string(pos + 1));
      // Kernel range syntax also allows "0-7:2/4" (used/group); accept the used:group form.
      if (pos < s.size() && s[pos] == ':') {
        ++pos;
        int used = 0, group = 0;
        if (!number(used) || pos >= s.size() || s[pos] != '/') return parse_fail("bad cpu list stride in '" + std::string(s) + "'");
        ++pos;
        if (!number(group) || group == 0 || used > group) return parse_fail("bad cpu list stride in '" + std::string(s) + "'");
        for (int c = first; c <= last; c += group)
          for (int k = 0; k < used && c + k <= last; ++k) set.insert(c + k);
        stride = 0;
      }
    }
    if (stride == 1)
      for (int c = first; c <= last; ++c) set.insert(c);
    if (pos < s.size()) {
      if (s[pos] != ',') return parse_fail("bad cpu list '" + std::string(s) + "' at column " + std::to_string(pos + 1));
      ++pos;
      if (pos == s.size()) return parse_fail("bad cpu list '" + std::string(s) + "': trailing comma");
    }
  }
  return set;
}

Parsed<CpuSet> parse_cpu_words(std::string_view text) {
  CpuSet set;
  std::size_t pos = 0;
  while (pos < text.size()) {
    if (text[pos] == ' ' || text[pos] == '\t' || text[pos] == '\n') {
      ++pos;
      continue;
    }
    int cpu = -1;
    auto [p, ec] = std::from_chars(text.data() + pos, text.data() + text.size(), cpu);
    if (ec != std::errc() || cpu < 0 || cpu >= kMaxCpu || (p != text.data() + text.size() && *p != ' ' && *p != '\t' && *p != '\n'))
      return parse_fail("bad cpu word list '" + std::string(sys::trim_ws(text)) + "' at column " + std::to_string(pos + 1));
    set.insert(cpu);
    pos = static_cast<std::size_t>(p - text.data());
  }
  return set;
}

Parsed<CpuSet> parse_cpumask(std::string_view text) {
  std::string_view s = sys::trim_ws(text);
  if (s.empty()) return parse_fail("empty cpu mask");
  CpuSet set;
  // Comma-separated 32-bit words, most significant first; each word is read as a whole
  // (as the kernel's bitmap_parse does), so "1,1" is CPUs 0 and 32.
  auto words = sys::split(s, ',');
  if (words.size() * 32 > static_cast<std::size_t>(kMaxCpu)) return parse_fail("cpu mask too long");
  for (std::size_t w = 0; w < words.size(); ++w) {
    auto word = words[w];
    if (word.empty() || word.size() > 8) return parse_fail("bad cpu mask word '" + std::string(word) + "'");
    int base = static_cast<int>((words.size() - 1 - w) * 32);
    int bit = 0;
    for (std::size_t i = word.size(); i-- > 0;) {
      char c = word[i];
      int v;
      if (c >= '0' && c <= '9') v = c - '0';
      else if (c >= 'a' && c <= 'f') v = c - 'a' + 10;
      else if (c >= 'A' && c <= 'F') v = c - 'A' + 10;
      else return parse_fail("bad cpu mask '" + std::string(s) + "'");
      for (int b = 0; b < 4; ++b)
        if ((v >> b) & 1) set.insert(base + bit + b);
      bit += 4;
    }
  }
  return set;
}

}  // namespace perfgap::parsers
