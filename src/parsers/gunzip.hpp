// gzip bytes to text, for /proc/config.gz and gzipped Kineto traces: bounded, and every
// truncated or corrupt stream an error with the reason (fuzzed).
#pragma once

#include <cstddef>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace perfgap::parsers {

// Decompresses a whole gzip stream (zlib); a truncated or corrupt stream, or output beyond
// max_out bytes, is an error with the reason.
tl::expected<std::string, std::string> gunzip(std::string_view bytes, std::size_t max_out = 32u << 20);

}  // namespace perfgap::parsers
