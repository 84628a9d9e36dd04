#include "report/model.hpp"

#include <fmt/format.h>

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
  const Finding* first_skip = nullptr;
  for (const auto& f : findings) {
    if (decides(f)) return "";
    if (!first_skip && f.status == Status::skip) first_skip = &f;
  }
  if (first_skip) return "nothing could be decided: " + first_skip->title;
  // Only informational passes: what was read, and that nothing judged it.
  const Finding& f = findings.front();
  return fmt::format("nothing could be decided: {} only says what was read ({}); no finding judged it", f.id, f.title);
}

}  // namespace perfgap::report
