#include "analyzers/nccl_env.hpp"

#include <algorithm>
#include <cctype>
#include <string_view>

#include "report/redact.hpp"
#include "sys/text.hpp"

namespace perfgap::analyzers {

namespace {

bool iequals(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); });
}


std::string shown(std::string_view name, const std::string& value) { return report::redact(name, value); }

}  // namespace

report::Finding judge_nccl_forced(const facts::NcclConfig& c, const std::string& none_where, const std::string& none_prefix) {
  report::Finding out;
  out.id = "nccl.env.forced";
  out.layer = "network";
  out.status = report::Status::pass;
  std::vector<std::string> names;
  for (const char* name : {"NCCL_ALGO", "NCCL_PROTO", "NCCL_MIN_NCHANNELS", "NCCL_MAX_NCHANNELS", "NCCL_BUFFSIZE"})
    if (auto s = c.active(name)) {
      names.push_back(std::string(name) + "=" + shown(name, s->value));
      out.add(s->source, std::string(name) + "=" + shown(name, s->value), "unset (NCCL's tuning)");
    }
  auto dbg = c.active("NCCL_DEBUG");
  auto sub = c.active("NCCL_DEBUG_SUBSYS");
  if (dbg && (iequals(dbg->value, "INFO") || iequals(dbg->value, "TRACE")) && sub) {
    std::string upper = sub->value;
    for (auto& ch : upper) ch = static_cast<char>(std::toupper(static_cast<unsigned char>(ch)));
    bool all = false;
    for (auto w : sys::split(upper, ','))
      all = all || sys::trim_ws(w) == "ALL";
    if (all && upper[0] != '^') {
      names.push_back("NCCL_DEBUG=" + dbg->value + " with NCCL_DEBUG_SUBSYS=" + sub->value);
      out.add(dbg->source, "NCCL_DEBUG=" + dbg->value, "WARN (or INFO with the default subsystems)");
      out.add(sub->source, "NCCL_DEBUG_SUBSYS=" + sub->value);
    }
  }
  if (names.empty()) {
    out.title = "NCCL's algorithm, protocol, channel and buffer tuning is not overridden";
    out.add(none_where, none_prefix + "none of NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS, NCCL_BUFFSIZE; no NCCL_DEBUG=INFO/TRACE with NCCL_DEBUG_SUBSYS=ALL");
    return out;
  }
  out.status = report::Status::warn;
  std::string list;
  for (const auto& n : names) list += (list.empty() ? "" : ", ") + n;
  out.title = "forced NCCL settings override its tuning: " + list;
  out.fix = "Verify each with a sweep against NCCL's default before keeping it, e.g. perfgap sweep --env NCCL_ALGO=<current>,unset -- all_reduce_perf -b 1M -e 1G -f 2 -g 8; drop debug logging (NCCL_DEBUG=WARN) outside investigations.";
  out.impact = "settings tuned on another system or NCCL version often cost bandwidth at some message sizes; full debug logging slows every collective";
  return out;
}

}  // namespace perfgap::analyzers
