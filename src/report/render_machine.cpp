// JUnit XML (one testsuite per node, one testcase per finding) and the node_exporter textfile
// format, as the contract specifies them.
#include <fmt/format.h>

#include <map>

#include "report/render.hpp"

namespace perfgap::report {
namespace {

std::string xml_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    switch (c) {
      case '&': out += "&amp;"; break;
      case '<': out += "&lt;"; break;
      case '>': out += "&gt;"; break;
      case '"': out += "&quot;"; break;
      case '\'': out += "&apos;"; break;
      default:
        // XML 1.0 forbids most control characters even as references.
        if (static_cast<unsigned char>(c) < 0x20 && c != '\n' && c != '\t' && c != '\r') out += '?';
        else out += c;
    }
  }
  return out;
}

std::string label_escape(std::string_view s) {
  std::string out;
  for (char c : s) {
    if (c == '\\') out += "\\\\";
    else if (c == '"') out += "\\\"";
    else if (c == '\n') out += "\\n";
    else out += c;
  }
  return out;
}

std::string node_name(const Report& r) {
  if (r.node && !r.node->name.empty()) return r.node->name;
  return "unknown";
}

std::string evidence_text(const Finding& f) {
  std::string t;
  for (const auto& e : f.evidence)
    t += fmt::format("{}: {}{}\n", e.source, e.observed, e.expected ? " (expected " + *e.expected + ")" : "");
  if (!f.fix.empty()) t += "fix: " + f.fix + "\n";
  return t;
}

}  // namespace

std::string render_junit(const Report& r) {
  auto s = r.summary();
  const std::string node = node_name(r);
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  out += fmt::format("  <testsuite name=\"perfgap {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" timestamp=\"{}\">\n",
                     xml_escape(node), r.findings.size(), s.fail, s.error, s.skip, xml_escape(r.generated_at));
  for (const auto& f : r.findings) {
    std::string name = f.id + (f.subject.empty() ? "" : " " + f.subject);
    out += fmt::format("    <testcase classname=\"{}\" name=\"{}\">\n", xml_escape(node), xml_escape(name));
    switch (f.status) {
      case Status::fail:
        out += fmt::format("      <failure message=\"{}\">{}</failure>\n", xml_escape(f.title), xml_escape(evidence_text(f)));
        break;
      case Status::error:
        out += fmt::format("      <error message=\"{}\">{}</error>\n", xml_escape(f.title), xml_escape(evidence_text(f)));
        break;
      case Status::skip:
        out += fmt::format("      <skipped message=\"{}\"/>\n", xml_escape(f.title));
        break;
      case Status::warn:
        out += fmt::format("      <system-out>{}</system-out>\n", xml_escape("warn: " + f.title + "\n" + evidence_text(f)));
        break;
      case Status::pass:
        break;
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n</testsuites>\n";
  return out;
}

std::string render_prometheus(const Report& r, long long unix_time) {
  const std::string node = label_escape(node_name(r));
  std::string out;
  out += "# HELP perfgap_finding One perfgap finding (value 1) with its check id, layer, subject and status.\n";
  out += "# TYPE perfgap_finding gauge\n";
  for (const auto& f : r.findings)
    out += fmt::format("perfgap_finding{{node=\"{}\",id=\"{}\",layer=\"{}\",subject=\"{}\",status=\"{}\"}} 1\n", node,
                       label_escape(f.id), label_escape(f.layer), label_escape(f.subject), to_string(f.status));
  out += "# HELP perfgap_findings Number of perfgap findings by status.\n";
  out += "# TYPE perfgap_findings gauge\n";
  auto s = r.summary();
  for (auto [status, n] : {std::pair{"pass", s.pass}, {"warn", s.warn}, {"fail", s.fail}, {"skip", s.skip}, {"error", s.error}})
    out += fmt::format("perfgap_findings{{node=\"{}\",status=\"{}\"}} {}\n", node, status, n);
  out += "# HELP perfgap_last_run_timestamp_seconds When perfgap last ran on this node.\n";
  out += "# TYPE perfgap_last_run_timestamp_seconds gauge\n";
  out += fmt::format("perfgap_last_run_timestamp_seconds{{node=\"{}\"}} {}\n", node, unix_time);
  return out;
}

}  // namespace perfgap::report
