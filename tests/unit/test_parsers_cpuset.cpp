// CpuSet and the kernel's cpulist / cpumask formats, on strings.
#include <gtest/gtest.h>

#include <vector>

#include "parsers/cpuset.hpp"

using perfgap::parsers::CpuSet;
using perfgap::parsers::parse_cpulist;
using perfgap::parsers::parse_cpumask;

namespace {

CpuSet set_of(std::initializer_list<int> cpus) {
  CpuSet s;
  for (int c : cpus) s.insert(c);
  return s;
}

std::vector<int> list(std::string_view text) {
  auto r = parse_cpulist(text);
  EXPECT_TRUE(r.has_value()) << "'" << text << "': " << (r ? "" : r.error().describe());
  return r ? r->members() : std::vector<int>{};
}

std::vector<int> mask(std::string_view text) {
  auto r = parse_cpumask(text);
  EXPECT_TRUE(r.has_value()) << "'" << text << "': " << (r ? "" : r.error().describe());
  return r ? r->members() : std::vector<int>{};
}

using V = std::vector<int>;

}  // namespace

// ---- CpuSet ----------------------------------------------------------------------------

TEST(CpuSetParser, EmptySet) {
  CpuSet s;
  EXPECT_TRUE(s.empty());
  EXPECT_EQ(s.count(), 0u);
  EXPECT_EQ(s.to_list(), "");
  EXPECT_FALSE(s.contains(0));
  EXPECT_FALSE(s.contains(-1));
  EXPECT_EQ(s, CpuSet{});
}

TEST(CpuSetParser, InsertContainsAndNegativeIgnored) {
  CpuSet s;
  s.insert(3);
  s.insert(64);
  s.insert(200);
  s.insert(-5);
  EXPECT_TRUE(s.contains(3));
  EXPECT_TRUE(s.contains(64));
  EXPECT_TRUE(s.contains(200));
  EXPECT_FALSE(s.contains(63));
  EXPECT_FALSE(s.contains(-5));
  EXPECT_FALSE(s.contains(100000));
  EXPECT_EQ(s.count(), 3u);
  EXPECT_EQ(s.members(), (V{3, 64, 200}));
}

TEST(CpuSetParser, ToListMergesRuns) {
  EXPECT_EQ(set_of({0, 1, 2, 3, 8, 9, 10, 11}).to_list(), "0-3,8-11");
  EXPECT_EQ(set_of({5}).to_list(), "5");
  EXPECT_EQ(set_of({1, 3, 5}).to_list(), "1,3,5");
  EXPECT_EQ(set_of({62, 63, 64, 65}).to_list(), "62-65");  // across a word boundary
  EXPECT_EQ(set_of({0, 1, 127}).to_list(), "0-1,127");
}

TEST(CpuSetParser, EqualityIgnoresTrailingZeroWords) {
  CpuSet a = set_of({1});
  CpuSet b = set_of({1, 300});
  CpuSet c = b.minus(set_of({300}));  // b's storage stays long
  EXPECT_EQ(a, c);
  EXPECT_EQ(c, a);
  EXPECT_FALSE(a == b);
}

TEST(CpuSetParser, SetOperations) {
  CpuSet a = set_of({0, 1, 2, 3, 100});
  CpuSet b = set_of({2, 3, 4, 5});
  EXPECT_EQ(a.intersect(b), set_of({2, 3}));
  EXPECT_EQ(a.unite(b), set_of({0, 1, 2, 3, 4, 5, 100}));
  EXPECT_EQ(a.minus(b), set_of({0, 1, 100}));
  EXPECT_EQ(b.minus(a), set_of({4, 5}));
  EXPECT_TRUE(a.intersects(b));
  EXPECT_FALSE(a.intersects(set_of({50})));
  EXPECT_TRUE(set_of({2, 3}).subset_of(a));
  EXPECT_FALSE(b.subset_of(a));
  EXPECT_TRUE(CpuSet{}.subset_of(a));
  EXPECT_TRUE(a.intersect(CpuSet{}).empty());
}

// ---- cpulist ---------------------------------------------------------------------------

TEST(CpulistParser, RangesAndSingles) {
  EXPECT_EQ(list("0-3,8-11"), (V{0, 1, 2, 3, 8, 9, 10, 11}));
  EXPECT_EQ(list("0"), (V{0}));
  EXPECT_EQ(list("0,2,4"), (V{0, 2, 4}));
  EXPECT_EQ(list("3-3"), (V{3}));
  EXPECT_EQ(list("1,0"), (V{0, 1}));          // order does not matter
  EXPECT_EQ(list("0-2,1-3"), (V{0, 1, 2, 3}));  // overlaps merge
}

TEST(CpulistParser, TrailingNewlineAndSurroundingWhitespace) {
  EXPECT_EQ(list("0-3\n"), (V{0, 1, 2, 3}));
  EXPECT_EQ(list("  4-5 \t\n"), (V{4, 5}));
}

TEST(CpulistParser, EmptyTextIsTheEmptySet) {
  auto r = parse_cpulist("");
  ASSERT_TRUE(r);
  EXPECT_TRUE(r->empty());
  auto nl = parse_cpulist("\n");  // an offline node's cpulist file
  ASSERT_TRUE(nl);
  EXPECT_TRUE(nl->empty());
}

TEST(CpulistParser, LargeRealLists) {
  auto r = parse_cpulist("0-55,112-167\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->count(), 112u);
  EXPECT_TRUE(r->contains(55));
  EXPECT_FALSE(r->contains(56));
  EXPECT_TRUE(r->contains(112));
  EXPECT_TRUE(r->contains(167));
  EXPECT_EQ(r->to_list(), "0-55,112-167");
}

TEST(CpulistParser, StrideForm) {
  // "first-last:used/group": the first `used` CPUs of every `group`.
  EXPECT_EQ(list("0-7:2/4"), (V{0, 1, 4, 5}));
  EXPECT_EQ(list("0-9:1/3"), (V{0, 3, 6, 9}));
  EXPECT_EQ(list("0-6:2/4"), (V{0, 1, 4, 5}));
  EXPECT_EQ(list("0-5:2/4"), (V{0, 1, 4, 5}));
  EXPECT_EQ(list("0-4:2/4"), (V{0, 1, 4}));  // the last group is cut by `last`
  EXPECT_EQ(list("0-7:4/4"), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(list("0-7:2/4,16"), (V{0, 1, 4, 5, 16}));
}

TEST(CpulistParser, BadStrideForms) {
  EXPECT_FALSE(parse_cpulist("0-7:2"));
  EXPECT_FALSE(parse_cpulist("0-7:2/"));
  EXPECT_FALSE(parse_cpulist("0-7:2/0"));
  EXPECT_FALSE(parse_cpulist("0-7:5/4"));  // used > group
  EXPECT_FALSE(parse_cpulist("0-7:/4"));
}

TEST(CpulistParser, RejectsGarbageWithColumn) {
  auto r = parse_cpulist("0-3,8-x");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("0-3,8-x"), std::string::npos) << r.error().message;
  EXPECT_NE(r.error().message.find("column 7"), std::string::npos) << r.error().message;
  EXPECT_EQ(r.error().line, 0);
}

TEST(CpulistParser, RejectsTrailingComma) {
  auto r = parse_cpulist("0-3,");
  ASSERT_FALSE(r);
  EXPECT_NE(r.error().message.find("trailing comma"), std::string::npos) << r.error().message;
  EXPECT_FALSE(parse_cpulist("0-3,\n"));
}

TEST(CpulistParser, RejectsMalformed) {
  for (const char* bad : {",", ",0", "0,,1", "3-1", "0-", "-1", "0-3 4", "a", "0x1", "1.5", "0:1",
                          "0-3-5", "0 - 3", "+1"}) {
    EXPECT_FALSE(parse_cpulist(bad)) << "'" << bad << "' was accepted";
  }
}

TEST(CpulistParser, RejectsSignedZero) {
  // std::from_chars takes a leading '-': "-0" and "0--0" must not pass as CPU 0.
  EXPECT_FALSE(parse_cpulist("-0")) << "'-0' was accepted";
  EXPECT_FALSE(parse_cpulist("0--0")) << "'0--0' was accepted";
  EXPECT_FALSE(parse_cpulist("0-3:-0/4")) << "'0-3:-0/4' was accepted";
}

TEST(CpulistParser, RejectsAbsurdlyLargeNumbers) {
  EXPECT_FALSE(parse_cpulist("99999999999999999999"));
  EXPECT_FALSE(parse_cpulist("0-2147483647"));  // bounded, not a 256 MiB bitmap
  EXPECT_TRUE(parse_cpulist("8191"));
}

TEST(CpulistParser, RoundTripsThroughToList) {
  for (const char* text : {"0-3,8-11", "0", "1,3,5-9", "0-7:2/4", "63-65,1000", ""}) {
    auto r = parse_cpulist(text);
    ASSERT_TRUE(r) << text;
    auto again = parse_cpulist(r->to_list());
    ASSERT_TRUE(again) << r->to_list();
    EXPECT_EQ(*again, *r) << text;
  }
}

// ---- cpumask ---------------------------------------------------------------------------

TEST(CpumaskParser, SingleWord) {
  EXPECT_EQ(mask("ff\n"), (V{0, 1, 2, 3, 4, 5, 6, 7}));
  EXPECT_EQ(mask("1"), (V{0}));
  EXPECT_EQ(mask("80000000"), (V{31}));
  EXPECT_EQ(mask("0000000a"), (V{1, 3}));
  EXPECT_EQ(mask("A"), (V{1, 3}));  // upper case hex too
  EXPECT_EQ(mask("00000000"), V{});
}

TEST(CpumaskParser, WordsMostSignificantFirst) {
  EXPECT_EQ(mask("00000001,00000000"), (V{32}));
  EXPECT_EQ(mask("ff,00000001"), (V{0, 32, 33, 34, 35, 36, 37, 38, 39}));
  EXPECT_EQ(mask("80000000,00000000,00000001"), (V{0, 95}));
  auto r = parse_cpumask("ffffffff,ffffffff\n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to_list(), "0-63");
}

TEST(CpumaskParser, ShortWordIsAWholeWord) {
  // Each comma-separated word is 32 bits: "1,1" is CPUs 0 and 32 (as the kernel's
  // bitmap_parse reads it), not the nibbles 0x11. Rejecting it would be fine too.
  auto r = parse_cpumask("1,1");
  if (r) {
    EXPECT_EQ(r->members(), (V{0, 32})) << "'1,1' read as " << r->to_list();
  }
}

TEST(CpumaskParser, Rejects) {
  EXPECT_FALSE(parse_cpumask(""));
  EXPECT_FALSE(parse_cpumask("\n"));
  EXPECT_FALSE(parse_cpumask("fg"));
  EXPECT_FALSE(parse_cpumask("0x1"));
  EXPECT_FALSE(parse_cpumask("ff 00"));
  EXPECT_FALSE(parse_cpumask("-1"));
}

TEST(CpumaskParser, AgreesWithCpulist) {
  auto m = parse_cpumask("0000ff00,0000000f");
  auto l = parse_cpulist("0-3,40-47");
  ASSERT_TRUE(m);
  ASSERT_TRUE(l);
  EXPECT_EQ(*m, *l);
}

// cpufreq's affected_cpus/related_cpus: "0 1 2 3 \n" as the kernel prints them.
TEST(CpuWordsParser, ReadsSpaceSeparatedCpus) {
  auto r = perfgap::parsers::parse_cpu_words("0 1 6 7 \n");
  ASSERT_TRUE(r);
  EXPECT_EQ(r->to_list(), "0-1,6-7");
  auto empty = perfgap::parsers::parse_cpu_words("\n");
  ASSERT_TRUE(empty);
  EXPECT_TRUE(empty->empty());
  EXPECT_FALSE(perfgap::parsers::parse_cpu_words("0-3"));
  EXPECT_FALSE(perfgap::parsers::parse_cpu_words("0,1"));
  EXPECT_FALSE(perfgap::parsers::parse_cpu_words("-1"));
  EXPECT_FALSE(perfgap::parsers::parse_cpu_words("99999999"));
}
