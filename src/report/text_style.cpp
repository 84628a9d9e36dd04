#include "report/text_style.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>

namespace perfgap::report {

const char* status_color(Status s) {
  switch (s) {
    case Status::fail: return "\x1b[1;31m";
    case Status::error: return "\x1b[1;35m";
    case Status::warn: return "\x1b[1;33m";
    case Status::pass: return "\x1b[32m";
    case Status::skip: return "\x1b[2m";
  }
  return "";
}

std::string number_text(double v) {
  if (std::isnan(v)) return "nan";
  if (std::isinf(v)) return v > 0 ? "inf" : "-inf";
  if (v == 0) return "0";  // and -0
  const double a = std::fabs(v);
  if (a >= 1e15 || a < 1e-4) return fmt::format("{:.3g}", v);
  if (v == std::trunc(v)) return fmt::format("{:.0f}", v);
  const int magnitude = static_cast<int>(std::floor(std::log10(a)));  // 0 for 1-9.99, -2 for 0.0123
  const int decimals = magnitude >= 0 ? std::max(1, 3 - magnitude) : 3 - magnitude;
  std::string out = fmt::format("{:.{}f}", v, decimals);
  // 3.100 -> 3.1, 2.99999 -> 3.000 -> 3: the digits that are left carry the meaning.
  while (out.back() == '0') out.pop_back();
  if (out.back() == '.') out.pop_back();
  return out == "-0" ? "0" : out;
}

std::string size_text(double bytes) {
  static constexpr const char* kUnits[] = {"B", "KiB", "MiB", "GiB", "TiB", "PiB"};
  double v = bytes;
  std::size_t u = 0;
  while (std::fabs(v) >= 1024 && u + 1 < std::size(kUnits)) {
    v /= 1024;
    ++u;
  }
  return number_text(v) + " " + kUnits[u];
}

std::optional<SizedMetric> sized_metric(std::string_view key) {
  constexpr std::string_view kUnit = "_gbps.";
  const auto at = key.find(kUnit);
  if (at == std::string_view::npos || at == 0) return std::nullopt;
  std::string_view size = key.substr(at + kUnit.size()), rest;
  if (auto dot = size.find('.'); dot != std::string_view::npos) rest = size.substr(dot), size = size.substr(0, dot);
  if (size.empty() || size.size() > 18 || !std::all_of(size.begin(), size.end(), [](char c) { return c >= '0' && c <= '9'; })) return std::nullopt;
  return SizedMetric{key.substr(0, at), std::stod(std::string(size)), rest};
}

std::string metric_label(std::string_view key) {
  auto m = sized_metric(key);
  if (!m) return std::string(key);
  // ".before" -> " before" (compare's keys)
  return fmt::format("{} {}{}{}", m->name, size_text(m->bytes), m->rest.empty() ? "" : " ", m->rest.empty() ? m->rest : m->rest.substr(1));
}

int action_rank(Status s) {
  switch (s) {
    case Status::fail: return 0;
    case Status::error: return 1;
    case Status::warn: return 2;
    case Status::pass: return 3;
    case Status::skip: return 4;
  }
  return 5;
}

std::string status_word(Status s) {
  std::string word(to_string(s));
  for (auto& c : word) c = static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
  return word;
}

std::string paint(Status s, std::string_view text, bool color) {
  if (!color) return std::string(text);
  return std::string(status_color(s)) + std::string(text) + "\x1b[0m";
}

std::size_t display_width(std::string_view s) {
  std::size_t w = 0;
  for (unsigned char c : s)
    if ((c & 0xC0) != 0x80) ++w;
  return w;
}

long next_code_point(std::string_view s, std::size_t& i) {
  const auto b0 = static_cast<unsigned char>(s[i]);
  if (b0 < 0x80) {
    ++i;
    return b0;
  }
  std::size_t len = 0;
  unsigned char lo = 0x80, hi = 0xBF;  // bounds of the second byte
  long cp = 0;
  if (b0 >= 0xC2 && b0 <= 0xDF) len = 2, cp = b0 & 0x1F;
  else if (b0 == 0xE0) len = 3, cp = b0 & 0x0F, lo = 0xA0;
  else if (b0 == 0xED) len = 3, cp = b0 & 0x0F, hi = 0x9F;  // no UTF-16 surrogates
  else if (b0 >= 0xE1 && b0 <= 0xEF) len = 3, cp = b0 & 0x0F;
  else if (b0 == 0xF0) len = 4, cp = b0 & 0x07, lo = 0x90;
  else if (b0 >= 0xF1 && b0 <= 0xF3) len = 4, cp = b0 & 0x07;
  else if (b0 == 0xF4) len = 4, cp = b0 & 0x07, hi = 0x8F;
  if (len == 0 || i + len > s.size()) {
    ++i;
    return -1;
  }
  for (std::size_t k = 1; k < len; ++k) {
    const auto b = static_cast<unsigned char>(s[i + k]);
    if (b < (k == 1 ? lo : 0x80) || b > (k == 1 ? hi : 0xBF)) {
      ++i;
      return -1;
    }
    cp = (cp << 6) | (b & 0x3F);
  }
  i += len;
  return cp;
}

void append_utf8(std::string& out, long cp) {
  if (cp < 0x80) {
    out += static_cast<char>(cp);
  } else if (cp < 0x800) {
    out += static_cast<char>(0xC0 | (cp >> 6));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else if (cp < 0x10000) {
    out += static_cast<char>(0xE0 | (cp >> 12));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  } else {
    out += static_cast<char>(0xF0 | (cp >> 18));
    out += static_cast<char>(0x80 | ((cp >> 12) & 0x3F));
    out += static_cast<char>(0x80 | ((cp >> 6) & 0x3F));
    out += static_cast<char>(0x80 | (cp & 0x3F));
  }
}

namespace {
// Characters that reorder the text shown around them (Trojan Source, CVE-2021-42574): the
// embedding and override controls, the isolates, and the implicit marks.
bool bidi_control(long cp) {
  return cp == 0x061C || cp == 0x200E || cp == 0x200F || (cp >= 0x202A && cp <= 0x202E) || (cp >= 0x2066 && cp <= 0x2069);
}
}  // namespace

std::string printable(std::string_view s) {
  bool plain = true;
  for (unsigned char c : s)
    if (c < 0x20 || c >= 0x7F) {
      plain = false;
      break;
    }
  if (plain) return std::string(s);
  static constexpr char kHex[] = "0123456789abcdef";
  std::string out;
  out.reserve(s.size() + 8);
  for (std::size_t i = 0; i < s.size();) {
    long cp = next_code_point(s, i);
    if (cp < 0) {
      append_utf8(out, 0xFFFD);
    } else if ((cp < 0x20 && cp != '\t') || cp == 0x7F) {
      out += "\\x";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xF];
    } else if (cp >= 0x80 && cp <= 0x9F) {
      out += "\\u00";
      out += kHex[cp >> 4];
      out += kHex[cp & 0xF];
    } else if (bidi_control(cp)) {
      out += "\\u";
      for (int shift = 12; shift >= 0; shift -= 4) out += kHex[(cp >> shift) & 0xF];
    } else {
      append_utf8(out, cp);
    }
  }
  return out;
}

void render_table(std::string& out, const std::vector<std::vector<std::string>>& t, const TableStyle& style) {
  if (t.empty()) return;
  const std::size_t rows = style.max_rows ? std::min(t.size(), style.max_rows + 1) : t.size();
  std::size_t cols = 0;
  for (const auto& r : t) cols = std::max(cols, r.size());
  auto spans = [&](const std::vector<std::string>& r, std::size_t c) {
    return style.short_row_note_spans && c + 1 == r.size() && r.size() < cols;
  };
  std::vector<std::size_t> w(cols, 0);
  for (std::size_t i = 0; i < rows; ++i)
    for (std::size_t c = 0; c < t[i].size(); ++c)
      if (!spans(t[i], c)) w[c] = std::max(w[c], display_width(printable(t[i][c])));
  auto row = [&](const std::vector<std::string>& r) {
    std::string line(style.indent);
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c) line += "  ";
      const std::string cell = printable(r[c]);
      if (spans(r, c)) {
        line += cell;
        continue;
      }
      std::string pad(w[c] - display_width(cell), ' ');
      line += c == 0 ? cell + pad : pad + cell;
    }
    while (!line.empty() && line.back() == ' ') line.pop_back();
    out += line + "\n";
  };
  row(t[0]);
  std::size_t total = 0;
  for (std::size_t c = 0; c < cols; ++c) total += w[c] + (c ? 2 : 0);
  out += std::string(style.indent) + std::string(total, '-') + "\n";
  for (std::size_t i = 1; i < rows; ++i) row(t[i]);
  if (rows < t.size())
    out += std::string(style.indent) + "... " + std::to_string(t.size() - rows) + " more rows (-v shows all)\n";
}

}  // namespace perfgap::report
