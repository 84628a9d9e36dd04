// parse_nccl_conf: never crashes; names are non-empty, at most 1023 bytes, without '=', '\n'
// or NUL; values at most 1023 bytes without '\n' or NUL; each name once (first wins); line
// numbers increase. parse_nccl_if_list / nccl_if_match on the same bytes never crash, keep at
// most 32 entries, none empty.
#include <set>
#include <string>

#include "fuzz_common.hpp"
#include "parsers/nccl_conf.hpp"

PERFGAP_FUZZ_TARGET(nccl_conf) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto entries = perfgap::parsers::parse_nccl_conf(text);
  std::set<std::string> seen;
  int last_line = 0;
  for (const auto& e : entries) {
    FUZZ_CHECK(!e.name.empty() && e.name.size() <= 1023 && e.value.size() <= 1023);
    FUZZ_CHECK(e.name.find_first_of(std::string("=\n\0", 3)) == std::string::npos);
    FUZZ_CHECK(e.value.find_first_of(std::string("\n\0", 2)) == std::string::npos);
    FUZZ_CHECK(seen.insert(e.name).second);
    FUZZ_CHECK(e.line > last_line);
    last_line = e.line;
  }
  auto list = perfgap::parsers::parse_nccl_if_list(text);
  FUZZ_CHECK(list.entries.size() <= 32);
  for (const auto& e : list.entries) {
    FUZZ_CHECK(!e.prefix.empty());
    FUZZ_CHECK(e.prefix.find(',') == std::string::npos && e.prefix.find(':') == std::string::npos);
    (void)perfgap::parsers::nccl_if_match(list, e.prefix, e.port);
  }
  (void)perfgap::parsers::nccl_int(text);
  return 0;
}
