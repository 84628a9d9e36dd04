// parse_link_speed / parse_link_width: never crash; a speed is positive and finite (GT/s), a
// width is 0..32.
#include <cmath>

#include "fuzz_common.hpp"
#include "parsers/sysfs_values.hpp"

PERFGAP_FUZZ_TARGET(pcie_link) {
  auto text = perfgap::fuzz::as_text(data, size);
  if (auto s = perfgap::parsers::parse_link_speed(text)) FUZZ_CHECK(std::isfinite(*s) && *s > 0 && *s <= 1000);
  if (auto w = perfgap::parsers::parse_link_width(text)) FUZZ_CHECK(*w >= 0 && *w <= 32);
  return 0;
}
