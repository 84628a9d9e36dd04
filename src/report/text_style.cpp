#include "report/text_style.hpp"

#include <algorithm>
#include <cctype>

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
      if (!spans(t[i], c)) w[c] = std::max(w[c], display_width(t[i][c]));
  auto row = [&](const std::vector<std::string>& r) {
    std::string line(style.indent);
    for (std::size_t c = 0; c < r.size(); ++c) {
      if (c) line += "  ";
      if (spans(r, c)) {
        line += r[c];
        continue;
      }
      std::string pad(w[c] - display_width(r[c]), ' ');
      line += c == 0 ? r[c] + pad : pad + r[c];
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
