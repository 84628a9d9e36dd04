// perfgap history DIR: the runs `check --history DIR` kept, one line each, and any two of them
// side by side (--compare A B, through compare).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "cli/commands.hpp"
#include "cli/compare_cmd.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "compare/compare.hpp"
#include "history/history.hpp"
#include "sys/paths.hpp"
#include "sys/text.hpp"

namespace perfgap::cli {
namespace {

struct HistoryArgs {
  std::string dir, format, output, node;
  std::vector<std::string> compare;
  double tolerance_pct = 5;
  bool verbose = false;
};

// One line per kept run: its worst status and the ids that failed or warned.
report::Finding run_line(const history::Run& run) {
  report::Finding f;
  f.id = "history.run";
  f.layer = "workload";
  f.subject = run.file;
  int fail = 0, warn = 0;
  std::vector<std::string> failed, warned;
  for (const auto& x : run.view.findings) {
    if (sys::starts_with(x.id, "history.")) continue;
    if (x.status == report::Status::fail) {
      ++fail;
      failed.push_back(x.subject.empty() ? x.id : x.id + "@" + x.subject);
    } else if (x.status == report::Status::warn) {
      ++warn;
      warned.push_back(x.subject.empty() ? x.id : x.id + "@" + x.subject);
    }
  }
  f.status = fail ? report::Status::fail : warn ? report::Status::warn : report::Status::pass;
  f.title = fmt::format("{} {}: {} fail, {} warn{}", run.view.generated_at, run.view.node.empty() ? "(no node)" : run.view.node, fail, warn,
                        failed.empty() ? "" : fmt::format(" ({})", fmt::join(failed, ", ")));
  for (const auto& w : warned) f.add("warn", w);
  f.metric("fail", fail).metric("warn", warn);
  return f;
}

// "latest", "previous", a 1-based position in the listing, or a file name.
const history::Run& pick(const history::Past& past, const std::string& ref) {
  if (past.runs.empty()) throw UsageError("history: no kept runs to compare");
  if (ref == "latest") return past.runs.back();
  if (ref == "previous") {
    if (past.runs.size() < 2) throw UsageError("history: only one kept run: there is no previous");
    return past.runs[past.runs.size() - 2];
  }
  if (auto n = sys::to_int<std::size_t>(ref)) {
    if (*n < 1 || *n > past.runs.size()) throw UsageError(fmt::format("history: run {} not kept (1 to {})", ref, past.runs.size()));
    return past.runs[*n - 1];
  }
  auto it = std::find_if(past.runs.begin(), past.runs.end(), [&](const history::Run& r) { return r.file == ref; });
  if (it == past.runs.end()) throw UsageError("history: no kept run named " + ref + " (give latest, previous, a number from the listing or a file name)");
  return *it;
}

int run_history(const HistoryArgs& a) {
  if (!sys::is_directory(a.dir)) throw UsageError("history: " + a.dir + ": not a directory");
  auto past = history::load(a.dir, a.node);
  const report::Format format = chosen_format(a.format);
  if (!a.compare.empty()) {
    if (a.compare.size() != 2) throw UsageError("history: --compare takes two runs (e.g. --compare previous latest)");
    const auto& before = pick(past, a.compare[0]);
    const auto& after = pick(past, a.compare[1]);
    auto findings = compare::compare_reports(before.view, before.file, after.view, after.file, compare_options(a.tolerance_pct));
    return emit_report("compare", {before.file, after.file}, std::move(findings), format, a.output, a.verbose);
  }
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
  // A listing, not a verdict: exit 0 whatever the runs say (check is the verdict); the runs in
  // time order, as kept, whatever their status.
  (void)emit_report("history", {a.dir}, std::move(findings), format, a.output, a.verbose, true);
  return 0;
}

}  // namespace

CommandRunner add_history_command(CLI::App& app) {
  auto a = std::make_shared<HistoryArgs>();
  auto* cmd = app.add_subcommand("history", "List the runs check --history DIR kept, or compare two of them (--compare previous latest)");
  cmd->add_option("dir", a->dir, "The history directory (check --history DIR)")->required();
  cmd->add_option("--compare", a->compare, "Two runs to compare: latest, previous, a number from the listing, or a file name")->expected(2);
  cmd->add_option("--node", a->node, "Only this node's runs (a directory shared by several nodes)");
  cmd->add_option("--tolerance", a->tolerance_pct, "With --compare: percent a metric may move the wrong way before it counts as a regression (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html});
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_history(*a); };
}

}  // namespace perfgap::cli
