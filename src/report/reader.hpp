// The one reader of perfgap.report/1 JSON (docs/CONTRACT.md) for every command that reads
// reports back: fleet, compare, explain, history, check (--baseline, the kept history) and
// analyze --node-report. The text is parsed (RapidJSON) and its schema checked here, once, with
// one wording for what is wrong ("line 4, byte 120: not JSON (...)", "schema is not perfgap.report/1
// ...", "findings[3]: no id"); each caller builds what it keeps from the checked view.
#pragma once

#include <memory>
#include <optional>
#include <span>
#include <string>
#include <string_view>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::report {

// Reports nest four levels: a text nested deeper than this is refused before it is parsed.
inline constexpr int kMaxReportDepth = 64;

// The views below point into the Reader that read them: valid until its next read.
struct ReadMetric {
  std::string_view name;
  double value = 0;
};
struct ReadEvidence {
  std::string_view source, observed;  // "" when absent or null
  std::optional<std::string_view> expected;
};
struct ReadEntry {
  std::string_view key, value;
};
struct ReadFinding {
  std::string_view id;  // never empty
  std::string_view layer;
  Status status = Status::skip;
  std::string_view subject, title, fix, impact;  // "" when absent or null
  std::span<const ReadMetric> metrics;           // in report order; a null (non-finite) metric is left out
  std::span<const ReadEvidence> evidence;
};
struct ReadNode {
  std::optional<std::string_view> name, hostname, arch, kernel, container;  // when present (not null)
  std::optional<bool> virtualized;
  std::span<const ReadEntry> settings, environment, nccl_conf;  // in report order
};
struct ReadReport {
  std::string_view kind;                      // source.kind, as written
  std::optional<std::string_view> generated_at;
  std::span<const std::string_view> inputs;   // source.inputs
  bool has_node = false;                      // there is a "node" field (an object or null)
  std::optional<ReadNode> node;               // ... and it is an object
  std::span<const ReadFinding> findings;
};

// A string of the report (a schema, a kind, a key) as an error message shows it: one line of
// ASCII, at most 60 characters ('?' for a control or non-ASCII byte).
std::string shown_in_error(std::string_view s);

// Holds the parser and its buffers between reports: one per thread.
class Reader {
 public:
  Reader();
  ~Reader();
  Reader(const Reader&) = delete;
  Reader& operator=(const Reader&) = delete;

  // A checked report, or why the text is not one (one line, without the file's name).
  tl::expected<ReadReport, std::string> read(std::string_view text);

 private:
  struct Impl;
  std::unique_ptr<Impl> impl_;
};

}  // namespace perfgap::report
