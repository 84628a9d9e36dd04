// gunzip (zlib): never crashes or overruns on any bytes, truncated and corrupt streams
// included; a success never exceeds the output limit, and a failure says why.
#include "fuzz_common.hpp"
#include "parsers/gunzip.hpp"

PERFGAP_FUZZ_TARGET(gunzip) {
  constexpr std::size_t kLimit = 1u << 20;
  auto out = perfgap::parsers::gunzip(perfgap::fuzz::as_text(data, size), kLimit);
  if (out) FUZZ_CHECK(out->size() <= kLimit);
  else FUZZ_CHECK(!out.error().empty());
  return 0;
}
