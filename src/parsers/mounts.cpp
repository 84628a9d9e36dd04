#include "parsers/mounts.hpp"

#include <algorithm>
#include <cctype>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace {

std::string unescape_mount_field(std::string_view s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] == '\\' && i + 3 < s.size()) {
      auto oct = s.substr(i + 1, 3);
      if (oct.size() == 3 && std::all_of(oct.begin(), oct.end(), [](char c) { return c >= '0' && c <= '7'; })) {
        out.push_back(static_cast<char>(((oct[0] - '0') << 6) | ((oct[1] - '0') << 3) | (oct[2] - '0')));
        i += 3;
        continue;
      }
    }
    out.push_back(s[i]);
  }
  return out;
}

}  // namespace

std::vector<MountEntry> parse_mounts(std::string_view text) {
  std::vector<MountEntry> out;
  for (auto line : sys::split_lines(text)) {
    auto fields = sys::split_ws(line);
    if (fields.size() < 4) continue;
    out.push_back({unescape_mount_field(fields[0]), unescape_mount_field(fields[1]), std::string(fields[2]),
                   std::string(fields[3])});
  }
  return out;
}

std::vector<MountInfoEntry> parse_mountinfo(std::string_view text) {
  std::vector<MountInfoEntry> out;
  for (auto line : sys::split_lines(text)) {
    auto fields = sys::split_ws(line);
    // id parent major:minor root target options [optional...] - fstype source super-options
    if (fields.size() < 9) continue;
    std::size_t dash = 6;
    while (dash < fields.size() && fields[dash] != "-") ++dash;
    if (dash + 2 >= fields.size()) continue;  // no separator, or no fstype and source after it
    MountInfoEntry e{unescape_mount_field(fields[3]), unescape_mount_field(fields[4]), std::string(fields[5]),
                     std::string(fields[dash + 1]), unescape_mount_field(fields[dash + 2]),
                     dash + 3 < fields.size() ? unescape_mount_field(fields[dash + 3]) : std::string()};
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<std::string> mount_option(std::string_view options, std::string_view name) {
  std::optional<std::string> out;
  for (auto opt : sys::split(options, ',')) {
    if (opt.size() > name.size() && sys::starts_with(opt, name) && opt[name.size()] == '=')
      out = std::string(opt.substr(name.size() + 1));  // the last one wins, as mount does
  }
  return out;
}

std::optional<std::uint64_t> parse_tmpfs_size(std::string_view value, std::optional<std::uint64_t> mem_total) {
  auto v = sys::trim_ws(value);
  if (v.empty()) return std::nullopt;
  if (v.back() == '%') {
    auto pct = sys::to_int<std::uint64_t>(v.substr(0, v.size() - 1));
    if (!pct || !mem_total || *pct > 100000) return std::nullopt;
    return *mem_total / 100 * *pct + *mem_total % 100 * *pct / 100;
  }
  std::uint64_t mult = 1;
  char last = static_cast<char>(std::tolower(static_cast<unsigned char>(v.back())));
  const std::string_view suffixes = "kmgtpe";
  if (auto pos = suffixes.find(last); pos != std::string_view::npos) {
    for (std::size_t i = 0; i <= pos; ++i) mult *= 1024;
    v.remove_suffix(1);
  }
  auto n = sys::to_int<std::uint64_t>(v);
  if (!n) return std::nullopt;
  if (*n != 0 && mult > UINT64_MAX / *n) return std::nullopt;
  return *n * mult;
}

}  // namespace perfgap::parsers
