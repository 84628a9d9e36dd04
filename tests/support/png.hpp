// A small PNG reader for tests that look at screenshots (8-bit grey, RGB, RGBA; not
// interlaced): enough to tell a drawn page from a blank one.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::fixture {

struct Image {
  std::uint32_t width = 0, height = 0;
  std::vector<std::uint8_t> rgb;  // width * height * 3
};

tl::expected<Image, std::string> decode_png(std::string_view bytes);

// Share of pixels (0..1) that differ from the most common colour (the background).
double ink_share(const Image& img);

}  // namespace perfgap::fixture
