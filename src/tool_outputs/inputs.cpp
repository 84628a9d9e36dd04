#include "tool_outputs/inputs.hpp"

#include <fmt/format.h>

#include "parsers/gunzip.hpp"
#include "parsers/tool_text.hpp"

namespace perfgap::tool_outputs {
namespace {

std::optional<double> number_of_ms(std::string_view v) {
  if (v.size() > 2 && v.substr(v.size() - 2) == "ms") v.remove_suffix(2);
  return parsers::tooltext::number(v);
}

// A .gz input inflated a block at a time (parsers::GunzipSource) and handed on in whole lines,
// as stream_named_file hands on a plain file (a line longer than a block is cut to one block).
tl::expected<void, std::string> stream_gzip_lines(const std::string& path, std::size_t max_bytes, const std::function<bool(std::string_view)>& sink) {
  auto reader = sys::BlockReader::open(path, max_bytes);
  if (!reader) return tl::unexpected(reader.error());
  std::string read_error;  // the file's own (a read error, the size limit): said as such, not as gzip's
  parsers::GunzipSource gz(
      [&]() -> tl::expected<std::string_view, std::string> {
        auto b = reader->next();
        if (!b) read_error = b.error();
        return b;
      },
      max_bytes);
  std::string carry;
  bool skipping = false;  // dropping the rest of a cut line
  while (true) {
    auto b = gz.next();
    if (!b) return tl::unexpected(read_error.empty() ? "gzip: " + b.error() : read_error);
    if (b->empty()) break;
    std::string_view block = *b;
    if (skipping) {
      const auto nl = block.find('\n');
      if (nl == std::string_view::npos) continue;
      block.remove_prefix(nl + 1);
      skipping = false;
    }
    carry.append(block);
    const auto last = carry.rfind('\n');
    if (last != std::string::npos) {
      if (!sink(std::string_view(carry).substr(0, last + 1))) return {};
      carry.erase(0, last + 1);
    } else if (carry.size() >= sys::kStreamBlockBytes) {
      carry.resize(sys::kStreamBlockBytes);
      carry.push_back('\n');
      if (!sink(carry)) return {};
      carry.clear();
      skipping = true;
    }
  }
  if (!carry.empty()) sink(carry);
  return {};
}

}  // namespace

tl::expected<void, std::string> stream_text_input(const std::string& path, std::size_t max_bytes,
                                                  const std::function<void(std::string_view)>& feed) {
  bool first = true, any = false, binary = false;
  auto sink = [&](std::string_view block) {
    // The first block is the first MiB (or all of a smaller input): what looks_binary reads.
    if (first && parsers::tooltext::looks_binary(block)) {
      binary = true;
      return false;
    }
    first = false;
    if (!any) any = block.find_first_not_of(" \t\r\n") != std::string_view::npos;
    feed(block);
    return true;
  };
  // A .gz input is read as the text inside it.
  auto read = path != "-" && path.ends_with(".gz") ? stream_gzip_lines(path, max_bytes, sink) : sys::stream_named_file(path, max_bytes, sink);
  if (!read) return read;
  if (binary) return tl::unexpected(std::string("binary data, not text"));
  if (!any) return tl::unexpected(std::string("empty"));
  return {};
}

bool looks_like_milliseconds(const std::string& arg) { return number_of_ms(arg).has_value(); }

tl::expected<std::optional<double>, std::string> milliseconds_argument(const char* opt, const std::string& arg) {
  auto n = number_of_ms(arg);
  if (n && !(*n > 0)) return tl::unexpected(fmt::format("{} {}: milliseconds per iteration must be positive", opt, arg));
  return n;
}

}  // namespace perfgap::tool_outputs
