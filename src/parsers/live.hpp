// The small /proc texts `perfgap profile` reads at both ends of its window: a thread's
// schedstat, the involuntary switches of a status file, /proc/vmstat counters.
#pragma once

#include <cstdint>
#include <map>
#include <string>
#include <string_view>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// /proc/<pid>/task/<tid>/schedstat: "RUN_NS WAIT_NS TIMESLICES".
struct SchedStat {
  std::uint64_t run_ns = 0, wait_ns = 0, slices = 0;
};
Parsed<SchedStat> parse_schedstat(std::string_view text);

// nonvoluntary_ctxt_switches of a /proc/<pid>/status (or task status) text.
Parsed<std::uint64_t> parse_nonvoluntary_switches(std::string_view status_text);

// /proc/vmstat: "name value" lines (a damaged line is an error naming it).
Parsed<std::map<std::string, std::uint64_t, std::less<>>> parse_vmstat(std::string_view text);

}  // namespace perfgap::parsers
