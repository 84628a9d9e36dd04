// Findings as the unit tests look at them: one by id (and subject), a metric of one, and
// everything they say as lines, for comparing two runs.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"

namespace perfgap::fixture {

// The first finding `id` (of `subject`, when given); throws, failing the test, when there is none.
inline const report::Finding& find(const std::vector<report::Finding>& findings, const std::string& id,
                                   const std::string& subject = "") {
  for (const auto& f : findings)
    if (f.id == id && (subject.empty() || f.subject == subject)) return f;
  throw std::runtime_error("no finding " + id + (subject.empty() ? "" : "@" + subject));
}

// The metric `name` of a finding; throws, failing the test, when it has none.
inline double metric(const report::Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name) return v;
  throw std::runtime_error("no metric " + name + " in " + f.id + (f.subject.empty() ? "" : "@" + f.subject));
}

// Everything a finding says (id, subject, status, title, evidence), one line each.
inline std::vector<std::string> describe_findings(const std::vector<report::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    std::string line = f.id + "@" + f.subject + " " + std::string(report::to_string(f.status)) + " " + f.title;
    for (const auto& e : f.evidence) line += " | " + e.source + ": " + e.observed + (e.expected ? " (" + *e.expected + ")" : "");
    out.push_back(std::move(line));
  }
  return out;
}

}  // namespace perfgap::fixture
