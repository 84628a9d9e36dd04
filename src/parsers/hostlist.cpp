#include "parsers/hostlist.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <charconv>
#include <cstdint>
#include <map>
#include <set>
#include <tuple>

namespace perfgap::parsers {
namespace {

using HostNames = std::vector<std::string>;

tl::expected<void, std::string> expand_into(std::string_view item, const std::string& prefix, HostNames& out) {
  auto open = item.find('[');
  if (open == std::string_view::npos) {
    if (item.find(']') != std::string_view::npos) return tl::unexpected("stray ']' in '" + std::string(item) + "'");
    out.push_back(prefix + std::string(item));
    return {};
  }
  auto close = item.find(']', open);
  if (close == std::string_view::npos) return tl::unexpected("unclosed '[' in '" + std::string(item) + "'");
  auto head = prefix + std::string(item.substr(0, open));
  if (head.find(']') != std::string::npos) return tl::unexpected("stray ']' in '" + std::string(item) + "'");
  auto body = item.substr(open + 1, close - open - 1);
  auto rest = item.substr(close + 1);
  if (body.empty()) return tl::unexpected("empty '[]' in '" + std::string(item) + "'");
  while (!body.empty()) {
    auto comma = body.find(',');
    auto range = body.substr(0, comma);
    body = comma == std::string_view::npos ? std::string_view{} : body.substr(comma + 1);
    auto dash = range.find('-');
    auto lo_text = range.substr(0, dash);
    auto hi_text = dash == std::string_view::npos ? lo_text : range.substr(dash + 1);
    auto digits = [](std::string_view s) {
      if (s.empty() || s.size() > 9) return false;
      for (char c : s)
        if (!std::isdigit(static_cast<unsigned char>(c))) return false;
      return true;
    };
    if (!digits(lo_text) || !digits(hi_text)) return tl::unexpected("bad range '" + std::string(range) + "' in '" + std::string(item) + "'");
    unsigned long lo = 0, hi = 0;
    std::from_chars(lo_text.data(), lo_text.data() + lo_text.size(), lo);
    std::from_chars(hi_text.data(), hi_text.data() + hi_text.size(), hi);
    if (hi < lo) return tl::unexpected("descending range '" + std::string(range) + "' in '" + std::string(item) + "'");
    if (hi - lo >= kMaxHostlistNames) return tl::unexpected("more than " + std::to_string(kMaxHostlistNames) + " names");
    const std::size_t width = lo_text.size();  // "001-010" keeps three digits
    for (unsigned long i = lo; i <= hi; ++i) {
      std::string number = std::to_string(i);
      if (number.size() < width) number.insert(0, width - number.size(), '0');
      auto r = expand_into(rest, head + number, out);
      if (!r) return r;
      if (out.size() > kMaxHostlistNames) return tl::unexpected("more than " + std::to_string(kMaxHostlistNames) + " names");
    }
  }
  return {};
}

}  // namespace

tl::expected<std::vector<std::string>, std::string> expand_hostlist(std::string_view list) {
  HostNames out;
  std::size_t depth = 0, start = 0;
  for (std::size_t i = 0; i <= list.size(); ++i) {
    if (i < list.size()) {
      char c = list[i];
      if (c == '[') ++depth;
      else if (c == ']' && depth > 0) --depth;
      if (c != ',' || depth > 0) continue;
    }
    auto item = list.substr(start, i - start);
    start = i + 1;
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.front()))) item.remove_prefix(1);
    while (!item.empty() && std::isspace(static_cast<unsigned char>(item.back()))) item.remove_suffix(1);
    if (item.empty()) continue;
    auto r = expand_into(item, "", out);
    if (!r) return tl::unexpected(r.error());
  }
  return out;
}

namespace {

struct SplitName {
  std::string_view prefix;
  std::string_view digits;  // empty: no numeric suffix
  std::uint64_t number = 0;
  std::string_view text;
  std::size_t width = 0;  // the run it joins: 0 unpadded, else the padded digit count
};

SplitName split(std::string_view name) {
  SplitName p{name, {}, 0, name};
  std::size_t i = name.size();
  while (i > 0 && name[i - 1] >= '0' && name[i - 1] <= '9') --i;
  // Ranges of more than 9 digits are not read back by expand_hostlist (nor by every Slurm
  // version): such names are listed literally.
  if (i == name.size() || name.size() - i > 9) return p;
  p.prefix = name.substr(0, i);
  p.digits = name.substr(i);
  for (char c : p.digits) p.number = p.number * 10 + static_cast<std::uint64_t>(c - '0');
  return p;
}

// The width a name's digits are padded to: 0 when written without leading zeros.
std::size_t pad_width(std::string_view digits) { return digits.size() > 1 && digits[0] == '0' ? digits.size() : 0; }

}  // namespace

std::string compress_hostlist(const std::vector<std::string_view>& names) {
  std::vector<SplitName> parsed;
  parsed.reserve(names.size());
  for (auto n : names) parsed.push_back(split(n));
  // A name without leading zeros (n10) belongs to a padded run (n08-n10) when other names of
  // its prefix are padded to its length; otherwise to the unpadded names (n8-n10).
  std::map<std::string_view, std::set<std::size_t>> padded;
  for (const auto& p : parsed)
    if (!p.digits.empty() && pad_width(p.digits)) padded[p.prefix].insert(p.digits.size());
  for (auto& p : parsed) {
    if (p.digits.empty()) continue;
    p.width = pad_width(p.digits);
    if (p.width == 0) {
      auto it = padded.find(p.prefix);
      if (it != padded.end() && it->second.count(p.digits.size())) p.width = p.digits.size();
    }
  }
  // Literal names by text, numbered ones by prefix, then width, then number.
  std::sort(parsed.begin(), parsed.end(), [](const SplitName& a, const SplitName& b) {
    bool an = a.digits.empty(), bn = b.digits.empty();
    std::string_view ak = an ? a.text : a.prefix, bk = bn ? b.text : b.prefix;
    return std::tie(ak, an, a.width, a.number, a.digits) < std::tie(bk, bn, b.width, b.number, b.digits);
  });
  parsed.erase(std::unique(parsed.begin(), parsed.end(), [](const SplitName& a, const SplitName& b) { return a.text == b.text; }),
               parsed.end());

  std::string out;
  auto append = [&](std::string_view s) {
    if (!out.empty()) out += ',';
    out += s;
  };
  std::size_t i = 0;
  while (i < parsed.size()) {
    if (parsed[i].digits.empty()) {
      append(parsed[i].text);
      ++i;
      continue;
    }
    // One prefix group: ranges of consecutive numbers with the same padding.
    std::size_t end = i;
    while (end < parsed.size() && !parsed[end].digits.empty() && parsed[end].prefix == parsed[i].prefix) ++end;
    std::vector<std::string> ranges;
    std::size_t j = i;
    while (j < end) {
      std::size_t k = j + 1;
      while (k < end && parsed[k].number == parsed[k - 1].number + 1 && parsed[k].width == parsed[j].width) ++k;
      // A run of unpadded numbers may continue into a longer digit count (n9,n10); a padded
      // run (n08,n09) takes n10 written at the same width. Either way the names' own digits
      // are the range's ends.
      ranges.push_back(k - 1 == j ? std::string(parsed[j].digits)
                                  : std::string(parsed[j].digits) + "-" + std::string(parsed[k - 1].digits));
      j = k;
    }
    if (end - i == 1) {
      append(parsed[i].text);
    } else {
      std::string group(parsed[i].prefix);
      group += '[';
      for (std::size_t r = 0; r < ranges.size(); ++r) group += (r ? "," : "") + ranges[r];
      group += ']';
      append(group);
    }
    i = end;
  }
  return out;
}

std::string compress_hostlist_fit(const std::vector<std::string_view>& names, std::size_t width) {
  std::string all = compress_hostlist(names);
  if (all.size() <= width || names.size() <= 1) return all;
  std::vector<std::string_view> sorted = names;
  std::sort(sorted.begin(), sorted.end());
  sorted.erase(std::unique(sorted.begin(), sorted.end()), sorted.end());
  auto with_first = [&](std::size_t k) {
    std::string s = compress_hostlist({sorted.begin(), sorted.begin() + static_cast<std::ptrdiff_t>(k)});
    return s + fmt::format(",... (+{} more)", sorted.size() - k);
  };
  // The compressed length grows (almost) monotonically with k: binary search the largest fit.
  std::size_t lo = 1, hi = sorted.size() - 1;
  while (lo < hi) {
    std::size_t mid = (lo + hi + 1) / 2;
    if (with_first(mid).size() <= width) lo = mid;
    else hi = mid - 1;
  }
  return with_first(lo);
}

}  // namespace perfgap::parsers
