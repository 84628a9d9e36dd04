#include "analyze/inputs.hpp"

#include <fmt/format.h>

#include "parsers/tool_text.hpp"

namespace perfgap::analyze {
namespace {

std::optional<double> number_of_ms(std::string_view v) {
  if (v.size() > 2 && v.substr(v.size() - 2) == "ms") v.remove_suffix(2);
  return parsers::tooltext::number(v);
}

}  // namespace

tl::expected<void, std::string> stream_text_input(const std::string& path, std::size_t max_bytes,
                                                  const std::function<void(std::string_view)>& feed) {
  bool first = true, any = false, binary = false;
  auto read = sys::stream_named_file(path, max_bytes, [&](std::string_view block) {
    // The first block is the first MiB (or all of a smaller input): what looks_binary reads.
    if (first && parsers::tooltext::looks_binary(block)) {
      binary = true;
      return false;
    }
    first = false;
    if (!any) any = block.find_first_not_of(" \t\r\n") != std::string_view::npos;
    feed(block);
    return true;
  });
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

}  // namespace perfgap::analyze
