// Times the phases of `analyze nsys|kineto` on one file, best of N runs on this thread:
// reading the file (sys::read_named_file), the reader (SQLite rows or JSON into the model),
// and the analysis. Prints kernel rows/s of the reader.
//   perfgap-bench-time-profile nsys|kineto FILE [REPS]
// kineto: the reader streams the file (sys::BlockReader + parsers::read_kineto), so "read file"
// and "reader" are one phase.
// kineto-sax: the bare parse the streaming Kineto reader is measured against ("JSON-parse
// speed", issue 16): RapidJSON's SAX Reader with a handler that does nothing, over RapidJSON's
// own FileReadStream (256 KiB buffer), the reader's flags.
// kineto-parse: the DOM parse of the whole file in memory with those flags (what the reader
// was before it streamed).
// kineto-stream / kineto-scan: the parse as the Kineto reader runs it (blocks of 256 KiB, the
// UTF-8 scan), a null handler: RapidJSON's Reader (before issue 45) / json_scan's scanner.
//   perfgap-bench-time-profile kineto-sax|kineto-parse|kineto-stream|kineto-scan FILE [REPS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <rapidjson/document.h>
#include <rapidjson/filereadstream.h>
#include <rapidjson/reader.h>

#include "analyzers/analyzers.hpp"
#include "parsers/json_scan.hpp"
#include "parsers/profile.hpp"
#include "sys/named_file.hpp"

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  std::string kind = argv[1], file = argv[2];
  int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  using clock = std::chrono::steady_clock;
  auto ms = [](clock::duration d) { return std::chrono::duration<double, std::milli>(d).count(); };
  double best_read = 1e18, best_parse = 1e18, best_analyze = 1e18;
  std::size_t kernels = 0;
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;
  if (kind == "kineto-sax") {
    std::size_t bytes = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = clock::now();
      std::FILE* f = std::fopen(file.c_str(), "rb");
      if (!f) return std::fprintf(stderr, "cannot open %s\n", file.c_str()), 1;
      static char buf[256 << 10];
      rapidjson::FileReadStream in(f, buf, sizeof buf);
      rapidjson::BaseReaderHandler<> nothing;
      rapidjson::Reader reader;
      bool ok = !reader.Parse<kFlags>(in, nothing).IsError();
      bytes = in.Tell();
      std::fclose(f);
      if (!ok) return std::fprintf(stderr, "not valid JSON\n"), 1;
      best_parse = std::min(best_parse, ms(clock::now() - t0));
    }
    std::printf("SAX parse only (RapidJSON Reader, null handler, the reader's flags, file streamed) %.0f ms (%.0f MB/s)\n", best_parse,
                static_cast<double>(bytes) / 1e3 / best_parse);
    return 0;
  }
  // kineto-stream / kineto-scan: the parse as the reader runs it, a null handler, the file
  // streamed in 256 KiB blocks (sys::BlockReader, json_pull::PullStream with its UTF-8 scan):
  // RapidJSON's Reader with the reader's flags before issue 45, json_scan's scanner after.
  if (kind == "kineto-stream" || kind == "kineto-scan") {
    std::size_t bytes = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = clock::now();
      auto r = perfgap::sys::BlockReader::open(file, perfgap::sys::kMaxInputBytes);
      if (!r) return std::fprintf(stderr, "%s\n", r.error().c_str()), 1;
      perfgap::parsers::ByteSource src = [&] { return r->next(); };
      perfgap::parsers::json_pull::PullStream in(src);
      rapidjson::BaseReaderHandler<> nothing;
      rapidjson::ParseResult res;
      if (kind == "kineto-scan") {
        res = perfgap::parsers::json_scan::scan(in, nothing);
      } else {
        rapidjson::Reader reader;
        res = reader.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseFullPrecisionFlag>(in, nothing);
      }
      if (res.IsError()) return std::fprintf(stderr, "not valid JSON\n"), 1;
      bytes = in.Tell();
      best_parse = std::min(best_parse, ms(clock::now() - t0));
    }
    std::printf("%s: parse only (null handler, file streamed in blocks, UTF-8 scan) %.0f ms (%.0f MB/s)\n",
                kind == "kineto-scan" ? "json_scan scanner" : "RapidJSON Reader", best_parse, static_cast<double>(bytes) / 1e3 / best_parse);
    return 0;
  }
  if (kind == "kineto-parse") {
    auto bytes = perfgap::sys::read_named_file(file, perfgap::sys::kMaxInputBytes);
    if (!bytes) return std::fprintf(stderr, "%s\n", bytes.error().c_str()), 1;
    std::size_t events = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = clock::now();
      {
        rapidjson::Document doc;
        // The flags of parsers/kineto.cpp.
        doc.Parse<kFlags>(bytes->data(), bytes->size());
        if (doc.HasParseError() || !doc.IsObject()) return std::fprintf(stderr, "not a JSON object\n"), 1;
        const rapidjson::Value& root = doc;
        auto it = root.FindMember("traceEvents");
        events = it != root.MemberEnd() && it->value.IsArray() ? it->value.Size() : 0;
      }  // freeing the document counts, as it does in the reader
      best_parse = std::min(best_parse, ms(clock::now() - t0));
    }
    std::printf("%zu events: DOM parse only (RapidJSON Document, the reader's flags, file in memory) %.0f ms (%.0f MB/s)\n", events, best_parse,
                static_cast<double>(bytes->size()) / 1e3 / best_parse);
    return 0;
  }
  for (int i = 0; i < reps; ++i) {
    auto t0 = clock::now();
    perfgap::parsers::Parsed<perfgap::parsers::Profile> p;
    auto t1 = t0;
    if (kind == "nsys") {
      auto bytes = perfgap::sys::read_named_file(file, perfgap::sys::kMaxInputBytes);
      if (!bytes) return std::fprintf(stderr, "%s\n", bytes.error().c_str()), 1;
      t1 = clock::now();
      p = perfgap::parsers::read_nsys_sqlite(*bytes);
    } else {  // streamed: the file's reading is inside the reader's phase
      auto r = perfgap::sys::BlockReader::open(file, perfgap::sys::kMaxInputBytes);
      if (!r) return std::fprintf(stderr, "%s\n", r.error().c_str()), 1;
      p = perfgap::parsers::read_kineto([&] { return r->next(); });
    }
    if (!p) return std::fprintf(stderr, "%s\n", p.error().describe().c_str()), 1;
    auto t2 = clock::now();
    auto f = perfgap::analyzers::analyze_profile(*p, file, {});
    auto t3 = clock::now();
    kernels = 0;
    for (const auto& a : p->acts) kernels += a.kind == perfgap::parsers::ActKind::kernel;
    best_read = std::min(best_read, ms(t1 - t0));
    best_parse = std::min(best_parse, ms(t2 - t1));
    best_analyze = std::min(best_analyze, ms(t3 - t2));
    if (f.empty()) return 1;
  }
  std::printf("%zu kernels: read file %.0f ms, reader %.0f ms (%.2f M kernel rows/s), analysis %.0f ms; total %.0f ms\n", kernels, best_read, best_parse,
              static_cast<double>(kernels) / best_parse / 1e3, best_analyze, best_read + best_parse + best_analyze);
  return 0;
}
