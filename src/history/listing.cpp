// perfgap history DIR's side of the kept runs: the listing and the runs --compare names.
#include "history/history.hpp"

#include <algorithm>

#include <fmt/format.h>

#include "report/informational.hpp"
#include "sys/text.hpp"

namespace perfgap::history {
namespace {

// One line per kept run: its worst status and the ids that failed or warned.
report::Finding run_line(const Run& run) {
  report::Finding f;
  f.id = "history.run";
  f.layer = "workload";
  f.subject = run.file;
  int fail = 0, warn = 0;
  bool decided = false;  // a run of skips and informational summaries examined nothing: skip, not pass
  std::vector<std::string> failed, warned;
  for (const auto& x : run.view.findings) {
    if (sys::starts_with(x.id, "history.")) continue;
    decided = decided || report::decides(x.id, x.status);
    if (x.status == report::Status::fail) {
      ++fail;
      failed.push_back(x.subject.empty() ? x.id : x.id + "@" + x.subject);
    } else if (x.status == report::Status::warn) {
      ++warn;
      warned.push_back(x.subject.empty() ? x.id : x.id + "@" + x.subject);
    }
  }
  f.status = fail ? report::Status::fail : warn ? report::Status::warn : decided ? report::Status::pass : report::Status::skip;
  f.title = fmt::format("{} {}: {} fail, {} warn{}{}", run.view.generated_at, run.view.node.empty() ? "(no node)" : run.view.node, fail, warn,
                        failed.empty() ? "" : fmt::format(" ({})", fmt::join(failed, ", ")), decided ? "" : "; nothing decided");
  for (const auto& w : warned) f.add("warn", w);
  f.metric("fail", fail).metric("warn", warn);
  return f;
}

}  // namespace

std::vector<report::Finding> listing(const Past& past) {
  std::vector<report::Finding> findings;
  for (const auto& r : past.runs) findings.push_back(run_line(r));
  for (const auto& s : past.skipped) {
    report::Finding f;
    f.id = "history.run";
    f.layer = "workload";
    f.status = report::Status::skip;
    f.subject = s.substr(0, s.find(':'));
    f.title = "not used: " + s;
    findings.push_back(std::move(f));
  }
  return findings;
}

tl::expected<const Run*, std::string> find_run(const Past& past, const std::string& ref) {
  using tl::unexpected;
  if (past.runs.empty()) return unexpected(std::string("history: no kept runs to compare"));
  if (ref == "latest") return &past.runs.back();
  if (ref == "previous") {
    if (past.runs.size() < 2) return unexpected(std::string("history: only one kept run: there is no previous"));
    return &past.runs[past.runs.size() - 2];
  }
  if (auto n = sys::to_int<std::size_t>(ref)) {
    if (*n < 1 || *n > past.runs.size()) return unexpected(fmt::format("history: run {} not kept (1 to {})", ref, past.runs.size()));
    return &past.runs[*n - 1];
  }
  auto it = std::find_if(past.runs.begin(), past.runs.end(), [&](const Run& r) { return r.file == ref; });
  if (it == past.runs.end()) return unexpected("history: no kept run named " + ref + " (give latest, previous, a number from the listing or a file name)");
  return &*it;
}

}  // namespace perfgap::history
