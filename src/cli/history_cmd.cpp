// perfgap history DIR: the runs `check --history DIR` kept, one line each, and any two of them
// side by side (--compare A B, through compare).
#include <memory>

#include "cli/commands.hpp"
#include "cli/compare_cmd.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "compare/compare.hpp"
#include "history/history.hpp"
#include "sys/paths.hpp"

namespace perfgap::cli {
namespace {

struct HistoryArgs {
  std::string dir, format, output, node;
  std::vector<std::string> compare;
  double tolerance_pct = 5;
  bool verbose = false;
};

const history::Run& pick(const history::Past& past, const std::string& ref) {
  auto run = history::find_run(past, ref);
  if (!run) throw UsageError(run.error());
  return **run;
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
    const std::string undecided = compare::undecided_why(findings);
    return emit_report("compare", {before.file, after.file}, std::move(findings), format, a.output, a.verbose, false, undecided);
  }
  auto findings = history::listing(past);
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
