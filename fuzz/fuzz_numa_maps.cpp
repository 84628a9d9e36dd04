// parse_numa_maps: never crashes; the count of mappings is at most the count of lines, and
// errors carry the (1-based) line they are about.
#include <algorithm>

#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(numa_maps) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto lines = static_cast<int>(std::count(text.begin(), text.end(), '\n')) + 1;
  auto r = perfgap::parsers::parse_numa_maps(text);
  if (!r) {
    FUZZ_CHECK(r.error().line >= 1 && r.error().line <= lines);
    return 0;
  }
  FUZZ_CHECK(r->mappings >= 0 && r->mappings <= lines);
  for (const auto& [node, bytes] : r->bytes_per_node) FUZZ_CHECK(node >= 0);
  return 0;
}
