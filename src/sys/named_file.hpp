// Files the user names on the command line (analyzer inputs, --config, --baseline, the
// health configuration): opened without blocking, so a FIFO without a writer or a device
// cannot hang the open, then read to the end within a size limit. "-" is standard input.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

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

// A configuration file (--config, health.yaml): like read_named_file, but only a regular file
// (or a link to one) is read. A FIFO without a writer would read as an empty file, that is a
// configuration that changes nothing, and the run would go on with the defaults unnoticed.
tl::expected<std::string, std::string> read_config_file(const std::string& path);

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

// Reads the file in raw blocks on demand, for a reader that pulls its input (the Kineto
// JSON reader: one JSON document may be a single line, so stream_named_file's whole lines do
// not fit it). Each block is `block_bytes` long but the last (a pipe's short reads are joined
// up), and the memory is that one block. The errors are read_named_file's; the size limit
// counts every byte read.
class BlockReader {
 public:
  static tl::expected<BlockReader, std::string> open(const std::string& path, std::size_t max_bytes,
                                                     std::size_t block_bytes = 256u << 10);
  BlockReader(BlockReader&& other) noexcept;
  BlockReader& operator=(BlockReader&& other) noexcept;
  BlockReader(const BlockReader&) = delete;
  BlockReader& operator=(const BlockReader&) = delete;
  ~BlockReader();
  // The next block (valid until the next call; empty at the end and after an error), or why not.
  tl::expected<std::string_view, std::string> next();

 private:
  BlockReader(int fd, std::size_t max_bytes, std::size_t block_bytes);
  int fd_ = -1;
  std::size_t max_ = 0, block_ = 0, total_ = 0;
  std::unique_ptr<char[]> buf_;
};

// Why a file of this kind is not read ("is a directory", "is a character device ...", ...), or
// "" for a regular file or a pipe. `is_stdin`: "-" was given, taken as it is.
std::string refused_kind(const struct ::stat& st, bool is_stdin);

// Opens and closes `path` the same way: whether it could be read (a --dmesg probe).
tl::expected<void, std::string> probe_named_file(const std::string& path);

// The regular files of a directory the user names (`--kb DIR`, /etc/perfgap/kb.d) whose names
// end in `suffix`, as DIR/NAME sorted by name; hidden files and subdirectories are left out.
// Why not ("cannot open directory: ..."); `missing` is set when the directory does not exist.
tl::expected<std::vector<std::string>, std::string> named_dir_files(const std::string& dir, std::string_view suffix,
                                                                    bool* missing = nullptr);

// A whole file into `buf` (grown as needed, reused across calls) followed by `padding` zero
// bytes, for a parser that reads past the end (fleet's simdjson-style report reader); `size`
// is the file's length. A regular file is read at its size, anything else (a pipe) until
// EOF, both within `max_bytes`. The problem, or nullopt: "cannot open: ...", "cannot stat:
// ...", refused_kind's, "read error: ...", or `too_large(size)` where size is the regular
// file's size (nullopt: it passed the limit while read).
std::optional<std::string> read_padded_file(const std::string& path, std::size_t max_bytes, std::size_t padding,
                                            std::string& buf, std::size_t& size,
                                            const std::function<std::string(std::optional<std::uint64_t>)>& too_large);

}  // namespace perfgap::sys
