// One root for every read. Code names the real kernel path ("/sys/devices/system/cpu/online")
// and the Sysroot resolves it: live against "/", or inside a captured tree where absolute
// symbolic links resolve inside the tree too (openat2 RESOLVE_IN_ROOT), as hwloc's
// HWLOC_FSROOT and node_exporter's --path.sysfs do. Where openat2 is refused (ENOSYS, or
// EPERM/EINVAL from a seccomp filter) every path is walked by hand from the root with the
// same rules (absolute links from the tree's root, ".." clamped there, 40 links at most):
// no read ever leaves the tree. In a tree only regular files and directories are opened;
// device nodes, FIFOs and sockets are "no such device" (ENXIO).
#pragma once

#include <sys/stat.h>

#include <cstddef>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::sys {

// Why a read gave no data. `unavailable` covers the errnos that mean "this interface is not
// here" (ENOENT, ENOTDIR, EACCES, EPERM, EINVAL, ENODEV, ENXIO, EOPNOTSUPP), as
// prometheus/procfs treats them; everything else is `failed`.
struct ReadError {
  enum Kind { unavailable, failed, too_large, timed_out } kind = failed;
  int err = 0;            // errno where one applies
  std::string path;       // the real path asked for
  std::string reason() const;  // "not present", "permission denied", ...
};

template <class T>
using ReadResult = tl::expected<T, ReadError>;

class Sysroot {
 public:
  static Sysroot live();
  // A captured tree. Fails (with a message naming DIR) when DIR is not a readable directory.
  static tl::expected<Sysroot, std::string> at(const std::string& dir);

  bool is_live() const { return root_.empty(); }
  const std::string& root() const { return root_; }  // empty when live

  // Whole file, at most `max_bytes` (sysfs sizes lie: read, do not stat).
  ReadResult<std::string> read(std::string_view path, std::size_t max_bytes = 4u << 20) const;
  // read() with the value trimmed of surrounding white space (sysfs attributes end in '\n').
  ReadResult<std::string> read_value(std::string_view path) const;
  // Entry names of a directory, sorted, without "." and "..".
  ReadResult<std::vector<std::string>> list(std::string_view dir) const;
  // read_value() of several entries of one directory: the directory is resolved once and each
  // name opened relative to it (sysfs counter directories: one path walk, not one per file).
  // Same answers as read_value(join(dir, name)) for each name, in order; a name must be one
  // path component.
  std::vector<ReadResult<std::string>> read_values_in(std::string_view dir, const std::vector<std::string>& names) const;
  ReadResult<std::string> readlink(std::string_view path) const;
  // stat() following links; never opens the object itself (a GPU device node stays closed).
  ReadResult<struct stat> stat(std::string_view path) const;
  bool exists(std::string_view path) const { return stat(path).has_value(); }

  // Opens for reading: used by streaming readers that stop early (numa_maps).
  ReadResult<int> open_read(std::string_view path) const;

 private:
  Sysroot() = default;
  std::string root_;
  std::shared_ptr<int> root_fd_;  // O_PATH directory; shared so copies stay cheap
};

// For tests: walk trees by hand as if openat2 were refused (the binary reads
// PERFGAP_NO_OPENAT2=1 once, for the same). `off` false gives openat2 another try.
void force_no_openat2_for_tests(bool off = true);
// Whether tree reads currently go through openat2.
bool openat2_in_use();
// How many tree paths were walked by hand so far (tests prove the walk ran).
unsigned long tree_walks();

// For tests (the declared-reads check of every fixture case): while on, every path a Sysroot
// is asked to open, list, stat or readlink is recorded, from any thread. Off by default; off,
// it costs one relaxed atomic load per call.
void start_read_log();
std::vector<std::string> stop_read_log();  // the paths since start_read_log, in order asked

// Joins a directory and an entry name with one '/'.
std::string join(std::string_view dir, std::string_view name);

}  // namespace perfgap::sys
