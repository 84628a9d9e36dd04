// `--format html` of every command kind, loaded in headless Chromium (Debian's `chromium`):
// the page loads with no console message (its Content-Security-Policy turns any script or
// fetch into one), the DOM holds every finding of the same run's JSON report, the charts are
// there, and a screenshot is not blank. Skips without Chromium, except under CI (which
// installs it: tools/setup-debian.sh --test).
// Each Chromium start costs seconds (most of these tests' time, bench/README.md "The CI run"):
// a page is loaded once, its DOM dumped and, where wanted, its screenshot taken by the same
// headless run (Chromium's new headless mode does both), and a test's runs share one profile.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <regex>
#include <sstream>

#include <nlohmann/json.hpp>

#include "fleet_gen.hpp"
#include "png.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using nlohmann::json;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;

namespace {

std::string chromium() {
  if (const char* c = std::getenv("PERFGAP_CHROMIUM"); c && *c) return c;
  for (const char* name : {"chromium", "chromium-browser", "google-chrome"})
    if (auto p = perfgap::fixture::find_on_path(name); !p.empty()) return p;
  return {};
}

std::string slurp(const fs::path& p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

}  // namespace

struct HtmlPageLoad {
  std::string dom;
  std::vector<std::string> console;  // what the page logged (errors, CSP violations)
  std::string err;
  int status = -1;
  perfgap::fixture::Image shot;  // when asked for: the page at 1100x1400
  std::size_t png_bytes = 0;
};

class HtmlInChromium : public ::testing::Test {
 protected:
  void SetUp() override {
    browser_ = chromium();
    if (browser_.empty()) {
      if (std::getenv("CI")) FAIL() << "CI installs chromium (tools/setup-debian.sh --test); it is not on PATH";
      GTEST_SKIP() << "no chromium on PATH (apt-get install chromium)";
    }
  }

  // One headless run: the page's DOM (--dump-dom) and what it logged, and with `shoot` its
  // screenshot too. The runs of one test share its profile (one at a time).
  HtmlPageLoad load(const fs::path& page, bool shoot = false) const {
    const fs::path png = fs::path(out_.path()) / "shot.png";
    fs::remove(png);
    // --no-sandbox: CI runs as root, where Chromium's sandbox refuses to start.
    std::vector<std::string> args{"120", browser_, "--headless", "--no-sandbox", "--disable-gpu", "--no-first-run", "--disable-extensions",
                                  "--user-data-dir=" + profile_.path(), "--enable-logging=stderr", "--v=0", "--dump-dom"};
    if (shoot) args.insert(args.end(), {"--window-size=1100,1400", "--hide-scrollbars", "--screenshot=" + png.string()});
    args.push_back("file://" + fs::absolute(page).string());
    auto r = run_binary("/usr/bin/timeout", args);
    HtmlPageLoad l{r.out, {}, r.err, r.status, {}};
    std::istringstream err(r.err);
    for (std::string line; std::getline(err, line);)
      if (line.find(":CONSOLE") != std::string::npos) l.console.push_back(line);
    if (shoot) {
      const std::string bytes = slurp(png);
      l.png_bytes = bytes.size();
      auto img = perfgap::fixture::decode_png(bytes);
      EXPECT_TRUE(img) << page << ": " << (img ? "" : img.error()) << "\n" << r.err;
      if (img) l.shot = *img;
    }
    return l;
  }

  // Runs perfgap twice with the same arguments, as html and as json; checks the page against
  // the report and returns the page's DOM.
  // With `shoot`, the screenshot (not blank) is checked here and left in *shot.
  std::string check_page(const std::string& name, const std::vector<std::string>& args, std::size_t min_charts, bool shoot = false,
                         HtmlPageLoad* shot = nullptr) {
    // Options go before a "--" (sweep's benchmark follows it); "{format}" in an argument
    // becomes the format, so that each run can have its own run directory.
    auto with = [&](const std::string& format, std::vector<std::string> extra) {
      std::vector<std::string> out;
      for (const auto& a : args) {
        auto p = a.find("{format}");
        out.push_back(p == std::string::npos ? a : a.substr(0, p) + format + a.substr(p + 8));
      }
      auto dash = std::find(out.begin(), out.end(), "--");
      out.insert(dash, extra.begin(), extra.end());
      return out;
    };
    auto j_args = with("json", {"--format", "json"});
    auto jr = run_binary(PERFGAP_BINARY, j_args);
    EXPECT_LE(jr.status, 1) << name << ": " << jr.err;
    json report = json::parse(jr.out, nullptr, false);
    EXPECT_FALSE(report.is_discarded()) << name;
    const fs::path page = fs::path(out_.path()) / (name + ".html");
    auto hr = run_binary(PERFGAP_BINARY, with("html", {"--format", "html", "--output", page.string()}));
    EXPECT_EQ(hr.status, jr.status) << name << ": " << hr.err;
    EXPECT_TRUE(fs::exists(page)) << name;

    auto l = load(page, shoot);
    EXPECT_EQ(l.status, 0) << name << ": " << l.err;
    EXPECT_TRUE(l.console.empty()) << name << ": " << ::testing::PrintToString(l.console);
    const auto& dom = l.dom;
    std::size_t articles = 0;
    for (auto p = dom.find("<article class=\"finding"); p != std::string::npos; p = dom.find("<article class=\"finding", p + 1)) ++articles;
    EXPECT_EQ(articles, report["findings"].size()) << name;
    for (const auto& f : report["findings"]) {
      std::string id = f["id"].get<std::string>();
      EXPECT_NE(dom.find("data-id=\"" + id + "\" data-status=\"" + f["status"].get<std::string>() + "\""), std::string::npos) << name << ": " << id;
    }
    std::size_t charts = 0;
    for (auto p = dom.find("<svg"); p != std::string::npos; p = dom.find("<svg", p + 1)) ++charts;
    EXPECT_GE(charts, min_charts) << name;
    EXPECT_NE(dom.find("id=\"verdict\""), std::string::npos) << name;
    if (shoot) {
      EXPECT_GT(perfgap::fixture::ink_share(l.shot), 0.02) << name << ": the screenshot is (nearly) blank";
    }
    std::string out = dom;
    if (shot) *shot = std::move(l);
    return out;
  }

  std::string browser_;
  TempDir out_, profile_;
};

namespace {
fs::path src(const std::string& rel) { return fs::path(PERFGAP_SOURCE_DIR) / rel; }
}  // namespace

TEST_F(HtmlInChromium, TheHarnessSeesConsoleMessagesAndBlankPages) {
  // Controls: a page that tries to fetch and to run a script must be caught, and a blank page
  // must read as blank, or the tests below could not fail.
  const fs::path bad = fs::path(out_.path()) / "bad.html";
  std::ofstream(bad) << "<!DOCTYPE html><html><head><meta http-equiv=\"Content-Security-Policy\" content=\"default-src 'none'\"></head>"
                        "<body><img src=\"http://192.0.2.1/x.png\"><script>console.error('x')</script></body></html>";
  auto l = load(bad);
  EXPECT_FALSE(l.console.empty()) << l.err;
  const fs::path blank = fs::path(out_.path()) / "blank.html";
  std::ofstream(blank) << "<!DOCTYPE html><html><body></body></html>";
  auto b = load(blank, true);
  EXPECT_EQ(b.status, 0) << b.err;
  EXPECT_GT(b.shot.width, 0u) << "a screenshot was taken";
  EXPECT_LT(perfgap::fixture::ink_share(b.shot), 0.001);
}

TEST_F(HtmlInChromium, CheckOfAGoldenTree) {
  TempDir tree;
  auto spec = perfgap::fixture::unpack_tree(src("tests/fixtures/golden/h100-c1-remote-numa.tree").string(), tree.path());
  ASSERT_TRUE(spec) << spec.error();
  auto dom = check_page("check", {"check", "--root", tree.path()}, 0, true);
  EXPECT_NE(dom.find("Needs action"), std::string::npos);
}

TEST_F(HtmlInChromium, AnalyzeNcclTestsAgainstAReferenceAndSteps) {
  auto dom = check_page("nccl-tests",
                        {"analyze", "nccl-tests", src("tests/fixtures/logs/nccl-tests/slow-allreduce.txt").string(), "--reference",
                         src("tests/fixtures/logs/nccl-tests/ref-allreduce.txt").string()},
                        1, true);
  EXPECT_NE(dom.find("reference"), std::string::npos);
  EXPECT_NE(dom.find("<polyline"), std::string::npos);
  // The sizes once on screen: the table; the evidence lines behind it folded.
  EXPECT_NE(dom.find("<details class=\"evidence\">"), std::string::npos);
  EXPECT_LT(dom.find("<svg"), dom.find("<table class=\"data\"")) << "the chart first";
  check_page("steps", {"analyze", "steps", src("tests/fixtures/logs/steps/measured.csv").string(), "--reference-ms", "100"}, 1);
}

TEST_F(HtmlInChromium, GapAndCompare) {
  check_page("gap", {"gap", "--reference", "100", "--measured", src("tests/fixtures/logs/steps/measured.csv").string()}, 1);
  auto before = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", src("tests/fixtures/logs/nccl-tests/ref-allreduce.txt").string(), "--format", "json"});
  auto after = run_binary(PERFGAP_BINARY, {"analyze", "nccl-tests", src("tests/fixtures/logs/nccl-tests/slow-allreduce.txt").string(), "--format", "json"});
  const fs::path b = fs::path(out_.path()) / "before.json", a = fs::path(out_.path()) / "after.json";
  std::ofstream(b) << before.out;
  std::ofstream(a) << after.out;
  auto dom = check_page("compare", {"compare", b.string(), a.string()}, 1, true);
  // Both runs' busbw curves on one chart, labelled as people read them.
  EXPECT_NE(dom.find("busbw before and after"), std::string::npos);
  EXPECT_NE(dom.find(">before (before.json)<"), std::string::npos) << "the legend";
  EXPECT_NE(dom.find(">busbw 64 MiB before<"), std::string::npos) << "not busbw_gbps.67108864.before";
  EXPECT_EQ(dom.find(">busbw_gbps."), std::string::npos) << "no raw metric key as a visible label";
}

TEST_F(HtmlInChromium, FleetHeatmap) {
  const fs::path dir = fs::path(out_.path()) / "reports";
  fs::create_directories(dir);
  int i = 0;
  for (const char* name : {"healthy-x86", "h100-c1-remote-numa", "kvm-guest", "gb200-vm"}) {
    std::string text = slurp(src("tests/golden") / (std::string(name) + ".json"));
    for (auto pos = text.find("\"<masked>\""); pos != std::string::npos; pos = text.find("\"<masked>\""))
      text.replace(pos, 10, "\"2026-11-30T12:00:00Z\"");
    std::ofstream(dir / ("n" + std::to_string(i++) + ".json")) << text;
  }
  auto dom = check_page("fleet", {"fleet", dir.string()}, 1, true);
  EXPECT_NE(dom.find("class=\"hm st-fail\""), std::string::npos) << "a failing node's cell";
}

TEST_F(HtmlInChromium, SweepBandwidthChart) {
  TempDir d;
  const std::string fake = src("tests/fixtures/sweep/bench/fake-nccl-tests.sh").string();
  auto dom = check_page("sweep", {"sweep", "--env", "FAKE_MODE=base,fast", "--repeat", "2", "--run-dir", d.path() + "/run-{format}", "--", "/bin/sh", fake}, 1, true);
  EXPECT_NE(dom.find("FAKE_MODE=fast"), std::string::npos);
  EXPECT_NE(dom.find("fill-opacity=\"0.16\""), std::string::npos) << "min-max bands of the repeats";
}

TEST_F(HtmlInChromium, ExplainWaterfall) {
  // The public H100 case: the golden tree's node report against a run at 88% of reference.
  TempDir tree;
  auto spec = perfgap::fixture::unpack_tree(src("tests/fixtures/golden/h100-c1-remote-numa.tree").string(), tree.path());
  ASSERT_TRUE(spec) << spec.error();
  auto node = run_binary(PERFGAP_BINARY, {"check", "--root", tree.path(), "--format", "json"});
  ASSERT_LE(node.status, 1) << node.err;
  const fs::path report = fs::path(out_.path()) / "node.json";
  std::ofstream(report) << node.out;
  auto dom = check_page("explain", {"explain", "--reference", "880", "--measured", "1000", report.string()}, 1, true);
  EXPECT_NE(dom.find("class=\"wf down\""), std::string::npos) << "a bar per estimated cause";
  EXPECT_NE(dom.find("class=\"wf total\""), std::string::npos) << "the reference and the measured level";
  EXPECT_NE(dom.find("cpu_cstates_turbo"), std::string::npos) << "a bar per cause, named by the cause";
  // The page opens on the chart: it comes before the finding's table and evidence, and the
  // text-art waterfall of the text view is not typed into an HTML table.
  const auto chart = dom.find("<svg");
  EXPECT_LT(chart, dom.find("<table class=\"data\""));
  EXPECT_LT(chart, dom.find("<table class=\"evidence\""));
  EXPECT_LT(chart, 40000u) << "near the top of the page";
  EXPECT_EQ(dom.find("[###"), std::string::npos);
  EXPECT_EQ(dom.find("waterfall (points below the reference)"), std::string::npos);
}

namespace {

// Bands of screen lines holding the fail colour (#b91c1c: the verdict, each FAIL badge, the
// heatmap's failing cells): how many separate red things the first screen shows.
std::size_t html_scale_red_bands(const perfgap::fixture::Image& img) {
  std::size_t bands = 0;
  bool in_band = false;
  for (std::uint32_t y = 0; y < img.height; ++y) {
    bool red = false;
    for (std::uint32_t x = 0; x < img.width && !red; ++x) {
      const auto* p = &img.rgb[(static_cast<std::size_t>(y) * img.width + x) * 3];
      red = std::abs(p[0] - 185) < 24 && p[1] < 60 && p[2] < 60;
    }
    bands += red && !in_band;
    in_band = red;
  }
  return bands;
}

// The height attribute of the first <svg> after `from` in the DOM.
double html_scale_svg_height(const std::string& dom, std::size_t from) {
  auto svg = dom.find("<svg", from);
  if (svg == std::string::npos) return -1;
  auto h = dom.find(" height=\"", svg);
  return h == std::string::npos ? -1 : std::stod(dom.substr(h + 9));
}

}  // namespace

// The fleet page at 50 and 1,000 generated nodes (the fleet tests' generator): it opens on the
// verdict in nodes and the worst nodes, the input list folded; the heatmap's rows are groups
// of nodes failing the same checks, so its height does not grow with the fleet; the page stays
// small. DOM and size only: nothing here depends on time.
TEST_F(HtmlInChromium, FleetPageScalesTo50And1000Nodes) {
  for (std::size_t count : {std::size_t{50}, std::size_t{1000}}) {
    SCOPED_TRACE(count);
    const fs::path dir = fs::path(out_.path()) / ("fleet-" + std::to_string(count));
    fs::create_directories(dir);
    std::size_t failing = 0, warning = 0;
    for (std::size_t i = 1; i <= count; ++i) {
      perfgap::fleetgen::NodeSpec s;
      s.name = perfgap::fleetgen::node_name(i, 4);
      s.seed = i;
      if (i % 13 == 0) s.status["cpu.governor"] = "fail", s.settings["governor"] = "powersave";
      if (i % 29 == 0) s.status["net.ib.ports"] = "fail";
      if (i % 41 == 0) s.status["nccl.gdr"] = "fail";
      if (i % 7 == 0) s.status["numa.balancing"] = "warn";
      const bool fails = i % 13 == 0 || i % 29 == 0 || i % 41 == 0;
      failing += fails;
      warning += !fails && i % 7 == 0;
      std::ofstream(dir / (s.name + ".json")) << perfgap::fleetgen::report_json(s);
    }
    const std::string name = "fleet-" + std::to_string(count);
    HtmlPageLoad shot;
    auto dom = check_page(name, {"fleet", dir.string()}, 1, true, &shot);
    const std::string headline = std::to_string(failing) + " of " + std::to_string(count) + " nodes failing, " + std::to_string(warning) + " warning, " +
                                 std::to_string(count - failing - warning) + " healthy";
    EXPECT_NE(dom.find(headline), std::string::npos) << headline;
    // The first screen: the verdict, then the worst nodes; the thousand input names folded.
    const auto worst = dom.find("id=\"worst-nodes\"");
    ASSERT_NE(worst, std::string::npos);
    EXPECT_LT(dom.find("id=\"verdict\""), worst);
    const auto inputs = dom.find("<details class=\"inputs\">");
    ASSERT_NE(inputs, std::string::npos) << "the input list in a <details>";
    EXPECT_LT(inputs, worst);
    EXPECT_EQ(dom.substr(inputs, 30).find(" open"), std::string::npos) << "folded, not open";
    std::size_t before = 0;
    for (const char* block : {"<p", "<li", "<tr", "<table", "<svg"})
      for (auto p = dom.find(block, dom.find("<body")); p < inputs; p = dom.find(block, p + 1)) ++before;
    EXPECT_LE(before, 4u) << "only the headline above the worst nodes";
    // Sorted by severity: the nodes failing most checks first (13*29 = 377 fails two at 1,000).
    const auto first_row = dom.find("<tr data-node=\"", worst);
    ASSERT_NE(first_row, std::string::npos);
    EXPECT_EQ(dom.substr(first_row, 40).find("data-node=\"gpu0"), 4u);
    if (count == 1000) {
      EXPECT_NE(dom.find("<tr data-node=\"gpu0377\" data-status=\"fail\">"), std::string::npos);
    }
    EXPECT_LT(dom.find("data-status=\"fail\"", worst), dom.find("data-status=\"warn\"", worst)) << "fail before warn";
    EXPECT_NE(dom.find("healthy node", worst), std::string::npos);
    // The heatmap: a row per failing set, so at 1,000 nodes about as tall as at 50.
    const double height = html_scale_svg_height(dom, worst);
    EXPECT_GT(height, 0);
    EXPECT_LE(height, 600) << "grouped rows, not a row per node";
    EXPECT_EQ(dom.find("First 400 of"), std::string::npos) << "nothing cut";
    const auto page_bytes = fs::file_size(fs::path(out_.path()) / (name + ".html"));
    EXPECT_LT(page_bytes, count == 1000 ? 400u * 1024 : 120u * 1024) << "page size";
    const auto& img = shot.shot;
    const std::size_t png_bytes = shot.png_bytes;
    // The verdict and a FAIL badge per failing node listed (up to 20) are on the first screen.
    EXPECT_GE(html_scale_red_bands(img), std::min<std::size_t>(failing, 20) / 2 + 1);
    std::printf("[ fleet page ] %zu nodes: page %ju bytes, heatmap %.0f px tall, screenshot %ux%u (%zu bytes), %zu red bands\n", count,
                static_cast<std::uintmax_t>(page_bytes), height, img.width, img.height, png_bytes, html_scale_red_bands(img));
  }
}
