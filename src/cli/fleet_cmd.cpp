// perfgap fleet REPORTS...: node reports (check --format json) in, the fleet findings out
// (fleet/run: reading and aggregating; here: the options, the terminal and the chosen format).
#include <fmt/format.h>
#include <sys/ioctl.h>
#include <unistd.h>

#include <cstdlib>
#include <ctime>
#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "fleet/aggregate.hpp"
#include "fleet/run.hpp"
#include "fleet/text_view.hpp"
#include "report/render.hpp"

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

struct FleetArgs {
  FleetRequest request;
  double outlier_z = 3.5;
  std::size_t outlier_min_nodes = 5;
  std::string expect;  // --expect FILE
};

int render_fleet(const FleetRequest& req, const fleet::OutlierRule& rule, const std::string& expect_file = {}) {
  using report::Format;
  const auto parsed = req.format.empty() ? std::optional<Format>(Format::text) : report::parse_format(req.format);
  if (!parsed) throw UsageError(fmt::format("fleet: --format {}: use text, json, html, junit or prometheus", req.format));
  const Format format = *parsed;
  const std::time_t started = std::time(nullptr);
  fleet::FleetRequest request;
  request.inputs = req.inputs;
  request.expect_file = expect_file;
  request.rule = rule;
  // Only the machine formats list every node's findings; only JUnit shows their details.
  request.read = {.findings = format == Format::junit || format == Format::prometheus, .details = format == Format::junit,
                  .metrics = format == Format::prometheus};
  request.started = started;
  auto run = fleet::run_fleet(request);
  if (!run) throw UsageError(run.error());
  const auto& fl = run->fleet;
  auto& rep = run->report;

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
    text = fleet::render_fleet_text(fl, {.unreadable = run->bad.size(), .measurements = run->measurements, .unusable = run->unusable}, rep.findings, o);
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
    return render_fleet(args->request, rule, args->expect);
  };
}

int run_fleet(const FleetRequest& request) { return render_fleet(request, fleet::OutlierRule{}); }

}  // namespace perfgap::cli
