// parse_nccl_tests (table rows the short way, plain rows parked until the end) held equal to
// parse_nccl_tests_reference (every line the general way, every row kept, superseded rows
// dropped at the end) on generated tables with damage, prefixes and odd cells, on the
// committed captures and on the real outputs of ../shared (read in place; skipped when absent).
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <random>
#include <sstream>

#include <fmt/format.h>

#include "parsers/nccl_tests.hpp"
#include "parsers/nccl_tests_rows.hpp"

namespace fs = std::filesystem;
using namespace perfgap;

namespace {

std::string fast_opt(const std::optional<double>& d) { return d ? fmt::format("{:.17g}", *d) : "-"; }

std::string fast_fig(const std::optional<parsers::NcclTestsFigures>& f) {
  if (!f) return "none";
  return fmt::format("{:.17g}/{:.17g}/{:.17g}/{}/{}", f->time_us, f->algbw, f->busbw, fast_opt(f->wrong), fast_opt(f->max_error));
}

// Everything the model holds, one line per item, so a difference shows where it is.
std::string fast_describe(const parsers::Parsed<parsers::NcclTestsRun>& r) {
  if (!r) return "error " + r.error().describe() + "\n";
  std::string out = fmt::format("collective {} version {} checked {} avg {} oob {}@{} rank_lines {} max_rank {} hosts {} gpus {} info {}/{}\n",
                                r->collective, r->nccl_version, r->results_checked, fast_opt(r->avg_busbw), fast_opt(r->out_of_bounds),
                                r->out_of_bounds_line, r->rank_lines, r->max_rank, fmt::join(r->hosts, ","), fmt::join(r->gpu_models, "|"), r->info_ranks.value_or(-1),
                                r->info_nodes.value_or(-1));
  for (int e : r->elided) out += fmt::format("elided {}\n", e);
  for (const auto& st : r->stopped_early) out += fmt::format("stopped {} of {} header {} last {}\n", st.reached, st.max_bytes, st.header_line, st.last_line);
  for (const auto& d : r->damaged) out += fmt::format("damaged {} {}\n", d.line, d.message);
  for (const auto& row : r->rows)
    out += fmt::format("row {} {} {} {} {} {} {}\n", row.line, row.size, row.count, row.type, row.redop, fast_fig(row.out_of_place),
                       fast_fig(row.in_place));
  return out;
}

// The streaming parser fed whole lines in pieces of 1 to 7 lines.
parsers::Parsed<parsers::NcclTestsRun> fast_in_pieces(std::string_view text) {
  parsers::NcclTestsParser p;
  std::size_t pos = 0;
  for (int k = 0; pos < text.size(); ++k) {
    std::size_t end = pos;
    for (int n = 0; n < 1 + k % 7 && end < text.size(); ++n) {
      const auto nl = text.find('\n', end);
      end = nl == std::string_view::npos ? text.size() : nl + 1;
    }
    p.feed(text.substr(pos, end - pos));
    pos = end;
  }
  return p.finish();
}

void expect_same_as_reference(std::string_view text, const std::string& what) {
  const std::string want = fast_describe(parsers::parse_nccl_tests_reference(text));
  EXPECT_EQ(fast_describe(parsers::parse_nccl_tests(text)), want) << what;
  EXPECT_EQ(fast_describe(fast_in_pieces(text)), want) << what << " (in pieces)";
}

// A table of repeated runs in one of the layouts, with the odd cells and lines real outputs
// and damage bring: every branch of the short way and of its way out.
std::string fast_generated(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const char* kOdd[] = {"N/A", "0", "-0", "1", "1e-06", "0.00", "-1", "[3]", "NCCL", "x", "", "-", ".", "00", "0.0.0",
                        "1234567890123456", "99999999999999999999", "+3", "inf", "nan", "float[1]", "all_reduce_perf", "..."};
  const char* kPrefix[] = {"", "", "", "", "[1,0]<stdout>:", " 3: ", "[2] ", "\t"};
  std::string out;
  for (int run = 0; run < 6; ++run) {
    const int layout = pick(3);  // current, old (error column, no root), per-iteration columns
    // A sweep's header (its maxBytes, in factors or bytes), which the rows may fall short of.
    if (pick(3) != 0)
      out += fmt::format("# nThread 1 nGpus 1 minBytes 8 maxBytes {} step: {} warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n",
                         8ull << pick(14), pick(4) == 0 ? "1048576(bytes)" : "2(factor)");
    if (pick(4) != 0) {
      if (layout == 0) out += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
      if (layout == 1) out += "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
      if (layout == 2)
        out += "#  size count type redop root time algbw busbw #wrong i_min i_max i_avg i_stdev time algbw busbw #wrong i_min i_max i_avg i_stdev\n";
    }
    if (pick(5) == 0) out += "gpu001:1:1 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 - Init COMPLETE\n";
    for (int i = 0; i < 24; ++i) {
      std::vector<std::string> c = {std::to_string(8ull << pick(12)), std::to_string(2 + pick(1000)), "float", "sum"};
      if (layout != 1) c.push_back("-1");
      for (int place = 0; place < 2; ++place) {
        c.push_back(fmt::format("{:.2f}", 10 + pick(100000) / 100.0));
        c.push_back(fmt::format("{:.2f}", pick(50000) / 100.0));
        c.push_back(fmt::format("{:.2f}", pick(90000) / 100.0));
        c.push_back(pick(10) == 0 ? "N/A" : layout == 1 && pick(3) == 0 ? "1e-06" : pick(12) == 0 ? std::to_string(pick(5)) : "0");
        if (layout == 2)
          for (int k = 0; k < 4; ++k) c.push_back(fmt::format("{:.1f}", pick(1000) / 10.0));
      }
      if (pick(8) == 0) c[static_cast<std::size_t>(pick(static_cast<int>(c.size())))] = kOdd[pick(std::size(kOdd))];
      if (pick(12) == 0) c.resize(static_cast<std::size_t>(pick(static_cast<int>(c.size()))));  // cut short
      if (c.size() > 3 && pick(15) == 0) c.erase(c.begin() + 3);                             // no redop
      std::string line = kPrefix[pick(std::size(kPrefix))];
      for (const auto& cell : c) line += (pick(6) == 0 ? "\t" : "  ") + cell;
      if (pick(10) == 0) line += "\r";
      out += line + "\n";
      if (pick(30) == 0) out += "...\n";
    }
    if (pick(3) != 0) out += "# Out of bounds values : " + std::to_string(pick(3)) + " OK\n# Avg bus bandwidth    : 40.5\n#\n";
  }
  return out;
}

// Rows at nccl-tests' fixed column widths, so that most share a layout the parser keeps
// (parsers/nccl_tests_rows.hpp), and now and then one with a byte changed, added or taken out at
// a random place: a kept layout must never take a row that the exact reader reads otherwise.
std::string fast_fixed_width(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  static constexpr char kByteList[] = "0123456789 .-+eEN/A[]xLf_#\t\r\x01\xc3\0";  // a NUL last
  const std::string_view kBytes(kByteList, sizeof kByteList - 1);
  std::string out;
  for (int run = 0; run < 4; ++run) {
    const int layout = pick(3);  // current, old (error column, no root), another data type and root
    if (pick(4) != 0)
      out += fmt::format("# nThread 1 nGpus 1 minBytes 8 maxBytes {} step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n",
                         pick(3) == 0 ? 1ull << 30 : 1ull << 24);
    if (pick(5) != 0) {
      if (layout == 1) out += "#       size         count    type   redop     time   algbw   busbw  error     time   algbw   busbw  error\n";
      else out += "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n";
    }
    const std::string wrong = pick(4) == 0 ? "N/A" : layout == 1 ? (pick(2) == 0 ? "0e+00" : "1e-06") : "0";
    for (std::uint64_t size = 8; size <= (1ull << 24); size *= 2) {
      std::string cells[2];
      for (auto& c : cells) {
        const double time = 10 + pick(3000000) / 100.0;
        const double alg = static_cast<double>(size) / time / 1e3;
        // nccl-tests prints a time of 10 ms or more without decimals.
        c = fmt::format("{:>7}  {:>6.2f}  {:>6.2f}  {:>6}", time < 1e4 ? fmt::format("{:.2f}", time) : fmt::format("{:.0f}", time), alg,
                        alg * 1.75, pick(50) == 0 ? "1" : wrong);
      }
      std::string row = layout == 1 ? fmt::format("{:>12}  {:>12}  {:>6}  {:>6}  {}  {}", size, size / 4, "float", "sum", cells[0], cells[1])
                                    : fmt::format("{:>12}  {:>12}  {:>8}  {:>6}  {:>6}  {}  {}", size, size / (layout == 2 ? 2 : 4),
                                                  layout == 2 ? "half" : "float", layout == 2 ? "none" : "sum", layout == 2 ? "0" : "-1", cells[0], cells[1]);
      const auto at = static_cast<std::size_t>(pick(static_cast<int>(row.size())));
      const char b = kBytes[static_cast<std::size_t>(pick(static_cast<int>(kBytes.size())))];
      switch (pick(8)) {
        case 0: row[at] = b; break;
        case 1: row.insert(at, 1, b); break;
        case 2: row.erase(at, 1); break;
        default: break;
      }
      out += row + "\n";
    }
    if (pick(2) != 0) out += "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 40.5\n#\n";
  }
  return out;
}

// '#' lines of every kind the parser reads, and near misses, between rows: the short ways for
// lines whose cells are not read, and for Rank lines, must read them as the reference does.
std::string fast_comments(unsigned seed) {
  std::mt19937 rng(seed);
  auto pick = [&](int n) { return static_cast<int>(rng() % static_cast<unsigned>(n)); };
  const char* kHash[] = {"#", "# ", "#  ", "#\t", "  #", "##", "#[2]"};
  const char* kWords[] = {"Rank", "Rank", "Rank", "size", "nThread", "nThreads", "Rankx", "rank", "on", "Using", "", "(B)", "out-of-place"};
  const char* kRanks[] = {"0", "1", "7", "-1", "16777216", "99999999999999999999", "x", "3[4]", ""};
  const char* kTails[] = {"Group  0 Pid  1234 on gpu001 device  0 [0000:19:00] NVIDIA H100",
                          "Group 0 Pid 1 on node-b device 1",
                          "on",
                          "Group on on gpu002",
                          "Pid 7 mongo on\tgpu003 device 3",
                          "Pid 7 on",
                          "Pid 7 ono gpu004 on gpu005",
                          "Reducing maxBytes to 1048576 due to memory limitation",
                          "Out of bounds values : 2 FAILED",
                          "count type redop root time algbw busbw #wrong time algbw busbw #wrong",
                          "1 nGpus 8 minBytes 8 maxBytes 1024 step: 2(factor)",
                          "Avg bus bandwidth    : 123.5",
                          "Collective test starting: all_reduce_perf",
                          "[5] on gpu006",
                          "on gpu007\r",
                          "Pid 9 on gpu008 device  2 [0x07] Tesla V100-SXM2-32GB",
                          "Group 0 Pid 9 on gpu009 device 1 [0000:2d:00]   NVIDIA A100-PG509-200  \r",
                          "Pid 9 on gpu010 device 0 [0x1]",
                          "Pid 9 on gpu011 device 0 [0x1",
                          "Pid 9 device [x] on gpu012 NVIDIA GB10",
                          ""};
  std::string out = "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n";
  for (int i = 0; i < 60; ++i) {
    std::string line = kHash[pick(std::size(kHash))];
    line += kWords[pick(std::size(kWords))];
    if (pick(4) != 0) line += std::string(pick(2) == 0 ? " " : "  ") + kRanks[pick(std::size(kRanks))];
    if (pick(5) != 0) line += std::string(" ") + kTails[pick(std::size(kTails))];
    out += line + "\n";
    if (pick(3) == 0) out += "   " + std::to_string(8 << pick(10)) + "  2  float  sum  -1  10.00  0.00  0.00  0  10.00  0.00  0.00  0\n";
  }
  return out;
}

std::vector<fs::path> fast_real_inputs() {
  std::vector<fs::path> out;
  std::error_code ec;
  for (const fs::path& dir : {fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/logs/nccl-tests", fs::path(PERFGAP_SHARED_DIR) / "fixtures/nccl-tests"})
    for (const auto& e : fs::directory_iterator(dir, ec))
      if (e.is_regular_file()) out.push_back(e.path());
  for (const auto& e : fs::directory_iterator(fs::path(PERFGAP_SHARED_DIR) / "field/logs", ec))
    if (e.path().filename().string().starts_with("nt-"))
      for (const auto& f : fs::directory_iterator(e.path(), ec))
        if (f.is_regular_file() && f.path().extension() == ".txt") out.push_back(f.path());
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

TEST(ParsersNcclTestsFast, GeneratedTablesReadAsTheReferenceReadsThem) {
  for (unsigned seed = 1; seed <= 200; ++seed) expect_same_as_reference(fast_generated(seed), fmt::format("seed {}", seed));
}

TEST(ParsersNcclTestsFast, KeptRowLayoutsTakeOnlyWhatTheReferenceReadsAlike) {
  for (unsigned seed = 1; seed <= 300; ++seed) expect_same_as_reference(fast_fixed_width(seed), fmt::format("seed {}", seed));
}

TEST(ParsersNcclTestsFast, CommentAndRankLinesReadAsTheReferenceReadsThem) {
  for (unsigned seed = 1; seed <= 300; ++seed) expect_same_as_reference(fast_comments(seed), fmt::format("seed {}", seed));
}

TEST(ParsersNcclTestsFast, RowLayoutsMatchAlikeSixteenAndThirtyTwoBytesAtATime) {
  using parsers::nccl_tests_detail::RowShapes;
  if (!RowShapes::cpu_has_avx2()) GTEST_SKIP() << "no AVX2 here";
  parsers::nccl_tests_detail::Header hdr;
  hdr.seen = hdr.root = hdr.in_place = true;
  int hits = 0;
  for (unsigned seed = 1; seed <= 100; ++seed) {
    RowShapes narrow(false), wide(true);  // learnt alike; only how a line is compared differs
    const std::string text = fast_fixed_width(seed);
    for (std::size_t at = 0, nl = 0; at < text.size(); at = nl + 1) {
      nl = text.find('\n', at);
      if (nl == std::string::npos) break;
      std::string line = text.substr(at, nl - at + 1);
      line.resize(line.size() + parsers::nccl_tests_detail::kRowShapeReach, '\0');
      parsers::nccl_tests_detail::ShapedRow a, b;
      const bool got_a = narrow.match(line.data(), hdr, a), got_b = wide.match(line.data(), hdr, b);
      ASSERT_EQ(got_a, got_b) << "seed " << seed << ": " << text.substr(at, nl - at);
      if (got_a) {
        ++hits;
        EXPECT_EQ(a.size, b.size);
        EXPECT_EQ(a.length, b.length);
        EXPECT_EQ(a.checked, b.checked);
      } else {
        narrow.learn(text.substr(at, nl - at), 5, true, hdr);
        wide.learn(text.substr(at, nl - at), 5, true, hdr);
      }
    }
  }
  EXPECT_GT(hits, 1000);
}

TEST(ParsersNcclTestsFast, SupersededRowsDroppedAndWrongRowsKept) {
  // Size 8 three times: the plain first is superseded by the wrong second, which stays; the
  // plain third is the last of its size. Size 16's first row is superseded by its second.
  const char* text =
      "#  size count type redop root time algbw busbw #wrong time algbw busbw #wrong\n"
      "   8  2  float  sum  -1  10.00  0.00  0.00  0  10.00  0.00  0.00  0\n"
      "  16  4  float  sum  -1  11.00  0.00  0.00  0  11.00  0.00  0.00  0\n"
      "   8  2  float  sum  -1  12.00  0.00  0.00  3  12.00  0.00  0.00  0\n"
      "  16  4  float  sum  -1  13.00  0.00  0.00  0  13.00  0.00  0.00  0\n"
      "   8  2  float  sum  -1  14.00  0.00  0.00  0  14.00  0.00  0.00  N/A\n";
  auto r = parsers::parse_nccl_tests(text);
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_EQ(r->rows.size(), 3u);
  EXPECT_EQ(r->rows[0].line, 4);
  EXPECT_EQ(r->rows[1].line, 5);
  EXPECT_EQ(r->rows[2].line, 6);
  EXPECT_DOUBLE_EQ(r->rows[2].out_of_place->time_us, 14.0);
  EXPECT_TRUE(r->results_checked);
  expect_same_as_reference(text, "superseded");
}

TEST(ParsersNcclTestsFast, RealOutputsReadAsTheReferenceReadsThem) {
  const auto inputs = fast_real_inputs();
  if (inputs.empty()) GTEST_SKIP() << "no nccl-tests outputs";
  for (const auto& path : inputs) {
    std::ifstream in(path, std::ios::binary);
    std::stringstream ss;
    ss << in.rdbuf();
    expect_same_as_reference(ss.str(), path.string());
  }
}
