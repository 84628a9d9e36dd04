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
// /proc/<pid>/mountinfo lines (proc(5)): what /proc/mounts lacks is the path inside the
// source file system that is mounted (`root`, how a bind mount of one file shows where it
// comes from) and the super-block options (overlayfs' lowerdir/upperdir). Lines without the
// "-" separator or with fewer fields are skipped.
struct MountInfoEntry {
  std::string root, target, options, fstype, source, super_options;  // octal escapes decoded
};
std::vector<MountInfoEntry> parse_mountinfo(std::string_view text);
// The value of option `name` ("size") in a comma-separated option list.
std::optional<std::string> mount_option(std::string_view options, std::string_view name);
// tmpfs size=: bytes with k/m/g/t/p/e suffixes, or a percentage of `mem_total`.
std::optional<std::uint64_t> parse_tmpfs_size(std::string_view value, std::optional<std::uint64_t> mem_total);

}  // namespace perfgap::parsers
