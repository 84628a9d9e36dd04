// perfgap compare BEFORE.json AFTER.json: what a change fixed, broke or moved, from two
// reports of the same kind (check, analyze, gap, sweep, fleet).
#include "cli/compare_cmd.hpp"

#include <fmt/format.h>

#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "compare/compare.hpp"
#include "core/kb.hpp"
#include "sys/paths.hpp"

namespace perfgap::cli {
namespace {

struct CompareArgs {
  std::string before, after, format, output;
  double tolerance_pct = 5;
  bool verbose = false;
};

compare::ReportView load(const std::string& path) {
  auto r = compare::load_report(path);
  if (!r) throw UsageError(fmt::format("compare: {}: {}", path, r.error()));
  return std::move(*r);
}

int run_compare(const CompareArgs& a) {
  auto before = load(a.before);
  auto after = load(a.after);
  if (compare::comparable_kind(before.kind) != compare::comparable_kind(after.kind))
    throw UsageError(fmt::format("compare: {} is a {} report but {} is a {} report: compare two reports of the same kind", a.before,
                                 before.kind, a.after, after.kind));
  // One file named twice compares a report with itself: its problems would read as "still a
  // problem" after a change that never happened. (Two files of equal content may be two quick
  // runs of an unchanged node: compared.)
  const auto b_st = sys::stat_path(a.before), a_st = sys::stat_path(a.after);
  if (b_st && a_st && b_st->st_dev == a_st->st_dev && b_st->st_ino == a_st->st_ino)
    throw UsageError(fmt::format("compare: {} and {} are the same file: give the report from before the change and one from after it", a.before, a.after));
  auto findings = compare::compare_reports(before, a.before, after, a.after, compare_options(a.tolerance_pct));
  const std::string undecided = compare::undecided_why(findings);  // nothing decided in both: SKIP, never OK
  return emit_report("compare", {a.before, a.after}, std::move(findings), chosen_format(a.format), a.output, a.verbose, false, undecided);
}

}  // namespace

compare::Options compare_options(double tolerance_pct) {
  compare::Options o;
  o.tolerance_pct = tolerance_pct;
  o.impact_pct = [](std::string_view id) {
    const auto* k = core::builtin_kb().find(id);
    return k && k->kind == core::KbImpact::Kind::estimated ? (k->low_pct + k->high_pct) / 2 : 0.0;
  };
  const auto& ratios = core::builtin_kb().ratios;
  if (auto it = ratios.find("perf_stat.dtlb"); it != ratios.end()) {
    o.tlb_pass_within = it->second.pass_within;
    o.tlb_fail_beyond = it->second.fail_beyond;
  }
  return o;
}

CommandRunner add_compare_command(CLI::App& app) {
  auto a = std::make_shared<CompareArgs>();
  auto* cmd = app.add_subcommand("compare", "Compare two reports of the same kind (before and after a change): findings fixed, new, regressed, unchanged, and metric deltas; exit 1 when something regressed");
  cmd->add_option("before", a->before, "The report before the change (perfgap ... --format json)")->required();
  cmd->add_option("after", a->after, "The report after the change")->required();
  cmd->add_option("--tolerance", a->tolerance_pct, "Percent a metric may move the wrong way before it counts as a regression (default 5)")
      ->check(CLI::Range(0.0, 1000.0));
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit: each finding (fixed, new, regressed) a testcase; prometheus: the deltas for graphs");
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_compare(*a); };
}

}  // namespace perfgap::cli
