// Input that a parser pulls a block at a time (a file or a pipe read by sys::BlockReader,
// gunzip's output): for readers built on a pull parser (RapidJSON's SAX Reader for Kineto
// traces), which cannot be handed whole lines the way the LineParser text parsers are.
#pragma once

#include <algorithm>
#include <functional>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

namespace perfgap::parsers {

// The next block of bytes (valid until the next call), an empty one at the end, or why the
// input cannot be read further (a read error, a corrupt gzip stream, a size limit).
using ByteSource = std::function<tl::expected<std::string_view, std::string>()>;

// `bytes` as a source of blocks of at most `block` bytes (all of it in one when 0): for the
// tests and fuzzers, which cut a text anywhere to check a reader gives the same result.
inline ByteSource blocks_of(std::string_view bytes, std::size_t block = 0) {
  return [bytes, block]() mutable -> tl::expected<std::string_view, std::string> {
    std::size_t n = block == 0 ? bytes.size() : std::min(block, bytes.size());
    std::string_view b = bytes.substr(0, n);
    bytes.remove_prefix(n);
    return b;
  };
}

}  // namespace perfgap::parsers
