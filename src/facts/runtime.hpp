// What the job's runtime gives it: the container it runs in, /dev/shm, the locked-memory
// limit, reachable device nodes, and the host's enroot/pyxis launcher configuration.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "facts/facts.hpp"

namespace perfgap::facts {

struct ContainerInfo {
  std::string runtime = "unknown";  // none|docker|enroot|podman|unknown (report.node.container)
  std::string name;                 // for titles: "Docker", "enroot (pyxis)", "Kubernetes pod", ...
  bool inside = false;              // some signal says this is a container
  bool decided = false;             // false when no signal could be read at all
  std::vector<std::pair<std::string, std::string>> evidence;  // (source, observed)
};
const ContainerInfo& container_info(Facts& f);

// ---- /proc/mounts ----
struct MountEntry {
  std::string source, target, fstype, options;  // octal escapes (\040) decoded
};
std::vector<MountEntry> parse_mounts(std::string_view text);
// The value of option `name` ("size") in a comma-separated option list.
std::optional<std::string> mount_option(std::string_view options, std::string_view name);
// tmpfs size=: bytes with k/m/g/t/p/e suffixes, or a percentage of `mem_total`.
std::optional<std::uint64_t> parse_tmpfs_size(std::string_view value, std::optional<std::uint64_t> mem_total);

struct ShmSize {
  std::optional<std::uint64_t> bytes;
  std::string source;  // "statvfs(/dev/shm)", "/proc/mounts", "/proc/meminfo MemTotal / 2"
  std::string how;     // the observed text
  std::string error;   // why bytes is empty
};
const ShmSize& shm_size(Facts& f);

// ---- RLIMIT_MEMLOCK ----
struct Limit {
  std::optional<std::uint64_t> soft, hard;  // nullopt: unlimited
  std::string text;                         // as printed
};
// The "Max locked memory" row of /proc/<pid>/limits.
tl::expected<Limit, std::string> parse_memlock_limit(std::string_view limits_text);
struct Memlock {
  Limit limit;
  std::string source;
};
const Avail<Memlock>& memlock(Facts& f);

// ---- host launcher configuration (enroot / pyxis) ----
struct LauncherFile {
  std::string path;
  std::vector<std::pair<int, std::string>> lines;  // (line number, text) of non-comment lines
};
struct LauncherConfig {
  bool enroot_dir = false;                 // /etc/enroot exists
  std::vector<LauncherFile> environ;       // /etc/enroot/environ.d/*.env
  std::vector<LauncherFile> mounts;        // /etc/enroot/mounts.d/*.fstab
  std::vector<std::string> pyxis;          // plugstack files that load spank_pyxis.so
  std::vector<std::string> errors;         // what could not be read
};
const LauncherConfig& launcher_config(Facts& f);

// An enroot environ.d line "NAME=VALUE", "export NAME=VALUE" or "NAME" (pass the host value):
// the name, or "" for other lines.
std::string enroot_environ_name(std::string_view line);
// Whether an enroot fstab line ("SRC DST TYPE OPTS", DST inside the container) makes host
// `path` appear at the same path in the container (it or a directory above it, bind-mounted
// at the same place).
bool enroot_mount_carries(std::string_view line, std::string_view path);

}  // namespace perfgap::facts
