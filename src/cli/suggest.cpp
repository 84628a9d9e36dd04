#include "cli/suggest.hpp"

#include <algorithm>

namespace perfgap::cli {
namespace {

// Edit distance of two short words (command, option and value names).
std::size_t edit_distance(std::string_view a, std::string_view b) {
  std::vector<std::size_t> row(b.size() + 1);
  for (std::size_t j = 0; j <= b.size(); ++j) row[j] = j;
  for (std::size_t i = 1; i <= a.size(); ++i) {
    std::size_t diag = row[0];
    row[0] = i;
    for (std::size_t j = 1; j <= b.size(); ++j) {
      const std::size_t up = row[j];
      row[j] = std::min({row[j] + 1, row[j - 1] + 1, diag + (a[i - 1] == b[j - 1] ? 0 : 1)});
      diag = up;
    }
  }
  return row[b.size()];
}

}  // namespace

std::string did_you_mean(std::string_view word, const std::vector<std::string>& candidates) {
  const std::string* best = nullptr;
  std::size_t best_d = 0;
  for (const auto& c : candidates) {
    const std::size_t d = edit_distance(word, c);
    if (!best || d < best_d) best = &c, best_d = d;
  }
  if (!best || best_d == 0 || best_d > std::max<std::size_t>(2, word.size() / 3)) return "";
  return " (did you mean " + *best + "?)";
}

std::string joined(const std::vector<std::string>& names) {
  std::string out;
  for (const auto& n : names) out += (out.empty() ? "" : ", ") + n;
  return out;
}

}  // namespace perfgap::cli
