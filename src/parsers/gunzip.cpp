#include "parsers/gunzip.hpp"

#include <zlib.h>

#include <climits>

namespace perfgap::parsers {

tl::expected<std::string, std::string> gunzip(std::string_view bytes, std::size_t max_out) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    return tl::unexpected(std::string(bytes.empty() ? "empty" : "not gzip data (no 1f 8b magic)"));
  if (bytes.size() > UINT_MAX) return tl::unexpected(std::string("too large"));
  z_stream s{};
  if (inflateInit2(&s, 16 + MAX_WBITS) != Z_OK) return tl::unexpected(std::string("zlib: cannot initialise"));
  s.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(bytes.data()));
  s.avail_in = static_cast<uInt>(bytes.size());
  std::string out;
  char buf[65536];
  int rc = Z_OK;
  std::string error;
  for (;;) {
    s.next_out = reinterpret_cast<Bytef*>(buf);
    s.avail_out = sizeof buf;
    rc = inflate(&s, Z_NO_FLUSH);
    std::size_t produced = sizeof buf - s.avail_out;
    if (out.size() + produced > max_out) {
      error = "decompressed data larger than the limit";
      break;
    }
    out.append(buf, produced);
    if (rc == Z_STREAM_END) break;
    if (rc == Z_BUF_ERROR || (rc == Z_OK && s.avail_in == 0 && produced == 0)) {
      error = "truncated gzip data (the stream ends before its end marker)";
      break;
    }
    if (rc != Z_OK) {
      error = std::string("corrupt gzip data") + (s.msg ? std::string(" (") + s.msg + ")" : std::string());
      break;
    }
  }
  inflateEnd(&s);
  if (!error.empty()) return tl::unexpected(error);
  return out;
}

}  // namespace perfgap::parsers
