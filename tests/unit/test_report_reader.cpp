// report::Reader, the one reader of perfgap.report/1 JSON: what it keeps of a report, how it
// words each kind of bad input, and that fleet, compare (explain, history) and check --baseline,
// which all read through it, refuse a bad report with the same words.
#include <gtest/gtest.h>

#include <string>

#include "compare/compare.hpp"
#include "core/baseline.hpp"
#include "fleet/reader.hpp"
#include "fleet_gen.hpp"
#include "report/reader.hpp"

namespace perfgap::report {
namespace {

std::string head(const std::string& kind = "root") {
  return R"({"schema": "perfgap.report/1", "tool": {"name": "perfgap", "version": "0"}, "generated_at": "2026-12-01T00:00:00Z",
  "source": {"kind": ")" + kind + R"(", "root": null, "inputs": ["a.txt", "b.txt"]},
  "node": {"name": "n1", "hostname": "n1", "arch": "x86_64", "kernel": "6.1", "virtualized": false, "container": "none",
           "settings": {"governor": "performance", "turbo": "on"}, "environment": {"NCCL_DEBUG": "INFO"}, "nccl_conf": {}},
  "summary": {"pass": 0, "warn": 1, "fail": 0, "skip": 0, "error": 0},)";
}

// A report whose findings are `findings` (the text of the array's items).
std::string with_findings(const std::string& findings, const std::string& kind = "root") {
  return head(kind) + R"("findings": [)" + findings + "]}";
}

std::string finding(const std::string& metrics = "{}", const std::string& status = "warn") {
  return R"({"id": "cpu.governor", "layer": "cpu-power", "status": ")" + status +
         R"(", "subject": "cpu0", "title": "t", "evidence": [{"source": "/sys/x", "observed": "powersave", "expected": "performance"},
         {"source": "s", "observed": "o"}], "fix": "f", "impact": "i", "metrics": )" + metrics + "}";
}

std::string why(std::string_view text) {
  Reader r;
  auto got = r.read(text);
  return got ? std::string("ok") : got.error();
}

TEST(ReportReader, KeepsWhatAReportSays) {
  Reader reader;
  const std::string text = with_findings(finding(R"({"x": 1.5, "nan": null, "y": -2})") + "," +
                                         R"({"id": "a.b", "layer": "gpu", "status": "pass", "subject": null, "metrics": null, "evidence": null})");
  auto r = reader.read(text);
  ASSERT_TRUE(r) << r.error();
  EXPECT_EQ(r->kind, "root");
  EXPECT_EQ(r->generated_at, "2026-12-01T00:00:00Z");
  ASSERT_EQ(r->inputs.size(), 2u);
  EXPECT_EQ(r->inputs[1], "b.txt");
  EXPECT_TRUE(r->has_node);
  ASSERT_TRUE(r->node);
  EXPECT_EQ(r->node->name, "n1");
  EXPECT_EQ(r->node->kernel, "6.1");
  EXPECT_EQ(r->node->virtualized, false);
  ASSERT_EQ(r->node->settings.size(), 2u);
  EXPECT_EQ(r->node->settings[1].key, "turbo") << "in report order";
  EXPECT_EQ(r->node->environment[0].value, "INFO");
  EXPECT_TRUE(r->node->nccl_conf.empty());
  ASSERT_EQ(r->findings.size(), 2u);
  const ReadFinding& f = r->findings[0];
  EXPECT_EQ(f.id, "cpu.governor");
  EXPECT_EQ(f.layer, "cpu-power");
  EXPECT_EQ(f.status, Status::warn);
  EXPECT_EQ(f.subject, "cpu0");
  EXPECT_EQ(f.impact, "i");
  ASSERT_EQ(f.metrics.size(), 2u) << "a null (non-finite) metric is left out";
  EXPECT_EQ(f.metrics[0].name, "x");
  EXPECT_EQ(f.metrics[1].value, -2);
  ASSERT_EQ(f.evidence.size(), 2u);
  EXPECT_EQ(f.evidence[0].expected, "performance");
  EXPECT_FALSE(f.evidence[1].expected);
  EXPECT_TRUE(r->findings[1].subject.empty());
  EXPECT_TRUE(r->findings[1].metrics.empty());
  // The reader is reused: a bad report between two good ones leaves nothing behind.
  EXPECT_FALSE(reader.read("{oops"));
  auto again = reader.read(fleetgen::report_json({}));
  ASSERT_TRUE(again) << again.error();
  EXPECT_EQ(again->node->name, "gpu0001");
  EXPECT_GE(again->findings.size(), 40u);
  // A measurement has a null node; a report without a node field says so too.
  auto analyze = reader.read(R"({"schema": "perfgap.report/1", "source": {"kind": "analyze"}, "node": null, "findings": []})");
  ASSERT_TRUE(analyze) << analyze.error();
  EXPECT_TRUE(analyze->has_node);
  EXPECT_FALSE(analyze->node);
  EXPECT_FALSE(analyze->generated_at);
}

TEST(ReportReader, NotJson) {
  EXPECT_EQ(why(""), "line 1, byte 0: not JSON (empty)");
  EXPECT_EQ(why(" \n"), "line 2, byte 2: not JSON (empty)");
  EXPECT_EQ(why("{oops"), "line 1, byte 1: not JSON (missing a name for object member)");
  const std::string full = with_findings(finding());
  auto cut = why(std::string_view(full).substr(0, full.size() / 2));
  EXPECT_EQ(cut.find("not JSON (truncated: it ends inside an object, array or string)"), cut.find(": ") + 2) << cut;
  EXPECT_EQ(why(with_findings(finding(), "ro\xffot")).find("not JSON (not valid UTF-8)"), why(with_findings(finding(), "ro\xffot")).find(": ") + 2);
  EXPECT_EQ(why(full + " {}").find("not JSON (the document root must not be followed by other values)"),
            why(full + " {}").find(": ") + 2);
  // Another tool's JSON, or a binary: said before it is parsed.
  EXPECT_EQ(why("[1, 2]"), "not a JSON object: not a perfgap report");
  EXPECT_EQ(why("\x7f" "ELF\x02\x01"), "not a JSON object: not a perfgap report");
}

// The line is said as well as the byte: reports are pretty-printed, one value a line.
TEST(ReportReader, NumberOutOfRangeIsNotJson) {
  const std::string text = with_findings(finding(R"({"x": 1e400})"));
  EXPECT_EQ(why(text), "line 6, byte " + std::to_string(text.find("1e400")) + ": not JSON (number too big to be stored in double)");
}

TEST(ReportReader, TooDeep) {
  EXPECT_EQ(why("{\"a\":" + std::string(100, '[') + std::string(100, ']') + "}"), "byte 68: nested deeper than 64 levels: not a perfgap report");
  EXPECT_EQ(why(std::string(100000, '[')), "byte 64: nested deeper than 64 levels: not a perfgap report");
}

TEST(ReportReader, WrongSchema) {
  EXPECT_EQ(why(R"({"schema": "nhc.report/2", "findings": []})"), "schema is not perfgap.report/1 ('nhc.report/2'): not a perfgap report");
  EXPECT_EQ(why(R"({"hello": 1})"), "schema is not perfgap.report/1 (none): not a perfgap report");
  EXPECT_EQ(why(R"({"schema": 1})"), "schema is not perfgap.report/1 (a number): not a perfgap report");
}

TEST(ReportReader, FieldsOfTheWrongShape) {
  const std::string top = R"({"schema": "perfgap.report/1", )";
  EXPECT_EQ(why(top + R"("findings": []})"), "no source");
  EXPECT_EQ(why(top + R"("source": {"kind": 7}, "findings": []})"), "source.kind is a number, not a string");
  EXPECT_EQ(why(top + R"("source": {}, "findings": []})"), "source: no kind");
  EXPECT_EQ(why(top + R"("source": {"kind": "root", "inputs": [1]}, "findings": []})"), "source.inputs[0] is a number, not a string");
  EXPECT_EQ(why(top + R"("source": {"kind": "root"}})"), "no findings");
  EXPECT_EQ(why(top + R"("source": {"kind": "root"}, "findings": {"id": []}})"), "findings is an object, not an array");
  EXPECT_EQ(why(top + R"("source": {"kind": "root"}, "node": [], "findings": []})"), "node is an array, not an object");
  EXPECT_EQ(why(top + R"("source": {"kind": "root"}, "node": {"settings": {"x": 1}}, "findings": []})"),
            "node.settings.x is a number, not a string");
  EXPECT_EQ(why(top + R"("source": {"kind": "root"}, "node": {"virtualized": "no"}, "findings": []})"),
            "node.virtualized is a string, not a boolean");
  EXPECT_EQ(why(with_findings(finding() + R"(, {"layer": "gpu", "status": "pass"})")), "findings[1]: no id");
  EXPECT_EQ(why(with_findings(R"({"id": "", "layer": "gpu", "status": "pass"})")), "findings[0].id is empty");
  EXPECT_EQ(why(with_findings(R"({"id": "a.b", "layer": "gpu"})")), "findings[0]: no status");
  EXPECT_EQ(why(with_findings(R"({"id": "a.b", "status": "pass"})")), "findings[0]: no layer");
  EXPECT_EQ(why(with_findings(R"(7)")), "findings[0] is a number, not an object");
  EXPECT_EQ(why(with_findings(finding("{}", "great"))), "findings[0].status 'great' is not one of pass, warn, fail, skip, error");
  EXPECT_EQ(why(with_findings(finding(R"({"x": "1"})"))), "findings[0].metrics.x is a string, not a number");
  EXPECT_EQ(why(with_findings(finding(R"([1])"))), "findings[0].metrics is an array, not an object");
  EXPECT_EQ(why(with_findings(R"({"id": "a.b", "layer": "gpu", "status": "pass", "evidence": [{"source": 1}]})")),
            "findings[0].evidence[0].source is a number, not a string");
  EXPECT_EQ(why(with_findings(R"({"id": "a.b", "layer": "gpu", "status": "pass", "evidence": ["x"]})")),
            "findings[0].evidence[0] is a string, not an object");
  EXPECT_EQ(why(with_findings(R"({"id": "a.b", "layer": "gpu", "status": "pass", "title": 3})")), "findings[0].title is a number, not a string");
}

// Every reader of reports goes through report::Reader: the same bad report, the same words.
TEST(ReportReader, FleetCompareAndBaselineSayTheSame) {
  const std::string top = R"({"schema": "perfgap.report/1", )";
  const std::vector<std::string> bad = {
      "",
      "{oops",
      "[]",
      std::string(1000, '{'),
      R"({"schema": "perfgap.report/2"})",
      top + R"("source": {"kind": "root"}, "node": {"name": "n"}, "findings": {}})",
      with_findings(finding() + R"(, {"layer": "gpu", "status": "pass"})"),
      with_findings(finding("{}", "great")),
      with_findings(finding(R"({"x": 1e400})")),
      with_findings(finding(R"({"x": "1"})")),
      with_findings(finding(), "ro\xffot"),
  };
  for (const auto& text : bad) {
    const std::string one = why(text);
    ASSERT_NE(one, "ok") << text;
    fleet::ReportReader fleet_reader;
    auto f = fleet_reader.parse(text, {});
    ASSERT_FALSE(f) << text;
    EXPECT_EQ(f.error(), one);
    auto c = compare::read_report(text);
    ASSERT_FALSE(c) << text;
    EXPECT_EQ(c.error(), one);
    auto b = core::read_baseline(text, "host.json");
    ASSERT_FALSE(b) << text;
    EXPECT_EQ(b.error(), "host.json: " + one);
  }
  // What each asks beyond the schema is its own: fleet a named node, the baseline a node.
  const std::string no_node = R"({"schema": "perfgap.report/1", "source": {"kind": "root"}, "node": null, "findings": []})";
  EXPECT_TRUE(compare::read_report(no_node));
  fleet::ReportReader fleet_reader;
  EXPECT_NE(fleet_reader.parse(no_node, {}).error().find("node is null"), std::string::npos);
  EXPECT_NE(core::read_baseline(no_node, "h.json").error().find("has no node"), std::string::npos);
}

// The three build the same thing from a valid report as they did before the one reader.
TEST(ReportReader, CompareAndBaselineKeepTheNode) {
  const std::string text = with_findings(finding(R"({"x": 1, "y": null})"));
  auto c = compare::read_report(text);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->node, "n1");
  std::vector<std::pair<std::string, std::string>> facts = {{"kernel", "6.1"},
                                                            {"arch", "x86_64"},
                                                            {"container", "none"},
                                                            {"virtualized", "no"},
                                                            {"settings.governor", "performance"},
                                                            {"settings.turbo", "on"},
                                                            {"environment.NCCL_DEBUG", "INFO"}};
  EXPECT_EQ(c->node_facts, facts);
  EXPECT_EQ(c->inputs, (std::vector<std::string>{"a.txt", "b.txt"}));
  ASSERT_EQ(c->findings.size(), 1u);
  EXPECT_EQ(c->findings[0].metrics, (std::vector<std::pair<std::string, double>>{{"x", 1}}));
  EXPECT_EQ(c->findings[0].evidence[0], (std::pair<std::string, std::string>{"/sys/x", "powersave"}));
  EXPECT_EQ(c->findings[0].title, "t");
  auto b = core::read_baseline(text, "host.json");
  ASSERT_TRUE(b) << b.error();
  EXPECT_EQ(b->file, "host.json");
  EXPECT_EQ(b->node_name, "n1");
  EXPECT_EQ(b->settings.at("turbo"), "on");
  EXPECT_EQ(b->environment.at("NCCL_DEBUG"), "INFO");
  EXPECT_TRUE(b->nccl_conf.empty());
}

}  // namespace
}  // namespace perfgap::report
