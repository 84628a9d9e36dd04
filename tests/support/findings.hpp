// Findings as the unit tests look at them: one by id (and subject), a metric of one, and
// everything they say as lines, for comparing two runs.
#pragma once

#include <stdexcept>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"
#include "report/redact.hpp"

namespace perfgap::fixture {

// The first finding `id` (of `subject`, when given); throws, failing the test, when there is none.
inline const report::Finding& find(const std::vector<report::Finding>& findings, const std::string& id,
                                   const std::string& subject = "") {
  for (const auto& f : findings)
    if (f.id == id && (subject.empty() || f.subject == subject)) return f;
  // profile.exposed_comm's total ("all") is the one kind's finding where there is one kind
  // (metric all_communication 1), not a second finding with the same figures.
  if (subject == "all")
    for (const auto& f : findings)
      if (f.id == id)
        for (const auto& [k, v] : f.metrics)
          if (k == "all_communication" && v == 1) return f;
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

// Every text of a finding that redaction reads (report::redact_finding): title, evidence
// (observed, expected), table cells.
inline std::vector<std::string> redactable_texts(const report::Finding& f) {
  std::vector<std::string> out{f.title};
  for (const auto& e : f.evidence) {
    out.push_back(e.observed);
    if (e.expected) out.push_back(*e.expected);
  }
  for (const auto& row : f.table)
    for (const auto& cell : row) out.push_back(cell);
  return out;
}

// What redaction would change in these findings, "ID@SUBJECT: TEXT -> SHOWN" per text: empty for
// a report without credentials, which must come out byte for byte as it went in.
inline std::vector<std::string> changed_by_redaction(const std::vector<report::Finding>& findings) {
  std::vector<std::string> out;
  for (const auto& f : findings) {
    report::Finding shown = f;
    report::redact_finding(shown);
    const auto was = redactable_texts(f), now = redactable_texts(shown);
    for (std::size_t i = 0; i < was.size(); ++i)
      if (was[i] != now[i]) out.push_back(f.id + "@" + f.subject + ": " + was[i] + " -> " + now[i]);
  }
  return out;
}

}  // namespace perfgap::fixture
