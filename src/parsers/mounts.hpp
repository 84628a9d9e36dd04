// /proc/mounts (and /proc/<pid>/mounts) lines, their option lists and tmpfs sizes, for the
// /dev/shm fact (facts/runtime).
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::parsers {

struct MountEntry {
  std::string source, target, fstype, options;  // octal escapes (\040) decoded
};
std::vector<MountEntry> parse_mounts(std::string_view text);
// The value of option `name` ("size") in a comma-separated option list.
std::optional<std::string> mount_option(std::string_view options, std::string_view name);
// tmpfs size=: bytes with k/m/g/t/p/e suffixes, or a percentage of `mem_total`.
std::optional<std::uint64_t> parse_tmpfs_size(std::string_view value, std::optional<std::uint64_t> mem_total);

}  // namespace perfgap::parsers
