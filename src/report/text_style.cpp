#include "report/text_style.hpp"

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

}  // namespace perfgap::report
