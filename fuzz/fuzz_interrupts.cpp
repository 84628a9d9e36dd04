// parse_interrupts: never crashes; every row has one count per header column, its name is
// trimmed and holds no ':' (the name ends at the first colon).
#include <string>

#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"
#include "sys/text.hpp"

PERFGAP_FUZZ_TARGET(interrupts) {
  auto r = perfgap::parsers::parse_interrupts(perfgap::fuzz::as_text(data, size));
  if (!r) {
    FUZZ_CHECK(!r.error().message.empty());
    return 0;
  }
  FUZZ_CHECK(!r->cpus.empty());
  for (const auto& row : r->rows) {
    FUZZ_CHECK(row.counts.size() == r->cpus.size());
    FUZZ_CHECK(row.irq.find(':') == std::string::npos);
    FUZZ_CHECK(perfgap::sys::trim_ws(row.irq) == row.irq);
    FUZZ_CHECK(row.description.find('\n') == std::string::npos);
  }
  return 0;
}
