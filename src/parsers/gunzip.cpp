#include "parsers/gunzip.hpp"

#include <zlib.h>

#include <climits>

namespace perfgap::parsers {

struct GunzipSource::State {
  ByteSource in;
  std::size_t max_out, block, total = 0;
  z_stream z{};
  bool ready = false, in_end = false, done = false;
  std::string error;
  std::unique_ptr<char[]> out;
  ~State() {
    if (ready) inflateEnd(&z);
  }
};

GunzipSource::GunzipSource(ByteSource in, std::size_t max_out, std::size_t block) : s_(std::make_unique<State>()) {
  s_->in = std::move(in);
  s_->max_out = max_out;
  s_->block = block < 64 ? 64 : block;
  s_->out.reset(new char[s_->block]);
  s_->ready = inflateInit2(&s_->z, 16 + MAX_WBITS) == Z_OK;  // 16: gzip framing only
  if (!s_->ready) s_->error = "zlib: cannot initialise";
}

GunzipSource::~GunzipSource() = default;

tl::expected<std::string_view, std::string> GunzipSource::next() {
  State& s = *s_;
  if (!s.error.empty()) return tl::unexpected(s.error);
  if (s.done) return std::string_view();
  std::size_t produced = 0;
  while (produced < s.block) {
    if (s.z.avail_in == 0 && !s.in_end) {
      auto b = s.in();
      if (!b) return tl::unexpected(s.error = b.error());
      if (b->size() > UINT_MAX) return tl::unexpected(s.error = "too large");
      s.in_end = b->empty();
      s.z.next_in = reinterpret_cast<Bytef*>(const_cast<char*>(b->data()));
      s.z.avail_in = static_cast<uInt>(b->size());
    }
    s.z.next_out = reinterpret_cast<Bytef*>(s.out.get() + produced);
    s.z.avail_out = static_cast<uInt>(s.block - produced);
    int rc = inflate(&s.z, Z_NO_FLUSH);
    std::size_t n = s.block - produced - s.z.avail_out;
    produced += n;
    if (s.total + produced > s.max_out) return tl::unexpected(s.error = "decompressed data larger than the limit");
    if (rc == Z_STREAM_END) {
      s.done = true;
      break;
    }
    // No progress with all the input given: the stream ends before its end marker.
    bool starved = s.z.avail_in == 0 && s.in_end;
    if ((rc == Z_BUF_ERROR && starved) || (rc == Z_OK && starved && n == 0))
      return tl::unexpected(s.error = "truncated gzip data (the stream ends before its end marker)");
    if (rc == Z_BUF_ERROR && s.z.avail_in == 0) continue;  // wants more input: pulled above
    if (rc != Z_OK)
      return tl::unexpected(s.error = std::string("corrupt gzip data") + (s.z.msg ? std::string(" (") + s.z.msg + ")" : std::string()));
  }
  s.total += produced;
  return std::string_view(s.out.get(), produced);
}

tl::expected<std::string, std::string> gunzip(std::string_view bytes, std::size_t max_out) {
  if (bytes.size() < 2 || static_cast<unsigned char>(bytes[0]) != 0x1f || static_cast<unsigned char>(bytes[1]) != 0x8b)
    return tl::unexpected(std::string(bytes.empty() ? "empty" : "not gzip data (no 1f 8b magic)"));
  if (bytes.size() > UINT_MAX) return tl::unexpected(std::string("too large"));
  GunzipSource z(blocks_of(bytes), max_out, 64u << 10);
  std::string out;
  for (;;) {
    auto b = z.next();
    if (!b) return tl::unexpected(b.error());
    if (b->empty()) return out;
    out.append(*b);
  }
}

}  // namespace perfgap::parsers
