// Kineto reader: never crashes, overruns or hangs on any bytes (truncated JSON, wrong types,
// absurd times, NaN-free doubles out of range); a success holds only activities with end >=
// start whose GPU and name indices are valid, and the analysis of it never crashes either.
// Cut anywhere: the same bytes pulled in blocks of another size (picked from the input's
// length) give the same error, or the same findings. And the scanner the reader parses with
// (parsers/json_scan.hpp) gives RapidJSON's Reader's events and result, whole and cut.
#include <rapidjson/reader.h>

#include <string>

#include "analyzers/analyzers.hpp"
#include "fuzz_common.hpp"
#include "parsers/json_scan.hpp"
#include "parsers/profile.hpp"
#include "report/render.hpp"

// json_scan's scanner against RapidJSON's Reader it replaced in the Kineto parse: the same
// events (doubles by their bits, strings by their bytes), result and stream state, whole and cut.
namespace kineto_fuzz {
struct Recorder : rapidjson::BaseReaderHandler<rapidjson::UTF8<>, Recorder> {
  std::string log;
  bool add(char k, const void* v, std::size_t n) {
    log += k;
    log.append(static_cast<const char*>(v), n);
    log += '\n';
    return true;
  }
  bool Null() { return add('n', "", 0); }
  bool Bool(bool b) { return add('b', &b, 1); }
  bool Int(int i) { return add('i', &i, sizeof i); }
  bool Uint(unsigned u) { return add('u', &u, sizeof u); }
  bool Int64(std::int64_t i) { return add('I', &i, sizeof i); }
  bool Uint64(std::uint64_t u) { return add('U', &u, sizeof u); }
  bool Double(double d) { return add('d', &d, sizeof d); }
  bool String(const char* s, rapidjson::SizeType n, bool) { return add('s', s, n); }
  bool Key(const char* s, rapidjson::SizeType n, bool) { return add('k', s, n); }
  bool StartObject() { return add('{', "", 0); }
  bool EndObject(rapidjson::SizeType n) { return add('}', &n, sizeof n); }
  bool StartArray() { return add('[', "", 0); }
  bool EndArray(rapidjson::SizeType n) { return add(']', &n, sizeof n); }
};
template <class Parse>
std::string run_one(std::string_view text, std::size_t block, Parse parse) {
  const perfgap::parsers::ByteSource src = perfgap::parsers::blocks_of(text, block);
  perfgap::parsers::json_pull::PullStream in(src);
  Recorder h;
  rapidjson::ParseResult r = parse(in, h);
  h.log += std::to_string(r.Code()) + " " + std::to_string(r.Offset()) + " " + std::to_string(in.Tell()) + (in.at_end() ? " end " : " ") +
           std::to_string(r.IsError() ? in.line_of(r.Offset()) : 0);
  return h.log;
}
void same_as_rapidjson(std::string_view text, std::size_t block) {
  auto rj = run_one(text, block, [](auto& in, auto& h) {
    rapidjson::Reader reader;
    return reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(in, h);
  });
  auto scan = run_one(text, block, [](auto& in, auto& h) { return perfgap::parsers::json_scan::scan(in, h); });
  FUZZ_CHECK(rj == scan);
}
}  // namespace kineto_fuzz

PERFGAP_FUZZ_TARGET(kineto) {
  auto text = perfgap::fuzz::as_text(data, size);
  kineto_fuzz::same_as_rapidjson(text, 0);
  kineto_fuzz::same_as_rapidjson(text, 1 + size % 13);
  auto p = perfgap::parsers::parse_kineto(text);
  auto cut = perfgap::parsers::read_kineto(perfgap::parsers::blocks_of(text, 1 + size % 67));
  FUZZ_CHECK(static_cast<bool>(p) == static_cast<bool>(cut));
  if (!p) {
    FUZZ_CHECK(!p.error().message.empty());
    FUZZ_CHECK(p.error().describe() == cut.error().describe());
    return 0;
  }
  FUZZ_CHECK(!p->acts.empty());
  for (const auto& a : p->acts) {
    FUZZ_CHECK(a.end >= a.start);
    FUZZ_CHECK(a.gpu < p->gpus.size());
    FUZZ_CHECK(a.name < p->names.size());
  }
  for (const auto& r : p->ranges) FUZZ_CHECK(r.name < p->names.size() && r.end >= r.start);
  auto findings = perfgap::analyzers::analyze_profile(*p, "fuzz", {});
  FUZZ_CHECK(findings.size() >= 6);
  perfgap::report::Report whole, blocks;
  whole.findings = std::move(findings);
  blocks.findings = perfgap::analyzers::analyze_profile(*cut, "fuzz", {});
  FUZZ_CHECK(perfgap::report::render_json(whole) == perfgap::report::render_json(blocks));
  return 0;
}
