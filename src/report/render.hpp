// Renderers: a Report in, text out. They only render.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "report/model.hpp"

namespace perfgap::report {

struct TextOptions {
  bool verbose = false;  // every evidence item, pass/skip details
  bool color = false;
  // The findings are a listing whose order is its meaning (history's kept runs, oldest first):
  // kept within a layer instead of problems first. HtmlOptions the same.
  bool in_order = false;
};

std::string render_text(const Report& r, const TextOptions& opts);
std::string render_json(const Report& r);
std::string render_junit(const Report& r);
// fleet: one node's standing, for the page's headline in nodes and its worst nodes.
struct NodeStanding {
  std::string name;
  Status worst = Status::pass;                // the worst status of its findings (skip counts as pass)
  std::vector<std::string> failing, warning;  // ids failing (fail or error) and warning, sorted
  // its findings that decided (report::decides: pass, warn, fail, error) and the rest (skips, and the
  // passes of informational summaries, which judge nothing)
  std::size_t decided = 0, skipped = 0;
  // Nothing fails or warns, but under a quarter of its checks decided: not examined, not healthy.
  bool barely_examined() const { return worst == Status::pass && decided * 4 < decided + skipped; }
};
// What a page shows beside the report's findings: a fleet's nodes (empty: not a fleet page).
struct HtmlOptions {
  std::vector<NodeStanding> nodes;
  bool in_order = false;  // as TextOptions::in_order
};
// One self-contained page (inline CSS and SVG charts; no script, no network).
std::string render_html(const Report& r, const HtmlOptions& opts = {});
// node_exporter textfile collector format; `unix_time` is the run's time.
std::string render_prometheus(const Report& r, long long unix_time);

// One node's findings in a JUnit or Prometheus output of many nodes (fleet). The views must
// outlive the call.
struct NodeSection {
  std::string_view name;              // JUnit classname and suite; Prometheus `node` label
  std::string_view generated_at;      // JUnit suite timestamp
  std::optional<long long> unix_time; // Prometheus last-run timestamp; none: its line is left out
  const std::vector<Finding>* findings = nullptr;
};
// One <testsuite> per section, in order (the single-node render_junit is one section).
std::string render_junit(const std::vector<NodeSection>& sections);
// Each metric family once (HELP/TYPE), its samples for every section in order.
std::string render_prometheus(const std::vector<NodeSection>& sections);

// The output formats. Every command renders its report through render(); each declares the
// formats it accepts (cli/format_option.hpp), so a format means the same on every command.
enum class Format { text, json, html, junit, prometheus };
inline constexpr Format kFormats[] = {Format::text, Format::json, Format::html, Format::junit, Format::prometheus};
std::string_view format_name(Format f);
std::optional<Format> parse_format(std::string_view name);

struct RenderOptions {
  TextOptions text;
  long long unix_time = 0;  // prometheus: the run's time (perfgap_last_run_timestamp_seconds)
  // junit and prometheus of many nodes (fleet): these sections instead of the report's one.
  const std::vector<NodeSection>* sections = nullptr;
  HtmlOptions html;  // html: a fleet's nodes
};
std::string render(const Report& r, Format f, const RenderOptions& opts);

}  // namespace perfgap::report
