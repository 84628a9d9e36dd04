// The report model of the contract (docs/CONTRACT.md). Checks produce Findings;
// renderers read a Report; nothing here knows about text or JSON.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

namespace perfgap::report {

inline constexpr std::string_view kSchema = "perfgap.report/1";

enum class Status { pass, warn, fail, skip, error };

std::string_view to_string(Status s);
// Severity order used to merge findings of one id: fail > error > warn > pass > skip.
int severity(Status s);

struct Evidence {
  std::string source;    // the real kernel path, file:line, or a named signal
  std::string observed;
  std::optional<std::string> expected;
};

// A figure for the HTML report (report/render_html draws it as inline SVG). Not part of the
// JSON report: the same numbers travel there as metrics. Built where the data is (an
// analyzer, sweep, fleet), never by a renderer.
struct ChartPoint {
  double x = 0, y = 0;
  std::optional<double> low, high;  // a min-max band around y (repeats)
};
struct ChartSeries {
  std::string name;
  std::vector<ChartPoint> points;
};
// One bar of a waterfall, from `from` to `to` on the value axis (a cause takes the value down).
struct WaterfallStep {
  std::string label;
  double from = 0, to = 0;
  bool residual = false;  // what no finding explains (drawn apart from the causes)
};
struct Chart {
  enum class Kind { line, waterfall, heatmap };
  Kind kind = Kind::line;
  std::string title, x_label, y_label;
  // line: x on a log2 axis (message sizes), tick labels as sizes (1K, 4M) when x_bytes.
  bool log_x = false, x_bytes = false;
  std::vector<ChartSeries> series;
  std::optional<double> reference_y;  // a horizontal reference line
  std::string reference_label;
  std::vector<WaterfallStep> steps;  // waterfall
  // heatmap: cells[row][column]; none where that row has no such column.
  std::vector<std::string> rows, columns;
  std::vector<std::vector<std::optional<Status>>> cells;
};

struct Finding {
  std::string id;
  std::string layer;
  Status status = Status::skip;
  std::string subject;   // empty: none
  std::string title;
  std::vector<Evidence> evidence;
  std::string fix;
  std::string impact;
  std::vector<std::pair<std::string, double>> metrics;
  // The decisive numbers as a small table for text output (first row: the header); empty:
  // none. Not part of the JSON report: the same numbers travel there as metrics.
  std::vector<std::vector<std::string>> table;
  // Text output shows the table even when the finding passes (a per-iteration breakdown that is
  // the finding's point, not evidence of a problem).
  bool table_always = false;
  std::vector<Chart> charts;  // HTML only

  Finding& add(std::string source, std::string observed) {
    evidence.push_back({std::move(source), std::move(observed), std::nullopt});
    return *this;
  }
  Finding& add(std::string source, std::string observed, std::string expected) {
    evidence.push_back({std::move(source), std::move(observed), std::move(expected)});
    return *this;
  }
  Finding& metric(std::string name, double value) {
    metrics.emplace_back(std::move(name), value);
    return *this;
  }
};

struct Source {
  std::string kind;  // live|root|analyze|gap|sweep|fleet
  std::optional<std::string> root;
  std::vector<std::string> inputs;
  // The text header's command word where it is not the kind's ("profile" for a live report of
  // perfgap profile); the JSON carries the kind only.
  std::string command;
};

using StringMap = std::map<std::string, std::string>;

// node.settings always holds these keys (the contract's example); a value not read on the node
// is kSettingUnknown, which fleet drift treats as "not reported" rather than as a value.
inline constexpr const char* kNodeSettingKeys[] = {"cpu_model", "nvidia_driver", "idle_driver", "deepest_idle_state",
                                                   "governor", "turbo", "page_size_kb", "iommu_mode",
                                                   "numa_balancing", "nccl_topo_file"};
inline constexpr std::string_view kSettingUnknown = "unknown";

struct Node {
  std::string name;
  std::string hostname;
  std::string arch;
  std::string kernel;
  std::optional<bool> virtualized;  // unknown when the signals were not readable
  std::string container = "unknown";
  StringMap settings;
  StringMap environment;
  StringMap nccl_conf;
};

struct Summary {
  int pass = 0, warn = 0, fail = 0, skip = 0, error = 0;
};
Summary summarize(const std::vector<Finding>& findings);

// sweep only: the chosen setting and what it gained over the baseline.
struct Recommendation {
  StringMap setting;
  double gain_pct = 0;
};

struct Report {
  std::string tool_version;
  std::string generated_at;  // RFC 3339 UTC
  Source source;
  std::optional<Node> node;
  std::vector<Finding> findings;
  std::optional<Recommendation> recommendation;
  std::vector<Chart> charts;  // HTML only: figures about the whole report (a fleet's heatmap)
  // Non-empty: the command could not decide what it was asked (whatif: no change could be
  // replayed; compare: nothing decided in both reports) and why; the headline says so, SKIP
  // instead of OK (JSON: `undecided`).
  std::string undecided;

  Summary summary() const;
  bool has_fail() const;
  // Why the report decides nothing, for its headline: `undecided`, else, when no finding decides
  // (each a skip or the pass of an informational summary, report/informational.hpp), "nothing
  // could be decided: " and the reason most skips share (or what the summary read); empty when
  // something was decided.
  std::string undecided_why() const;
};

// The contract's layers, in report order: every finding's `layer` is one of these.
inline constexpr std::string_view kLayers[] = {"virtualization", "cpu-power", "placement",
                                               "runtime-topology", "network", "gpu", "pcie",
                                               "workload", "fleet", "sweep"};

}  // namespace perfgap::report
