// report::render: the one format dispatch every command goes through.
#include <gtest/gtest.h>

#include "report/render.hpp"

namespace {

perfgap::report::Report render_dispatch_sample(bool with_node) {
  using namespace perfgap::report;
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-11-30T12:00:00Z";
  r.source.kind = "gap";
  if (with_node) {
    r.node.emplace();
    r.node->name = "gpu17";
  }
  Finding f;
  f.id = "steps.gap";
  f.layer = "workload";
  f.status = Status::fail;
  f.subject = "--measured";
  f.title = "83.0% of reference";
  f.metric("percent_of_reference", 83.0);
  r.findings.push_back(f);
  return r;
}

}  // namespace

TEST(RenderDispatch, FormatNamesRoundTripAndUnknownIsNone) {
  using namespace perfgap::report;
  for (Format f : kFormats) EXPECT_EQ(parse_format(format_name(f)), f) << format_name(f);
  EXPECT_FALSE(parse_format("xml"));
  EXPECT_FALSE(parse_format("JSON")) << "names are lower case, as the CLI spells them";
  EXPECT_FALSE(parse_format(""));
}

TEST(RenderDispatch, EachFormatIsItsRenderer) {
  using namespace perfgap::report;
  const auto r = render_dispatch_sample(true);
  RenderOptions o;
  o.text = {true, false};
  o.unix_time = 1764504000;
  EXPECT_EQ(render(r, Format::json, o), render_json(r));
  EXPECT_EQ(render(r, Format::html, o), render_html(r));
  EXPECT_EQ(render(r, Format::junit, o), render_junit(r));
  EXPECT_EQ(render(r, Format::prometheus, o), render_prometheus(r, 1764504000));
  EXPECT_EQ(render(r, Format::text, o), render_text(r, {true, false}));
  // Many nodes (fleet): the sections, not the report's one node.
  const std::vector<Finding> other = r.findings;
  std::vector<NodeSection> sections{{"a", r.generated_at, 1, &r.findings}, {"b", r.generated_at, 2, &other}};
  o.sections = &sections;
  EXPECT_EQ(render(r, Format::junit, o), render_junit(sections));
  EXPECT_EQ(render(r, Format::prometheus, o), render_prometheus(sections));
  EXPECT_EQ(render(r, Format::json, o), render_json(r)) << "sections are for junit and prometheus only";
}

TEST(RenderDispatch, JunitOfANodelessReportIsNamedAfterItsCommand) {
  using namespace perfgap::report;
  EXPECT_NE(render_junit(render_dispatch_sample(false)).find("<testsuite name=\"perfgap gap\""), std::string::npos);
  EXPECT_NE(render_junit(render_dispatch_sample(true)).find("<testsuite name=\"perfgap gpu17\""), std::string::npos);
  // Prometheus keeps node="unknown" for a report of no node (the contract's label).
  EXPECT_NE(render_prometheus(render_dispatch_sample(false), 1).find("node=\"unknown\""), std::string::npos);
}
