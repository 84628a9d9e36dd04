// perfgap fleet REPORTS...: node reports (check --format json) in, the fleet findings out.
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <algorithm>
#include <cstdlib>
#include <ctime>
#include <unordered_set>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "fleet/aggregate.hpp"
#include "fleet/expect.hpp"
#include "fleet/inputs.hpp"
#include "fleet/measured.hpp"
#include "fleet/text_view.hpp"
#include "report/render.hpp"
#include "sys/text.hpp"

namespace perfgap::cli {
namespace {

// The terminal's width when printing to one, else $COLUMNS, else no limit: a report saved to
// a file or mailed keeps its whole lines (cutting them lost the words that carry the meaning).
std::size_t text_width(bool to_stdout) {
  if (to_stdout && stdout_is_terminal()) {
    winsize ws{};
    if (::ioctl(STDOUT_FILENO, TIOCGWINSZ, &ws) == 0 && ws.ws_col >= 40) return ws.ws_col;
  }
  if (const char* c = std::getenv("COLUMNS")) {
    char* end = nullptr;
    long v = std::strtol(c, &end, 10);
    if (end != c && *end == '\0' && v >= 40 && v <= 1000) return static_cast<std::size_t>(v);
  }
  return fleet::kUnlimitedWidth;
}

// The one-line exit-2 message when no input gave a node report: the first few, then a count.
std::string nothing_usable(const std::vector<fleet::Unreadable>& bad) {
  if (bad.empty()) return "fleet: no report given";
  std::string msg = "fleet: no usable node report: ";
  for (std::size_t i = 0; i < bad.size() && i < 3; ++i) msg += fmt::format("{}{}: {}", i ? "; " : "", bad[i].file, bad[i].why);
  if (bad.size() > 3) msg += fmt::format("; and {} more", bad.size() - 3);
  return msg;
}

struct FleetArgs {
  FleetRequest request;
  double outlier_z = 3.5;
  std::size_t outlier_min_nodes = 5;
  std::string expect;  // --expect FILE
};

int run(const FleetRequest& req, const fleet::OutlierRule& rule, const std::string& expect_file = {}) {
  using report::Format;
  const auto parsed = req.format.empty() ? std::optional<Format>(Format::text) : report::parse_format(req.format);
  if (!parsed) throw UsageError(fmt::format("fleet: --format {}: use text, json, html, junit or prometheus", req.format));
  const Format format = *parsed;
  const std::time_t started = std::time(nullptr);
  // Read first: a bad file is exit 2 before any report is read.
  std::optional<fleet::Expectations> expect;
  if (!expect_file.empty()) {
    auto e = fleet::load_expectations(expect_file);
    if (!e) throw UsageError("fleet --expect " + e.error());
    expect = std::move(*e);
  }
  auto expanded = fleet::expand_inputs(req.inputs);
  // Only the machine formats list every node's findings; only JUnit shows their details
  // (--expect reads them all: the node's facts are in its findings' evidence and metrics).
  auto loaded = fleet::load_reports(expanded.files, {.findings = expect || format == Format::junit || format == Format::prometheus,
                                                     .details = expect || format == Format::junit,
                                                     .metrics = expect || format == Format::prometheus});
  std::vector<fleet::Unreadable> bad = std::move(expanded.problems);
  for (auto& u : loaded.unreadable) bad.push_back(std::move(u));
  // Measurements (analyze reports) beside the node reports: fleet.pace, joined with them.
  std::vector<fleet::NodeReport> measured;
  std::erase_if(loaded.nodes, [&](fleet::NodeReport& n) {
    if (n.kind != "analyze") return false;
    measured.push_back(std::move(n));
    return true;
  });
  auto fl = fleet::dedupe_nodes(std::move(loaded.nodes));
  const std::size_t unreadable_before_pace = bad.size();
  auto pace = fleet::pace(measured, fl.nodes, rule, bad);  // appends the analyze reports it cannot use
  const std::size_t measurements = measured.size() - (bad.size() - unreadable_before_pace);
  auto job = fleet::job_ranks(measured, fl.nodes);  // the job's ranks (NCCL Inspector, RAS)
  pace.insert(pace.end(), std::make_move_iterator(job.begin()), std::make_move_iterator(job.end()));
  auto verdicts = fleet::measurement_verdicts(measured);  // the measurements' own fail and warn
  pace.insert(pace.begin(), std::make_move_iterator(verdicts.begin()), std::make_move_iterator(verdicts.end()));
  if (fl.nodes.empty() && pace.empty()) throw UsageError(nothing_usable(bad));
  std::vector<report::Finding> findings;
  if (!fl.nodes.empty()) {
    std::optional<report::Finding> expected;
    if (expect) expected = fleet::judge_fleet(*expect, fl.nodes);
    findings = fleet::aggregate(fl, bad, rule);
    if (expected) findings.insert(findings.begin() + 1, std::move(*expected));  // after fleet.node_failures
  } else {
    findings = fleet::unreadable(bad);  // measurements only: no node findings to aggregate
  }
  // After the node findings and before fleet.unreadable (the last).
  auto first_unreadable = std::find_if(findings.begin(), findings.end(), [](const report::Finding& f) { return f.id == "fleet.unreadable"; });
  findings.insert(first_unreadable, std::make_move_iterator(pace.begin()), std::make_move_iterator(pace.end()));

  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = sys::rfc3339_utc(started);
  rep.source.kind = "fleet";
  // Every file read, then the arguments that named none (a pattern that matched nothing).
  std::unordered_set<std::string> listed(expanded.files.begin(), expanded.files.end());
  rep.source.inputs = std::move(expanded.files);
  if (expect) rep.source.inputs.push_back(expect_file);
  for (const auto& b : bad)
    if (listed.insert(b.file).second) rep.source.inputs.push_back(b.file);
  rep.findings = std::move(findings);

  std::string text;
  if (format != Format::text) {
    if (format == Format::html) rep.charts.push_back(fleet::status_heatmap(fl));
    // JUnit and Prometheus: every node's own findings, then the fleet's (classname "fleet" in
    // JUnit; in Prometheus an empty node label, which no node has).
    std::vector<report::NodeSection> sections;
    if (format == Format::junit || format == Format::prometheus) {
      sections.reserve(fl.nodes.size() + 1);
      for (const auto& n : fl.nodes) sections.push_back({n.name, n.generated_at, n.generated_unix, &n.report_findings});
      sections.push_back({format == Format::junit ? "fleet" : "", rep.generated_at, static_cast<long long>(started), &rep.findings});
    }
    auto o = render_options(req.output, req.verbose, static_cast<long long>(started));
    o.sections = &sections;
    if (format == Format::html) o.html.nodes = fleet::node_standings(fl);
    text = report::render(rep, format, o);
  } else {
    // The fleet's own text view (groups of nodes), not the findings list of report::render.
    fleet::TextViewOptions o;
    o.verbose = req.verbose;
    o.color = output_is_stdout(req.output) && color_wanted();
    o.width = text_width(output_is_stdout(req.output));
    text = fleet::render_fleet_text(fl, {.unreadable = bad.size(), .measurements = measurements}, rep.findings, o);
  }
  auto w = write_output(req.output, text);
  if (!w) throw UsageError(w.error());
  return rep.has_fail() ? 1 : 0;
}

}  // namespace

CommandRunner add_fleet_command(CLI::App& app) {
  auto args = std::make_shared<FleetArgs>();
  auto* cmd = app.add_subcommand("fleet", "Aggregate node reports (check --format json): failing nodes, settings that drift, outliers");
  cmd->add_option("reports", args->request.inputs,
                  "Report files, directories (their *.json) or quoted globs ('reports/*.json'); an unusable one becomes a "
                  "fleet.unreadable finding")
      ->required();
  using report::Format;
  add_format_option(cmd, args->request.format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one page, node x check heatmap and drift; junit and prometheus: every node's findings, then the fleet's");
  cmd->add_option("--output", args->request.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", args->request.verbose, "Show every node group, failing node and evidence line");
  cmd->add_option("--outlier-z", args->outlier_z, "fleet.outliers: |modified z-score| above which a node is an outlier (default 3.5)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--outlier-min-nodes", args->outlier_min_nodes, "fleet.outliers: nodes a metric needs before it is judged (default 5)")
      ->check(CLI::Range(3, 1000000));
  cmd->add_option("--expect", args->expect, "Hold every node to its kind's expected state (perfgap expect learn): expect.* per node, fleet.expect groups them");
  return [args]() -> int {
    fleet::OutlierRule rule;
    rule.z_threshold = args->outlier_z;
    rule.min_nodes = args->outlier_min_nodes;
    return run(args->request, rule, args->expect);
  };
}

int run_fleet(const FleetRequest& request) { return run(request, fleet::OutlierRule{}); }

}  // namespace perfgap::cli
