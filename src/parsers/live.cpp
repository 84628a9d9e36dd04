#include "parsers/live.hpp"

#include <vector>

#include "parsers/procfs.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {

Parsed<SchedStat> parse_schedstat(std::string_view text) {
  auto f = sys::split_ws(sys::trim_ws(text));
  if (f.size() < 3) return parse_fail("schedstat: three numbers expected (run ns, wait ns, timeslices)", 1);
  auto run = sys::to_int<std::uint64_t>(f[0]), wait = sys::to_int<std::uint64_t>(f[1]), slices = sys::to_int<std::uint64_t>(f[2]);
  if (!run || !wait || !slices) return parse_fail("schedstat: not a number", 1);
  return SchedStat{*run, *wait, *slices};
}

Parsed<std::uint64_t> parse_nonvoluntary_switches(std::string_view status_text) {
  auto kv = parse_key_values(status_text);
  auto it = kv.find("nonvoluntary_ctxt_switches");
  if (it == kv.end()) return parse_fail("no nonvoluntary_ctxt_switches line");
  auto n = sys::to_int<std::uint64_t>(sys::trim_ws(it->second));
  if (!n) return parse_fail("nonvoluntary_ctxt_switches: not a number");
  return *n;
}

Parsed<std::map<std::string, std::uint64_t, std::less<>>> parse_vmstat(std::string_view text) {
  std::map<std::string, std::uint64_t, std::less<>> out;
  int line_no = 0;
  for (auto line : sys::split_lines(text)) {
    ++line_no;
    line = sys::trim_ws(line);
    if (line.empty()) continue;
    auto f = sys::split_ws(line);
    auto v = f.size() == 2 ? sys::to_int<std::uint64_t>(f[1]) : std::nullopt;
    if (!v) return parse_fail("not a \"name value\" line", line_no);
    out[std::string(f[0])] = *v;
  }
  if (out.empty()) return parse_fail("no vmstat counters");
  return out;
}

}  // namespace perfgap::parsers
