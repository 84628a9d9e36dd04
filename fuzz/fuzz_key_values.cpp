// parse_key_values: never crashes; keys and values are trimmed, keys hold no ':' or newline.
#include <string>

#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"
#include "sys/text.hpp"

PERFGAP_FUZZ_TARGET(key_values) {
  auto kv = perfgap::parsers::parse_key_values(perfgap::fuzz::as_text(data, size));
  for (const auto& [k, v] : kv) {
    FUZZ_CHECK(k.find(':') == std::string::npos);
    FUZZ_CHECK(k.find('\n') == std::string::npos);
    FUZZ_CHECK(v.find('\n') == std::string::npos);
    FUZZ_CHECK(perfgap::sys::trim_ws(k) == k);
    FUZZ_CHECK(perfgap::sys::trim_ws(v) == v);
    FUZZ_CHECK(kv.find(k) != kv.end());
  }
  return 0;
}
