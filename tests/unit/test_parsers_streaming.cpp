// The analyzer inputs are parsed as they are read, block by block (sys::stream_named_file and
// the feed() of each parser): whatever the blocks, the findings are those of the whole text.
// Every capture of this checkout's tests/fixtures/logs/<kind> and of ../shared/fixtures/<kind>
// (when present) is fed a line at a time, in blocks of a few lines and in blocks cut at
// pseudo-random line ends, and its findings compared with the whole text's.
#include <gtest/gtest.h>

#include <fcntl.h>
#include <unistd.h>

#include <charconv>
#include <cmath>
#include <filesystem>
#include <random>
#include <string>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "tree.hpp"
#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "report/render.hpp"
#include "sys/named_file.hpp"
#include "sys/text.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;

namespace {

std::vector<fs::path> inputs(const char* kind) {
  std::vector<fs::path> out;
  for (auto dir : {fs::path(PERFGAP_SOURCE_DIR) / "tests/fixtures/logs" / kind, fs::path(PERFGAP_SHARED_DIR) / "fixtures" / kind}) {
    std::error_code ec;
    for (const auto& e : fs::recursive_directory_iterator(dir, ec))
      if (e.is_regular_file() && e.path().extension() != ".md" && e.path().extension() != ".py") out.push_back(e.path());
  }
  std::sort(out.begin(), out.end());
  return out;
}

// The text cut into blocks of whole lines: every `lines` lines, or (lines == 0) at
// pseudo-random line ends.
std::vector<std::string_view> blocks(std::string_view text, std::size_t lines) {
  std::vector<std::string_view> out;
  std::mt19937 rng(7);
  std::size_t start = 0, pos = 0, count = 0;
  std::size_t want = lines ? lines : 1 + rng() % 9;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    if (++count == want || pos == text.size()) {
      out.push_back(text.substr(start, pos - start));
      start = pos;
      count = 0;
      if (!lines) want = 1 + rng() % 9;
    }
  }
  return out;
}

std::string json_of(std::vector<report::Finding> findings) {
  report::Report r;
  r.findings = std::move(findings);
  return report::render_json(r);
}

// Findings (or the parse error) of a parser P fed these blocks, analysed by `analyze`.
template <class P, class A>
std::string outcome(const std::vector<std::string_view>& parts, A&& analyze) {
  P p;
  for (auto b : parts) p.feed(b);
  auto m = p.finish();
  if (!m) return "error: " + m.error().describe();
  return json_of(analyze(*m));
}

template <class P, class A>
void same_in_every_cut(const char* kind, A analyze) {
  auto files = inputs(kind);
  ASSERT_FALSE(files.empty()) << "no " << kind << " inputs in tests/fixtures/logs";
  for (const auto& f : files) {
    const std::string text = read_file(f);
    const std::string whole = outcome<P>({std::string_view(text)}, analyze);
    for (std::size_t lines : {1, 2, 5, 0})
      EXPECT_EQ(outcome<P>(blocks(text, lines), analyze), whole) << f << " in blocks of " << (lines ? std::to_string(lines) : "random") << " lines";
  }
}

}  // namespace

TEST(StreamingParsers, PerfFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::PerfParser>("perf", [](const parsers::PerfProfile& p) { return analyzers::analyze_perf(p, "x"); });
}

TEST(StreamingParsers, NcclTestsFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::NcclTestsParser>("nccl-tests", [](const parsers::NcclTestsRun& r) { return analyzers::analyze_nccl_tests(r, "x", {}); });
}

TEST(StreamingParsers, NcclLogFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::NcclLogParser>("nccl-log", [](const parsers::NcclLog& l) { return analyzers::analyze_nccl_logs({{"x", &l}}, {}); });
}

TEST(StreamingParsers, StepsFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::StepsParser>("steps", [](const parsers::StepLog& l) {
    auto st = analyzers::step_stats(l, std::nullopt);
    analyzers::StepsOptions o;
    o.reference_ms(100);
    auto f = st ? analyzers::analyze_steps(*st, "x", o) : std::vector<report::Finding>{};
    for (auto& d : analyzers::damaged_lines("steps.gap", "workload", "x", l.damaged)) f.push_back(std::move(d));
    return f;
  });
}

TEST(StreamingParsers, PerfStatFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::PerfStatParser>("perf-stat", [](const parsers::PerfStat& s) { return analyzers::analyze_perf_stat(s, "x", {}); });
}

TEST(StreamingParsers, TurbostatFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::TurbostatParser>("turbostat", [](const parsers::Turbostat& t) { return analyzers::analyze_turbostat(t, "x", {}); });
}

TEST(StreamingParsers, NcclInspectorFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::NcclInspectorParser>("nccl-inspector", [](const parsers::NcclInspector& r) {
    return analyzers::analyze_nccl_inspector({{"x", &r}}, {});
  });
}

TEST(StreamingParsers, NcclRasFindingsDoNotDependOnTheBlocks) {
  same_in_every_cut<parsers::NcclRasParser>("nccl-ras", [](const parsers::NcclRas& r) { return analyzers::analyze_nccl_ras(r, "x"); });
}

TEST(StreamingParsers, AWrappedPerfSymbolAcrossABlockEndIsStillTaken) {
  // A report row whose symbol the mail archive wrapped onto the next line.
  const std::string text =
      "# Overhead  Command  Shared Object      Symbol\n"
      "    40.00%  python   [kernel.kallsyms]  [k] \n"
      "arm_smmu_cmdq_issue_cmdlist\n"
      "    10.00%  python   libc.so.6          [.] memcpy\n";
  auto whole = parsers::parse_perf(text);
  ASSERT_TRUE(whole);
  ASSERT_EQ(whole->symbols.size(), 2u);
  EXPECT_EQ(whole->symbols[0].symbol, "arm_smmu_cmdq_issue_cmdlist");
  EXPECT_EQ(whole->symbols[0].line, 2);
  parsers::PerfParser p;
  for (auto b : blocks(text, 1)) p.feed(b);
  auto cut = p.finish();
  ASSERT_TRUE(cut);
  ASSERT_EQ(cut->symbols.size(), 2u);
  EXPECT_EQ(cut->symbols[0].symbol, "arm_smmu_cmdq_issue_cmdlist");
  EXPECT_TRUE(cut->damaged.empty());
  // The row is the last line: nothing to take the symbol from.
  auto last = parsers::parse_perf("    40.00%  python   [kernel.kallsyms]  [k] \n    10.00%  python   libc.so.6  [.] memcpy\n    5.00%  python  [kernel.kallsyms]  [k] ");
  ASSERT_TRUE(last);
  ASSERT_EQ(last->damaged.size(), 2u);
  EXPECT_EQ(last->damaged[0].line, 1);
  EXPECT_EQ(last->damaged[1].line, 3);
}

// ---- the block reader ----------------------------------------------------------------------

namespace {

struct Read {
  std::vector<std::string> blocks;
  std::string error;
};

std::string put(const fixture::TempDir& tmp, const std::string& name, const std::string& text) {
  auto path = tmp.file(name);
  EXPECT_TRUE(fixture::write_file(path, text));
  return path;
}

Read stream(const std::string& path, std::size_t max_bytes, std::size_t block) {
  Read r;
  auto ok = sys::stream_named_file(path, max_bytes, [&](std::string_view b) {
    r.blocks.emplace_back(b);
    return true;
  }, block);
  if (!ok) r.error = ok.error();
  return r;
}

}  // namespace

TEST(StreamNamedFile, BlocksAreWholeLinesAndAddUpToTheFile) {
  fixture::TempDir tmp;
  std::string text;
  for (int i = 0; i < 500; ++i) text += "line " + std::to_string(i) + (i % 7 ? "" : " with more words in it") + "\n";
  text += "last line without a newline";
  auto path = put(tmp, "in.txt", text);
  for (std::size_t block : {64u, 100u, 4096u, 1u << 20}) {
    auto r = stream(path, 1u << 20, block);
    ASSERT_EQ(r.error, "");
    std::string joined;
    for (std::size_t i = 0; i < r.blocks.size(); ++i) {
      EXPECT_LE(r.blocks[i].size(), block) << block;
      if (i + 1 < r.blocks.size()) {
        EXPECT_EQ(r.blocks[i].back(), '\n') << "block " << i << " of " << block;
      }
      joined += r.blocks[i];
    }
    EXPECT_EQ(joined, text) << block;
  }
}

TEST(StreamNamedFile, ALineLongerThanABlockIsCutAndTheLinesAfterItKeepTheirNumbers) {
  fixture::TempDir tmp;
  const std::string text = "first\n" + std::string(1000, 'x') + "\nthird\nfourth\n";
  auto r = stream(put(tmp, "long.txt", text), 1u << 20, 64);
  ASSERT_EQ(r.error, "");
  std::string joined;
  for (const auto& b : r.blocks) joined += b;
  // The long line keeps its first 64 bytes (one block), then the lines after it follow.
  EXPECT_EQ(joined, "first\n" + std::string(64, 'x') + "\n" + "third\nfourth\n");
}

TEST(StreamNamedFile, QuarterBlocksHandOverTheLinesAndCutsOfWholeBlocks) {
  // Blocks of the default size are handed over a quarter at a time; the lines are the file's,
  // each longer than a block cut to its first block's bytes, wherever it starts, and the first
  // block holds at least the 64 KiB that looks_binary reads.
  fixture::TempDir tmp;
  const std::size_t block = sys::kStreamBlockBytes;
  std::mt19937 rng(5);
  std::vector<std::string> lines = {"short first", std::string(300u << 10, 'a'), "after the 300 KiB line"};  // the first quarter: under 64 KiB of whole lines
  for (int i = 0; i < 60000; ++i) lines.push_back(std::string(1 + rng() % 120, static_cast<char>('b' + i % 20)));
  lines.insert(lines.begin() + 1000, std::string(block + 1234, 'x'));   // cut, starting mid-block
  lines.insert(lines.begin() + 20000, std::string(block, 'y'));         // exactly a block: whole
  lines.insert(lines.begin() + 30000, std::string(300u << 10, 'z'));    // past a quarter, under a block
  lines.push_back(std::string(3 * block, 'w'));                          // cut, and the last, without '\n'
  std::string text, want;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    text += lines[i] + (i + 1 < lines.size() ? "\n" : "");
    want += lines[i].substr(0, block) + "\n";
  }
  auto r = stream(put(tmp, "quarters.txt", text), 1u << 30, block);
  ASSERT_EQ(r.error, "");
  EXPECT_GT(r.blocks.size(), 2 * (want.size() / block));  // more than whole blocks would be
  EXPECT_GE(r.blocks[0].size(), 64u << 10);
  std::string joined;
  for (const auto& b : r.blocks) {
    EXPECT_LE(b.size(), block + 1);
    joined += b;
  }
  EXPECT_TRUE(joined == want) << joined.size() << " bytes against " << want.size();
}

TEST(StreamNamedFile, LimitsAndKindsAreThoseOfReadNamedFile) {
  fixture::TempDir tmp;
  auto big = put(tmp, "big.txt", std::string(5000, 'a') + "\n");
  EXPECT_EQ(stream(big, 4096, 1024).error, "larger than 4096 bytes");
  EXPECT_EQ(stream(tmp.path(), 4096, 1024).error, "is a directory");
  EXPECT_EQ(stream("/dev/zero", 1u << 30, 1024).error, "is a character device (a regular file, a pipe or - expected)");
  EXPECT_EQ(stream(tmp.path() + "/missing", 4096, 1024).error.rfind("cannot open: ", 0), 0u);
  EXPECT_TRUE(stream(put(tmp, "empty.txt", ""), 4096, 1024).blocks.empty());
}

TEST(StreamNamedFile, AFalseFromTheSinkStopsTheRead) {
  fixture::TempDir tmp;
  std::string text;
  for (int i = 0; i < 1000; ++i) text += "0123456789\n";
  auto path = put(tmp, "in.txt", text);
  int calls = 0;
  auto ok = sys::stream_named_file(path, 1u << 20, [&](std::string_view) { return ++calls < 2; }, 64);
  EXPECT_TRUE(ok);
  EXPECT_EQ(calls, 2);
}

// ---- numbers ---------------------------------------------------------------------------------

TEST(ToolTextNumber, TheShortDecimalPathGivesFromCharsDoubleBitForBit) {
  std::mt19937_64 rng(11);
  for (int n = 0; n < 200000; ++n) {
    std::string t;
    if (rng() % 4 == 0) t += '-';
    int digits = 1 + static_cast<int>(rng() % 17);  // up to 17: past 15 the general path reads it
    int dot = static_cast<int>(rng() % (digits + 2)) - 1;  // -1: no dot
    for (int i = 0; i < digits; ++i) {
      if (i == dot) t += '.';
      t += static_cast<char>('0' + rng() % 10);
    }
    if (dot == digits) t += '.';
    double want = 0;
    auto [p, ec] = std::from_chars(t.data(), t.data() + t.size(), want);
    ASSERT_TRUE(ec == std::errc() && p == t.data() + t.size()) << t;
    auto got = parsers::tooltext::number(t);
    ASSERT_TRUE(got) << t;
    ASSERT_EQ(std::signbit(*got), std::signbit(want)) << t;
    ASSERT_EQ(*got, want) << t;
  }
  for (const char* bad : {"-", ".", "1.2.3", "12a", "--1", "1e", "+"}) EXPECT_FALSE(parsers::tooltext::number(bad)) << bad;
  EXPECT_EQ(*parsers::tooltext::number("1e3"), 1000.0);
  EXPECT_EQ(*parsers::tooltext::number("+2.5"), 2.5);
}

TEST(SplitWs, TheBlankMaskGivesTheFieldsOfTheByteLoop) {
  auto naive = [](std::string_view line) {
    std::vector<std::string_view> out;
    std::size_t i = 0;
    while (i < line.size()) {
      while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
      std::size_t b = i;
      while (i < line.size() && line[i] != ' ' && line[i] != '\t') ++i;
      if (i > b) out.push_back(line.substr(b, i - b));
    }
    return out;
  };
  std::mt19937 rng(5);
  const char alphabet[] = {' ', ' ', '\t', 'a', 'b', '1', '.', '\n', '\0', '\x09' + 1, '\x20' + 1, '\x20' - 1, '\xa0', '\x89'};
  std::vector<std::string_view> got;
  for (int n = 0; n < 20000; ++n) {
    std::string line(rng() % 200, ' ');
    for (auto& c : line) c = alphabet[rng() % sizeof alphabet];
    sys::split_ws_into(line, got);
    ASSERT_EQ(got, naive(line)) << n;
  }
  sys::split_ws_into(std::string(64, 'x') + " " + std::string(63, 'y'), got);
  ASSERT_EQ(got.size(), 2u);
  EXPECT_EQ(got[0].size(), 64u);
  EXPECT_EQ(got[1].size(), 63u);
}

TEST(SysFind, FindsWhatStringViewFindFinds) {
  std::mt19937 rng(3);
  const char alphabet[] = {' ', ' ', 'a', 'b', 'N', 'C'};
  for (int n = 0; n < 50000; ++n) {
    std::string hay(rng() % 40, ' '), needle(rng() % 5, ' ');
    for (auto& c : hay) c = alphabet[rng() % sizeof alphabet];
    for (auto& c : needle) c = alphabet[rng() % sizeof alphabet];
    std::size_t from = rng() % (hay.size() + 2);
    ASSERT_EQ(sys::find(hay, needle, from), std::string_view(hay).find(needle, from)) << "'" << hay << "' '" << needle << "' " << from;
  }
}
