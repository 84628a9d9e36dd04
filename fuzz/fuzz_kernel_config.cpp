// parse_kernel_config: never crashes; every value it keeps is found by get() under its name
// (with or without the CONFIG_ prefix), and holds no newline.
#include <string>

#include "fuzz_common.hpp"
#include "parsers/kernel_config.hpp"

PERFGAP_FUZZ_TARGET(kernel_config) {
  auto c = perfgap::parsers::parse_kernel_config(perfgap::fuzz::as_text(data, size));
  if (!c) {
    FUZZ_CHECK(!c.error().empty());
    return 0;
  }
  FUZZ_CHECK(!c->values.empty());
  for (const auto& [k, v] : c->values) {
    FUZZ_CHECK(k.rfind("CONFIG_", 0) == 0 && k.size() > 7);
    FUZZ_CHECK(k.find_first_of(" \t\n=") == std::string::npos);
    FUZZ_CHECK(v.find('\n') == std::string::npos);
    FUZZ_CHECK(c->get(k) == v);
    // get() accepts the name without its prefix too (unless that name itself starts with CONFIG_).
    if (k.compare(7, 7, "CONFIG_") != 0) FUZZ_CHECK(c->get(k.substr(7)) == v);
  }
  return 0;
}
