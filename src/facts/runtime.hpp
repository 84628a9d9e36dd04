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
#include "parsers/procfs.hpp"

namespace perfgap::facts {

struct ContainerInfo {
  std::string runtime = "unknown";  // report.node.container: none, a runtime (docker, runc, ...), other, unknown (docs/CONTRACT.md)
  std::string name;                 // for titles: "Docker", "enroot (pyxis)", "Kubernetes pod", ...
  bool inside = false;              // some signal says this is a container
  bool decided = false;             // false when no signal could be read at all
  std::vector<std::pair<std::string, std::string>> evidence;  // (source, observed)
};
const ContainerInfo& container_info(Facts& f);

// ---- /dev/shm (parsers/mounts) ----
struct ShmSize {
  std::optional<std::uint64_t> bytes;
  std::string source;  // "statvfs(/dev/shm)", "/proc/mounts", "/proc/meminfo MemTotal / 2"
  std::string how;     // the observed text
  std::string error;   // why bytes is empty
};
const ShmSize& shm_size(Facts& f);

// ---- RLIMIT_MEMLOCK (parsers::parse_memlock_limit) ----
using parsers::Limit;
struct Memlock {
  Limit limit;
  std::string source;
};
const Avail<Memlock>& memlock(Facts& f);

// ---- device nodes ----
// Whether `path` (/dev itself or a node below it) exists here: stat following links, read once
// per path; the node is never opened (a GPU device node stays closed).
bool device_node_present(Facts& f, const std::string& path);

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

}  // namespace perfgap::facts
