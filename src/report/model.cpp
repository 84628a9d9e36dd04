#include "report/model.hpp"

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
  const Summary s = summary();
  if (s.skip == 0 || s.pass || s.warn || s.fail || s.error) return "";
  return "nothing could be decided: " + findings.front().title;
}

}  // namespace perfgap::report
