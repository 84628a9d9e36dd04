// parse_environ: never crashes; no entry spans a NUL, names hold no '=', and re-joining the
// entries gives back every non-empty entry of the input, in order.
#include <string>

#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(environ) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto env = perfgap::parsers::parse_environ(text);
  std::string expect;
  for (std::size_t pos = 0; pos <= text.size();) {
    auto nul = text.find('\0', pos);
    auto entry = text.substr(pos, nul == std::string_view::npos ? std::string_view::npos : nul - pos);
    if (!entry.empty()) {
      expect.append(entry);
      if (entry.find('=') == std::string_view::npos) expect.push_back('=');
      expect.push_back('\0');
    }
    if (nul == std::string_view::npos) break;
    pos = nul + 1;
  }
  std::string joined;
  for (const auto& [k, v] : env) {
    FUZZ_CHECK(k.find('\0') == std::string::npos);
    FUZZ_CHECK(v.find('\0') == std::string::npos);
    FUZZ_CHECK(k.find('=') == std::string::npos);
    joined += k + "=" + v;
    joined.push_back('\0');
  }
  FUZZ_CHECK(joined == expect);
  return 0;
}
