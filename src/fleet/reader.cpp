#include "fleet/reader.hpp"

#include <fmt/format.h>
// RapidJSON (header-only, Debian's rapidjson-dev): the static release build links no JSON
// library, and it reads a 26 KB report at ~270 MB/s on one core (docs/BUILDING.md, "The static binary").
#include <rapidjson/document.h>
#include <rapidjson/error/en.h>

#include <cstring>
#include <mutex>
#include <unordered_set>
#include <type_traits>

#include "parsers/nccl_inspector.hpp"
#include "parsers/nccl_tests.hpp"
#include "sys/json_depth.hpp"

namespace perfgap::fleet {
namespace {

using element = const rapidjson::Value&;

// Why a report cannot be used: the message names the field, so an operator can find it.
struct Bad {
  std::string why;
};

std::string_view type_name(element e) {
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

// `where` names the field for the error message. It is a string, or a callable that builds the
// name only when there is an error (a report has ~40 findings x ~10 fields: naming each
// field up front would cost more than parsing it).
template <class Where>
std::string name_of(const Where& where) {
  if constexpr (std::is_invocable_v<Where>) return where();
  else return std::string(where);
}

std::string_view view(element e) { return {e.GetString(), e.GetStringLength()}; }

template <class Where>
std::string_view expect_string(element e, const Where& where) {
  if (!e.IsString()) throw Bad{fmt::format("{} is {}, not a string", name_of(where), type_name(e))};
  return view(e);
}

template <class Where>
rapidjson::Value::ConstObject expect_object(element e, const Where& where) {
  if (!e.IsObject()) throw Bad{fmt::format("{} is {}, not an object", name_of(where), type_name(e))};
  return e.GetObject();
}

template <class Where>
rapidjson::Value::ConstArray expect_array(element e, const Where& where) {
  if (!e.IsArray()) throw Bad{fmt::format("{} is {}, not an array", name_of(where), type_name(e))};
  return e.GetArray();
}

// The first member named `key` (as a lookup in simdjson and most readers), or nullptr.
const rapidjson::Value* member(const rapidjson::Value::ConstObject& o, std::string_view key) {
  for (const auto& m : o)
    if (view(m.name) == key) return &m.value;
  return nullptr;
}

bool fleet_compared(std::string_view name) { return name.starts_with("NCCL_") || name.starts_with("UCX_"); }

void read_string_map(element e, std::string_view where, report::StringMap& out, bool only_compared) {
  if (e.IsNull()) return;  // an older report without the map
  for (const auto& field : expect_object(e, where)) {
    if (only_compared && !fleet_compared(view(field.name))) continue;
    out.emplace(std::string(view(field.name)), std::string(expect_string(field.value, [&] { return fmt::format("{}.{}", where, view(field.name)); })));
  }
}

std::optional<report::Status> status_of(std::string_view s) {
  using report::Status;
  if (s == "pass") return Status::pass;
  if (s == "warn") return Status::warn;
  if (s == "fail") return Status::fail;
  if (s == "skip") return Status::skip;
  if (s == "error") return Status::error;
  return std::nullopt;
}

}  // namespace

// Named, not anonymous: ReportReader::Impl holds one (a unity build would warn otherwise).
namespace detail {

// Ids, layers and metric names, each stored once for the whole process: a view of it stays
// valid for as long as the process runs, whichever thread read it. Each reader keeps its own
// cache, so the lock is taken once per distinct name and thread.
class Interner {
 public:
  std::string_view get(std::string_view s) {
    if (auto it = cache_.find(s); it != cache_.end()) return *it;
    std::string_view stable;
    {
      std::lock_guard lock(mutex());
      stable = *pool().emplace(s).first;
    }
    cache_.insert(stable);
    return stable;
  }

 private:
  static std::mutex& mutex() {
    static std::mutex m;
    return m;
  }
  static std::unordered_set<std::string>& pool() {  // node-based: its strings never move
    static auto* p = new std::unordered_set<std::string>();  // never destroyed: views outlive any reader
    return *p;
  }
  std::unordered_set<std::string_view> cache_;
};

}  // namespace detail

namespace {

using detail::Interner;

// `measured`: an analyze report, whose evidence may name hosts (nccl-tests) and ranks (NCCL's
// Inspector and RAS) by named lines; a node report has no such line.
void read_finding(element e, std::size_t index, const ReadOptions& opts, Interner& names, NodeReport& out, bool measured) {
  auto at = [index](std::string_view field) { return [index, field] { return fmt::format("findings[{}]{}", index, field); }; };
  NodeFinding f;
  f.metrics_begin = static_cast<std::uint32_t>(out.metrics.size());
  report::Finding* full = nullptr;
  if (opts.findings || opts.details) full = &out.report_findings.emplace_back();
  bool has_id = false, has_layer = false, has_status = false;
  auto read_evidence = [&](element value) {
    std::size_t i = 0;
    for (const auto& ev : expect_array(value, at(".evidence"))) {
      const std::string ew = at(fmt::format(".evidence[{}]", i++))();
      report::Evidence item;
      for (const auto& ef : expect_object(ev, ew)) {
        const std::string_view ek = view(ef.name);
        if (ek == "source") item.source = expect_string(ef.value, ew + ".source");
        else if (ek == "observed") item.observed = expect_string(ef.value, ew + ".observed");
        else if (ek == "expected" && !ef.value.IsNull()) item.expected = std::string(expect_string(ef.value, ew + ".expected"));
      }
      full->evidence.push_back(std::move(item));
    }
  };
  for (const auto& field : expect_object(e, at(""))) {
    const std::string_view k = view(field.name);
    if (k == "id") {
      f.id = names.get(expect_string(field.value, at(".id")));
      has_id = !f.id.empty();
    } else if (k == "layer") {
      f.layer = names.get(expect_string(field.value, at(".layer")));
      has_layer = true;
    } else if (k == "status") {
      auto s = expect_string(field.value, at(".status"));
      auto st = status_of(s);
      if (!st) throw Bad{fmt::format("{}.status '{}' is not one of pass, warn, fail, skip, error", at("")(), s)};
      f.status = *st;
      has_status = true;
    } else if (k == "subject") {
      if (!field.value.IsNull()) f.subject = expect_string(field.value, at(".subject"));
    } else if (k == "metrics") {
      if (field.value.IsNull()) continue;
      for (const auto& m : expect_object(field.value, at(".metrics"))) {
        // A metric that was NaN or infinite is written as null: nothing to compare.
        if (m.value.IsNull()) continue;
        if (!m.value.IsNumber())
          throw Bad{fmt::format("{}.metrics.{} is {}, not a number", at("")(), view(m.name), type_name(m.value))};
        out.metrics.push_back({names.get(view(m.name)), m.value.GetDouble()});
      }
    } else if (k == "evidence" && measured) {
      // An analyze nccl-tests report names the hosts its log shows in one evidence line; the
      // NCCL Inspector and RAS findings name their ranks in one.
      for (const auto& ev : expect_array(field.value, at(".evidence"))) {
        if (!ev.IsObject()) continue;
        const rapidjson::Value* src = member(ev.GetObject(), "source");
        const rapidjson::Value* obs = member(ev.GetObject(), "observed");
        if (!src || !obs || !src->IsString() || !obs->IsString()) continue;
        const bool host_list = view(*src) == parsers::kNcclTestsHostsEvidence;
        const bool rank_list = view(*src) == parsers::kNcclRanksEvidence;
        if (!host_list && !rank_list) continue;
        const std::string_view sep = host_list ? "," : "; ";
        std::string_view list = view(*obs);
        while (!list.empty()) {
          auto end = list.find(sep);
          auto item = list.substr(0, end);
          if (host_list && !item.empty()) out.hosts.emplace_back(item);
          // "HOST: rank R ..." (an item without a host names no node: left out)
          if (auto colon = item.find(": "); rank_list && colon != std::string_view::npos && colon > 0)
            out.ranks.push_back({static_cast<std::uint32_t>(out.findings.size()), std::string(item.substr(0, colon)),
                                 std::string(item.substr(colon + 2))});
          list = end == std::string_view::npos ? std::string_view() : list.substr(end + sep.size());
        }
      }
      if (opts.details) read_evidence(field.value);
    } else if (!opts.details) {
      continue;
    } else if (k == "title") {
      full->title = expect_string(field.value, at(".title"));
    } else if (k == "fix") {
      full->fix = expect_string(field.value, at(".fix"));
    } else if (k == "impact") {
      full->impact = expect_string(field.value, at(".impact"));
    } else if (k == "evidence") {
      read_evidence(field.value);
    }
  }
  if (!has_id) throw Bad{at("")() + " has no id"};
  if (!has_layer) throw Bad{at("")() + " (" + std::string(f.id) + ") has no layer"};
  if (!has_status) throw Bad{at("")() + " (" + std::string(f.id) + ") has no status"};
  f.metrics_count = static_cast<std::uint32_t>(out.metrics.size()) - f.metrics_begin;
  if (full) {
    full->id = f.id;
    full->layer = f.layer;
    full->status = f.status;
    full->subject = f.subject;
    if (opts.metrics)
      for (std::uint32_t m = f.metrics_begin; m < f.metrics_begin + f.metrics_count; ++m)
        full->metrics.emplace_back(std::string(out.metrics[m].name), out.metrics[m].value);
  }
  out.findings.push_back(std::move(f));
}

void read_node(element e, NodeReport& out) {
  if (e.IsNull()) throw Bad{"node is null: not a node report (fleet reads `perfgap check --format json` reports)"};
  bool has_name = false;
  for (const auto& field : expect_object(e, "node")) {
    const std::string_view k = view(field.name);
    if (k == "name") {
      out.name = expect_string(field.value, "node.name");
      has_name = true;
    } else if (k == "kernel") {
      out.kernel = expect_string(field.value, "node.kernel");
    } else if (k == "settings") {
      read_string_map(field.value, "node.settings", out.settings, false);
    } else if (k == "environment") {
      read_string_map(field.value, "node.environment", out.environment, true);
    } else if (k == "nccl_conf") {
      read_string_map(field.value, "node.nccl_conf", out.nccl_conf, true);
    }
  }
  if (!has_name) throw Bad{"node has no name"};
  if (out.name.empty()) throw Bad{"node.name is empty"};
}

// What is wrong with text RapidJSON refused, in the words an operator needs.
std::string json_problem(const rapidjson::Document& doc, std::size_t size) {
  const auto code = doc.GetParseError();
  if (code == rapidjson::kParseErrorDocumentEmpty) return "empty file";
  if (code == rapidjson::kParseErrorStringInvalidEncoding) return "not valid UTF-8";
  // The parser wanted more where the text ends: cut off inside an object, array or string.
  if (doc.GetErrorOffset() >= size && code != rapidjson::kParseErrorDocumentRootNotSingular)
    return "truncated JSON (it ends inside an object, array or string)";
  return fmt::format("not valid JSON ({} at byte {})", rapidjson::GetParseError_En(code), doc.GetErrorOffset());
}

}  // namespace

// RapidJSON reads the given length; no padding is needed (kept for the loader's interface).
std::size_t required_padding() { return 0; }

struct ReportReader::Impl {
  rapidjson::Document doc;
  Interner names;
};

ReportReader::ReportReader() : impl_(std::make_unique<Impl>()) {}
ReportReader::~ReportReader() = default;

tl::expected<NodeReport, std::string> ReportReader::parse(std::string_view text, const ReadOptions& opts) {
  return parse_padded(text.data(), text.size(), opts);
}

tl::expected<NodeReport, std::string> ReportReader::parse_padded(const char* data, std::size_t size, const ReadOptions& opts) {
  std::size_t first = 0;
  while (first < size && (data[first] == ' ' || data[first] == '\n' || data[first] == '\r' || data[first] == '\t')) ++first;
  if (first == size) return tl::unexpected(std::string("empty file"));
  if (data[first] != '{') return tl::unexpected(std::string("not a JSON object: not a perfgap report"));
  // Iterative: no recursion, so a hostile nesting depth cannot exhaust the stack. UTF-8 is
  // validated and doubles are read exactly (as simdjson did before).
  constexpr unsigned kFlags = rapidjson::kParseIterativeFlag | rapidjson::kParseValidateEncodingFlag |
                              rapidjson::kParseFullPrecisionFlag;
  if (auto at = sys::json_too_deep(std::string_view(data, size)))
    return tl::unexpected(fmt::format("byte {}: nested deeper than 64 levels: not a perfgap report", *at));
  rapidjson::Document& doc = impl_->doc;
  // A fresh document per report: the previous report's memory pool is released.
  rapidjson::Document().Swap(doc);
  doc.Parse<kFlags>(data, size);
  if (doc.HasParseError()) return tl::unexpected(json_problem(doc, size));
  try {
    auto top = expect_object(doc, "the document");
    // The schema decides how the rest reads, so it is checked before anything else.
    const rapidjson::Value* schema = member(top, "schema");
    if (!schema) throw Bad{"no \"schema\" field: not a perfgap report"};
    if (!schema->IsString()) throw Bad{"\"schema\" is not a string: not a perfgap report"};
    const std::string_view schema_text = view(*schema);
    if (schema_text != report::kSchema)
      throw Bad{fmt::format("schema is '{}', not {}", schema_text, report::kSchema)};
    NodeReport out;
    bool has_source = false, has_node = false, has_findings = false;
    const rapidjson::Value* node = nullptr;
    const rapidjson::Value* findings = nullptr;
    for (const auto& field : top) {
      const std::string_view k = view(field.name);
      if (k == "generated_at") {
        out.generated_at = expect_string(field.value, "generated_at");
        out.generated_unix = parse_rfc3339(out.generated_at);
      } else if (k == "source") {
        const rapidjson::Value* kind = member(expect_object(field.value, "source"), "kind");
        if (!kind) throw Bad{"source has no kind"};
        auto kind_text = expect_string(*kind, "source.kind");
        if (kind_text != "live" && kind_text != "root" && kind_text != "analyze")
          throw Bad{fmt::format("source.kind is '{}': neither a node report (`perfgap check --format json`) nor a measurement "
                                "(`perfgap analyze nccl-tests|steps|nsys|kineto|nccl-inspector|nccl-ras --format json`)",
                                kind_text)};
        out.kind = kind_text;
        has_source = true;
      } else if (k == "node") {
        node = &field.value;
        has_node = true;
      } else if (k == "findings") {
        findings = &field.value;
        has_findings = true;
      }
    }
    if (!has_source) throw Bad{"no \"source\" field"};
    if (!has_node) throw Bad{"no \"node\" field: not a node report"};
    if (!has_findings) throw Bad{"no \"findings\" field"};
    // An analyze report's node is null: the node is the one its measurement names.
    const bool measured = out.kind == "analyze";
    if (!measured || !node->IsNull()) read_node(*node, out);
    std::size_t i = 0;
    auto arr = expect_array(*findings, "findings");
    out.findings.reserve(arr.Size());
    for (const auto& f : arr) read_finding(f, i++, opts, impl_->names, out, measured);
    return out;
  } catch (const Bad& b) {
    return tl::unexpected(b.why);
  }
}

std::optional<long long> parse_rfc3339(std::string_view s) {
  // YYYY-MM-DDTHH:MM:SS[.frac](Z|+HH:MM|-HH:MM)
  auto num = [&](std::size_t pos, std::size_t len) -> std::optional<int> {
    if (pos + len > s.size()) return std::nullopt;
    int v = 0;
    for (std::size_t i = pos; i < pos + len; ++i) {
      if (s[i] < '0' || s[i] > '9') return std::nullopt;
      v = v * 10 + (s[i] - '0');
    }
    return v;
  };
  if (s.size() < 20 || s[4] != '-' || s[7] != '-' || (s[10] != 'T' && s[10] != 't' && s[10] != ' ') || s[13] != ':' || s[16] != ':')
    return std::nullopt;
  auto y = num(0, 4), mo = num(5, 2), d = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
  if (!y || !mo || !d || !h || !mi || !se || *mo < 1 || *mo > 12 || *d < 1 || *d > 31 || *h > 23 || *mi > 59 || *se > 60)
    return std::nullopt;
  std::size_t pos = 19;
  if (pos < s.size() && s[pos] == '.') {
    ++pos;
    std::size_t start = pos;
    while (pos < s.size() && s[pos] >= '0' && s[pos] <= '9') ++pos;
    if (pos == start) return std::nullopt;
  }
  long long offset = 0;
  if (pos < s.size() && (s[pos] == 'Z' || s[pos] == 'z')) {
    ++pos;
  } else if (pos < s.size() && (s[pos] == '+' || s[pos] == '-')) {
    auto oh = num(pos + 1, 2), om = num(pos + 4, 2);
    if (!oh || !om || pos + 3 >= s.size() || s[pos + 3] != ':') return std::nullopt;
    offset = (s[pos] == '+' ? 1 : -1) * (*oh * 3600LL + *om * 60LL);
    pos += 6;
  } else {
    return std::nullopt;
  }
  if (pos != s.size()) return std::nullopt;
  // Days from the civil date (Howard Hinnant's algorithm), so no time zone database is needed.
  int yy = *y - (*mo <= 2 ? 1 : 0);
  long long era = (yy >= 0 ? yy : yy - 399) / 400;
  long long yoe = yy - era * 400;
  long long doy = (153LL * (*mo + (*mo > 2 ? -3 : 9)) + 2) / 5 + *d - 1;
  long long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
  long long days = era * 146097 + doe - 719468;
  return days * 86400 + *h * 3600LL + *mi * 60LL + *se - offset;
}

}  // namespace perfgap::fleet
