// JUnit XML (one testsuite per node, one testcase per finding) and the node_exporter textfile
// format, as the contract specifies them, for one node (check) or many (fleet).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <iterator>
#include <map>
#include <set>

#include "report/outgoing.hpp"
#include "report/render.hpp"
#include "report/text_style.hpp"

namespace perfgap::report {
namespace {

// Valid XML 1.0 in UTF-8 whatever the bytes: markup escaped, invalid UTF-8 and the
// non-characters U+FFFE/U+FFFF as U+FFFD, control characters XML 1.0 forbids (even as
// references) as '?'.
void xml_escape_to(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const char c = s[i];
    switch (c) {
      case '&': out += "&amp;"; ++i; continue;
      case '<': out += "&lt;"; ++i; continue;
      case '>': out += "&gt;"; ++i; continue;
      case '"': out += "&quot;"; ++i; continue;
      case '\'': out += "&apos;"; ++i; continue;
      default: break;
    }
    const auto b = static_cast<unsigned char>(c);
    if (b >= 0x20 && b < 0x80) {
      out += c;
      ++i;
      continue;
    }
    long cp = next_code_point(s, i);
    if (cp < 0 || cp == 0xFFFE || cp == 0xFFFF) append_utf8(out, 0xFFFD);
    else if (cp < 0x20 && cp != '\n' && cp != '\t' && cp != '\r') out += '?';
    else append_utf8(out, cp);
  }
}

std::string xml_escape(std::string_view s) {
  std::string out;
  xml_escape_to(out, s);
  return out;
}

// A Prometheus label value: valid UTF-8 (invalid bytes as U+FFFD), the format's three
// escapes (\\ \" \n), and other control characters as '?' (parsers differ on them).
void label_escape_to(std::string& out, std::string_view s) {
  for (std::size_t i = 0; i < s.size();) {
    const auto b = static_cast<unsigned char>(s[i]);
    if (b >= 0x20 && b < 0x7F && b != '\\' && b != '"') {
      out += static_cast<char>(b);
      ++i;
      continue;
    }
    long cp = next_code_point(s, i);
    if (cp == '\\') out += "\\\\";
    else if (cp == '"') out += "\\\"";
    else if (cp == '\n') out += "\\n";
    else if (cp < 0) append_utf8(out, 0xFFFD);
    else if (cp < 0x20 || cp == 0x7F) out += '?';
    else append_utf8(out, cp);
  }
}

std::string label_escape(std::string_view s) {
  std::string out;
  label_escape_to(out, s);
  return out;
}

// A sample value as the text format spells it (Go's ParseFloat): non-finite values by name,
// finite ones in the shortest form that reads back exactly.
void append_sample_value(std::string& out, double v) {
  if (std::isnan(v)) out += "NaN";
  else if (std::isinf(v)) out += v > 0 ? "+Inf" : "-Inf";
  else fmt::format_to(std::back_inserter(out), "{}", v);
}

// node="..",id="..",[layer="..",]subject="..": the labels naming a finding; `node` is escaped.
void append_finding_labels(std::string& out, std::string_view node, const Finding& f, bool with_layer) {
  out += "node=\"";
  out += node;
  out += "\",id=\"";
  label_escape_to(out, f.id);
  if (with_layer) {
    out += "\",layer=\"";
    label_escape_to(out, f.layer);
  }
  out += "\",subject=\"";
  label_escape_to(out, f.subject);
  out += '"';
}

std::string_view node_name(const Report& r) {
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

void junit_suite(std::string& out, const NodeSection& sec) {
  const auto& findings = *sec.findings;
  const Summary s = summarize(findings);
  const std::string node = xml_escape(sec.name);
  auto it = std::back_inserter(out);
  fmt::format_to(it, "  <testsuite name=\"perfgap {}\" tests=\"{}\" failures=\"{}\" errors=\"{}\" skipped=\"{}\" timestamp=\"{}\">\n",
                 node, findings.size(), s.fail, s.error, s.skip, xml_escape(sec.generated_at));
  for (const auto& f : findings) {
    out += "    <testcase classname=\"";
    out += node;
    out += "\" name=\"";
    xml_escape_to(out, f.id);
    if (!f.subject.empty()) {
      out += ' ';
      xml_escape_to(out, f.subject);
    }
    out += "\">\n";
    switch (f.status) {
      case Status::fail:
        fmt::format_to(it, "      <failure message=\"{}\">{}</failure>\n", xml_escape(f.title), xml_escape(evidence_text(f)));
        break;
      case Status::error:
        fmt::format_to(it, "      <error message=\"{}\">{}</error>\n", xml_escape(f.title), xml_escape(evidence_text(f)));
        break;
      case Status::skip:
        fmt::format_to(it, "      <skipped message=\"{}\"/>\n", xml_escape(f.title));
        break;
      case Status::warn:
        fmt::format_to(it, "      <system-out>{}</system-out>\n", xml_escape("warn: " + f.title + "\n" + evidence_text(f)));
        break;
      case Status::pass:
        break;
    }
    out += "    </testcase>\n";
  }
  out += "  </testsuite>\n";
}

}  // namespace

std::string render_junit(const std::vector<NodeSection>& sections) {
  std::string out = "<?xml version=\"1.0\" encoding=\"UTF-8\"?>\n<testsuites>\n";
  for (const auto& sec : sections) {
    const std::vector<Finding> shown = outgoing(*sec.findings);
    NodeSection s = sec;
    s.findings = &shown;
    junit_suite(out, s);
  }
  out += "</testsuites>\n";
  return out;
}

// A report of no node (analyze, gap, compare, probe) is one suite named after its command, so
// a CI page reads "perfgap analyze", not "perfgap unknown".
std::string render_junit(const Report& r) {
  const std::string_view name = !r.node && !r.source.kind.empty() ? std::string_view(r.source.kind) : node_name(r);
  return render_junit({NodeSection{name, r.generated_at, std::nullopt, &r.findings}});
}

std::string render_prometheus(const std::vector<NodeSection>& given) {
  // Each node's findings as shown (redacted, metrics capped), and a bound on its series: one
  // report cannot make the output of a fleet grow without bound.
  std::vector<std::vector<Finding>> shown;
  shown.reserve(given.size());
  std::vector<NodeSection> sections = given;
  for (auto& sec : sections) {
    shown.push_back(outgoing(*sec.findings));
    sec.findings = &shown.back();
  }
  std::vector<std::size_t> left_out(sections.size(), 0);
  std::string out;
  auto it = std::back_inserter(out);
  std::vector<std::string> nodes;
  nodes.reserve(sections.size());
  for (const auto& sec : sections) nodes.push_back(label_escape(sec.name));
  out += "# HELP perfgap_finding One perfgap finding (value 1) with its check id, layer, subject and status.\n";
  out += "# TYPE perfgap_finding gauge\n";
  // Appended piece by piece: a fleet has hundreds of thousands of these lines.
  for (std::size_t i = 0; i < sections.size(); ++i) {
    std::size_t n = 0;
    for (const auto& f : *sections[i].findings) {
      if (n++ >= kMaxPrometheusSeriesPerNode) {
        ++left_out[i];
        continue;
      }
      out += "perfgap_finding{";
      append_finding_labels(out, nodes[i], f, true);
      out += ",status=\"";
      out += to_string(f.status);
      out += "\"} 1\n";
    }
  }
  out += "# HELP perfgap_findings Number of perfgap findings by status.\n";
  out += "# TYPE perfgap_findings gauge\n";
  for (std::size_t i = 0; i < sections.size(); ++i) {
    auto s = summarize(*sections[i].findings);
    for (auto [status, n] : {std::pair{"pass", s.pass}, {"warn", s.warn}, {"fail", s.fail}, {"skip", s.skip}, {"error", s.error}})
      fmt::format_to(it, "perfgap_findings{{node=\"{}\",status=\"{}\"}} {}\n", nodes[i], status, n);
  }
  out += "# HELP perfgap_metric A numeric metric of a perfgap finding (its check id, subject and metric name).\n";
  out += "# TYPE perfgap_metric gauge\n";
  for (std::size_t i = 0; i < sections.size(); ++i) {
    // One series per label set: a second finding with the same id and subject (and so the same
    // labels) would make the file invalid, so its repeated metric names are left out.
    std::set<std::string> seen;
    for (const auto& f : *sections[i].findings)
      for (const auto& [metric, value] : f.metrics) {
        if (seen.size() >= kMaxPrometheusSeriesPerNode) {  // counted, not built: the rest of a hostile report costs nothing
          ++left_out[i];
          continue;
        }
        std::string series = "perfgap_metric{";
        append_finding_labels(series, nodes[i], f, false);
        series += ",metric=\"";
        label_escape_to(series, metric);
        series += "\"}";
        if (!seen.insert(series).second) continue;
        out += series;
        out += ' ';
        append_sample_value(out, value);
        out += '\n';
      }
  }
  if (std::any_of(left_out.begin(), left_out.end(), [](std::size_t n) { return n > 0; })) {
    fmt::format_to(it, "# HELP perfgap_series_left_out Series of this node not written: perfgap writes at most {} perfgap_finding and {} perfgap_metric series per node.\n",
                   kMaxPrometheusSeriesPerNode, kMaxPrometheusSeriesPerNode);
    out += "# TYPE perfgap_series_left_out gauge\n";
    for (std::size_t i = 0; i < sections.size(); ++i)
      if (left_out[i]) fmt::format_to(it, "perfgap_series_left_out{{node=\"{}\"}} {}\n", nodes[i], left_out[i]);
  }
  out += "# HELP perfgap_last_run_timestamp_seconds When perfgap last ran on this node.\n";
  out += "# TYPE perfgap_last_run_timestamp_seconds gauge\n";
  for (std::size_t i = 0; i < sections.size(); ++i)
    if (sections[i].unix_time) fmt::format_to(it, "perfgap_last_run_timestamp_seconds{{node=\"{}\"}} {}\n", nodes[i], *sections[i].unix_time);
  return out;
}

std::string render_prometheus(const Report& r, long long unix_time) {
  return render_prometheus({NodeSection{node_name(r), r.generated_at, unix_time, &r.findings}});
}

}  // namespace perfgap::report
