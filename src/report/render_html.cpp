// One self-contained HTML page per report: inline CSS and SVG, no script, no network, no
// external font. Every finding is in the DOM (an <article> with data-id/data-status), the
// ones that need action first in each layer and listed again at the top; status words are
// printed, so the page reads the same in black and white.
#include <fmt/format.h>

#include <algorithm>
#include <cstdint>

#include "report/html_escape.hpp"
#include "report/outgoing.hpp"
#include "report/render.hpp"
#include "report/svg_chart.hpp"
#include "report/text_style.hpp"

namespace perfgap::report {

std::string html_escape(std::string_view s) {
  std::string p = printable(s), out;
  out.reserve(p.size());
  for (char c : p) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&#39;"; break;
      default: out += c;
    }
  }
  return out;
}

namespace {

// Metrics shown per finding before the rest are counted (a busbw sweep has hundreds).
constexpr std::size_t kMetricsShown = 60;
// A fleet page lists this many of its worst nodes by name; the heatmap groups the rest.
constexpr std::size_t kWorstNodesShown = 20;
// More inputs than this are folded under a <details> (a fleet reads thousands of files).
constexpr std::size_t kInputsShown = 3;

constexpr std::string_view kStyle = R"css(
:root{--fail:#b91c1c;--warn:#b45309;--pass:#15803d;--skip:#6b7280;--error:#7e22ce;--ink:#111827;--mute:#4b5563;--line:#d1d5db}
*{box-sizing:border-box}
body{font-family:system-ui,-apple-system,"Segoe UI",Roboto,"Helvetica Neue",Arial,sans-serif;color:var(--ink);margin:0 auto;max-width:1100px;padding:16px 20px 40px;line-height:1.4;background:#fff}
h1{font-size:1.5em;margin:.2em 0}h2{font-size:1.2em;border-bottom:2px solid var(--line);padding-bottom:2px;margin-top:1.6em}
h3{font-size:1em;margin:0 0 .3em;font-weight:600}
code,.mono{font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.92em}
.verdict{font-size:1.15em;font-weight:700}
.badge{display:inline-block;min-width:3.6em;text-align:center;border:1.5px solid currentColor;border-radius:3px;padding:0 .3em;font-size:.8em;font-weight:700;margin-right:.4em}
.badge.st-fail,.verdict.st-fail{color:var(--fail)}.badge.st-warn,.verdict.st-warn{color:var(--warn)}.badge.st-pass,.verdict.st-pass{color:var(--pass)}.badge.st-skip{color:var(--skip)}.badge.st-error,.verdict.st-error{color:var(--error)}
article.finding{border:1px solid var(--line);border-left:5px solid var(--skip);border-radius:3px;padding:8px 12px;margin:8px 0;break-inside:avoid}
article.finding.st-fail{border-left-color:var(--fail)}article.finding.st-warn{border-left-color:var(--warn)}article.finding.st-pass{border-left-color:var(--pass)}article.finding.st-error{border-left-color:var(--error)}
article.finding p{margin:.3em 0;color:var(--ink)}
.subject{color:var(--mute);font-weight:400}
table{border-collapse:collapse;margin:.4em 0;font-size:.9em}
th,td{border:1px solid var(--line);padding:2px 6px;text-align:left;vertical-align:top}
th{background:#f3f4f6}
td.num{text-align:right;font-variant-numeric:tabular-nums}
table.data td:not(:first-child){text-align:right;font-variant-numeric:tabular-nums}
table.data td{white-space:pre;font-family:ui-monospace,"DejaVu Sans Mono",Menlo,Consolas,monospace;font-size:.92em}
.wrap{overflow-x:auto}
dl.node{display:grid;grid-template-columns:max-content 1fr;gap:2px 12px;margin:.5em 0}
dl.node dt{color:var(--mute)}dl.node dd{margin:0}
ul.toc{padding-left:1.2em}
ul.metrics{list-style:none;padding:0;margin:.4em 0;columns:3 16em;column-gap:2em;font-size:.88em}
ul.metrics li{break-inside:avoid;display:flex;justify-content:space-between;gap:1em;border-bottom:1px dotted var(--line)}
ul.metrics .v{font-variant-numeric:tabular-nums}
.note{color:var(--mute);font-size:.9em}
figure{margin:.6em 0}
svg.chart{max-width:100%;height:auto;font-family:inherit;background:#fff}
svg .grid{stroke:#e5e7eb;stroke-width:1}svg .frame{fill:none;stroke:#9ca3af}svg .axis{stroke:#6b7280}
svg .ref{stroke:#111827;stroke-width:1.4;stroke-dasharray:6 4}svg .conn{stroke:#6b7280;stroke-dasharray:3 3}
svg text{font-size:11px;fill:#111827}svg .ct{font-size:13px;font-weight:600}
svg .yt{text-anchor:end}svg .xt{text-anchor:middle}svg .xl{text-anchor:middle}svg .yl{text-anchor:middle}svg .rl{text-anchor:end;fill:#374151}
svg .bv{text-anchor:middle;font-size:10px}svg .cat{text-anchor:end}svg .hc{font-size:10px}svg .hr{text-anchor:end;font-size:10px}
svg .hl{text-anchor:middle;font-size:10px;font-weight:700;fill:#fff}
svg .wf.total{fill:#4b5563}svg .wf.rest{fill:#fde68a;stroke:#92400e;stroke-dasharray:4 3}svg .wf.down{fill:#b91c1c}svg .wf.up{fill:#15803d}
svg .hm.st-fail{fill:#b91c1c}svg .hm.st-warn{fill:#d97706}svg .hm.st-pass{fill:#16a34a}svg .hm.st-skip{fill:#9ca3af}svg .hm.st-error{fill:#7e22ce}
@media print{body{max-width:none;padding:0}article.finding{page-break-inside:avoid}a{color:inherit;text-decoration:none}}
)css";

std::string kind_word(const Report& r) {
  if (!r.source.command.empty()) return r.source.command;
  return r.source.kind == "live" || r.source.kind == "root" ? "check" : r.source.kind;
}

std::string finding_anchor(std::size_t i) { return fmt::format("finding-{}", i + 1); }

// `columns`: how many leading columns to show (the rest is text art a chart draws).
void table_html(std::string& out, const std::vector<std::vector<std::string>>& rows, const char* cls, std::size_t columns = SIZE_MAX) {
  if (rows.empty()) return;
  const std::size_t width = std::min(columns, rows.front().size());
  out += fmt::format("<div class=\"wrap\"><table class=\"{}\"><thead><tr>", cls);
  for (std::size_t j = 0; j < width; ++j) out += "<th>" + html_escape(rows.front()[j]) + "</th>";
  out += "</tr></thead><tbody>";
  for (std::size_t i = 1; i < rows.size(); ++i) {
    out += "<tr>";
    const auto& row = rows[i];
    for (std::size_t j = 0; j < row.size() && j < width; ++j) {
      // A short row's last cell spans what it lacks (a note under a table).
      std::size_t span = j + 1 == row.size() && row.size() < width ? width - j : 1;
      out += span > 1 ? fmt::format("<td colspan=\"{}\">", span) : std::string("<td>");
      out += html_escape(row[j]) + "</td>";
    }
    out += "</tr>";
  }
  out += "</tbody></table></div>";
}

void figure_html(std::string& out, const Chart& c) {
  std::string svg = render_svg(c);
  if (svg.empty()) {
    out += fmt::format("<p class=\"note\">{}: nothing to draw.</p>", html_escape(c.title));
    return;
  }
  out += "<figure>" + svg;
  if (c.kind == Chart::Kind::heatmap && (c.rows.size() > kHeatmapMaxRows || c.columns.size() > kHeatmapMaxColumns))
    out += fmt::format("<figcaption class=\"note\">First {} of {} rows and {} of {} columns drawn; every finding is listed below.</figcaption>",
                       std::min(c.rows.size(), kHeatmapMaxRows), c.rows.size(), std::min(c.columns.size(), kHeatmapMaxColumns), c.columns.size());
  out += "</figure>";
}

void finding_html(std::string& out, const Finding& f, std::size_t index) {
  const std::string st(to_string(f.status));
  out += fmt::format("<article class=\"finding st-{}\" id=\"{}\" data-id=\"{}\" data-status=\"{}\" data-subject=\"{}\">", st, finding_anchor(index), html_escape(f.id), st,
                     html_escape(f.subject));
  out += fmt::format("<h3><span class=\"badge st-{}\">{}</span><code>{}</code>{}</h3>", st, status_word(f.status), html_escape(f.id),
                     f.subject.empty() ? "" : " <span class=\"subject\">[" + html_escape(f.subject) + "]</span>");
  out += "<p class=\"title\">" + html_escape(f.title) + "</p>";
  // The chart first: it is what the finding is about (explain's waterfall, a busbw curve).
  for (const auto& c : f.charts) figure_html(out, c);
  // A waterfall's table carries the same bars as text art in its last column: the chart
  // above draws them, the page keeps the numbers.
  const bool drawn = std::any_of(f.charts.begin(), f.charts.end(), [](const Chart& c) { return c.kind == Chart::Kind::waterfall; });
  table_html(out, f.table, "data", drawn && !f.table.empty() ? f.table.front().size() - 1 : SIZE_MAX);
  // Where a table already shows the numbers, the evidence and metrics behind it are folded
  // (one click away), so that the page does not show the same sizes three times.
  const bool folded = !f.table.empty();
  if (!f.evidence.empty()) {
    bool expected = std::any_of(f.evidence.begin(), f.evidence.end(), [](const Evidence& e) { return e.expected.has_value(); });
    if (folded) out += fmt::format("<details class=\"evidence\"><summary>evidence ({} line{})</summary>", f.evidence.size(), f.evidence.size() == 1 ? "" : "s");
    out += "<div class=\"wrap\"><table class=\"evidence\"><thead><tr><th>source</th><th>observed</th>";
    if (expected) out += "<th>expected</th>";
    out += "</tr></thead><tbody>";
    for (const auto& e : f.evidence) {
      // "after.json busbw_gbps.67108864" reads "after.json busbw 64 MiB"; the key stays a tooltip.
      const std::string label = metric_label(e.source);
      out += label == e.source ? "<tr><td class=\"mono\">" + html_escape(e.source) + "</td>"
                               : fmt::format("<tr><td class=\"mono\" title=\"{}\">{}</td>", html_escape(e.source), html_escape(label));
      out += "<td>" + html_escape(e.observed) + "</td>";
      if (expected) out += "<td>" + (e.expected ? html_escape(*e.expected) : std::string()) + "</td>";
      out += "</tr>";
    }
    out += "</tbody></table></div>";
    if (folded) out += "</details>";
  }
  if (!f.fix.empty()) out += "<p class=\"fix\"><b>Fix:</b> " + html_escape(f.fix) + "</p>";
  if (!f.impact.empty()) out += "<p class=\"impact\"><b>Impact:</b> " + html_escape(f.impact) + "</p>";
  if (!f.metrics.empty()) {
    const bool fold_metrics = folded || !f.charts.empty();
    if (fold_metrics) out += fmt::format("<details class=\"metrics\"><summary>metrics ({})</summary>", f.metrics.size());
    out += "<ul class=\"metrics\" aria-label=\"metrics\">";
    std::size_t shown = std::min(f.metrics.size(), kMetricsShown);
    for (std::size_t i = 0; i < shown; ++i)
      out += fmt::format("<li><code title=\"{}\">{}</code><span class=\"v\">{}</span></li>", html_escape(f.metrics[i].first),
                         html_escape(metric_label(f.metrics[i].first)), number_text(f.metrics[i].second));
    out += "</ul>";
    if (shown < f.metrics.size())
      out += fmt::format("<p class=\"note\">{} more metrics in the JSON report (--format json).</p>", f.metrics.size() - shown);
    if (fold_metrics) out += "</details>";
  }
  out += "</article>";
}

void node_html(std::string& out, const Node& n) {
  out += "<section class=\"node\"><h2>Node</h2><dl class=\"node\">";
  auto item = [&](std::string_view k, std::string_view v) {
    if (!v.empty()) out += fmt::format("<dt>{}</dt><dd>{}</dd>", html_escape(k), html_escape(v));
  };
  item("name", n.name);
  item("hostname", n.hostname);
  item("arch", n.arch);
  item("kernel", n.kernel);
  item("virtualized", n.virtualized ? (*n.virtualized ? "yes" : "no") : "unknown");
  item("container", n.container);
  out += "</dl>";
  auto map_table = [&](std::string_view title, const StringMap& m) {
    if (m.empty()) return;
    std::vector<std::vector<std::string>> rows{{std::string(title), "value"}};
    for (const auto& [k, v] : m) rows.push_back({k, v});
    table_html(out, rows, "settings");
  };
  map_table("setting", n.settings);
  map_table("environment", n.environment);
  map_table("nccl.conf", n.nccl_conf);
  out += "</section>";
}

// A fleet page's opening: the worst nodes by name (the ones failing most checks first), the
// rest counted; the heatmap below groups every node.
void worst_nodes_html(std::string& out, const std::vector<NodeStanding>& nodes) {
  std::size_t troubled = 0;
  for (const auto& n : nodes) troubled += n.worst != Status::pass;
  out += "<section class=\"worst\" id=\"worst-nodes\"><h2>Worst nodes</h2>";
  if (troubled) {
    out += "<div class=\"wrap\"><table class=\"nodes\"><thead><tr><th>node</th><th>status</th><th>failing</th><th>warning</th></tr></thead><tbody>";
    auto ids = [](const std::vector<std::string>& v) {
      std::string s;
      for (std::size_t i = 0; i < v.size() && i < 6; ++i) s += (i ? ", " : "") + std::string("<code>") + html_escape(v[i]) + "</code>";
      if (v.size() > 6) s += fmt::format(" and {} more", v.size() - 6);
      return s;
    };
    std::size_t shown = 0;
    for (const auto& n : nodes) {
      if (n.worst == Status::pass || shown == kWorstNodesShown) continue;
      ++shown;
      out += fmt::format("<tr data-node=\"{}\" data-status=\"{}\"><td>{}</td><td><span class=\"badge st-{}\">{}</span></td><td>{}</td><td>{}</td></tr>",
                         html_escape(n.name), to_string(n.worst), html_escape(n.name), to_string(n.worst), status_word(n.worst), ids(n.failing),
                         ids(n.warning));
    }
    out += "</tbody></table></div>";
    if (troubled > shown) out += fmt::format("<p class=\"note\">and {} more nodes failing or warning: see the heatmap, grouped by what they fail.</p>", troubled - shown);
  }
  std::vector<std::string_view> unexamined;
  for (const auto& n : nodes)
    if (n.barely_examined()) unexamined.push_back(n.name);
  const std::size_t healthy = nodes.size() - troubled - unexamined.size();
  out += fmt::format("<p class=\"healthy\">{} healthy node{} (no check fails or warns).</p>", healthy, healthy == 1 ? "" : "s");
  if (!unexamined.empty()) {
    std::string names;
    for (std::size_t i = 0; i < unexamined.size() && i < kWorstNodesShown; ++i) names += (i ? ", " : "") + std::string("<code>") + html_escape(unexamined[i]) + "</code>";
    if (unexamined.size() > kWorstNodesShown) names += fmt::format(" and {} more", unexamined.size() - kWorstNodesShown);
    out += fmt::format("<p class=\"note\">Not examined: {} node{} with nothing failing or warning, but under a quarter of their checks "
                       "decided (the rest skipped: a source absent, no permission, a tree that did not capture it): {}.</p>",
                       unexamined.size(), unexamined.size() == 1 ? "" : "s", names);
  }
  out += "</section>";
}

}  // namespace

std::string render_html(const Report& shown, const HtmlOptions& opts) {
  const Report r = outgoing(shown);
  const auto s = r.summary();
  const std::string kind = kind_word(r);
  std::string where = r.node && !r.node->name.empty() ? " on " + r.node->name : "";
  std::string out;
  out.reserve(16384 + r.findings.size() * 1024);
  out += "<!DOCTYPE html>\n<html lang=\"en\"><head><meta charset=\"utf-8\">"
         "<meta name=\"viewport\" content=\"width=device-width, initial-scale=1\">"
         "<meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'; style-src 'unsafe-inline'; img-src data:\">";
  out += fmt::format("<title>perfgap {}{}</title><style>{}</style></head><body>\n", html_escape(kind), html_escape(where), kStyle);
  const std::string undecided = r.undecided_why();  // decided nothing: SKIP and why, never OK
  const Status verdict = s.fail ? Status::fail : s.error ? Status::error : s.warn ? Status::warn : !undecided.empty() ? Status::skip : Status::pass;
  const char* word = s.fail ? "FAIL" : s.error ? "ERROR" : s.warn ? "WARN" : !undecided.empty() ? "SKIP" : "OK";
  const std::string findings_count = fmt::format("{} fail, {} warn, {} pass, {} skip, {} error{}", s.fail, s.warn, s.pass, s.skip, s.error,
                                                 undecided.empty() ? "" : "; " + html_escape(undecided));
  if (!opts.nodes.empty()) {
    // A fleet is judged in nodes: how many fail, warn, are healthy; its own findings second.
    std::size_t failing = 0, warning = 0, unexamined = 0;
    for (const auto& n : opts.nodes) {
      failing += n.worst == Status::fail || n.worst == Status::error;
      warning += n.worst == Status::warn;
      unexamined += n.barely_examined();
    }
    out += fmt::format("<header><h1>perfgap {}{}</h1><p class=\"verdict st-{}\" id=\"verdict\">{}: {} of {} node{} failing, {} warning, {} healthy{}</p>"
                       "<p class=\"note\">fleet findings: {}</p>",
                       html_escape(kind), html_escape(where), to_string(verdict), word, failing, opts.nodes.size(), opts.nodes.size() == 1 ? "" : "s", warning,
                       opts.nodes.size() - failing - warning - unexamined,
                       unexamined ? fmt::format(", {} not examined (under a quarter of their checks decided)", unexamined) : "", findings_count);
  } else {
    out += fmt::format("<header><h1>perfgap {}{}</h1><p class=\"verdict st-{}\" id=\"verdict\">{}: {}</p>", html_escape(kind), html_escape(where),
                       to_string(verdict), word, findings_count);
  }
  out += "<p class=\"note\">";
  out += fmt::format("{} {} &middot; generated {}", html_escape("perfgap"), html_escape(r.tool_version), html_escape(r.generated_at));
  if (r.source.root) out += " &middot; tree " + html_escape(*r.source.root);
  auto input_list = [&] {
    for (std::size_t i = 0; i < r.source.inputs.size(); ++i) out += (i ? ", " : "") + std::string("<code>") + html_escape(r.source.inputs[i]) + "</code>";
  };
  if (!r.source.inputs.empty() && r.source.inputs.size() <= kInputsShown) {
    out += " &middot; inputs: ";
    input_list();
  }
  out += "</p>";
  if (r.source.inputs.size() > kInputsShown) {
    out += fmt::format("<details class=\"inputs\"><summary>{} input files</summary><p class=\"note\">", r.source.inputs.size());
    input_list();
    out += "</p></details>";
  }
  out += "</header>\n<main>";
  if (!opts.nodes.empty()) worst_nodes_html(out, opts.nodes);
  if (r.recommendation) {
    std::string setting;
    for (const auto& [k, v] : r.recommendation->setting) setting += (setting.empty() ? "" : " ") + k + "=" + v;
    out += fmt::format("<section class=\"recommendation\"><h2>Recommendation</h2><p><code>{}</code>: {:+.1f}% over the baseline.</p></section>",
                       html_escape(setting), r.recommendation->gain_pct);
  }
  // The report's own figures (a fleet's heatmap) right under its headline.
  if (!r.charts.empty()) {
    out += "<section class=\"charts\"><h2>Overview</h2>";
    for (const auto& c : r.charts) figure_html(out, c);
    out += "</section>";
  }
  // What needs action, first.
  std::vector<std::size_t> action;
  for (std::size_t i = 0; i < r.findings.size(); ++i)
    if (action_rank(r.findings[i].status) <= action_rank(Status::warn)) action.push_back(i);
  std::stable_sort(action.begin(), action.end(), [&](std::size_t a, std::size_t b) { return action_rank(r.findings[a].status) < action_rank(r.findings[b].status); });
  if (!action.empty()) {
    out += "<section class=\"actions\"><h2>Needs action</h2><ul class=\"toc\">";
    for (std::size_t i : action) {
      const auto& f = r.findings[i];
      out += fmt::format("<li><span class=\"badge st-{}\">{}</span><a href=\"#{}\"><code>{}</code></a>{} {}</li>", to_string(f.status), status_word(f.status), finding_anchor(i),
                         html_escape(f.id), f.subject.empty() ? "" : " [" + html_escape(f.subject) + "]", html_escape(f.title));
    }
    out += "</ul></section>";
  }
  std::vector<std::string> layers(std::begin(report::kLayers), std::end(report::kLayers));
  for (const auto& f : r.findings)
    if (std::find(layers.begin(), layers.end(), f.layer) == layers.end()) layers.push_back(f.layer);
  for (const auto& layer : layers) {
    std::vector<std::size_t> items;
    for (std::size_t i = 0; i < r.findings.size(); ++i)
      if (r.findings[i].layer == layer) items.push_back(i);
    if (items.empty()) continue;
    if (!opts.in_order)
      std::stable_sort(items.begin(), items.end(), [&](std::size_t a, std::size_t b) { return action_rank(r.findings[a].status) < action_rank(r.findings[b].status); });
    out += fmt::format("<section class=\"layer\" data-layer=\"{}\"><h2>{}</h2>", html_escape(layer), html_escape(layer));
    for (std::size_t i : items) finding_html(out, r.findings[i], i);
    out += "</section>\n";
  }
  if (r.findings.empty()) out += "<p class=\"note\">No findings.</p>";
  if (r.node) node_html(out, *r.node);
  out += fmt::format("</main><footer class=\"note\"><p>{} &middot; {} findings</p></footer></body></html>\n", kSchema, r.findings.size());
  return out;
}

}  // namespace perfgap::report
