// parse_memlock_limit: never crashes; an accepted row keeps the text it was read from.
#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(limits) {
  auto l = perfgap::parsers::parse_memlock_limit(perfgap::fuzz::as_text(data, size));
  if (l) FUZZ_CHECK(!l->text.empty());
  else FUZZ_CHECK(!l.error().empty());
  return 0;
}
