#include <gtest/gtest.h>

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "parsers/nccl_tests.hpp"

using namespace perfgap;

namespace {
const char* kCurrent =
    "# nccl-tests version 2.20.0 (b4d5bee) nccl-headers=23102 nccl-library=23102\n"
    "# Collective test starting: all_reduce_perf\n"
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
    "      524288        131072     float     sum      -1    20.66   25.38   44.41       0    19.70   26.61   46.57       0\n"
    "     1048576        262144     float     sum      -1    27.37   38.31   67.04       0    26.93   38.94   68.14       0\n"
    "     2097152        524288     float     sum      -1    42.21   49.68   86.94       0    42.09   49.83   87.20       0\n"
    "# Out of bounds values : 0 OK\n"
    "# Avg bus bandwidth    : 66.13\n";
}

TEST(ParsersNcclTests, CurrentFormat) {
  auto r = parsers::parse_nccl_tests(kCurrent);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->collective, "all_reduce_perf");
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[1].size, 1048576u);
  EXPECT_DOUBLE_EQ(r->rows[1].out_of_place->busbw, 67.04);
  EXPECT_DOUBLE_EQ(r->rows[1].in_place->busbw, 68.14);
  EXPECT_EQ(*r->rows[1].out_of_place->wrong, 0);
  EXPECT_EQ(r->rows[1].line, 6);
  EXPECT_DOUBLE_EQ(*r->avg_busbw, 66.13);
}

TEST(ParsersNcclTests, OldFormatsAndPrefixes) {
  // Old: no root column, `error` column (N/A or a max error), empty redop.
  auto old = parsers::parse_nccl_tests(
      "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "    33554432       8388608   float     sum   1464.2   22.92   45.65    N/A   1458.1   23.01   45.84    N/A\n"
      "   268435456       1048576   float   520935    0.52    0.51  0e+00   519562    0.52    0.51  1e+00\n");
  ASSERT_TRUE(old) << old.error().describe();
  ASSERT_EQ(old->rows.size(), 2u);
  EXPECT_FALSE(old->rows[0].out_of_place->wrong.has_value());
  EXPECT_FALSE(old->rows[0].out_of_place->max_error.has_value());
  // The old `error` column is a max error, not a count.
  EXPECT_FALSE(old->rows[1].in_place->wrong.has_value());
  EXPECT_DOUBLE_EQ(*old->rows[1].in_place->max_error, 1.0);
  // Rows alone, no header, no root.
  auto rows = parsers::parse_nccl_tests("     65536          2048   float    52.01    1.26    1.10  0e+00    50.09    1.31    1.14  0e+00\n");
  ASSERT_TRUE(rows);
  EXPECT_DOUBLE_EQ(rows->rows[0].out_of_place->busbw, 1.10);
  // Launchers: each prefix is read.
  const std::pair<const char*, double> launched[] = {
      {"[1,0]<stdout>:     8388608   2097152  float  sum  -1  83.04  101.01  176.77  0  82.03  102.26  178.96  0\n", 176.77},
      {" 0:     8388608   2097152  float  sum  -1  83.04  101.01  176.80  0  82.03  102.26  178.96  0\n", 176.80},
      {"[0]      8388608       2097152     float     sum      -1[0]     992.6    8.45   16.20      0[0]     986.0    8.51   16.31      0\n", 16.20}};
  std::string all;
  for (const auto& [line, busbw] : launched) {
    auto one = parsers::parse_nccl_tests(line);
    ASSERT_TRUE(one) << line;
    ASSERT_EQ(one->rows.size(), 1u) << line;
    EXPECT_DOUBLE_EQ(one->rows[0].out_of_place->busbw, busbw) << line;
    all += line;
  }
  // Together: one size three times, and only its last row is kept (the one judged).
  auto p = parsers::parse_nccl_tests(all);
  ASSERT_TRUE(p);
  ASSERT_EQ(p->rows.size(), 1u);
  EXPECT_DOUBLE_EQ(p->rows[0].out_of_place->busbw, 16.20);
  EXPECT_EQ(p->rows[0].line, 3);
  EXPECT_TRUE(p->results_checked);
}

TEST(ParsersNcclTests, RepeatedRunsKeepTheLastRowOfEachSizeAndEveryWrongRow) {
  std::string text = "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  int lines = 1;
  for (int run = 0; run < 10000; ++run) {
    for (std::uint64_t size : {1048576ull, 2097152ull}) {
      bool wrong = run == 17 && size == 2097152ull;
      text += fmt::format("  {}  {}  float  sum  -1  10.0  1.0  {}.0  {}  10.0  1.0  2.0  0\n", size, size / 4, run, wrong ? 3 : 0);
      ++lines;
    }
  }
  auto r = parsers::parse_nccl_tests(text);
  ASSERT_TRUE(r);
  ASSERT_EQ(r->rows.size(), 3u);  // the wrong row of run 17, then the last row of each size
  EXPECT_EQ(r->rows[0].line, 1 + 17 * 2 + 2);
  EXPECT_DOUBLE_EQ(*r->rows[0].out_of_place->wrong, 3);
  EXPECT_EQ(r->rows[1].size, 1048576u);
  EXPECT_DOUBLE_EQ(r->rows[1].out_of_place->busbw, 9999.0);
  EXPECT_EQ(r->rows[2].line, lines);
  auto f = analyzers::analyze_nccl_tests(*r, "x", {});
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].status, report::Status::fail);  // the wrong result of run 17 still counts
}

TEST(ParsersNcclTests, DamagedRowsNameTheLine) {
  auto r = parsers::parse_nccl_tests(
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      " 1048576 262144 float sum -1 27.37 38.31 67.04 0 26.93 38.94 68.14 0\n"
      " 2097152 524288 float sum -1 42.21 49.68\n");
  ASSERT_TRUE(r);
  ASSERT_EQ(r->damaged.size(), 1u);
  EXPECT_EQ(r->damaged[0].line, 3);
  auto only_bad = parsers::parse_nccl_tests(" 2097152 524288 float sum -1 42.21 49.68\n");
  ASSERT_FALSE(only_bad);
  EXPECT_EQ(only_bad.error().line, 1);
}

TEST(ParsersNcclTests, JsonOutput) {
  auto r = parsers::parse_nccl_tests(R"({"version":2,"nccl_version":22703,"results":[
    {"size":1048576,"count":262144,"type":"float","redop":"sum","root":"    -1",
     "out_of_place":{"time":27.37,"alg_bw":38.31,"bus_bw":67.04,"nwrong":0},
     "in_place":{"time":26.93,"alg_bw":38.94,"bus_bw":68.14,"nwrong":null}}]})");
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->json);
  EXPECT_EQ(r->nccl_version, "2.27.3");
  EXPECT_DOUBLE_EQ(r->rows[0].out_of_place->busbw, 67.04);
  EXPECT_FALSE(r->rows[0].in_place->wrong);
  EXPECT_FALSE(parsers::parse_nccl_tests("{\"other\": 1}"));
}

TEST(ParsersNcclTests, Sizes) {
  auto s = parsers::parse_sizes("1M,64M,1G,512,8K");
  ASSERT_TRUE(s);
  EXPECT_EQ(*s, (std::vector<std::uint64_t>{1ull << 20, 64ull << 20, 1ull << 30, 512, 8192}));
  EXPECT_FALSE(parsers::parse_sizes("1X"));
  EXPECT_FALSE(parsers::parse_sizes("-1"));
  EXPECT_FALSE(parsers::parse_sizes(""));
  EXPECT_EQ(parsers::format_size(1 << 20), "1 MiB");
}

TEST(AnalyzersNcclTests, Statuses) {
  auto run = *parsers::parse_nccl_tests(kCurrent);
  auto f = analyzers::analyze_nccl_tests(run, "m", {});
  EXPECT_EQ(f[0].status, report::Status::skip) << "no reference and no line rate: no basis to pass";
  // Reference 10% faster at 2 MiB only: 86.94/96 < 95%.
  std::string ref_text = kCurrent;
  ref_text.replace(ref_text.find("86.94"), 5, "96.00");
  auto ref = *parsers::parse_nccl_tests(ref_text);
  analyzers::NcclTestsOptions o;
  o.reference = &ref;
  o.reference_source = "r";
  f = analyzers::analyze_nccl_tests(run, "m", o);
  EXPECT_EQ(f[0].status, report::Status::fail);
  EXPECT_NE(f[0].title.find("2 MiB"), std::string::npos) << f[0].title;
  o.sizes = {1 << 20};  // only 1 MiB judged
  EXPECT_EQ(analyzers::analyze_nccl_tests(run, "m", o)[0].status, report::Status::pass);
  // #wrong fails.
  std::string wrong = kCurrent;
  wrong.replace(wrong.find("67.04       0"), 13, "67.04       3");
  EXPECT_EQ(analyzers::analyze_nccl_tests(*parsers::parse_nccl_tests(wrong), "m", {})[0].status, report::Status::fail);
}

namespace {
const char* kOldRounding =
    "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
    "     8388608       2097152   float     sum   1234.5    6.80   11.89  1e-06   1232.1    6.81   11.91  2e-06\n"
    "    16777216       4194304   float     sum   2401.3    6.99   12.22  1e-06   2399.8    6.99   12.23  1e-06\n";
}

// Old layout: an `error` of 1e-06 on float sums is rounding, not a wrong result; the
// "Out of bounds values" line, where printed, is the count that decides.
TEST(AnalyzersNcclTests, OldErrorColumnIsAMaxErrorNotACount) {
  auto r = parsers::parse_nccl_tests(kOldRounding);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_FALSE(r->out_of_bounds);
  auto f = analyzers::analyze_nccl_tests(*r, "old", {});
  EXPECT_EQ(f[0].status, report::Status::skip) << "not wrong; no basis for the bandwidth: " << f[0].title;
  // Far above the float tolerance: wrong.
  std::string bad = std::string(kOldRounding) + "    33554432       8388608   float     sum   4700.1    7.14   12.49  5e-01   4699.0    7.14   12.49  1e-06\n";
  f = analyzers::analyze_nccl_tests(*parsers::parse_nccl_tests(bad), "old", {});
  EXPECT_EQ(f[0].status, report::Status::fail);
  // ... unless the run's out-of-bounds count says no value was wrong.
  auto oob = parsers::parse_nccl_tests(bad + "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 12.2\n");
  ASSERT_TRUE(oob);
  EXPECT_EQ(oob->out_of_bounds, 0.0);
  EXPECT_EQ(analyzers::analyze_nccl_tests(*oob, "old", {})[0].status, report::Status::skip);
  auto oob_bad = parsers::parse_nccl_tests(std::string(kOldRounding) + "# Out of bounds values : 12 FAILED\n");
  auto g = analyzers::analyze_nccl_tests(*oob_bad, "old", {});
  EXPECT_EQ(g[0].status, report::Status::fail);
  EXPECT_NE(g[0].title.find("12 out-of-bounds"), std::string::npos) << g[0].title;
  // Integers are exact; half precision is coarser than float.
  EXPECT_EQ(analyzers::max_error_tolerance("int32"), 0.0);
  EXPECT_DOUBLE_EQ(analyzers::max_error_tolerance("float"), 1e-3);
  EXPECT_GT(analyzers::max_error_tolerance("half"), analyzers::max_error_tolerance("float"));
  EXPECT_GT(analyzers::max_error_tolerance("bfloat16"), analyzers::max_error_tolerance("half"));
  // A #wrong count of 1 is wrong whatever the type.
  auto cur = parsers::parse_nccl_tests(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     8388608       2097152     float     sum      -1    83.04  101.01  176.77      1    82.03  102.26  178.96      0\n");
  EXPECT_EQ(analyzers::analyze_nccl_tests(*cur, "cur", {})[0].status, report::Status::fail);
}

// A pasted table with rows cut out ("..."): the report says only the printed sizes count.
TEST(AnalyzersNcclTests, ElidedRowsAreSaid) {
  auto r = parsers::parse_nccl_tests(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "           8             2     float     sum      -1    983.2    0.00    0.00      0    166.1    0.00    0.00      0\n"
      "        ...\n"
      " 17179869184    4294967296     float     sum      -1    92173  186.39  369.86      0    92284  186.16  369.42      0\n");
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->elided, std::vector<int>{3});
  auto f = analyzers::analyze_nccl_tests(*r, "t", {});
  EXPECT_EQ(f[0].status, report::Status::skip);
  EXPECT_NE(f[0].title.find("2 sizes printed (rows elided)"), std::string::npos) << f[0].title;
  bool said = false;
  for (const auto& e : f[0].evidence) said = said || (e.source == "t:3" && e.observed.find("only the 2 printed sizes") != std::string::npos);
  EXPECT_TRUE(said);
  EXPECT_TRUE(parsers::parse_nccl_tests("...\n     65536          2048   float    52.01    1.26    1.10  0e+00    50.09    1.31    1.14  0e+00\n")->elided.empty());
}

// -c 0: every cell N/A; the out-of-bounds line (always 0 then) does not make it checked.
TEST(AnalyzersNcclTests, NotCheckedEvenWithAnOutOfBoundsLine) {
  auto r = parsers::parse_nccl_tests(
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "     8388608       2097152     float     sum      -1    83.04  101.01  176.77    N/A    82.03  102.26  178.96    N/A\n"
      "# Out of bounds values : 0 OK\n");
  ASSERT_TRUE(r);
  auto f = analyzers::analyze_nccl_tests(*r, "t", {});
  EXPECT_NE(f[0].title.find("results not checked"), std::string::npos) << f[0].title;
}

// A 2-node run whose busbw is above the line rate given (a tree over two nodes moves less over
// the NICs than busbw's ring formula counts): that rate cannot judge it, so no pass on it
// (issue 42 item 6). Below the line rate the same basis still judges.
TEST(ParsersNcclTests, BusbwAboveTheLineRateGivenIsNoPassOnThatBasis) {
  auto table = [](double busbw) {
    std::string t = "# Collective test starting: all_reduce_perf\n# Using devices\n";
    for (int r = 0; r < 16; ++r)
      t += fmt::format("#  Rank {:2} Group  0 Pid {} on {} device  {} [0000:{:02x}:00] NVIDIA H100 80GB HBM3\n", r, 6900 + r,
                       r < 8 ? "node-a" : "node-b", r % 8, 4 + r % 8);
    t += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    t += fmt::format("  8589934592    2147483648     float     sum      -1    47535  180.71  {:.2f}      0    47743  179.92  {:.2f}      0\n",
                     busbw, busbw);
    return t + "# Out of bounds values : 0 OK\n";
  };
  analyzers::NcclTestsOptions o;
  o.nic_gbps_total = 8 * 200;  // 200 GB/s
  o.nic_basis = "--nics 8 --link-gbps 200";
  auto above = parsers::parse_nccl_tests(table(338.82));
  ASSERT_TRUE(above) << above.error().describe();
  auto f = analyzers::analyze_nccl_tests(*above, "two-nodes.txt", o);
  ASSERT_FALSE(f.empty());
  EXPECT_EQ(f[0].status, report::Status::skip) << f[0].title;
  EXPECT_NE(f[0].title.find("is 169% of the 200.0 GB/s the NICs allow (--nics 8 --link-gbps 200): that rate does not bound this run"),
            std::string::npos)
      << f[0].title;
  EXPECT_NE(f[0].title.find("--reference"), std::string::npos) << f[0].title;
  // Within the bound the line rate decides as before: 170 of 200 GB/s passes.
  auto within = parsers::parse_nccl_tests(table(170.0));
  ASSERT_TRUE(within);
  EXPECT_EQ(analyzers::analyze_nccl_tests(*within, "two-nodes.txt", o)[0].status, report::Status::pass);
}

// A sweep's header asks for sizes up to maxBytes and nccl-tests closes a sweep with
// "# Avg bus bandwidth": rows that end below the header's last size without it are a run that
// stopped early (crash, hang, cut capture), said, and no comparison on it passes.
namespace {
std::string sweep_run(int last_log2, bool closed, const char* step = "2(factor)") {
  std::string t = fmt::format("# nThread 1 nGpus 1 minBytes 1048576 maxBytes 8589934592 step: {} warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                              "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n",
                              step);
  for (int k = 20; k <= last_log2; ++k)
    t += fmt::format("  {}  {}  float  sum  -1  100.0  10.00  18.75  0  100.0  10.00  18.75  0\n", 1ull << k, (1ull << k) / 4);
  if (closed) t += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 18.75\n";
  return t;
}
}  // namespace

TEST(ParsersNcclTests, SweepThatStoppedEarly) {
  for (const auto& parse : {parsers::parse_nccl_tests, parsers::parse_nccl_tests_reference}) {
    auto cut = parse(sweep_run(27, false));  // 128 MiB of 8 GiB, no closing line
    ASSERT_TRUE(cut);
    ASSERT_EQ(cut->stopped_early.size(), 1u);
    EXPECT_EQ(cut->stopped_early[0].reached, 128ull << 20);
    EXPECT_EQ(cut->stopped_early[0].max_bytes, 8ull << 30);
    EXPECT_EQ(cut->stopped_early[0].header_line, 1);
    EXPECT_EQ(cut->stopped_early[0].last_line, 10);
    EXPECT_TRUE(parse(sweep_run(33, false))->stopped_early.empty()) << "reached maxBytes: whole, closing line or not";
    EXPECT_EQ(parse(sweep_run(32, false))->stopped_early.size(), 1u) << "4 GiB of 8 GiB";
    EXPECT_TRUE(parse(sweep_run(27, true))->stopped_early.empty()) << "closed by '# Avg bus bandwidth' (maxBytes lowered for memory)";
    // A size rounded down to whole elements per rank is still the last step.
    std::string rounded = sweep_run(32, false);
    rounded += "  8589934584  2147483646  float  sum  -1  100.0  10.00  18.75  0  100.0  10.00  18.75  0\n";
    EXPECT_TRUE(parse(rounded)->stopped_early.empty());
    // Steps in bytes: 1 MiB + k x 1 MiB up to 8 GiB; the last row 128 MiB is far short.
    EXPECT_EQ(parse(sweep_run(27, false, "1048576(bytes)"))->stopped_early.size(), 1u);
    // "Reducing maxBytes to N due to memory limitation" lowers what the sweep asked for.
    std::string reduced = sweep_run(27, false);
    reduced.insert(reduced.find('\n') + 1, "#\n# Reducing maxBytes to 134217728 due to memory limitation\n");
    EXPECT_TRUE(parse(reduced)->stopped_early.empty());
    // Several sweeps in one file: each is judged; the stopped one is named.
    auto two = parse(sweep_run(33, true) + sweep_run(25, false));
    ASSERT_TRUE(two);
    ASSERT_EQ(two->stopped_early.size(), 1u);
    EXPECT_EQ(two->stopped_early[0].reached, 32ull << 20);
    EXPECT_TRUE(parse(sweep_run(25, true) + sweep_run(33, true))->stopped_early.empty());
    // No header (an excerpt): nothing to hold the rows to.
    std::string excerpt = sweep_run(27, false);
    EXPECT_TRUE(parse(excerpt.substr(excerpt.find('\n') + 1))->stopped_early.empty());
  }
}

TEST(ParsersNcclTests, RowWithoutItsInPlaceFiguresIsCutShort) {
  // The header has in-place columns: a last row that stops after the out-of-place ones was
  // cut while printed, and is not used.
  std::string t = sweep_run(25, false) + "  67108864  16777216  float  sum  -1  1261.6  53.20  99.74  0";
  for (const auto& parse : {parsers::parse_nccl_tests, parsers::parse_nccl_tests_reference}) {
    auto r = parse(t);
    ASSERT_TRUE(r);
    ASSERT_EQ(r->damaged.size(), 1u);
    EXPECT_EQ(r->damaged[0].line, 9);
    EXPECT_NE(r->damaged[0].message.find("cut short"), std::string::npos) << r->damaged[0].message;
    EXPECT_EQ(r->rows.back().size, 32ull << 20);
    ASSERT_EQ(r->stopped_early.size(), 1u);
    EXPECT_EQ(r->stopped_early[0].reached, 32ull << 20) << "the cut row is no size reached";
  }
}

TEST(AnalyzersNcclTests, StoppedEarlyNeverPasses) {
  auto whole = *parsers::parse_nccl_tests(sweep_run(33, true));
  auto cut = *parsers::parse_nccl_tests(sweep_run(27, false));
  analyzers::NcclTestsOptions o;
  o.reference = &whole;
  o.reference_source = "ref.txt";
  auto f = analyzers::analyze_nccl_tests(cut, "cut.txt", o);
  EXPECT_EQ(f[0].status, report::Status::warn) << f[0].title;
  EXPECT_NE(f[0].title.find("the run ended at 128 MiB of the 8 GiB its header asked for, no '# Avg bus bandwidth' line: it stopped early or the capture is cut"),
            std::string::npos)
      << f[0].title;
  EXPECT_NE(f[0].title.find("the reference's 256 MiB to 8 GiB (6 sizes) never compared"), std::string::npos) << f[0].title;
  auto metric = [](const report::Finding& x, const std::string& name) {
    for (const auto& [k, v] : x.metrics)
      if (k == name) return v;
    return -1.0;
  };
  EXPECT_EQ(metric(f[0], "stopped_at_bytes"), static_cast<double>(128ull << 20));
  EXPECT_EQ(metric(f[0], "reference_sizes_not_reached"), 6);
  bool named = false;
  for (const auto& e : f[0].evidence) named = named || (e.source == "cut.txt:10" && e.observed.find("ended at 128 MiB") != std::string::npos);
  EXPECT_TRUE(named);
  // Against the NICs' line rate: the peak of the sizes it reached says nothing of the NICs.
  analyzers::NcclTestsOptions nic;
  nic.nic_gbps_total = 3200;
  nic.nic_basis = "--nics 8 --link-gbps 400";
  std::string two_nodes = sweep_run(27, false);
  two_nodes.insert(0, "h1:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 - Init COMPLETE\n");
  auto g = analyzers::analyze_nccl_tests(*parsers::parse_nccl_tests(two_nodes), "cut.txt", nic);
  EXPECT_EQ(g[0].status, report::Status::warn) << g[0].title;
  EXPECT_NE(g[0].title.find("no verdict on the NICs"), std::string::npos) << g[0].title;
  // No basis at all: still said, as a warning.
  EXPECT_EQ(analyzers::analyze_nccl_tests(cut, "cut.txt", {})[0].status, report::Status::warn);
  // Below the reference at the sizes it reached: that fail stands, the stop in its evidence.
  std::string slow = sweep_run(27, false);
  for (auto p = slow.find("18.75  0  100.0"); p != std::string::npos; p = slow.find("18.75  0  100.0", p + 1)) slow.replace(p, 5, "09.00");
  EXPECT_EQ(analyzers::analyze_nccl_tests(*parsers::parse_nccl_tests(slow), "cut.txt", o)[0].status, report::Status::fail);
  // The reference stopped early: no pass against it either.
  analyzers::NcclTestsOptions r;
  r.reference = &cut;
  r.reference_source = "ref.txt";
  auto h = analyzers::analyze_nccl_tests(whole, "whole.txt", r);
  EXPECT_EQ(h[0].status, report::Status::warn) << h[0].title;
  EXPECT_NE(h[0].title.find("the reference ended at 128 MiB"), std::string::npos) << h[0].title;
  // Whole run against itself: pass.
  EXPECT_EQ(analyzers::analyze_nccl_tests(whole, "whole.txt", o)[0].status, report::Status::pass);
}

// The Rank lines name each rank's GPU after its bus id: the run keeps the models it read (distinct),
// and the report says them, so that explain and whatif tell a run of another GPU from the job's.
TEST(ParsersNcclTests, RankLinesGiveTheGpuModels) {
  std::string t = "# Collective test starting: all_reduce_perf\n";
  t += "#  Rank  0 Group  0 Pid 1006102 on pool0-01806 device  0 [0000:19:00] NVIDIA H100 80GB HBM3\n";
  t += "#  Rank  1 Group  0 Pid 1006103 on pool0-01806 device  1 [0000:2d:00] NVIDIA H100 80GB HBM3\n";
  t += "#   Rank  2 Pid  31412 on    dgx-03 device  0 [0x07] Tesla V100-SXM2-32GB\r\n";
  t += "#  Rank  3 Group  0 Pid 7 on node-x device  3\n";  // no bus id: no model
  t += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
  t += "  1048576    262144     float     sum      -1    100.0  10.49  15.73      0    100.0  10.49  15.73      0\n";
  for (auto parse : {&parsers::parse_nccl_tests, &parsers::parse_nccl_tests_reference}) {
    auto r = parse(t);
    ASSERT_TRUE(r) << r.error().describe();
    EXPECT_EQ(r->gpu_models, (std::vector<std::string>{"NVIDIA H100 80GB HBM3", "Tesla V100-SXM2-32GB"}));
  }
  auto r = parsers::parse_nccl_tests(t);
  ASSERT_TRUE(r);
  const auto f = analyzers::analyze_nccl_tests(*r, "t.txt", {});
  ASSERT_FALSE(f.empty());
  bool said = false;
  for (const auto& e : f[0].evidence)
    if (e.source == parsers::kNcclTestsGpusEvidence) said = e.observed == "NVIDIA H100 80GB HBM3 + Tesla V100-SXM2-32GB";
  EXPECT_TRUE(said);
}

// nccl-tests built without MPI=1 and started as several processes: each runs the whole test
// alone and their lines interleave (a size printed again after larger ones, rank 0's Rank line
// twice, '# Avg bus bandwidth' twice): refused, naming the line and the rebuild, not merged.
TEST(ParsersNcclTests, InterleavedRunsOfProcessesWithoutMpiAreRefused) {
  auto row = [](std::uint64_t size, double busbw) {
    return fmt::format("{:>12} {:>13}     float     sum      -1    40.00 {:7.2f} {:7.2f}       0    40.00 {:7.2f} {:7.2f}       0\n", size, size / 4,
                       busbw, busbw, busbw, busbw);
  };
  const std::string units = "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";
  // Rows: the second process's 8 and 16 among the first's (line 1 is the units line).
  std::string rows = units;
  for (std::uint64_t s : {8, 16, 32, 64, 128, 256, 8, 512, 16, 1024}) rows += row(s, 0.01 * static_cast<double>(s));
  for (const auto& r : {parsers::parse_nccl_tests(rows), parsers::parse_nccl_tests_reference(rows)}) {
    ASSERT_FALSE(r);
    EXPECT_EQ(r.error().line, 10);
    EXPECT_NE(r.error().message.find("separate nccl-tests runs interleaved"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("size 16 printed again"), std::string::npos) << r.error().message;
    EXPECT_NE(r.error().message.find("make MPI=1"), std::string::npos) << r.error().message;
  }
  // Two closing lines for one sweep (each process's), its rows in step.
  const std::string sweep = "# nThread 1 nGpus 1 minBytes 134217728 maxBytes 268435456 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n";
  auto two = parsers::parse_nccl_tests(sweep + units + row(134217728, 4.85) + row(134217728, 4.52) + row(268435456, 4.86) +
                                       "# Avg bus bandwidth    : 1.8\n#\n" + row(268435456, 4.54) + "# Avg bus bandwidth    : 1.6\n");
  ASSERT_FALSE(two);
  EXPECT_EQ(two.error().line, 9);
  EXPECT_NE(two.error().message.find("'# Avg bus bandwidth' printed again, with no header"), std::string::npos) << two.error().message;
  // Rank 0's line from each process, no row yet: refused though no row follows.
  auto ranks = parsers::parse_nccl_tests(sweep + sweep + "#  Rank  0 Pid 1320 on node-a device  0 [0x00] Tesla V100\n" +
                                         "#  Rank  0 Pid 2066 on node-b device  0 [0x00] Tesla V100\n" + units);
  ASSERT_FALSE(ranks);
  EXPECT_EQ(ranks.error().line, 4);
  EXPECT_NE(ranks.error().message.find("rank 0's '# Rank' line printed again"), std::string::npos) << ranks.error().message;

  // One run's own repeats are read: -N cycles (its sizes again from the first), -o all (the
  // next op from the first size), two whole runs one after the other, a retry after a failed start.
  std::string cycles = units, ops = units;
  for (int c = 0; c < 3; ++c)
    for (std::uint64_t s : {1048576, 2097152, 4194304}) cycles += row(s, 1.0 + c);
  for (const char* op : {"sum", "max"})
    for (std::uint64_t s : {1048576, 2097152}) {
      auto r = row(s, 2.0);
      r.replace(r.find(" sum "), 5, fmt::format(" {:>3} ", op));
      ops += r;
    }
  const std::string whole = sweep + "#  Rank  0 Pid 1 on node-a device  0 [0x00] H100\n" + units + row(134217728, 4.8) + row(268435456, 4.8) +
                            "# Avg bus bandwidth    : 4.8\n";
  const std::string retry = sweep + "#  Rank  0 Pid 1 on node-a device  0 [0x00] H100\nnode-a: NCCL WARN failed\n" + whole;
  for (const auto& text : {cycles, ops, whole + whole, retry}) {
    auto r = parsers::parse_nccl_tests(text);
    EXPECT_TRUE(r) << r.error().describe() << "\n" << text;
  }
  auto by_op = parsers::parse_nccl_tests(ops);
  ASSERT_TRUE(by_op);
  EXPECT_EQ(by_op->row_kinds, (std::vector<std::string>{"float sum", "float max"}));
  EXPECT_TRUE(parsers::parse_nccl_tests(cycles)->row_kinds.empty());
}

// A paste whose leading '#' markdown ate: the sweep header, Rank lines, table header and closing
// lines are read as they were; other text that starts with those words is not.
TEST(ParsersNcclTests, LinesThatLostTheirHashAreRead) {
  const std::string text =
      "nThread 1 nGpus 2 minBytes 32 maxBytes 64 step: 2(factor) warmup iters: 5 iters: 20 validation: 1\n"
      "\n"
      "Using devices\n"
      "  Rank  0 Pid 1533050 on gpu-a01 device  0 [0x00] NVIDIA A100-SXM4-40GB\n"
      "  Rank  1 Pid 1533050 on gpu-a01 device  1 [0x00] NVIDIA A100-SXM4-40GB\n"
      "\n"
      "                                                       out-of-place                       in-place\n"
      "       size         count      type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n"
      "        (B)    (elements)                       (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n"
      "          32             8     float     sum    10.14    0.00    0.00  0e+00    10.21    0.00    0.00  0e+00\n"
      "          64            16     float     sum    10.14    0.01    0.01  0e+00    10.31    0.01    0.01  0e+00\n"
      " Out of bounds values : 0 OK\n"
      " Avg bus bandwidth    : 0.005\n";
  auto r = parsers::parse_nccl_tests(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->ranks(), 2);
  EXPECT_EQ(r->nodes(), 1);
  EXPECT_EQ(r->hosts, std::vector<std::string>{"gpu-a01"});
  EXPECT_EQ(r->gpu_models, std::vector<std::string>{"NVIDIA A100-SXM4-40GB"});
  ASSERT_TRUE(r->avg_busbw);
  EXPECT_DOUBLE_EQ(*r->avg_busbw, 0.005);
  ASSERT_TRUE(r->out_of_bounds);
  EXPECT_TRUE(r->stopped_early.empty());  // the sweep header's maxBytes was reached, and closed
  ASSERT_EQ(r->rows.size(), 2u);
  EXPECT_TRUE(r->rows[0].out_of_place->max_error.has_value());  // the header's `error` column was read
  // Words that only start like them: not read as Rank lines.
  auto prose = parsers::parse_nccl_tests("Rank 0 failed on the first try, then device 1 took over\n" + text.substr(text.find("       size")));
  ASSERT_TRUE(prose);
  EXPECT_EQ(prose->rank_lines, 0u);
}

// rccl-tests' JSON lines (--output_format json): named, not a raw JSON syntax error.
TEST(ParsersNcclTests, RcclTestsJsonLinesAreNamed) {
  auto r = parsers::parse_nccl_tests(
      "\n{\"#wrong\":\"0\",\"algBw\":0.05,\"busBw\":0.08,\"gpus\":4,\"inPlace\":0,\"name\":\"AllReduce\",\"redop\":\"sum\",\"size\":1024,\"time\":19.1,\"type\":\"float\"}\n"
      "{\"#wrong\":\"0\",\"algBw\":0.05,\"busBw\":0.07,\"gpus\":4,\"inPlace\":1,\"name\":\"AllReduce\",\"redop\":\"sum\",\"size\":1024,\"time\":19.8,\"type\":\"float\"}\n");
  ASSERT_FALSE(r);
  EXPECT_EQ(r.error().line, 2);
  EXPECT_NE(r.error().message.find("rccl-tests JSON lines"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().message.find("json.exception"), std::string::npos) << r.error().message;
}

// A '...' between the Rank lines and the table: the list was cut, its count is not the job's.
TEST(ParsersNcclTests, RankListCutByDotsIsNotTheJob) {
  const std::string text =
      "#  Rank  0 Group  0 Pid 11 on pod01 device  0 [0x10] NVIDIA A100-SXM4-40GB\n"
      "#  Rank  1 Group  0 Pid 12 on pod01 device  1 [0x16] NVIDIA A100-SXM4-40GB\n"
      "...\n"
      "   127926280      31981570     float     sum      -1   2560.7   49.96   95.75      0   2556.2   50.05   95.92      0\n";
  auto r = parsers::parse_nccl_tests(text);
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->rank_lines_cut);
  EXPECT_FALSE(r->ranks());
  EXPECT_FALSE(r->nodes());
  EXPECT_TRUE(r->elided.empty());  // no table rows were cut
}
