#include "parsers/nccl_inspector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>

#include <nlohmann/json.hpp>

namespace perfgap::parsers {
// Named, not anonymous: ParserState holds these types (see parsers/steps.cpp).
namespace inspector_detail {

using Json = nlohmann::json;

// Deepest bracket nesting of a JSON text, strings skipped (checked before parsing, so a
// hostile line cannot make the parser or the value's destructor recurse deeply).
int json_depth(std::string_view s) {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  for (char c : s) {
    if (in_string) {
      if (escaped) escaped = false;
      else if (c == '\\') escaped = true;
      else if (c == '"') in_string = false;
      continue;
    }
    if (c == '"') in_string = true;
    else if (c == '{' || c == '[') deepest = std::max(deepest, ++depth);
    else if (c == '}' || c == ']') --depth;
  }
  return deepest;
}

const char* type_name(const Json& v) {
  if (v.is_string()) return "a string";
  if (v.is_boolean()) return "a boolean";
  if (v.is_number()) return "a number";
  if (v.is_object()) return "an object";
  if (v.is_array()) return "an array";
  return "null";
}

// Field readers: the value, or why not (set once in `why`).
struct Fields {
  const Json& obj;
  const char* where;  // "header", "metadata", "coll_perf"
  std::string& why;

  const Json* get(const char* key, bool required) {
    auto it = obj.find(key);
    if (it == obj.end()) {
      if (required && why.empty()) why = fmt::format("{}.{} is missing", where, key);
      return nullptr;
    }
    return &*it;
  }
  std::optional<std::string> str(const char* key, bool required = true) {
    const Json* v = get(key, required);
    if (!v) return std::nullopt;
    if (!v->is_string()) {
      if (why.empty()) why = fmt::format("{}.{} is {}, not a string", where, key, type_name(*v));
      return std::nullopt;
    }
    return v->get<std::string>();
  }
  std::optional<std::int64_t> integer(const char* key, bool non_negative) {
    const Json* v = get(key, true);
    if (!v) return std::nullopt;
    if (!v->is_number_integer() || (non_negative && v->is_number_integer() && !v->is_number_unsigned() && v->get<std::int64_t>() < 0)) {
      if (why.empty())
        why = fmt::format("{}.{} is {}, not {}", where, key, v->is_number() ? "a negative or fractional number" : type_name(*v),
                          non_negative ? "a non-negative integer" : "an integer");
      return std::nullopt;
    }
    if (v->is_number_unsigned() && v->get<std::uint64_t>() > static_cast<std::uint64_t>(INT64_MAX)) return INT64_MAX;
    return v->get<std::int64_t>();
  }
  // A bandwidth: a number, or the writer's "nan" for an operation of no measurable time.
  // nullopt with `why` empty: "nan".
  std::optional<double> bandwidth(const char* key) {
    const Json* v = get(key, true);
    if (!v) return std::nullopt;
    if (v->is_string() && v->get<std::string>() == "nan") return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
      if (why.empty()) why = fmt::format("{}.{} is {}, not a bandwidth in GB/s", where, key, v->is_number() ? "a negative number" : type_name(*v));
      return std::nullopt;
    }
    return v->get<double>();
  }
};

using GroupKey = std::tuple<std::string, int, std::string, std::uint64_t>;  // comm, rank, coll, size

}  // namespace inspector_detail

template <>
struct ParserState<NcclInspector> : FeedsLines<ParserState<NcclInspector>> {
  NcclInspector m;
  std::map<inspector_detail::GroupKey, std::size_t> index;
  int n = 0;
  std::optional<ParseError> fatal;

  void damage(std::string message) {
    // The first 1000 are kept with their lines; a file of nothing else fails in finish().
    if (m.damaged.size() < 1000) m.damaged.push_back({std::move(message), n});
  }

  void line(std::string_view raw) {
    ++n;
    if (fatal) return;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    if (raw.find_first_not_of(" \t") == std::string_view::npos) return;
    if (raw.size() > kMaxInspectorLineBytes) return damage(fmt::format("a line of {} bytes, longer than any Inspector record", raw.size()));
    if (inspector_detail::json_depth(raw) > kMaxInspectorDepth)
      return damage(fmt::format("JSON nested deeper than {} levels, not an Inspector record", kMaxInspectorDepth));
    auto j = inspector_detail::Json::parse(raw, nullptr, false);
    if (j.is_discarded()) return damage("not a JSON object (cut short?)");
    if (!j.is_object()) return damage("not a JSON object");
    auto h = j.find("header");
    auto md = j.find("metadata");
    auto cp = j.find("coll_perf");
    auto pp = j.find("p2p_perf");
    if (h == j.end() || md == j.end() || (cp == j.end() && pp == j.end()))
      return damage("not an Inspector record (no header, metadata and coll_perf or p2p_perf)");
    if (!h->is_object() || !md->is_object() || (cp != j.end() && !cp->is_object()) || (pp != j.end() && !pp->is_object()))
      return damage("header, metadata, coll_perf and p2p_perf must be objects");
    std::string why;
    inspector_detail::Fields meta{*md, "metadata", why};
    auto version = meta.str("inspector_output_format_version");
    if (!version) return damage(why);
    // "v4.0": the major version decides the fields; another is refused, not guessed at.
    std::string_view v(*version);
    const auto dot = v.find('.');
    if (v.size() < 2 || v[0] != 'v' || v.substr(1, dot == std::string_view::npos ? std::string_view::npos : dot - 1) != "4") {
      fatal = ParseError{fmt::format("Inspector output format version '{}' is not one perfgap reads (v4.x)", *version), n};
      return;
    }
    if (m.version.empty()) m.version = *version;
    auto host = meta.str("hostname");
    auto pid = meta.integer("pid", true);
    inspector_detail::Fields hdr{*h, "header", why};
    auto id = hdr.str("id");
    auto name = hdr.str("comm_name", false);
    auto rank = hdr.integer("rank", true);
    auto n_ranks = hdr.integer("n_ranks", true);
    auto nnodes = hdr.integer("nnodes", true);
    if (!why.empty()) return damage(why);
    if (*rank >= *n_ranks || *n_ranks > (1 << 24)) return damage(fmt::format("header.rank {} is not below header.n_ranks {}", *rank, *n_ranks));
    if (cp == j.end()) {
      ++m.p2p_records;  // point-to-point: counted, not judged (no peers of the same operation to compare)
      return;
    }
    inspector_detail::Fields perf{*cp, "coll_perf", why};
    auto coll = perf.str("coll");
    auto size = perf.integer("coll_msg_size_bytes", true);
    auto exec = perf.integer("coll_exec_time_us", true);
    auto source = perf.str("coll_timing_source", false);
    auto busbw = perf.bandwidth("coll_busbw_gbs");
    auto algbw = perf.bandwidth("coll_algobw_gbs");
    if (!why.empty()) return damage(why);
    ++m.coll_records;
    inspector_detail::GroupKey key{*id, static_cast<int>(*rank), *coll, static_cast<std::uint64_t>(*size)};
    auto it = index.find(key);
    if (it == index.end()) {
      if (m.colls.size() >= kMaxInspectorGroups) {
        ++m.dropped;
        return;
      }
      InspectorRankColl g;
      g.comm_id = *id;
      g.comm_name = name && *name != "unknown" ? *name : "";
      g.rank = static_cast<int>(*rank);
      g.n_ranks = static_cast<int>(*n_ranks);
      g.nnodes = static_cast<std::uint64_t>(*nnodes);
      g.host = *host;
      g.pid = static_cast<std::uint64_t>(*pid);
      g.coll = *coll;
      g.msg_bytes = static_cast<std::uint64_t>(*size);
      g.first_line = n;
      it = index.emplace(std::move(key), m.colls.size()).first;
      m.colls.push_back(std::move(g));
    }
    auto& g = m.colls[it->second];
    ++g.count;
    g.sum_exec_us += static_cast<double>(*exec);
    if (source && *source != "kernel_gpu") ++g.cpu_timed;
    if (busbw) {
      g.min_busbw_gbs = g.bw_count ? std::min(g.min_busbw_gbs, *busbw) : *busbw;
      g.max_busbw_gbs = g.bw_count ? std::max(g.max_busbw_gbs, *busbw) : *busbw;
      ++g.bw_count;
      g.sum_busbw_gbs += *busbw;
      g.sum_algbw_gbs += algbw.value_or(0);
    }
  }

  Parsed<NcclInspector> finish() {
    if (fatal) return tl::unexpected(*fatal);
    if (m.coll_records == 0 && m.p2p_records == 0) {
      if (!m.damaged.empty()) return parse_fail("no readable NCCL Inspector record: " + m.damaged.front().message, m.damaged.front().line);
      return parse_fail("no NCCL Inspector records (JSON lines with header, metadata and coll_perf)");
    }
    return std::move(m);
  }
};

template class LineParser<NcclInspector>;

Parsed<NcclInspector> parse_nccl_inspector(std::string_view text) { return parse_whole<NcclInspectorParser>(text); }

}  // namespace perfgap::parsers
