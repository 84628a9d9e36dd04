#include "png.hpp"

#include <zlib.h>

#include <cstdlib>
#include <map>

namespace perfgap::fixture {
namespace {

std::uint32_t be32(std::string_view s, std::size_t at) {
  auto b = [&](std::size_t i) { return static_cast<std::uint32_t>(static_cast<unsigned char>(s[at + i])); };
  return b(0) << 24 | b(1) << 16 | b(2) << 8 | b(3);
}

int paeth(int a, int b, int c) {
  int p = a + b - c, pa = std::abs(p - a), pb = std::abs(p - b), pc = std::abs(p - c);
  return pa <= pb && pa <= pc ? a : pb <= pc ? b : c;
}

}  // namespace

tl::expected<Image, std::string> decode_png(std::string_view s) {
  static constexpr std::string_view kMagic("\x89PNG\r\n\x1a\n", 8);
  if (s.substr(0, 8) != kMagic) return tl::unexpected(std::string("not a PNG"));
  std::size_t at = 8;
  Image img;
  int color_type = -1, channels = 0;
  std::string idat;
  while (at + 12 <= s.size()) {
    std::uint32_t len = be32(s, at);
    std::string_view type = s.substr(at + 4, 4);
    if (at + 12 + len > s.size()) return tl::unexpected(std::string("chunk past the end"));
    std::string_view data = s.substr(at + 8, len);
    if (type == "IHDR") {
      if (len < 13) return tl::unexpected(std::string("short IHDR"));
      img.width = be32(data, 0);
      img.height = be32(data, 4);
      int depth = static_cast<unsigned char>(data[8]);
      color_type = static_cast<unsigned char>(data[9]);
      if (depth != 8 || static_cast<unsigned char>(data[12]) != 0) return tl::unexpected(std::string("only 8-bit, non-interlaced PNGs"));
      channels = color_type == 0 ? 1 : color_type == 2 ? 3 : color_type == 4 ? 2 : color_type == 6 ? 4 : 0;
      if (!channels) return tl::unexpected(std::string("palette PNGs are not read"));
      if (img.width == 0 || img.height == 0 || img.width > 20000 || img.height > 40000) return tl::unexpected(std::string("odd dimensions"));
    } else if (type == "IDAT") {
      idat.append(data);
    } else if (type == "IEND") {
      break;
    }
    at += 12 + len;
  }
  if (!channels) return tl::unexpected(std::string("no IHDR"));
  const std::size_t stride = static_cast<std::size_t>(img.width) * static_cast<std::size_t>(channels);
  std::vector<std::uint8_t> raw((stride + 1) * img.height);
  uLongf raw_len = raw.size();
  if (uncompress(raw.data(), &raw_len, reinterpret_cast<const Bytef*>(idat.data()), idat.size()) != Z_OK || raw_len != raw.size())
    return tl::unexpected(std::string("IDAT does not inflate to the image size"));
  std::vector<std::uint8_t> px(stride * img.height), prev(stride, 0);
  for (std::uint32_t y = 0; y < img.height; ++y) {
    const std::uint8_t* line = raw.data() + y * (stride + 1);
    std::uint8_t* out = px.data() + y * stride;
    int filter = line[0];
    for (std::size_t x = 0; x < stride; ++x) {
      int a = x >= static_cast<std::size_t>(channels) ? out[x - static_cast<std::size_t>(channels)] : 0, b = prev[x],
          c = x >= static_cast<std::size_t>(channels) ? prev[x - static_cast<std::size_t>(channels)] : 0;
      int v = line[1 + x];
      switch (filter) {
        case 0: break;
        case 1: v += a; break;
        case 2: v += b; break;
        case 3: v += (a + b) / 2; break;
        case 4: v += paeth(a, b, c); break;
        default: return tl::unexpected(std::string("bad filter type"));
      }
      out[x] = static_cast<std::uint8_t>(v);
    }
    prev.assign(out, out + stride);
  }
  img.rgb.resize(static_cast<std::size_t>(img.width) * img.height * 3);
  for (std::size_t i = 0; i < static_cast<std::size_t>(img.width) * img.height; ++i) {
    const std::uint8_t* p = px.data() + i * static_cast<std::size_t>(channels);
    for (int k = 0; k < 3; ++k) img.rgb[i * 3 + static_cast<std::size_t>(k)] = channels >= 3 ? p[k] : p[0];
  }
  return img;
}

double ink_share(const Image& img) {
  const std::size_t n = static_cast<std::size_t>(img.width) * img.height;
  if (n == 0) return 0;
  std::map<std::uint32_t, std::size_t> counts;
  for (std::size_t i = 0; i < n; ++i) ++counts[static_cast<std::uint32_t>(img.rgb[i * 3]) << 16 | static_cast<std::uint32_t>(img.rgb[i * 3 + 1]) << 8 | img.rgb[i * 3 + 2]];
  std::size_t most = 0;
  for (const auto& [c, k] : counts) most = std::max(most, k);
  return static_cast<double>(n - most) / static_cast<double>(n);
}

}  // namespace perfgap::fixture
