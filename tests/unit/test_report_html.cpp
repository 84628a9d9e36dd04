// The HTML renderer on hand-made reports: every finding in the DOM, hostile text escaped,
// nothing that would load from elsewhere, and the charts drawn from their data.
#include <gtest/gtest.h>

#include <cmath>
#include <limits>
#include <regex>

#include "report/html_escape.hpp"
#include "report/render.hpp"
#include "report/svg_chart.hpp"
#include "report/text_style.hpp"

using namespace perfgap::report;

namespace {

std::size_t count_in_html(const std::string& s, std::string_view what) {
  std::size_t n = 0;
  for (auto p = s.find(what); p != std::string::npos; p = s.find(what, p + what.size())) ++n;
  return n;
}

Report html_sample() {
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-11-30T12:00:00Z";
  r.source.kind = "analyze";
  r.source.inputs = {"run.txt"};
  Finding a;
  a.id = "nccl_tests.busbw";
  a.layer = "network";
  a.status = Status::fail;
  a.subject = "run.txt";
  a.title = "busbw 80% of reference";
  a.add("run.txt:12", "1G busbw 300 GB/s", ">= 95% of reference");
  a.fix = "raise NCCL_IB_QPS_PER_CONNECTION";
  a.impact = "allreduce 20% slower";
  a.metric("busbw_gbps.1073741824", 300);
  Chart c;
  c.title = "busbw by size";
  c.log_x = c.x_bytes = true;
  c.series.push_back({"this run", {{1 << 20, 100, std::nullopt, std::nullopt}, {1 << 30, 300, std::nullopt, std::nullopt}}});
  c.series.push_back({"reference", {{1 << 20, 120, std::nullopt, std::nullopt}, {1 << 30, 375, std::nullopt, std::nullopt}}});
  a.charts.push_back(c);
  Finding b;
  b.id = "perf.summary";
  b.layer = "workload";
  b.status = Status::pass;
  b.title = "1000 samples";
  r.findings = {a, b};
  return r;
}

// What a browser would fetch or run: none of it may be in the page.
void expect_self_contained(const std::string& html) {
  for (const char* bad : {"<script", "src=", "href=\"http", "href='http", "@import", "url(", "<link", "<iframe", "<object", "<embed"})
    EXPECT_EQ(html.find(bad), std::string::npos) << bad;
  // The only absolute URL is SVG's namespace name, which is never fetched.
  std::regex url(R"(https?://[^\s"'<>]+)");
  for (auto it = std::sregex_iterator(html.begin(), html.end(), url); it != std::sregex_iterator(); ++it)
    EXPECT_EQ(it->str(), "http://www.w3.org/2000/svg");
}

}  // namespace

TEST(RenderHtml, EveryFindingIsAnArticleWithItsIdAndStatusWord) {
  auto html = render_html(html_sample());
  EXPECT_EQ(html.rfind("<!DOCTYPE html>", 0), 0u);
  EXPECT_EQ(count_in_html(html, "<article class=\"finding"), 2u);
  EXPECT_NE(html.find("data-id=\"nccl_tests.busbw\" data-status=\"fail\""), std::string::npos);
  EXPECT_NE(html.find("data-id=\"perf.summary\" data-status=\"pass\""), std::string::npos);
  // Status as words (readable printed in black and white), fix and impact shown.
  EXPECT_NE(html.find(">FAIL<"), std::string::npos);
  EXPECT_NE(html.find(">PASS<"), std::string::npos);
  EXPECT_NE(html.find("raise NCCL_IB_QPS_PER_CONNECTION"), std::string::npos);
  EXPECT_NE(html.find("allreduce 20% slower"), std::string::npos);
  // The failing one is listed under "Needs action", linking to its article.
  EXPECT_NE(html.find("<a href=\"#finding-1\"><code>nccl_tests.busbw</code>"), std::string::npos);
  EXPECT_EQ(count_in_html(html, "<svg"), 1u);
  EXPECT_EQ(count_in_html(html, "<polyline"), 2u);
  EXPECT_NE(html.find(">1G<"), std::string::npos) << "size ticks on the log axis";
  expect_self_contained(html);
}

TEST(RenderHtml, HostileTextIsEscapedEverywhere) {
  auto r = html_sample();
  const std::string evil = "<script>alert(1)</script>\"' onload=x &amp; \x1b[2J \xff";
  r.findings[0].title = evil;
  r.findings[0].subject = evil;
  r.findings[0].evidence[0].observed = evil;
  r.findings[0].charts[0].series[0].name = evil;
  r.findings[0].charts[0].title = evil;
  r.source.inputs = {evil};
  Node n;
  n.name = evil;
  n.settings["governor"] = evil;
  r.node = n;
  auto html = render_html(r);
  EXPECT_EQ(html.find("<script"), std::string::npos);
  EXPECT_EQ(html.find("\" onload"), std::string::npos);
  EXPECT_EQ(html.find('\x1b'), std::string::npos);
  EXPECT_EQ(html.find('\xff'), std::string::npos) << "invalid UTF-8 becomes U+FFFD";
  EXPECT_NE(html.find("&lt;script&gt;"), std::string::npos);
  EXPECT_NE(html.find("&amp;amp;"), std::string::npos);
  expect_self_contained(html);
}

TEST(RenderHtml, EscapeHelper) {
  EXPECT_EQ(html_escape("a<b>&\"'"), "a&lt;b&gt;&amp;&quot;&#39;");
  EXPECT_EQ(html_escape("tab\there"), "tab\there");
}

TEST(RenderSvg, NonFiniteAndEmptyDataDrawNothingBroken) {
  Chart c;
  c.title = "empty";
  EXPECT_TRUE(render_svg(c).empty());
  c.series.push_back({"non-finite", {{std::nan(""), 1, std::nullopt, std::nullopt}, {1, std::numeric_limits<double>::infinity(), std::nullopt, std::nullopt}}});
  EXPECT_TRUE(render_svg(c).empty());
  c.log_x = true;
  c.series.push_back({"x <= 0 on a log axis", {{0, 5, std::nullopt, std::nullopt}, {-4, 5, std::nullopt, std::nullopt}}});
  EXPECT_TRUE(render_svg(c).empty());
  // One finite point: still an axis range (not a division by zero), and no NaN in the output.
  c.series.push_back({"one", {{64, 5, std::nullopt, std::nullopt}}});
  auto svg = render_svg(c);
  ASSERT_FALSE(svg.empty());
  EXPECT_EQ(svg.find("nan"), std::string::npos);
  EXPECT_EQ(svg.find("inf"), std::string::npos);
  // A page with an empty chart says so instead of drawing it.
  Report r;
  r.source.kind = "analyze";
  Finding f;
  f.id = "x.y";
  f.layer = "workload";
  Chart e;
  e.title = "no points";
  f.charts.push_back(e);
  r.findings.push_back(f);
  EXPECT_NE(render_html(r).find("no points: nothing to draw"), std::string::npos);
}

TEST(RenderSvg, BandsReferenceLineAndSeriesStyles) {
  Chart c;
  c.title = "sweep";
  c.log_x = c.x_bytes = true;
  for (int s = 0; s < 5; ++s) {
    ChartSeries ser{"setting " + std::to_string(s), {}};
    for (int e = 20; e <= 30; ++e) ser.points.push_back({std::exp2(e), 10.0 * e + s, 10.0 * e + s - 2, 10.0 * e + s + 2});
    c.series.push_back(ser);
  }
  c.reference_y = 250;
  c.reference_label = "reference 250";
  auto svg = render_svg(c);
  EXPECT_EQ(count_in_html(svg, "fill-opacity=\"0.16\""), 5u) << "one min-max band per series";
  EXPECT_EQ(count_in_html(svg, "<polyline"), 5u);
  // Without colour the series still differ: dash patterns and marker shapes repeat every 4.
  EXPECT_GE(count_in_html(svg, "stroke-dasharray=\"7 4\""), 2u);
  EXPECT_NE(svg.find("class=\"ref\""), std::string::npos);
  EXPECT_NE(svg.find("reference 250"), std::string::npos);
  EXPECT_NE(svg.find("(min 198, max 202)"), std::string::npos) << "the band's values in the tooltip";
}

TEST(RenderSvg, WaterfallAndHeatmap) {
  Chart w;
  w.kind = Chart::Kind::waterfall;
  w.title = "gap";
  w.steps = {{"reference", 0, 100, false}, {"cpu.cstate", 100, 95, false}, {"numa", 95, 91, false}, {"unexplained", 91, 89, true}, {"measured", 0, 88, false}};
  auto svg = render_svg(w);
  EXPECT_EQ(count_in_html(svg, "class=\"wf total\""), 2u);
  EXPECT_EQ(count_in_html(svg, "class=\"wf down\""), 2u);
  EXPECT_NE(svg.find(">-5<"), std::string::npos);
  EXPECT_EQ(count_in_html(svg, "class=\"wf rest\""), 1u);
  EXPECT_EQ(count_in_html(svg, "class=\"conn\""), 4u);

  Chart h;
  h.kind = Chart::Kind::heatmap;
  h.title = "nodes";
  h.rows = {"n1", "n2"};
  h.columns = {"cpu.turbo", "numa.balancing"};
  h.cells = {{Status::fail, Status::pass}, {std::nullopt, Status::warn}};
  svg = render_svg(h);
  EXPECT_EQ(count_in_html(svg, "<rect"), 3u) << "no cell where a node has no such finding";
  EXPECT_NE(svg.find("class=\"hm st-fail\""), std::string::npos);
  EXPECT_NE(svg.find(">F<"), std::string::npos) << "status letters: readable without colour";
  // Cut beyond the limits; the page says so.
  Report r;
  r.source.kind = "fleet";
  Chart big = h;
  big.rows.clear();
  big.cells.clear();
  for (std::size_t i = 0; i < kHeatmapMaxRows + 5; ++i) {
    big.rows.push_back("n" + std::to_string(i));
    big.cells.push_back({Status::pass, Status::pass});
  }
  r.charts.push_back(big);
  auto html = render_html(r);
  EXPECT_NE(html.find("First 400 of 405 rows"), std::string::npos);
  EXPECT_EQ(count_in_html(html, "<rect"), 2 * kHeatmapMaxRows);
}

TEST(RenderNumbers, MeaningfulDigitsInTextAndHtml) {
  EXPECT_EQ(number_text(3.09658), "3.097");
  EXPECT_EQ(number_text(161.986913), "162");
  EXPECT_EQ(number_text(67.04), "67.04");
  EXPECT_EQ(number_text(35.900000000000006), "35.9");
  EXPECT_EQ(number_text(1234.56), "1234.6");
  EXPECT_EQ(number_text(249.82), "249.8");
  EXPECT_EQ(number_text(0.0123456), "0.01235");
  EXPECT_EQ(number_text(2.99999), "3");
  EXPECT_EQ(number_text(-0.5), "-0.5");
  EXPECT_EQ(number_text(42), "42");
  EXPECT_EQ(number_text(1073741824), "1073741824") << "whole numbers keep every digit";
  EXPECT_EQ(number_text(-0.0), "0");
  EXPECT_EQ(number_text(1e-7), "1e-07");
  EXPECT_EQ(number_text(std::numeric_limits<double>::quiet_NaN()), "nan");
  EXPECT_EQ(number_text(-std::numeric_limits<double>::infinity()), "-inf");
  EXPECT_EQ(metric_label("busbw_gbps.1073741824"), "busbw 1 GiB");
  EXPECT_EQ(metric_label("busbw_gbps.524288.before"), "busbw 512 KiB before");
  EXPECT_EQ(metric_label("kernel_pct"), "kernel_pct");
  EXPECT_EQ(metric_label("busbw_gbps.x1"), "busbw_gbps.x1");
  EXPECT_EQ(size_text(1536 * 1024), "1.5 MiB");

  // The page's metric grid and the verbose text view both round; the raw key stays a tooltip.
  Report r = html_sample();
  r.findings[1].metric("kernel_pct", 35.900000000000006).metric("ipc", 3.09658);
  auto html = render_html(r);
  EXPECT_NE(html.find(">35.9<"), std::string::npos);
  EXPECT_NE(html.find(">3.097<"), std::string::npos);
  EXPECT_EQ(html.find("35.900000000000006"), std::string::npos);
  EXPECT_EQ(html.find("3.09658"), std::string::npos);
  EXPECT_NE(html.find("title=\"busbw_gbps.1073741824\">busbw 1 GiB<"), std::string::npos);
  auto text = render_text(r, {.verbose = true});
  EXPECT_NE(text.find("kernel_pct=35.9 ipc=3.097"), std::string::npos) << text;
}

TEST(RenderHtml, TablesAreNotRepeatedAndAWaterfallIsDrawnNotTyped) {
  Report r = html_sample();
  auto& f = r.findings[0];
  f.table = {{"size", "busbw GB/s", "bar"}, {"1 GiB", "300", "[#####     ]"}};
  auto html = render_html(r);
  // The table shows the sizes; evidence and metrics are one click away, not three tables.
  EXPECT_NE(html.find("<details class=\"evidence\"><summary>evidence (1 line)</summary>"), std::string::npos);
  EXPECT_NE(html.find("<details class=\"metrics\"><summary>metrics (1)</summary>"), std::string::npos);
  EXPECT_LT(html.find("<svg"), html.find("<table class=\"data\"")) << "the chart before the table";
  EXPECT_NE(html.find("[#####"), std::string::npos) << "no waterfall chart: every column is data";
  Chart w;
  w.kind = Chart::Kind::waterfall;
  w.title = "gap";
  w.steps = {{"reference", 0, 100, false}, {"numa", 100, 95, false}, {"measured", 0, 95, false}};
  f.charts = {w};
  html = render_html(r);
  EXPECT_EQ(html.find("[#####"), std::string::npos) << "the text-art column is left out where the chart draws it";
  EXPECT_EQ(html.find("<th>bar</th>"), std::string::npos);
  EXPECT_NE(html.find("<th>busbw GB/s</th>"), std::string::npos);
  // Without a table the evidence is the finding's body: shown, not folded.
  r.findings[0].table.clear();
  html = render_html(r);
  EXPECT_EQ(html.find("<details class=\"evidence\""), std::string::npos);
}

TEST(RenderHtml, AFleetPageOpensOnNodesAndFoldsItsInputs) {
  Report r;
  r.source.kind = "fleet";
  for (int i = 0; i < 50; ++i) r.source.inputs.push_back("reports/n" + std::to_string(i) + ".json");
  Finding f;
  f.id = "fleet.node_failures";
  f.layer = "fleet";
  f.status = Status::fail;
  f.title = "25 of 50 nodes fail";
  r.findings = {f};
  Chart h;
  h.kind = Chart::Kind::heatmap;
  h.title = "checks by node";
  h.rows = {"25 nodes: n[0-24]", "25 nodes: n[25-49]"};
  h.columns = {"cpu.governor"};
  h.cells = {{Status::fail}, {Status::pass}};
  r.charts = {h};
  HtmlOptions o;
  for (int i = 0; i < 50; ++i) {
    NodeStanding s;
    s.name = "n" + std::to_string(i);
    if (i < 25) s.worst = Status::fail, s.failing = {"cpu.governor"};
    else if (i < 30) s.worst = Status::warn, s.warning = {"numa.balancing"};
    o.nodes.push_back(s);
  }
  auto html = render_html(r, o);
  EXPECT_NE(html.find(">FAIL: 25 of 50 nodes failing, 5 warning, 20 healthy<"), std::string::npos) << "the headline counts nodes";
  EXPECT_NE(html.find("fleet findings: 1 fail"), std::string::npos);
  EXPECT_NE(html.find("<details class=\"inputs\"><summary>50 input files</summary>"), std::string::npos);
  const auto worst = html.find("id=\"worst-nodes\"");
  ASSERT_NE(worst, std::string::npos);
  EXPECT_LT(worst, html.find("<svg")) << "the worst nodes before the heatmap";
  EXPECT_LT(html.find("<svg"), html.find("<article")) << "the heatmap before the findings";
  EXPECT_EQ(count_in_html(html, "<tr data-node="), 20u) << "the first 20 troubled nodes by name";
  EXPECT_NE(html.find("data-node=\"n0\" data-status=\"fail\""), std::string::npos);
  EXPECT_NE(html.find("and 10 more nodes failing or warning"), std::string::npos);
  EXPECT_NE(html.find(">20 healthy nodes (no check fails or warns).<"), std::string::npos);
  EXPECT_EQ(html.find("Not examined"), std::string::npos);
  // A node with nothing failing but almost every check skipped is not called healthy.
  o.nodes[40].decided = 1;
  o.nodes[40].skipped = 44;
  o.nodes[41].decided = 30;
  o.nodes[41].skipped = 15;
  auto unexamined = render_html(r, o);
  EXPECT_NE(unexamined.find(">FAIL: 25 of 50 nodes failing, 5 warning, 19 healthy, 1 not examined (under a quarter of their checks decided)<"),
            std::string::npos);
  EXPECT_NE(unexamined.find(">19 healthy nodes (no check fails or warns).<"), std::string::npos);
  EXPECT_NE(unexamined.find("Not examined: 1 node with nothing failing or warning"), std::string::npos);
  EXPECT_NE(unexamined.find("<code>n40</code>"), std::string::npos);
  // Not a fleet: the headline stays in findings and a short input list inline.
  auto single = render_html(html_sample());
  EXPECT_NE(single.find(">FAIL: 1 fail, 0 warn, 1 pass, 0 skip, 0 error<"), std::string::npos);
  EXPECT_NE(single.find("inputs: <code>run.txt</code>"), std::string::npos);
  EXPECT_EQ(single.find("worst-nodes"), std::string::npos);
}
