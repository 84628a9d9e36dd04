// gzip bytes to text, for /proc/config.gz and gzipped Kineto traces: bounded, and every
// truncated or corrupt stream an error with the reason (fuzzed).
#pragma once

#include <cstddef>
#include <memory>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "parsers/byte_source.hpp"

namespace perfgap::parsers {

// Decompresses a whole gzip stream (zlib); a truncated or corrupt stream, or output beyond
// max_out bytes, is an error with the reason.
tl::expected<std::string, std::string> gunzip(std::string_view bytes, std::size_t max_out = 32u << 20);

// A gzip stream inflated as it is read: pulls compressed blocks from `in` and hands out
// decompressed blocks of up to `block` bytes (each full but the last), so a large .json.gz is
// parsed with the memory of a block and zlib's window, never inflated whole. The errors are
// gunzip's (truncated, corrupt, beyond max_out) or `in`'s own, and every later call repeats
// them. The first member only: what follows its end marker is not read (as gunzip).
class GunzipSource {
 public:
  explicit GunzipSource(ByteSource in, std::size_t max_out, std::size_t block = 256u << 10);
  ~GunzipSource();
  GunzipSource(const GunzipSource&) = delete;
  GunzipSource& operator=(const GunzipSource&) = delete;
  // The next decompressed block (empty at the stream's end marker), or why not.
  tl::expected<std::string_view, std::string> next();

 private:
  struct State;
  std::unique_ptr<State> s_;
};

}  // namespace perfgap::parsers
