#include "report/reader.hpp"

#include <fmt/format.h>
// RapidJSON (header-only, Debian's rapidjson-dev): the static release build links no JSON
// library, and it reads a 26 KB report at ~270 MB/s on one core (docs/BUILDING.md, "The static binary").
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <algorithm>
#include <cctype>
#include <type_traits>
#include <vector>

#include "sys/json_depth.hpp"

namespace perfgap::report {
// Named, so that no name here meets another report/*.cpp file's in a unity build.
namespace reading {
namespace {

using Value = rapidjson::Value;

// Why a text is not a report: the message names the field, so an operator can find it.
struct Bad {
  std::string why;
};

std::string_view type_name(const Value& e) {
  switch (e.GetType()) {
    case rapidjson::kArrayType: return "an array";
    case rapidjson::kObjectType: return "an object";
    case rapidjson::kNumberType: return "a number";
    case rapidjson::kStringType: return "a string";
    case rapidjson::kTrueType:
    case rapidjson::kFalseType: return "a boolean";
    case rapidjson::kNullType: return "null";
  }
  return "something else";
}

std::string_view text_of(const Value& e) { return {e.GetString(), e.GetStringLength()}; }

// A key of the report in an error message: as written, but one line of ASCII.
std::string key_shown(const Value& name) { return shown_in_error(text_of(name)); }

// `where` names the field for the error message: a string, or a callable that builds the name
// only when there is an error (a report has ~40 findings x ~10 fields: naming each field up
// front would cost more than parsing it).
template <class Where>
std::string name_of(const Where& where) {
  if constexpr (std::is_invocable_v<Where>) return where();
  else return std::string(where);
}

template <class Where>
[[noreturn]] void wrong_type(const Value& e, const Where& where, std::string_view wanted) {
  throw Bad{fmt::format("{} is {}, not {}", name_of(where), type_name(e), wanted)};
}

template <class Where>
std::string_view string_of(const Value& e, const Where& where) {
  if (!e.IsString()) wrong_type(e, where, "a string");
  return text_of(e);
}

// A field that may be absent or null.
template <class Where>
std::optional<std::string_view> optional_string(const Value* e, const Where& where) {
  if (!e || e->IsNull()) return std::nullopt;
  return string_of(*e, where);
}

template <class Where>
Value::ConstObject object_of(const Value& e, const Where& where) {
  if (!e.IsObject()) wrong_type(e, where, "an object");
  return e.GetObject();
}

template <class Where>
Value::ConstArray array_of(const Value& e, const Where& where) {
  if (!e.IsArray()) wrong_type(e, where, "an array");
  return e.GetArray();
}

std::optional<Status> status_named(std::string_view s) {
  if (s == "pass") return Status::pass;
  if (s == "warn") return Status::warn;
  if (s == "fail") return Status::fail;
  if (s == "skip") return Status::skip;
  if (s == "error") return Status::error;
  return std::nullopt;
}

// What is wrong with text RapidJSON refused, in the words an operator needs, with the line an
// editor jumps to (a report is pretty-printed: its byte alone is hard to find).
std::string json_problem(const rapidjson::Document& doc, std::string_view text) {
  const auto code = doc.GetParseError();
  const std::size_t at = doc.GetErrorOffset();
  const std::size_t size = text.size();
  const auto line = 1 + std::count(text.begin(), text.begin() + static_cast<std::ptrdiff_t>(std::min(at, size)), '\n');
  std::string why;
  if (code == rapidjson::kParseErrorStringInvalidEncoding) {
    why = "not valid UTF-8";
  } else if (at >= size && code != rapidjson::kParseErrorDocumentRootNotSingular) {
    // The parser wanted more where the text ends: cut off inside an object, array or string.
    why = "truncated: it ends inside an object, array or string";
  } else {
    why = rapidjson::GetParseError_En(code);  // "Invalid value.": as the rest of the message
    if (!why.empty() && why.back() == '.') why.pop_back();
    if (!why.empty()) why[0] = static_cast<char>(std::tolower(static_cast<unsigned char>(why[0])));
  }
  return fmt::format("line {}, byte {}: not JSON ({})", line, at, why);
}

}  // namespace

// Where each finding's and the node's lists start in the reader's flat buffers (the spans are
// made once everything is read: the buffers may move while they grow).
struct Range {
  std::size_t begin = 0, count = 0;
};

}  // namespace reading

struct Reader::Impl {
  // The document's values live in one pool that each read empties and refills: a node report
  // (~26 KB of text, ~32 KB of values) fits its first block, so reading 10,000 of them allocates
  // nothing per report and keeps the pool's memory in cache. A larger report adds blocks,
  // released at the next read.
  static constexpr std::size_t kPoolBytes = 256 << 10;
  std::unique_ptr<char[]> pool_block{new char[kPoolBytes]};
  rapidjson::MemoryPoolAllocator<> pool{pool_block.get(), kPoolBytes};
  rapidjson::Document doc{&pool};
  std::vector<ReadFinding> findings;
  std::vector<ReadMetric> metrics;
  std::vector<ReadEvidence> evidence;
  std::vector<ReadEntry> entries;
  std::vector<std::string_view> inputs;
  std::vector<std::pair<reading::Range, reading::Range>> finding_ranges;  // metrics, evidence

  void read_finding(const rapidjson::Value& e, std::size_t index);
  reading::Range read_map(const rapidjson::Value* e, std::string_view where);
  ReadReport read_top(const rapidjson::Value& top);
};

namespace reading {
namespace {

template <class Where>
Range read_metrics(const Value* e, const Where& where, std::vector<ReadMetric>& out) {
  Range r{out.size(), 0};
  if (!e || e->IsNull()) return r;
  for (const auto& m : object_of(*e, where)) {
    // A metric that was NaN or infinite is written as null: nothing to compare.
    if (m.value.IsNull()) continue;
    if (!m.value.IsNumber()) wrong_type(m.value, [&] { return fmt::format("{}.{}", name_of(where), key_shown(m.name)); }, "a number");
    out.push_back({text_of(m.name), m.value.GetDouble()});
  }
  r.count = out.size() - r.begin;
  return r;
}

template <class Where>
Range read_evidence(const Value* e, const Where& where, std::vector<ReadEvidence>& out) {
  Range r{out.size(), 0};
  if (!e || e->IsNull()) return r;
  std::size_t i = 0;
  for (const auto& item : array_of(*e, where)) {
    auto at = [&, i](std::string_view field) { return [&, i, field] { return fmt::format("{}[{}]{}", name_of(where), i, field); }; };
    ReadEvidence ev;
    const Value *source = nullptr, *observed = nullptr, *expected = nullptr;
    for (const auto& f : object_of(item, at(""))) {
      const std::string_view k = text_of(f.name);
      if (k == "source") source = &f.value;
      else if (k == "observed") observed = &f.value;
      else if (k == "expected") expected = &f.value;
    }
    ev.source = optional_string(source, at(".source")).value_or("");
    ev.observed = optional_string(observed, at(".observed")).value_or("");
    ev.expected = optional_string(expected, at(".expected"));
    out.push_back(ev);
    ++i;
  }
  r.count = out.size() - r.begin;
  return r;
}

}  // namespace
}  // namespace reading

void Reader::Impl::read_finding(const rapidjson::Value& e, std::size_t index) {
  using namespace reading;
  auto at = [index](std::string_view field) { return [index, field] { return fmt::format("findings[{}]{}", index, field); }; };
  const Value *id = nullptr, *layer = nullptr, *status = nullptr, *subject = nullptr, *title = nullptr, *fix = nullptr,
              *impact = nullptr, *metrics_field = nullptr, *evidence_field = nullptr;
  for (const auto& field : object_of(e, at(""))) {
    const std::string_view k = text_of(field.name);
    if (k == "id") id = &field.value;
    else if (k == "layer") layer = &field.value;
    else if (k == "status") status = &field.value;
    else if (k == "subject") subject = &field.value;
    else if (k == "title") title = &field.value;
    else if (k == "fix") fix = &field.value;
    else if (k == "impact") impact = &field.value;
    else if (k == "metrics") metrics_field = &field.value;
    else if (k == "evidence") evidence_field = &field.value;
  }
  ReadFinding f;
  // `field` is ".id": the name after the dot is what the message says is missing.
  auto required = [&](const Value* v, std::string_view field) {
    auto s = optional_string(v, at(field));
    if (!s) throw Bad{fmt::format("findings[{}]: no {}", index, field.substr(1))};
    return *s;
  };
  f.id = required(id, ".id");
  if (f.id.empty()) throw Bad{fmt::format("findings[{}].id is empty", index)};
  const std::string_view status_text = required(status, ".status");
  auto st = status_named(status_text);
  if (!st) throw Bad{fmt::format("findings[{}].status '{}' is not one of pass, warn, fail, skip, error", index, shown_in_error(status_text))};
  f.status = *st;
  f.layer = required(layer, ".layer");
  f.subject = optional_string(subject, at(".subject")).value_or("");
  f.title = optional_string(title, at(".title")).value_or("");
  f.fix = optional_string(fix, at(".fix")).value_or("");
  f.impact = optional_string(impact, at(".impact")).value_or("");
  Range m = read_metrics(metrics_field, at(".metrics"), metrics);
  Range ev = read_evidence(evidence_field, at(".evidence"), evidence);
  findings.push_back(f);
  finding_ranges.emplace_back(m, ev);
}

reading::Range Reader::Impl::read_map(const rapidjson::Value* e, std::string_view where) {
  using namespace reading;
  Range r{entries.size(), 0};
  if (!e || e->IsNull()) return r;  // an older report without the map
  for (const auto& field : object_of(*e, where))
    entries.push_back({text_of(field.name), string_of(field.value, [&] { return fmt::format("{}.{}", where, key_shown(field.name)); })});
  r.count = entries.size() - r.begin;
  return r;
}

ReadReport Reader::Impl::read_top(const rapidjson::Value& top) {
  using namespace reading;
  const Value *schema = nullptr, *generated_at = nullptr, *source = nullptr, *node = nullptr, *findings_field = nullptr;
  for (const auto& field : top.GetObject()) {
    const std::string_view k = text_of(field.name);
    if (k == "schema") schema = &field.value;
    else if (k == "generated_at") generated_at = &field.value;
    else if (k == "source") source = &field.value;
    else if (k == "node") node = &field.value;
    else if (k == "findings") findings_field = &field.value;
  }
  // The schema decides how the rest reads, so it is checked before anything else.
  if (!schema || !schema->IsString() || text_of(*schema) != kSchema) {
    const std::string what = !schema ? "none" : schema->IsString() ? fmt::format("'{}'", shown_in_error(text_of(*schema))) : std::string(type_name(*schema));
    throw Bad{fmt::format("schema is not {} ({}): not a perfgap report", kSchema, what)};
  }
  ReadReport r;
  r.generated_at = optional_string(generated_at, "generated_at");

  if (!source) throw Bad{"no source"};
  const Value *kind = nullptr, *inputs_field = nullptr;
  for (const auto& field : object_of(*source, "source")) {
    const std::string_view k = text_of(field.name);
    if (k == "kind") kind = &field.value;
    else if (k == "inputs") inputs_field = &field.value;
  }
  auto kind_text = optional_string(kind, "source.kind");
  if (!kind_text) throw Bad{"source: no kind"};
  r.kind = *kind_text;
  if (inputs_field && !inputs_field->IsNull()) {
    std::size_t i = 0;
    for (const auto& v : array_of(*inputs_field, "source.inputs")) {
      inputs.push_back(string_of(v, [i] { return fmt::format("source.inputs[{}]", i); }));
      ++i;
    }
  }

  Range settings, environment, nccl_conf;
  r.has_node = node != nullptr;
  if (node && !node->IsNull()) {
    ReadNode n;
    const Value *name = nullptr, *hostname = nullptr, *arch = nullptr, *kernel = nullptr, *container = nullptr, *virtualized = nullptr,
                *settings_field = nullptr, *environment_field = nullptr, *nccl_conf_field = nullptr;
    for (const auto& field : object_of(*node, "node")) {
      const std::string_view k = text_of(field.name);
      if (k == "name") name = &field.value;
      else if (k == "hostname") hostname = &field.value;
      else if (k == "arch") arch = &field.value;
      else if (k == "kernel") kernel = &field.value;
      else if (k == "container") container = &field.value;
      else if (k == "virtualized") virtualized = &field.value;
      else if (k == "settings") settings_field = &field.value;
      else if (k == "environment") environment_field = &field.value;
      else if (k == "nccl_conf") nccl_conf_field = &field.value;
    }
    n.name = optional_string(name, "node.name");
    n.hostname = optional_string(hostname, "node.hostname");
    n.arch = optional_string(arch, "node.arch");
    n.kernel = optional_string(kernel, "node.kernel");
    n.container = optional_string(container, "node.container");
    if (virtualized && !virtualized->IsNull()) {
      if (!virtualized->IsBool()) wrong_type(*virtualized, "node.virtualized", "a boolean");
      n.virtualized = virtualized->GetBool();
    }
    settings = read_map(settings_field, "node.settings");
    environment = read_map(environment_field, "node.environment");
    nccl_conf = read_map(nccl_conf_field, "node.nccl_conf");
    r.node = n;
  }

  if (!findings_field) throw Bad{"no findings"};
  auto arr = array_of(*findings_field, "findings");
  findings.reserve(arr.Size());
  finding_ranges.reserve(arr.Size());
  std::size_t i = 0;
  for (const auto& f : arr) read_finding(f, i++);

  // Everything is read: the buffers no longer move.
  auto span_of = [](const auto& buffer, Range range) { return std::span(buffer).subspan(range.begin, range.count); };
  for (std::size_t k = 0; k < findings.size(); ++k) {
    findings[k].metrics = span_of(metrics, finding_ranges[k].first);
    findings[k].evidence = span_of(evidence, finding_ranges[k].second);
  }
  if (r.node) {
    r.node->settings = span_of(entries, settings);
    r.node->environment = span_of(entries, environment);
    r.node->nccl_conf = span_of(entries, nccl_conf);
  }
  r.inputs = inputs;
  r.findings = findings;
  return r;
}

std::string shown_in_error(std::string_view s) {
  constexpr std::size_t kLongest = 60;
  std::string out;
  for (char c : s.substr(0, kLongest)) {
    const auto u = static_cast<unsigned char>(c);
    out += u < 0x20 || u >= 0x7f ? '?' : c;
  }
  if (s.size() > kLongest) out += "...";
  return out;
}

Reader::Reader() : impl_(std::make_unique<Impl>()) {}
Reader::~Reader() = default;

tl::expected<ReadReport, std::string> Reader::read(std::string_view text) {
  using namespace reading;
  // Before any parser keeps a frame per level (RapidJSON's iterative parser keeps a stack).
  if (auto at = sys::json_too_deep(text, kMaxReportDepth))
    return tl::unexpected(fmt::format("byte {}: nested deeper than {} levels: not a perfgap report", *at, kMaxReportDepth));
  std::size_t first = 0;
  while (first < text.size() && (text[first] == ' ' || text[first] == '\n' || text[first] == '\r' || text[first] == '\t')) ++first;
  if (first == text.size()) return tl::unexpected(fmt::format("line {}, byte {}: not JSON (empty)", 1 + std::count(text.begin(), text.end(), '\n'), first));
  // Another tool's JSON, or no JSON at all (a binary): said before the parser reads it.
  if (text[first] != '{') return tl::unexpected(std::string("not a JSON object: not a perfgap report"));
  // Iterative: no recursion. UTF-8 is validated and doubles are read exactly.
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag | rapidjson::kParseFullPrecisionFlag;
  Impl& s = *impl_;
  // The previous report's values are dropped (a pool's values need no destructor) and their
  // memory is reused.
  s.doc.SetNull();
  s.pool.Clear();
  s.findings.clear();
  s.metrics.clear();
  s.evidence.clear();
  s.entries.clear();
  s.inputs.clear();
  s.finding_ranges.clear();
  s.doc.Parse<kFlags>(text.data(), text.size());
  if (s.doc.HasParseError()) return tl::unexpected(json_problem(s.doc, text));
  try {
    return s.read_top(s.doc);
  } catch (const Bad& b) {
    return tl::unexpected(b.why);
  }
}

}  // namespace perfgap::report
