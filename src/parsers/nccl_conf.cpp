#include "parsers/nccl_conf.hpp"

#include <algorithm>
#include <cctype>
#include <climits>

#include "sys/text.hpp"

namespace perfgap::parsers {

std::vector<NcclConfEntry> parse_nccl_conf(std::string_view text) {
  std::vector<NcclConfEntry> out;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    // getline() keeps the '\n'; NCCL then drops that one character only ('\r' stays).
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line[0] == '#') continue;
    // C string semantics: the line ends at an embedded NUL.
    if (auto z = line.find('\0'); z != std::string_view::npos) line = line.substr(0, z);
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(line.substr(0, std::min<std::size_t>(eq, 1023)));
    std::string value(line.substr(eq + 1, 1023));
    if (name.empty()) continue;  // setenv("") fails: NCCL sets nothing
    if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.name == name; })) continue;
    out.push_back({std::move(name), std::move(value), line_no});
  }
  return out;
}

std::int64_t nccl_int(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size() && std::isspace(static_cast<unsigned char>(v[i]))) ++i;
  bool neg = false;
  if (i < v.size() && (v[i] == '+' || v[i] == '-')) neg = v[i++] == '-';
  int base = 10;
  if (i + 1 < v.size() && v[i] == '0' && (v[i + 1] == 'x' || v[i + 1] == 'X') && i + 2 < v.size() &&
      std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
    base = 16;
    i += 2;
  } else if (i < v.size() && v[i] == '0') {
    base = 8;
  }
  std::int64_t out = 0;
  for (; i < v.size(); ++i) {
    int d;
    char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(v[i])));
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = 10 + ch - 'a';
    else break;
    if (d >= base) break;
    if (out > (INT64_MAX - d) / base) return neg ? INT64_MIN : INT64_MAX;  // strtoll saturates
    out = out * base + d;
  }
  return neg ? -out : out;
}

// ---- device lists ------------------------------------------------------------------------

namespace {

int c_atoi(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  long long v = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > INT_MAX) v = INT_MAX;
  }
  return static_cast<int>(neg ? -v : v);
}

}  // namespace

NcclIfList parse_nccl_if_list(std::string_view value, std::size_t max_entries) {
  NcclIfList out;
  if (auto z = value.find('\0'); z != std::string_view::npos) value = value.substr(0, z);
  std::size_t i = 0;
  if (i < value.size() && value[i] == '^') {
    out.exclude = true;
    ++i;
  }
  if (i < value.size() && value[i] == '=') {
    out.exact = true;
    ++i;
  }
  std::string cur;
  while (out.entries.size() < max_entries) {
    char c = i < value.size() ? value[i] : '\0';
    if (c == ':') {
      if (!cur.empty()) {
        out.entries.push_back({cur, c_atoi(value.substr(i + 1))});
        cur.clear();
      }
      while (c != ',' && c != '\0') {
        ++i;
        c = i < value.size() ? value[i] : '\0';
      }
    } else if (c == ',' || c == '\0') {
      if (!cur.empty()) out.entries.push_back({cur, -1});
      cur.clear();
    } else {
      cur.push_back(c);
    }
    if (c == '\0') break;
    ++i;
  }
  return out;
}

bool nccl_if_match(const NcclIfList& list, std::string_view name, int port) {
  if (list.entries.empty()) return true;  // NCCL: no list means every device
  for (const auto& e : list.entries) {
    bool name_ok = list.exact ? name == e.prefix : sys::starts_with(name, e.prefix);
    bool port_ok = port == -1 || e.port == -1 || e.port == port;
    if (name_ok && port_ok) return true;
  }
  return false;
}

}  // namespace perfgap::parsers
