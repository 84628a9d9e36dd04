// json_scan's scanner against RapidJSON's SAX Reader (kParseIterativeFlag |
// kParseFullPrecisionFlag), the reader it replaces in the Kineto parse: over the same bytes cut
// into the same blocks, the same events with the same values (every double's bits, every
// string's bytes), the same result (error code and byte offset), and the stream left in the same
// state (position, end, the source's error, the UTF-8 scan, an error's line). Generated traces,
// randomly damaged ones, tricky numbers, escapes and surrogates, every two-block cut of small
// inputs, handlers that stop the parse, sources that fail, and ../shared's real traces.
#include <gtest/gtest.h>

#include <algorithm>
#include <cstdint>
#include <cstring>
#include <filesystem>
#include <random>

#include <fmt/format.h>
#include <rapidjson/reader.h>

#include "files.hpp"
#include "parsers/gunzip.hpp"
#include "parsers/json_scan.hpp"
#include "profile_gen.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using parsers::json_pull::PullStream;

namespace {

constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag;

// Every event written down (a double as its bits), stopping the parse at event `stop_at`.
// With `digest` the events are folded into two 64-bit FNV-1a hashes instead of written down:
// the real traces' logs ran to hundreds of megabytes, most of that test's time in copying them.
struct Recorder : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Recorder> {
  std::string log;
  std::size_t events = 0, stop_at = static_cast<std::size_t>(-1);
  bool digest = false;
  std::uint64_t h1 = 14695981039346656037ull, h2 = 1099511628211ull * 31;
  bool add(const std::string& e) {
    if (digest) {
      for (unsigned char c : e) {
        h1 = (h1 ^ c) * 1099511628211ull;
        h2 = (h2 ^ c) * 1099511628211ull + 0x9e3779b97f4a7c15ull;
      }
      h1 = (h1 ^ '\n') * 1099511628211ull;
    } else {
      log += e;
      log += '\n';
    }
    return ++events != stop_at;
  }
  bool Null() { return add("null"); }
  bool Bool(bool b) { return add(b ? "true" : "false"); }
  bool Int(int i) { return add("i" + std::to_string(i)); }
  bool Uint(unsigned u) { return add("u" + std::to_string(u)); }
  bool Int64(std::int64_t i) { return add("I" + std::to_string(i)); }
  bool Uint64(std::uint64_t u) { return add("U" + std::to_string(u)); }
  bool Double(double d) {
    std::uint64_t bits;
    std::memcpy(&bits, &d, 8);
    return add("d" + std::to_string(bits));
  }
  bool String(const char* s, rapidjson::SizeType n, bool) { return add("s" + std::to_string(n) + ":" + std::string(s, n)); }
  bool Key(const char* s, rapidjson::SizeType n, bool) { return add("k" + std::to_string(n) + ":" + std::string(s, n)); }
  bool StartObject() { return add("{"); }
  bool EndObject(rapidjson::SizeType n) { return add("}" + std::to_string(n)); }
  bool StartArray() { return add("["); }
  bool EndArray(rapidjson::SizeType n) { return add("]" + std::to_string(n)); }
};

// What a parse did: its events, result and the stream after it.
std::string outcome(const rapidjson::ParseResult& r, const Recorder& h, PullStream& in) {
  std::string o = (h.digest ? fmt::format("{} events, digest {:016x}{:016x}\n", h.events, h.h1, h.h2) : h.log) + "result " + std::to_string(r.Code()) + " at " + std::to_string(r.Offset());
  o += " tell " + std::to_string(in.Tell()) + (in.at_end() ? " end" : "") + " source '" + in.error() + "'";
  if (r.IsError()) {
    o += " line " + std::to_string(in.line_of(r.Offset()));
    in.settle_utf8(r.Offset());
  }
  o += " utf8 " + std::to_string(in.utf8().bad()) + "/" + std::to_string(in.utf8().bad_newlines());
  return o;
}

std::string by_rapidjson(const parsers::ByteSource& src, std::size_t stop_at, bool digest = false) {
  PullStream in(src);
  Recorder h;
  h.stop_at = stop_at;
  h.digest = digest;
  rapidjson::Reader reader;
  auto r = reader.Parse<kFlags>(in, h);
  return outcome(r, h, in);
}

std::string by_scan(const parsers::ByteSource& src, std::size_t stop_at, bool digest = false) {
  PullStream in(src);
  Recorder h;
  h.stop_at = stop_at;
  h.digest = digest;
  auto r = parsers::json_scan::scan(in, h);
  return outcome(r, h, in);
}

// `text` as two blocks, cut at `k`.
parsers::ByteSource cut_at(std::string_view text, std::size_t k) {
  return [text, k, n = 0]() mutable -> tl::expected<std::string_view, std::string> {
    ++n;
    if (n == 1) return text.substr(0, k);
    if (n == 2) return text.substr(k);
    return std::string_view{};
  };
}

// The same bytes through both, in blocks of `block` (0: whole).
void same(std::string_view text, std::size_t block, std::size_t stop_at = static_cast<std::size_t>(-1), bool digest = false) {
  const std::string want = by_rapidjson(parsers::blocks_of(text, block), stop_at, digest);
  const std::string got = by_scan(parsers::blocks_of(text, block), stop_at, digest);
  ASSERT_EQ(got, want) << "block " << block << " stop " << stop_at << " text: " << text.substr(0, 300);
}

void every_cut(std::string_view text) {
  for (std::size_t k = 0; k <= text.size(); ++k) {
    const std::string want = by_rapidjson(cut_at(text, k), static_cast<std::size_t>(-1));
    const std::string got = by_scan(cut_at(text, k), static_cast<std::size_t>(-1));
    ASSERT_EQ(got, want) << "cut at " << k << " text: " << text;
  }
  for (std::size_t block : {0, 1, 2, 3, 5, 7}) same(text, block);
}

const std::vector<std::string>& tricky_numbers() {
  static const std::vector<std::string> v = {
      "0", "-0", "1", "-1", "0.0", "-0.0", "0.1", "0.5", "1.5", "-1.5", "1e0", "1E+2", "1e-2", "12e22", "1e22", "1e23",
      "9007199254740991", "9007199254740992", "9007199254740993", "9007199254740991.5", "900719925474099.1",
      "2147483647", "2147483648", "-2147483648", "-2147483649", "4294967295", "4294967296",
      "9223372036854775807", "9223372036854775808", "-9223372036854775808", "-9223372036854775809",
      "18446744073709551615", "18446744073709551616", "99999999999999999999", "-99999999999999999999",
      "1e400", "-1e400", "1e308", "1.7976931348623157e308", "1.7976931348623159e308", "2.2250738585072014e-308",
      "4.9e-324", "5e-324", "2e-324", "1e-400", "0e0", "0e400", "0.000000000000000000000000000001",
      "1234567.890", "1701234567890.123", "1701234567890123.5", "123456789012345678901234567890",
      "0.30000000000000004", "3.141592653589793", "2.718281828459045235360287", "1e-22", "1e-23", "8.5e-23",
      "123.456e-5", "1.0e+0022", "1e00000000000000000005", "1e-00000000000000000005", "100000000000000000000e-5",
      "01", "-", "-a", "1.", "1.e5", ".5", "1e", "1e+", "1e-x", "+1", "--1", "1.5.3", "1e5e5", "0x10", "00", "-01", "1ee2",
      "Infinity", "NaN", "-Infinity", "nul", "tru", "fals", "nulll", "truex", "null", "true", "false",
      // around the eight-digit steps and the 19 digits the scanner reads itself
      "12345678", "123456789", "10000000", "99999999.99999999", "1234567890123456", "12345678901234567",
      "1234567890123456789", "12345678901234567890", "9999999999999999999", "0.12345678", "0.123456789012345678",
      "0.1234567890123456789", "1.2345678e3", "12345678.9e-2", "7.", "0.0000000", "00000000", "1e12345", "1.5E-0009",
  };
  return v;
}

const std::vector<std::string>& tricky_strings() {
  static const std::vector<std::string> v = {
      R"("")", R"("a")", R"("\"")", R"("\\")", R"("\/")", R"("\b\f\n\r\t")", R"("\u0000")", R"("\u0041\u00e9\u20ac")",
      R"("\uD83D\uDE00")", R"("\ud83d\ude00")", R"("\uD83D")", R"("\uD83Dx")", R"("\uD83D\u0041")", R"("\uDE00")",
      R"("\uDBFF\uDFFF")", R"("\u12")", R"("\u12G4")", R"("\x")", R"("\)", R"("abc)", "\"a\tb\"", "\"a\nb\"", std::string("\"a\0b\"", 5),
      "\"caf\xc3\xa9\"", "\"\xff\xfe\"", "\"\xe2\x82\"", R"("a\"b\\c\/d")", R"("\\\\\"")", R"("long string with \n an escape near the end of it\t")",
      "\"" + std::string(40, 'x') + "\\u00e9" + std::string(40, 'y') + "\"",
  };
  return v;
}

}  // namespace

TEST(JsonScan, TrickyNumbersEveryCut) {
  for (const auto& n : tricky_numbers()) {
    SCOPED_TRACE(n);
    every_cut("[" + n + "]");
    every_cut("{\"a\": " + n + ", \"b\":" + n + "}");
    every_cut("[ " + n + " ,1]");
    every_cut(n);
    // With 64 bytes or more of the block after it, the scanner reads a number eight digits a
    // step without testing for the block's end: the same numbers so, and cut anywhere.
    const std::string pad = ", \"" + std::string(70, 'x') + "\"]";
    every_cut("[" + n + pad);
    every_cut("[-" + n + pad);
    every_cut("[" + n + n + pad);
    every_cut("{\"ts\": " + n + ", \"x\": \"" + std::string(70, 'x') + "\"}");
  }
}

TEST(JsonScan, StringsEscapesAndSurrogatesEveryCut) {
  for (const auto& s : tricky_strings()) {
    SCOPED_TRACE(s);
    every_cut("[" + s + "]");
    every_cut("{" + s + ": " + s + ",\n" + s + ":[" + s + "]}");
    every_cut(s);
  }
}

TEST(JsonScan, StructureAndItsErrorsEveryCut) {
  const std::vector<std::string> texts = {
      "", " ", "\n\n", "{}", "[]", " {} ", "{} {}", "{}x", "[1,]", "[,1]", "{\"a\"}", "{\"a\" 1}", "{\"a\":}", "{\"a\":1,}",
      "{,}", "{1:2}", "[1 2]", "[1:2]", "{\"a\":1 \"b\":2}", "[[[[]]]]", "[{\"a\":[{}]}]", "[\n\t\r 1\n,\n2 ]  \n",
      "[1]\0garbage", std::string("[1,\0 2]", 7), "{\"a\":1}\n\n\n\xff", "[true,false,null]", "[true false]", "]", "}", ",",
      "{\"traceEvents\": [{\"ph\": \"X\", \"cat\": \"kernel\", \"ts\": 1.5, \"dur\": 2, \"args\": {\"device\": 0}}]}",
      "[1, 2", "{\"a\": [1, {\"b\": ", "[\"abc", "[1e5", "[tr", "\xef\xbb\xbf[]", "[\xc3\xa9]",
      // Runs of whitespace of 16 bytes and more (skip_ws_run's vector steps), one ending the input.
      "[" + std::string(40, ' ') + "1," + std::string(33, '\n') + "\t2" + std::string(17, '\t') + "]" + std::string(20, '\r'),
      "{" + std::string(16, ' ') + "\"a\"" + std::string(31, ' ') + ":" + std::string(48, '\n') + "{}}",
  };
  for (const auto& t : texts) {
    SCOPED_TRACE(t);
    every_cut(t);
  }
}

// The newlines of a block (an error's line) counted 64 bytes a step as a byte loop counts them:
// every length around the steps and the 63-step batches, sparse to all newlines, unaligned.
TEST(JsonPull, NewlinesCountedAsAByteLoopCountsThem) {
  std::mt19937_64 rng(12);
  for (std::size_t len : {0, 1, 15, 16, 17, 48, 63, 64, 65, 127, 128, 200, 4031, 4032, 4033, 4079, 4080, 4095, 4096, 4097, 8164, 20000})
    for (unsigned percent : {0u, 3u, 50u, 97u, 100u})
      for (std::size_t off : {0, 1, 7}) {
        std::string s(off + len, 'x');
        for (auto& c : s)
          if (rng() % 100 < percent) c = '\n';
        const char* p = s.data() + off;
        const char* e = s.data() + s.size();
        EXPECT_EQ(parsers::json_pull::Utf8Scan::count_newlines(p, e), static_cast<std::size_t>(std::count(p, e, '\n'))) << len << " " << percent << " " << off;
      }
}

TEST(JsonScan, AHandlerThatStopsStopsBothAtTheSameByte) {
  const std::string text = "{\"a\": [1, -2, 3.5, 1e400, \"x\", \"y\\n\", true, null, {\"b\": 18446744073709551616}], \"c\": {}}";
  for (std::size_t stop = 1; stop <= 20; ++stop)
    for (std::size_t block : {0, 1, 4, 9}) same(text, block, stop);
}

TEST(JsonScan, ASourceThatFailsIsSeenAtTheSameByte) {
  const std::string text = "{\"traceEvents\": [{\"name\": \"abcdefghij\", \"ts\": 12345.678}, 1, 2, 3]}";
  for (std::size_t k = 0; k <= text.size(); ++k)
    for (std::size_t block : {1, 3, 8}) {
      auto src = [&, off = std::size_t{0}]() mutable -> tl::expected<std::string_view, std::string> {
        if (off >= k) return tl::unexpected(std::string("read failed"));
        std::string_view b = std::string_view(text).substr(off, std::min(block, k - off));
        off += b.size();
        return b;
      };
      auto src2 = src;
      EXPECT_EQ(by_scan(src, static_cast<std::size_t>(-1)), by_rapidjson(src2, static_cast<std::size_t>(-1))) << k << " " << block;
    }
}

TEST(JsonScan, GeneratedTracesWholeAndInBlocks) {
  namespace gen = perfgap::gen;
  std::vector<gen::Scenario> cases{gen::exposed_comm(2, 3, 30, 15), gen::launch_bound(1, 3, 50), gen::overlapped(2, 3),
                                   gen::copy_bound(1, 2), gen::graphs(1, 2), gen::large(1, 3000, 500, true)};
  for (const auto& s : cases)
    for (int rank : {-1, 3}) {
      const std::string text = gen::kineto_json(s, s.gpus.size() - 1, rank);
      for (std::size_t block : {0, 4096, 1000, 97, 13}) same(text, block);
    }
}

TEST(JsonScan, RandomlyDamagedTracesGiveTheSameEventsAndErrors) {
  namespace gen = perfgap::gen;
  const std::string base = gen::kineto_json(gen::exposed_comm(1, 2, 30, 15), 0, 1).substr(0, 3000) +
                           R"(, {"name": "a\"b\u00e9\uD83D\uDE00", "v": [-0, 1e400, 18446744073709551616, 0.1, 5e-324, 9223372036854775808]}]})";
  std::mt19937_64 rng(45);
  const std::string alphabet = std::string("{}[],:\"\\ \n\t0123456789-+.eEtrufalsnu\xff\xc3\xa9", 42) + std::string(1, '\0');
  for (int i = 0; i < 1500; ++i) {
    std::string t = base;
    for (int m = 1 + static_cast<int>(rng() % 3); m > 0; --m) {
      const std::size_t at = rng() % t.size();
      switch (rng() % 4) {
        case 0: t[at] = alphabet[rng() % alphabet.size()]; break;
        case 1: t.erase(at, 1 + rng() % 4); break;
        case 2: t.insert(at, 1, alphabet[rng() % alphabet.size()]); break;
        default: t.resize(at); break;
      }
      if (t.empty()) t = "[";
    }
    SCOPED_TRACE(i);
    same(t, 0);
    same(t, 1 + rng() % 200);
    if (HasFatalFailure()) return;
  }
}

TEST(JsonScan, RealTracesReadInPlace) {
  const fs::path dir = fs::path(PERFGAP_SHARED_DIR) / "fixtures" / "profiles";
  if (!fs::is_directory(dir)) GTEST_SKIP() << "no shared fixtures at " << dir;
  int n = 0;
  for (const auto& e : fs::directory_iterator(dir)) {
    const auto name = e.path().filename().string();
    if (name.rfind("kineto_", 0) != 0) continue;
    SCOPED_TRACE(name);
    ++n;
    auto bytes = fixture::read_file(e.path());
    auto text = parsers::gunzip(bytes, 1u << 30);
    ASSERT_TRUE(text) << text.error();
    same(*text, std::size_t{256} << 10, static_cast<std::size_t>(-1), true);  // as the CLI reads a file
    // The .gz inflated in odd blocks: tokens cut at many places.
    parsers::GunzipSource a(parsers::blocks_of(bytes, 1000), 1u << 30, 4093), b(parsers::blocks_of(bytes, 1000), 1u << 30, 4093);
    EXPECT_EQ(by_scan([&] { return a.next(); }, static_cast<std::size_t>(-1), true),
              by_rapidjson([&] { return b.next(); }, static_cast<std::size_t>(-1), true));
  }
  EXPECT_GT(n, 0);
}
