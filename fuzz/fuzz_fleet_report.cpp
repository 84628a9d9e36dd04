// The fleet's report reader and what follows it: never crash; a report the one reader
// (report::Reader) refuses, the fleet refuses with its words; a report it accepts has a node
// name (a measurement: none) and findings with ids, and aggregates and renders (text, JUnit, Prometheus) cleanly.
#include "fleet/aggregate.hpp"
#include "fleet/reader.hpp"
#include "fleet/text_view.hpp"
#include "fuzz_common.hpp"
#include "report/reader.hpp"
#include "report/render.hpp"

PERFGAP_FUZZ_TARGET(fleet_report) {
  static perfgap::fleet::ReportReader reader;
  auto text = perfgap::fuzz::as_text(data, size);
  auto r = reader.parse(text, {.findings = true, .details = true});
  static perfgap::report::Reader one;
  auto checked = one.read(text);
  if (!checked) FUZZ_CHECK(!r && r.error() == checked.error());
  if (!r) {
    FUZZ_CHECK(!r.error().empty());
    return 0;
  }
  FUZZ_CHECK(r->kind == "live" || r->kind == "root" || r->kind == "analyze");
  // A measurement (analyze) has no node of its own: fleet/measured names it from what it measured.
  FUZZ_CHECK(!r->name.empty() || r->kind == "analyze");
  for (const auto& f : r->findings) FUZZ_CHECK(!f.id.empty() && f.metrics_begin + f.metrics_count <= r->metrics.size());
  FUZZ_CHECK(r->report_findings.size() == r->findings.size());
  if (r->kind == "analyze") return 0;  // not a node: the node-report aggregation below is not its path
  // Two copies of the node (the second renamed) make a fleet with something to compare.
  std::vector<perfgap::fleet::NodeReport> nodes{*r, *r};
  nodes[1].name += "-copy";
  nodes[1].kernel += "x";
  auto fleet = perfgap::fleet::dedupe_nodes(std::move(nodes));
  FUZZ_CHECK(fleet.nodes.size() == 2);
  auto findings = perfgap::fleet::aggregate(fleet, {{"f.json", "truncated"}}, {});
  FUZZ_CHECK(!findings.empty() && findings[0].id == "fleet.node_failures");
  (void)perfgap::fleet::render_fleet_text(fleet, {.unreadable = 1}, findings, {});
  std::vector<perfgap::report::NodeSection> sections;
  for (const auto& n : fleet.nodes) sections.push_back({n.name, n.generated_at, n.generated_unix, &n.report_findings});
  sections.push_back({"fleet", "", 0, &findings});
  auto xml = perfgap::report::render_junit(sections);
  FUZZ_CHECK(xml.find("</testsuites>\n") == xml.size() - 14);
  (void)perfgap::report::render_prometheus(sections);
  return 0;
}
