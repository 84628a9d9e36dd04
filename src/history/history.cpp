#include "history/history.hpp"

#include <algorithm>
#include <cerrno>
#include <map>

#include <fmt/format.h>

#include "report/informational.hpp"
#include "sys/named_file.hpp"
#include "sys/output.hpp"
#include "sys/paths.hpp"
#include "sys/spawn.hpp"
#include "sys/text.hpp"

namespace perfgap::history {

namespace history_judge {
namespace {

using report::Status;

// pass/skip 0, warn/error 1, fail 2: "worse" is a step up this scale.
int rank(Status s) {
  switch (s) {
    case Status::fail: return 2;
    case Status::warn:
    case Status::error: return 1;
    case Status::pass:
    case Status::skip: return 0;
  }
  return 0;
}

bool has_fail(const compare::ReportView& v) {
  return std::any_of(v.findings.begin(), v.findings.end(), [](const auto& f) { return f.status == Status::fail && !sys::starts_with(f.id, "history."); });
}

// Whether a run decided anything (history.* aside): a run whose findings are only skips and
// informational summaries' passes (report::decides) examined nothing, so it is no good run to
// go back to and no proof that the node is good now.
bool decided_something(const compare::ReportView& v) {
  return std::any_of(v.findings.begin(), v.findings.end(),
                     [](const auto& f) { return report::decides(f.id, f.status) && !sys::starts_with(f.id, "history."); });
}

std::string key_of(const compare::ReportFinding& f) { return f.subject.empty() ? f.id : f.id + "@" + f.subject; }

struct Diff {
  std::vector<report::Evidence> facts, worse, cleared;
};

// What moved from `then` to `now`: node facts, findings that appeared or got worse, cleared.
Diff diff(const compare::ReportView& then, const compare::ReportView& now) {
  Diff d;
  const std::string when = then.generated_at.empty() ? "then" : then.generated_at;
  std::map<std::string, std::string> before(then.node_facts.begin(), then.node_facts.end());
  std::map<std::string, std::string> after(now.node_facts.begin(), now.node_facts.end());
  for (const auto& [k, v] : now.node_facts) {
    auto it = before.find(k);
    if (it == before.end()) d.facts.push_back({"node." + k, fmt::format("(absent at {}) -> {} now", when, v), std::nullopt});
    else if (it->second != v) d.facts.push_back({"node." + k, fmt::format("{} at {} -> {} now", it->second, when, v), std::nullopt});
  }
  for (const auto& [k, v] : then.node_facts)
    if (!after.count(k)) d.facts.push_back({"node." + k, fmt::format("{} at {} -> absent now", v, when), std::nullopt});

  std::map<std::string, const compare::ReportFinding*> old;
  for (const auto& f : then.findings)
    if (!sys::starts_with(f.id, "history.")) old.emplace(key_of(f), &f);
  std::map<std::string, bool> seen;
  for (const auto& f : now.findings) {
    if (sys::starts_with(f.id, "history.")) continue;
    const auto key = key_of(f);
    seen[key] = true;
    auto it = old.find(key);
    const int was = it == old.end() ? 0 : rank(it->second->status);
    const std::string before_status = it == old.end() ? "absent" : std::string(report::to_string(it->second->status));
    const int is = rank(f.status);
    if (is > was)
      d.worse.push_back({key, fmt::format("{} at {} -> {} now: {}", before_status, when, report::to_string(f.status), f.title), std::nullopt});
    else if (is < was)
      d.cleared.push_back({key, fmt::format("{} at {} -> {} now", before_status, when, report::to_string(f.status)), std::nullopt});
  }
  for (const auto& [key, f] : old)
    if (!seen.count(key) && rank(f->status) > 0)
      d.cleared.push_back({key, fmt::format("{} at {} -> absent now", report::to_string(f->status), when), std::nullopt});
  return d;
}

std::string counts(const Diff& d) {
  return fmt::format("{} setting{} or fact{} moved, {} finding{} appeared or got worse, {} cleared", d.facts.size(), d.facts.size() == 1 ? "" : "s",
                     d.facts.size() == 1 ? "" : "s", d.worse.size(), d.worse.size() == 1 ? "" : "s", d.cleared.size());
}

void fill(report::Finding& f, const Diff& d) {
  for (const auto& e : d.facts) f.evidence.push_back(e);
  for (const auto& e : d.worse) f.evidence.push_back(e);
  for (const auto& e : d.cleared) f.evidence.push_back(e);
  f.metric("settings_changed", static_cast<double>(d.facts.size()));
  f.metric("findings_worse", static_cast<double>(d.worse.size()));
  f.metric("findings_cleared", static_cast<double>(d.cleared.size()));
}

report::Finding make(std::string id, Status status, std::string title) {
  report::Finding f;
  f.id = std::move(id);
  f.layer = "workload";
  f.status = status;
  f.title = std::move(title);
  return f;
}

void add_skipped(report::Finding& f, const Past& past) {
  for (const auto& s : past.skipped) f.add("not used", s);
}

// The command that shows a kept run beside this one, with the real directory (quoted for a shell).
std::string compare_command(const Past& past, const std::string& file) {
  return sys::quote_command({"perfgap", "history", past.dir, "--compare", file, "latest"});
}

}  // namespace
}  // namespace history_judge

std::vector<report::Finding> judge(const compare::ReportView& now, const Past& past) {
  using namespace history_judge;
  std::vector<report::Finding> out;
  if (past.runs.empty()) {
    auto f = make("history.changed", Status::skip, "no earlier run of this node in the history directory: nothing to compare with yet");
    add_skipped(f, past);
    out.push_back(std::move(f));
    auto g = make("history.since_good", Status::skip, "no earlier run of this node in the history directory");
    out.push_back(std::move(g));
    return out;
  }
  const auto& prev = past.runs.back();
  const Diff d = diff(prev.view, now);
  const bool moved = !d.facts.empty() || !d.worse.empty();
  auto changed = make("history.changed", moved ? Status::warn : Status::pass,
                      moved ? fmt::format("since the previous run ({}, {}): {}", prev.view.generated_at, prev.file, counts(d))
                            : fmt::format("nothing moved since the previous run ({}, {}){}", prev.view.generated_at, prev.file,
                                          d.cleared.empty() ? "" : fmt::format("; {} cleared", d.cleared.size())));
  fill(changed, d);
  add_skipped(changed, past);
  if (moved) changed.fix = "A setting that moved or a finding that appeared since the last run is the first suspect for a slower job: see the evidence; `" + compare_command(past, prev.file) + "` shows the two runs side by side.";
  out.push_back(std::move(changed));

  if (!has_fail(now)) {
    out.push_back(decided_something(now)
                      ? make("history.since_good", Status::pass, "no check fails in this run: the node is good now")
                      : make("history.since_good", Status::skip,
                             "nothing in this run was decided (every check skipped or only said what it read): whether the node is good is unknown"));
    return out;
  }
  const Run* good = nullptr;
  for (auto it = past.runs.rbegin(); it != past.runs.rend(); ++it)
    if (!has_fail(it->view) && decided_something(it->view)) {
      good = &*it;
      break;
    }
  if (!good) {
    out.push_back(make("history.since_good", Status::skip,
                       fmt::format("no run without a failing check, and with one that decided, among the {} kept: no good run to compare with",
                                   past.runs.size())));
    return out;
  }
  const Diff g = diff(good->view, now);
  auto since = make("history.since_good", Status::warn,
                    fmt::format("since the last good run ({}, {}): {}", good->view.generated_at, good->file, counts(g)));
  fill(since, g);
  since.fix = "What moved since the node was last good is where to look first (a BIOS or kernel update, a new image, a changed variable): see the evidence; `" +
              compare_command(past, good->file) + "` shows both runs.";
  out.push_back(std::move(since));
  return out;
}

std::vector<report::Finding> unusable(const std::string& dir, const std::string& why) {
  using namespace history_judge;
  auto f = make("history.changed", Status::skip, fmt::format("history {} not used: {}", dir, why));
  auto g = make("history.since_good", Status::skip, fmt::format("history {} not used: {}", dir, why));
  return {f, g};
}

namespace history_disk {
namespace {

// "perfgap-run-00000042-20261202T125000Z.json" -> 42; nullopt for any other name.
std::optional<unsigned long> sequence_of(const std::string& name) {
  const std::string prefix = kRunPrefix;
  if (!sys::starts_with(name, prefix) || name.size() < prefix.size() + 9 || name.substr(name.size() - 5) != ".json") return std::nullopt;
  auto digits = std::string_view(name).substr(prefix.size(), 8);
  if (name[prefix.size() + 8] != '-') return std::nullopt;
  return sys::to_int<unsigned long>(digits);
}

struct Entry {
  unsigned long seq;
  std::string name;
  std::uint64_t bytes;
};

// DIR's runs by sequence, and its other plain files.
std::pair<std::vector<Entry>, std::vector<std::string>> list_dir(const std::string& dir, std::string& error) {
  std::vector<Entry> runs;
  std::vector<std::string> others;
  auto listing = sys::list_directory(dir);
  for (const auto& e : listing.entries) {
    const auto& name = e.name;
    if (name == kLockName || sys::starts_with(name, ".")) continue;  // the lock, temporary files of a write
    if (auto seq = sequence_of(name); seq && e.regular) {
      runs.push_back({*seq, name, e.size});
    } else {
      others.push_back(name);
    }
  }
  if (!listing.error.empty()) error = fmt::format("{}: cannot list ({})", dir, listing.error);
  std::sort(runs.begin(), runs.end(), [](const Entry& a, const Entry& b) { return a.seq < b.seq; });
  std::sort(others.begin(), others.end());
  return {runs, others};
}

}  // namespace
}  // namespace history_disk

Past load(const std::string& dir, const std::string& node) {
  using namespace history_disk;
  Past past;
  past.dir = dir;
  std::string error;
  auto [runs, others] = list_dir(dir, error);
  if (!error.empty()) past.skipped.push_back(error);
  for (const auto& o : others) past.skipped.push_back(o + ": not a perfgap-run-*.json file of this history");
  for (const auto& e : runs) {
    auto text = sys::read_named_file(dir + "/" + e.name, sys::kMaxReportFileBytes);
    if (!text) {
      past.skipped.push_back(e.name + ": " + text.error());
      continue;
    }
    auto view = compare::read_report(*text);
    if (!view) {
      past.skipped.push_back(e.name + ": " + view.error());
      continue;
    }
    if (compare::comparable_kind(view->kind) != "node") {
      past.skipped.push_back(fmt::format("{}: a {} report, not a node check", e.name, view->kind));
      continue;
    }
    if (!node.empty() && view->node != node) {
      past.skipped.push_back(fmt::format("{}: node {}, not {}", e.name, view->node, node));
      continue;
    }
    past.runs.push_back({e.name, std::move(*view)});
  }
  return past;
}

tl::expected<std::string, std::string> keep(const std::string& dir, const std::string& report_json, const std::string& generated_at,
                                            const Limits& limits) {
  using namespace history_disk;
  std::string error;
  auto [runs, others] = list_dir(dir, error);
  if (!error.empty()) return tl::unexpected(error);
  const unsigned long seq = runs.empty() ? 1 : runs.back().seq + 1;
  if (seq > 99999999UL) return tl::unexpected(dir + ": run sequence exhausted (99999999): start a new history directory");
  std::string stamp;
  for (char c : generated_at)
    if (std::isalnum(static_cast<unsigned char>(c))) stamp += c;
  const std::string name = fmt::format("{}{:08d}-{}.json", kRunPrefix, seq, stamp.empty() ? "run" : stamp);
  if (auto w = sys::write_atomically(dir + "/" + name, report_json); !w) return tl::unexpected(w.error());
  runs.push_back({seq, name, report_json.size()});
  std::uint64_t total = 0;
  for (const auto& r : runs) total += r.bytes;
  std::size_t first = 0;
  // Oldest first, never the run just written.
  while (first + 1 < runs.size() && (runs.size() - first > limits.max_runs || total > limits.max_bytes)) {
    sys::remove_path(dir + "/" + runs[first].name);
    total -= runs[first].bytes;
    ++first;
  }
  return name;
}

}  // namespace perfgap::history
