// Finding tables in text output: aligned under the title, shown for fail/warn/error and with
// -v, never in JSON; and the analyzers that fill them.
#include <gtest/gtest.h>

#include <nlohmann/json.hpp>

#include "analyzers/analyzers.hpp"
#include "parsers/nccl_tests.hpp"
#include "report/render.hpp"

using namespace perfgap;
using report::Finding;
using report::Report;
using report::Status;

namespace {

Report one(Finding f) {
  Report r;
  r.tool_version = "0.1.0";
  r.generated_at = "2026-11-30T12:00:00Z";
  r.source.kind = "analyze";
  r.source.inputs = {"run.txt"};
  r.findings.push_back(std::move(f));
  return r;
}

Finding with_table(Status s) {
  Finding f;
  f.id = "nccl_tests.busbw";
  f.layer = "network";
  f.status = s;
  f.subject = "run.txt";
  f.title = "busbw below 95% of the reference";
  f.table = {{"size", "busbw GB/s", "reference GB/s", "ratio"},
             {"1 MiB", "65.77", "67.04", "98.1%"},
             {"64 MiB", "249.82", "361.67", "69.1%"}};
  f.add("run.txt:3", "evidence line");
  f.metric("ratio.67108864", 0.691);
  return f;
}

}  // namespace

TEST(ReportTable, AlignedUnderTheTitle) {
  auto text = report::render_text(one(with_table(Status::fail)), {false, false});
  const std::string want =
      "        size    busbw GB/s  reference GB/s  ratio\n"
      "        -----------------------------------------\n"
      "        1 MiB        65.77           67.04  98.1%\n"
      "        64 MiB      249.82          361.67  69.1%\n";
  auto at = text.find(want);
  ASSERT_NE(at, std::string::npos) << text;
  // After the title line, before the evidence.
  auto title = text.find("busbw below 95% of the reference\n");
  ASSERT_NE(title, std::string::npos);
  EXPECT_EQ(title + std::string("busbw below 95% of the reference\n").size(), at);
  EXPECT_LT(at, text.find("run.txt:3: evidence line"));
}

TEST(ReportTable, ShownForActionableOrVerboseOnly) {
  for (auto s : {Status::fail, Status::warn, Status::error})
    EXPECT_NE(report::render_text(one(with_table(s)), {false, false}).find("reference GB/s"), std::string::npos);
  for (auto s : {Status::pass, Status::skip}) {
    EXPECT_EQ(report::render_text(one(with_table(s)), {false, false}).find("reference GB/s"), std::string::npos);
    EXPECT_NE(report::render_text(one(with_table(s)), {true, false}).find("reference GB/s"), std::string::npos);
  }
}

TEST(ReportTable, NotInJson) {
  auto j = nlohmann::json::parse(report::render_json(one(with_table(Status::fail))));
  const auto& f = j["findings"][0];
  EXPECT_FALSE(f.contains("table"));
  EXPECT_EQ(j.dump().find("reference GB/s"), std::string::npos);
  EXPECT_DOUBLE_EQ(f["metrics"]["ratio.67108864"].get<double>(), 0.691);
}

TEST(ReportTable, RaggedRowsAndWideCells) {
  Finding f = with_table(Status::warn);
  f.table = {{"a", "b"}, {"x"}, {"longer cell", "1", "extra"}};
  auto text = report::render_text(one(f), {false, false});
  EXPECT_NE(text.find("        a            b\n"), std::string::npos) << text;
  EXPECT_NE(text.find("        x\n"), std::string::npos) << text;
  EXPECT_NE(text.find("        longer cell  1  extra\n"), std::string::npos) << text;
}

TEST(ReportTable, LongTablesAreCutWithoutVerbose) {
  Finding f = with_table(Status::fail);
  f.table = {{"size", "busbw"}};
  for (int i = 0; i < 50; ++i) f.table.push_back({std::to_string(i), "1.00"});
  auto text = report::render_text(one(f), {false, false});
  EXPECT_NE(text.find("... 10 more rows (-v shows all)"), std::string::npos) << text;
  EXPECT_EQ(text.find("        49  "), std::string::npos);
  auto verbose = report::render_text(one(f), {true, false});
  EXPECT_EQ(verbose.find("more rows"), std::string::npos);
  EXPECT_NE(verbose.find("        49     1.00\n"), std::string::npos) << verbose;
}

TEST(ReportTable, NcclTestsAnalyzerFillsIt) {
  auto run = parsers::parse_nccl_tests(
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "     1048576        262144     float     sum      -1    27.90   37.58   65.77       0    27.10   38.69   67.71       0\n"
      "    67108864      16777216     float     sum      -1    470.1  142.75  249.82       0    468.9  143.12  250.46       0\n");
  ASSERT_TRUE(run) << run.error().describe();
  auto ref = parsers::parse_nccl_tests(
      "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
      "     1048576        262144     float     sum      -1    27.37   38.31   67.04       0    26.93   38.94   68.14       0\n"
      "    67108864      16777216     float     sum      -1    324.7  206.67  361.67       0    324.7  206.67  361.68       0\n");
  ASSERT_TRUE(ref);
  analyzers::NcclTestsOptions o;
  auto plain = analyzers::analyze_nccl_tests(*run, "run.txt", o);
  ASSERT_EQ(plain[0].table.size(), 3u);
  EXPECT_EQ(plain[0].table[0], (std::vector<std::string>{"size", "busbw GB/s", "algbw GB/s", "time us"}));
  EXPECT_EQ(plain[0].table[2], (std::vector<std::string>{"64 MiB", "249.82", "142.75", "470.1"}));
  o.reference = &*ref;
  o.reference_source = "ref.txt";
  auto cmp = analyzers::analyze_nccl_tests(*run, "run.txt", o);
  EXPECT_EQ(cmp[0].status, Status::fail);
  ASSERT_EQ(cmp[0].table.size(), 3u);
  EXPECT_EQ(cmp[0].table[0], (std::vector<std::string>{"size", "busbw GB/s", "reference GB/s", "ratio"}));
  EXPECT_EQ(cmp[0].table[1], (std::vector<std::string>{"1 MiB", "65.77", "67.04", "98.1%"}));
  EXPECT_EQ(cmp[0].table[2], (std::vector<std::string>{"64 MiB", "249.82", "361.67", "69.1%"}));
}

TEST(ReportTable, StepsAndTurbostatFillIt) {
  analyzers::StepStats s;
  s.records = 100;
  s.warmup = 10;
  s.used = 90;
  s.mean = 110;
  s.median = 100;
  s.tail = 150;
  s.min = 95;
  s.max = 160;
  analyzers::StepsOptions o;
  o.reference_ms(90);
  o.reference_source = "--reference-ms";
  auto f = analyzers::analyze_steps(s, "steps.log", o);
  ASSERT_EQ(f[0].table.size(), 2u);
  EXPECT_EQ(f[0].table[1][2], "90.0%");
  ASSERT_EQ(f[1].table.size(), 2u);
  EXPECT_EQ(f[1].table[1].back(), "50.0%");
}
