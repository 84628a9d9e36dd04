// Times the phases of `analyze nsys|kineto` on one file, best of N runs on this thread:
// reading the file (sys::read_named_file), the reader (SQLite rows or JSON into the model),
// and the analysis. Prints kernel rows/s of the reader.
//   perfgap-bench-time-profile nsys|kineto FILE [REPS]
// kineto-parse: the JSON parse alone, with the reader's RapidJSON and its flags (the floor the
// Kineto reader is measured against: "JSON-parse speed", issue 16).
//   perfgap-bench-time-profile kineto-parse FILE [REPS]
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <string>

#include <rapidjson/document.h>

#include "analyzers/analyzers.hpp"
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
  if (kind == "kineto-parse") {
    auto bytes = perfgap::sys::read_named_file(file, perfgap::sys::kMaxInputBytes);
    if (!bytes) return std::fprintf(stderr, "%s\n", bytes.error().c_str()), 1;
    std::size_t events = 0;
    for (int i = 0; i < reps; ++i) {
      auto t0 = clock::now();
      {
        rapidjson::Document doc;
        // The flags of parsers/kineto.cpp.
        doc.Parse<rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag>(
            bytes->data(), bytes->size());
        if (doc.HasParseError() || !doc.IsObject()) return std::fprintf(stderr, "not a JSON object\n"), 1;
        const rapidjson::Value& root = doc;
        auto it = root.FindMember("traceEvents");
        events = it != root.MemberEnd() && it->value.IsArray() ? it->value.Size() : 0;
      }  // freeing the document counts, as it does in the reader
      best_parse = std::min(best_parse, ms(clock::now() - t0));
    }
    std::printf("%zu events: JSON parse only (RapidJSON, the reader's flags) %.0f ms (%.0f MB/s)\n", events, best_parse,
                static_cast<double>(bytes->size()) / 1e3 / best_parse);
    return 0;
  }
  for (int i = 0; i < reps; ++i) {
    auto t0 = clock::now();
    auto bytes = perfgap::sys::read_named_file(file, perfgap::sys::kMaxInputBytes);
    if (!bytes) return std::fprintf(stderr, "%s\n", bytes.error().c_str()), 1;
    auto t1 = clock::now();
    auto p = kind == "nsys" ? perfgap::parsers::read_nsys_sqlite(*bytes) : perfgap::parsers::parse_kineto(*bytes);
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
