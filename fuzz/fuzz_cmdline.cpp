// parse_cmdline: never crashes; every word is found by has(), every "name=value" word makes
// value(name) answer the last such word's value (the kernel's last-one-wins), names compared
// with '-' and '_' as the same character (the kernel's parameq).
#include <string>

#include "fuzz_common.hpp"
#include "parsers/procfs.hpp"

PERFGAP_FUZZ_TARGET(cmdline) {
  auto cmd = perfgap::parsers::parse_cmdline(perfgap::fuzz::as_text(data, size));
  for (const auto& w : cmd.words) {
    FUZZ_CHECK(w.find('"') == std::string::npos);
    FUZZ_CHECK(cmd.has(w));
    auto eq = w.find('=');
    if (eq == std::string::npos || eq == 0) continue;
    std::string name = w.substr(0, eq);
    FUZZ_CHECK(cmd.has(name));
    auto v = cmd.value(name);
    FUZZ_CHECK(v.has_value());
    auto fold = [](std::string t) {
      for (auto& c : t)
        if (c == '-') c = '_';
      return t;
    };
    std::string last;
    for (const auto& x : cmd.words)
      if (x.size() > name.size() && fold(x.substr(0, name.size())) == fold(name) && x[name.size()] == '=')
        last = x.substr(name.size() + 1);
    FUZZ_CHECK(*v == last);
  }
  return 0;
}
