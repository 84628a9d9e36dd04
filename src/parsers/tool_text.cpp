#include "parsers/tool_text.hpp"

#include <cstdint>

#include <charconv>
#include <cmath>
#include <cstdlib>

#include "sys/text.hpp"

namespace perfgap::parsers::tooltext {

std::string_view chomp(std::string_view line) {
  while (!line.empty() && (line.back() == '\r' || line.back() == '\n')) line.remove_suffix(1);
  return line;
}

std::string_view unquote_mail(std::string_view line) {
  std::size_t i = 0;
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  if (i >= line.size() || line[i] != '>') return line;
  while (i < line.size() && (line[i] == '>' || line[i] == ' ')) {
    // Keep the spacing after the last '>' (columns), but drop the marks themselves.
    if (line[i] == '>') {
      ++i;
      continue;
    }
    // a space: stop if no further '>' follows before text
    std::size_t j = i;
    while (j < line.size() && line[j] == ' ') ++j;
    if (j < line.size() && line[j] == '>') {
      i = j;
      continue;
    }
    break;
  }
  return line.substr(i);
}

namespace {

// The line less its Open MPI --tag-output and srun --label prefixes (views into the line).
std::string_view strip_leading_prefixes(std::string_view line) {
  line = chomp(line);
  // Open MPI --tag-output: "[1,0]<stdout>:" (possibly repeated? once is enough).
  {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i < line.size() && line[i] == '[') {
      auto close = line.find("]<", i);
      if (close != std::string_view::npos && close < i + 24) {
        auto colon = line.find(">:", close);
        if (colon != std::string_view::npos && colon < close + 12) line = line.substr(colon + 2);
      }
    }
  }
  // srun --label: " 0: " (digits then ':' then blank) at the start.
  {
    std::size_t i = 0;
    while (i < line.size() && line[i] == ' ') ++i;
    std::size_t d = i;
    while (d < line.size() && line[d] >= '0' && line[d] <= '9') ++d;
    if (d > i && d + 1 < line.size() + 1 && d < line.size() && line[d] == ':' &&
        (d + 1 == line.size() || line[d + 1] == ' ' || line[d + 1] == '\t'))
      line = line.substr(d + 1);
  }
  return line;
}

// Where the first "[N]" rank tag starts, or npos.
std::size_t first_rank_tag(std::string_view line) {
  for (auto i = line.find('['); i != std::string_view::npos; i = line.find('[', i + 1)) {
    std::size_t j = i + 1;
    while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
    if (j > i + 1 && j < line.size() && line[j] == ']') return i;
  }
  return std::string_view::npos;
}

void replace_rank_tags(std::string_view line, std::string& out) {
  out.clear();
  out.reserve(line.size());
  // The bytes between '[' copied a run at a time (a byte at a time cost a line of NCCL INFO
  // more than its reading).
  for (std::size_t i = 0; i < line.size();) {
    const auto open = line.find('[', i);
    if (open == std::string_view::npos) {
      out.append(line.substr(i));
      break;
    }
    out.append(line.substr(i, open - i));
    std::size_t j = open + 1;
    while (j < line.size() && line[j] >= '0' && line[j] <= '9') ++j;
    if (j > open + 1 && j < line.size() && line[j] == ']') {
      out += ' ';
      i = j + 1;
    } else {
      out += '[';
      i = open + 1;
    }
  }
}

}  // namespace

std::string strip_launcher_prefixes(std::string_view line) {
  std::string out;
  replace_rank_tags(strip_leading_prefixes(line), out);
  return out;
}

std::string_view strip_launcher_prefixes(std::string_view line, std::string& scratch) {
  line = strip_leading_prefixes(line);
  if (first_rank_tag(line) == std::string_view::npos) return line;
  replace_rank_tags(line, scratch);
  return scratch;
}

namespace {
// "[-]ddd[.ddd]" with at most 15 digits, or nullopt. Such a decimal is m / 10^k with m and
// 10^k exact doubles, and one IEEE division is correctly rounded: the double from_chars
// gives, without its general machinery (Clinger's fast path). Tool tables are mostly these.
bool short_decimal(std::string_view t, double& out) {
  std::size_t i = t[0] == '-' ? 1 : 0;
  std::uint64_t m = 0;
  int digits = 0, frac = -1;
  for (; i < t.size(); ++i) {
    char c = t[i];
    if (c >= '0' && c <= '9') {
      m = m * 10 + static_cast<std::uint64_t>(c - '0');
      if (++digits > 15) return false;
      if (frac >= 0) ++frac;
    } else if (c == '.' && frac < 0) {
      frac = 0;
    } else {
      return false;
    }
  }
  if (digits == 0) return false;
  static constexpr double kPow10[] = {1e0, 1e1, 1e2, 1e3, 1e4, 1e5, 1e6, 1e7, 1e8, 1e9, 1e10, 1e11, 1e12, 1e13, 1e14, 1e15};
  double d = static_cast<double>(m);
  if (frac > 0) d /= kPow10[frac];
  out = t[0] == '-' ? -d : d;
  return true;
}
}  // namespace

bool number_into(std::string_view tok, double& out) {
  if (tok.empty() || tok.size() > 64) return false;
  char c = tok[0];
  if (!((c >= '0' && c <= '9') || c == '-' || c == '+' || c == '.')) return false;
  if (c != '+' && short_decimal(tok, out)) return true;
  // from_chars reads what strtod reads for plain decimals; anything else ('+' sign, hex,
  // out of range, trailing bytes) goes the strtod way as before.
  if (c != '+') {
    double d = 0;
    auto [p, ec] = std::from_chars(tok.data(), tok.data() + tok.size(), d);
    if (ec == std::errc() && p == tok.data() + tok.size()) {
      if (!std::isfinite(d)) return false;
      out = d;
      return true;
    }
  }
  auto v = sys::to_double(tok);
  if (!v || !std::isfinite(*v)) return false;
  out = *v;
  return true;
}

bool is_integer(std::string_view tok) {
  if (tok.empty()) return false;
  std::size_t i = tok[0] == '-' ? 1 : 0;
  if (i == tok.size()) return false;
  for (; i < tok.size(); ++i)
    if (tok[i] < '0' || tok[i] > '9') return false;
  return true;
}

bool looks_binary(std::string_view text) {
  auto head = text.substr(0, 65536);
  std::size_t ctrl = 0;
  for (unsigned char c : head) {
    if (c == 0) return true;
    if (c < 0x20 && c != '\n' && c != '\r' && c != '\t' && c != '\f' && c != 0x1b) ++ctrl;
  }
  return !head.empty() && ctrl * 20 > head.size();
}

}  // namespace perfgap::parsers::tooltext
