// Files the user names on the command line (analyzer inputs, --config, --baseline, the
// health configuration): opened without blocking, so a FIFO without a writer or a device
// cannot hang the open, then read to the end within a size limit. "-" is standard input.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>

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

// Reads the file in blocks of whole lines, each handed to `sink` as it is read, so a large
// input is parsed with the memory of one block (`block_bytes`) instead of the whole file.
// Every block but the last ends in '\n'; a line longer than a block is cut to its first
// `block_bytes` bytes (and ends in '\n'), so line numbers stay right. `sink` returns false to
// stop reading (the input was found unusable). The error strings are read_named_file's; the
// size limit counts every byte read.
inline constexpr std::size_t kStreamBlockBytes = 1u << 20;
tl::expected<void, std::string> stream_named_file(const std::string& path, std::size_t max_bytes,
                                                  const std::function<bool(std::string_view)>& sink,
                                                  std::size_t block_bytes = kStreamBlockBytes);

// Why a file of this kind is not read ("is a directory", "is a character device ...", ...), or
// "" for a regular file or a pipe. `is_stdin`: "-" was given, taken as it is.
std::string refused_kind(const struct ::stat& st, bool is_stdin);

// Opens and closes `path` the same way: whether it could be read (a --dmesg probe).
tl::expected<void, std::string> probe_named_file(const std::string& path);

}  // namespace perfgap::sys
