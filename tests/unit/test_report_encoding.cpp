// The renderers against hostile data: bytes no output format may pass on raw (control
// characters, invalid UTF-8) in node names, titles, evidence and table cells.
#include <gtest/gtest.h>

#include <pugixml.hpp>

#include <string>

#include "report/render.hpp"
#include "report/text_style.hpp"

using namespace perfgap;
using namespace perfgap::report;

namespace {

bool valid_utf8(const std::string& s) {
  for (std::size_t i = 0; i < s.size();)
    if (next_code_point(s, i) < 0) return false;
  return true;
}

// Raw control characters other than those listed.
bool has_control(const std::string& s, std::string_view allowed) {
  for (char c : s) {
    auto b = static_cast<unsigned char>(c);
    if ((b < 0x20 || b == 0x7F) && allowed.find(c) == std::string_view::npos) return true;
  }
  return false;
}

const std::string kEvil = "gpu\x1b[2J\x07\x1b]0;pwned\x07\xff\xfe\x01\xc2\x9b<&>\xef\xbf\xbe\xed\xa0\x80" "end";

Report hostile_report() {
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-11-30T12:00:00Z";
  r.source.kind = "root";
  r.source.root = "/tmp/t\x1b[2J";
  Node n;
  n.name = n.hostname = kEvil;
  n.arch = "x86_64";
  n.kernel = "6.8\x07";
  n.container = "none";
  r.node = n;
  Finding f{.id = "a.fail", .layer = "cpu-power", .status = Status::fail, .subject = "pid:1 " + kEvil, .title = "bad " + kEvil,
            .evidence = {{"/proc/1/comm", kEvil, kEvil}}, .fix = "fix\x1b[31m", .impact = "x\x9b", .metrics = {{"m\x1b", 1.0}},
            .table = {{"name", "value"}, {kEvil, "1"}}, .table_always = false, .charts = {}};
  Finding w = f;
  w.status = Status::warn;
  w.id = "a.warn";
  Finding s = f;
  s.status = Status::skip;
  s.id = "a.skip";
  Finding e = f;
  e.status = Status::error;
  e.id = "a.error";
  r.findings = {f, w, s, e};
  return r;
}

}  // namespace

TEST(EncodingHostile, PrintableEscapesControlsAndBadBytes) {
  EXPECT_EQ(printable("plain text"), "plain text");
  EXPECT_EQ(printable("caf\xc3\xa9 \xf0\x9f\x9a\x80"), "caf\xc3\xa9 \xf0\x9f\x9a\x80");  // valid UTF-8 stays
  EXPECT_EQ(printable("a\x1b[2Jb"), "a\\x1b[2Jb");
  EXPECT_EQ(printable("bell\x07"), "bell\\x07");
  EXPECT_EQ(printable("line\nnext\ttab"), "line\\x0anext\ttab");
  EXPECT_EQ(printable("csi\xc2\x9b"), "csi\\u009b");
  EXPECT_EQ(printable("bad\xff"), "bad\xef\xbf\xbd");
  EXPECT_EQ(printable("del\x7f"), "del\\x7f");
  EXPECT_EQ(printable("\xed\xa0\x80"), "\xef\xbf\xbd\xef\xbf\xbd\xef\xbf\xbd");  // a surrogate is three bad bytes
  auto p = printable(kEvil);
  EXPECT_FALSE(has_control(p, ""));
  EXPECT_TRUE(valid_utf8(p));
}

TEST(EncodingHostile, TextNeverPassesControlCharactersOn) {
  for (bool color : {false, true}) {
    for (bool verbose : {false, true}) {
      auto t = render_text(hostile_report(), {verbose, color});
      EXPECT_TRUE(valid_utf8(t));
      EXPECT_FALSE(has_control(t, color ? "\n\x1b" : "\n")) << t;
      EXPECT_EQ(t.find('\x07'), std::string::npos);
      // With colour, ESC only starts perfgap's own colour sequences.
      for (std::size_t i = t.find('\x1b'); i != std::string::npos; i = t.find('\x1b', i + 1)) {
        auto end = t.find('m', i);
        ASSERT_NE(end, std::string::npos);
        auto seq = t.substr(i, end - i + 1);
        EXPECT_TRUE(seq == "\x1b[1;31m" || seq == "\x1b[1;35m" || seq == "\x1b[1;33m" || seq == "\x1b[32m" || seq == "\x1b[2m" ||
                    seq == "\x1b[0m")
            << "foreign escape sequence " << printable(seq);
      }
      EXPECT_NE(t.find("gpu\\x1b[2J\\x07"), std::string::npos) << t;
    }
  }
}

TEST(EncodingHostile, JunitIsValidUtf8Xml) {
  auto x = render_junit(hostile_report());
  EXPECT_TRUE(valid_utf8(x));
  EXPECT_FALSE(has_control(x, "\n\t\r"));
  EXPECT_EQ(x.find("\xef\xbf\xbe"), std::string::npos) << "U+FFFE is not an XML character";
  pugi::xml_document doc;
  auto parsed = doc.load_string(x.c_str());
  ASSERT_TRUE(parsed) << parsed.description() << " at " << parsed.offset;
  auto suite = doc.child("testsuites").child("testsuite");
  ASSERT_TRUE(suite);
  EXPECT_EQ(std::string(suite.child("testcase").child("failure").attribute("message").value()).substr(0, 7), "bad gpu");
}

TEST(EncodingHostile, PrometheusLabelsAreValidUtf8) {
  auto p = render_prometheus(hostile_report(), 1);
  EXPECT_TRUE(valid_utf8(p));
  EXPECT_FALSE(has_control(p, "\n"));
  // One sample per line: nothing in a label ends a line early.
  for (std::size_t start = 0; start < p.size();) {
    auto end = p.find('\n', start);
    auto line = p.substr(start, end - start);
    if (!line.empty() && line[0] != '#') {
      auto close = line.rfind('}');
      ASSERT_NE(close, std::string::npos) << line;
      EXPECT_TRUE(line.substr(close + 1) == " 1" || line.substr(close + 1) == " 0" || line.substr(close + 1).size() > 1) << line;
    }
    start = end + 1;
  }
}
