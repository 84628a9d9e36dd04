// parse_memlock_limit: never crashes; an accepted row keeps the text it was read from.
#include "facts/runtime.hpp"
#include "fuzz_common.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
  auto l = perfgap::facts::parse_memlock_limit(perfgap::fuzz::as_text(data, size));
  if (l) FUZZ_CHECK(!l->text.empty());
  else FUZZ_CHECK(!l.error().empty());
  return 0;
}
