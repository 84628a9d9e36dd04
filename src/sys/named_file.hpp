// Files the user names on the command line (analyzer inputs, --config, --baseline, the
// health configuration): opened without blocking, so a FIFO without a writer or a device
// cannot hang the open, then read to the end within a size limit. "-" is standard input.
#pragma once

#include <cstddef>
#include <string>

#include <sys/stat.h>

#include <tl/expected.hpp>

namespace perfgap::sys {

// Limits for what a user may name (docs/LIMITS.md).
inline constexpr std::size_t kMaxConfigBytes = 1u << 20;      // --config, health.yaml
inline constexpr std::size_t kMaxReportFileBytes = 64u << 20;  // --baseline (a JSON report)
inline constexpr std::size_t kMaxInputBytes = 1u << 30;       // analyze inputs (perf script text is large)

// The whole file, or why not (without the path: callers name it as they show it): "cannot
// open: ...", "is a directory", "is a block device", "larger than N MiB", "read error: ...".
tl::expected<std::string, std::string> read_named_file(const std::string& path, std::size_t max_bytes);

// Why a file of this kind is not read ("is a directory", "is a character device ...", ...), or
// "" for a regular file or a pipe. `is_stdin`: "-" was given, taken as it is.
std::string refused_kind(const struct ::stat& st, bool is_stdin);

// Opens and closes `path` the same way: whether it could be read (a --dmesg probe).
tl::expected<void, std::string> probe_named_file(const std::string& path);

}  // namespace perfgap::sys
