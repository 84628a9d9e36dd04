#include "report/model.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <utility>
#include <vector>

#include "report/informational.hpp"

namespace perfgap::report {

std::string_view to_string(Status s) {
  switch (s) {
    case Status::pass: return "pass";
    case Status::warn: return "warn";
    case Status::fail: return "fail";
    case Status::skip: return "skip";
    case Status::error: return "error";
  }
  return "error";
}

int severity(Status s) {
  switch (s) {
    case Status::fail: return 4;
    case Status::error: return 3;
    case Status::warn: return 2;
    case Status::pass: return 1;
    case Status::skip: return 0;
  }
  return 3;
}

Summary Report::summary() const { return summarize(findings); }

Summary summarize(const std::vector<Finding>& findings) {
  Summary s;
  for (const auto& f : findings) {
    switch (f.status) {
      case Status::pass: ++s.pass; break;
      case Status::warn: ++s.warn; break;
      case Status::fail: ++s.fail; break;
      case Status::skip: ++s.skip; break;
      case Status::error: ++s.error; break;
    }
  }
  return s;
}

bool Report::has_fail() const {
  for (const auto& f : findings)
    if (f.status == Status::fail) return true;
  return false;
}

std::string Report::undecided_why() const {
  if (!undecided.empty()) return undecided;
  if (findings.empty()) return "";
  // The reason most skips share, not the first skip's: a tree without a kernel log or NVML
  // capture skips a dozen checks for it, and the first check's skip ("not a Grace node") would
  // name a reason that holds for one. The first skip breaks ties.
  std::vector<std::pair<const Finding*, std::size_t>> reasons;
  std::size_t skips = 0;
  for (const auto& f : findings) {
    if (decides(f)) return "";
    if (f.status != Status::skip) continue;
    ++skips;
    auto same = std::find_if(reasons.begin(), reasons.end(), [&](const auto& r) { return r.first->title == f.title; });
    if (same == reasons.end())
      reasons.emplace_back(&f, 1);
    else
      ++same->second;
  }
  if (!reasons.empty()) {
    const auto most = std::max_element(reasons.begin(), reasons.end(), [](const auto& a, const auto& b) { return a.second < b.second; });
    if (most->second == 1 || most->second == skips) return "nothing could be decided: " + most->first->title;
    return fmt::format("nothing could be decided: {} of {} skips say: {}", most->second, skips, most->first->title);
  }
  // Only informational passes: what was read, and that nothing judged it.
  const Finding& f = findings.front();
  return fmt::format("nothing could be decided: {} only says what was read ({}); no finding judged it", f.id, f.title);
}

}  // namespace perfgap::report
