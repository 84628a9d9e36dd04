#include "parsers/nccl_inspector.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <map>
#include <optional>
#include <tuple>
#include <utility>

#include <nlohmann/json.hpp>

#include "parsers/tool_text.hpp"

namespace perfgap::parsers {
// Named, not anonymous: ParserState holds these types (see parsers/steps.cpp).
namespace inspector_detail {

using Json = nlohmann::json;

// Bracket depth of JSON text fed a line at a time, strings skipped; pretty-printed records
// span lines, so the state carries over.
struct JsonScan {
  int depth = 0, deepest = 0;
  bool in_string = false, escaped = false;
  void scan(std::string_view s) {
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
  }
};

// Deepest bracket nesting of a JSON text, strings skipped (checked before parsing, so a
// hostile line cannot make the parser or the value's destructor recurse deeply).
int json_depth(std::string_view s) {
  JsonScan scan;
  scan.scan(s);
  return scan.deepest;
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
  // A time: a non-negative number. The plugin writes an integer; records that went through
  // another tool carry "5663.0".
  std::optional<double> micros(const char* key) {
    const Json* v = get(key, true);
    if (!v) return std::nullopt;
    if (!v->is_number() || !std::isfinite(v->get<double>()) || v->get<double>() < 0) {
      if (why.empty()) why = fmt::format("{}.{} is {}, not a time in microseconds", where, key, v->is_number() ? "a negative number" : type_name(*v));
      return std::nullopt;
    }
    return v->get<double>();
  }
};

// One Prometheus sample: name{labels} value [timestamp]; nullopt when the line is not one.
struct PromSample {
  std::string_view name, labels_text;
  std::vector<std::pair<std::string, std::string>> labels;
  double value = 0;
  const std::string* label(std::string_view k) const {
    for (const auto& [n, v] : labels)
      if (n == k) return &v;
    return nullptr;
  }
};

bool prom_name_char(char c, bool first) {
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_' || c == ':' || (!first && c >= '0' && c <= '9');
}

std::optional<PromSample> prom_sample(std::string_view line, std::string& why) {
  PromSample s;
  std::size_t i = 0;
  while (i < line.size() && prom_name_char(line[i], i == 0)) ++i;
  if (i == 0) {
    why = "not a Prometheus sample (name{labels} value)";
    return std::nullopt;
  }
  s.name = line.substr(0, i);
  if (i < line.size() && line[i] == '{') {
    const std::size_t open = ++i;
    while (true) {
      while (i < line.size() && (line[i] == ' ' || line[i] == ',')) ++i;
      if (i < line.size() && line[i] == '}') break;
      const std::size_t k0 = i;
      while (i < line.size() && prom_name_char(line[i], i == k0)) ++i;
      if (i == k0 || i + 1 >= line.size() || line[i] != '=' || line[i + 1] != '"') {
        why = "a label that is not name=\"value\"";
        return std::nullopt;
      }
      std::string key(line.substr(k0, i - k0)), value;
      i += 2;
      bool closed = false;
      for (; i < line.size(); ++i) {
        if (line[i] == '\\' && i + 1 < line.size()) {
          ++i;
          value += line[i] == 'n' ? '\n' : line[i];
        } else if (line[i] == '"') {
          closed = true;
          ++i;
          break;
        } else {
          value += line[i];
        }
      }
      if (!closed) {
        why = "a label value without its closing quote (cut short?)";
        return std::nullopt;
      }
      s.labels.emplace_back(std::move(key), std::move(value));
    }
    s.labels_text = line.substr(open, i - open);
    ++i;
  }
  while (i < line.size() && (line[i] == ' ' || line[i] == '\t')) ++i;
  auto rest = line.substr(i);
  auto value = rest.substr(0, rest.find_first_of(" \t"));
  if (value == "nan" || value == "NaN") s.value = std::nan("");
  else if (!tooltext::number_into(value, s.value)) {
    why = value.empty() ? "a sample without a value (cut short?)" : fmt::format("a sample value '{}' that is not a number", value);
    return std::nullopt;
  }
  return s;
}

// "2.00GB" (the v4 writer: 1024-based units, two decimals; bytes below 1 KiB as "512B").
std::optional<std::uint64_t> prom_size(std::string_view v) {
  static constexpr std::pair<std::string_view, double> kUnits[] = {{"TB", 1099511627776.0}, {"GB", 1073741824.0}, {"MB", 1048576.0}, {"KB", 1024.0}, {"B", 1.0}};
  for (const auto& [unit, mult] : kUnits) {
    if (!v.ends_with(unit)) continue;
    double d = 0;
    if (!tooltext::number_into(v.substr(0, v.size() - unit.size()), d) || !(d >= 0) || d > 1e6) return std::nullopt;
    return static_cast<std::uint64_t>(std::llround(d * mult));
  }
  return std::nullopt;
}

std::optional<std::int64_t> prom_int(const std::string* v) {
  if (!v || !tooltext::is_integer(*v) || v->size() > 12 || v->starts_with('-')) return std::nullopt;
  return std::stoll(*v);
}

using GroupKey = std::tuple<std::string, int, std::string, std::uint64_t>;  // comm, rank, coll, size

// One collective of one rank, whichever form it was read from.
struct CollRecord {
  std::string comm_id, comm_name, host, coll;
  int rank = 0, n_ranks = 0;
  std::uint64_t nnodes = 0, pid = 0, bytes = 0;
  double exec_us = 0;
  bool cpu_timed = false;
  std::optional<double> busbw, algbw;
};

}  // namespace inspector_detail

template <>
struct ParserState<NcclInspector> : FeedsLines<ParserState<NcclInspector>> {
  enum class Form { unknown, json_lines, json_pretty, prometheus };
  NcclInspector m;
  std::map<inspector_detail::GroupKey, std::size_t> index;
  int n = 0;
  std::optional<ParseError> fatal;
  Form form = Form::unknown;
  // Pretty-printed JSON: the record being read, from its first line.
  std::string buf;
  int buf_line = 0;
  bool skipping = false;  // after a record too large: until the next one starts
  inspector_detail::JsonScan scan;
  // Prometheus text: the samples of one collective (the same labels), until the labels change.
  std::string prom_labels;
  int prom_line = 0;
  std::optional<inspector_detail::PromSample> prom;
  std::optional<double> prom_exec, prom_busbw, prom_algbw;
  bool prom_p2p = false;

  void damage(std::string message, int at) {
    // The first 1000 are kept with their lines; a file of nothing else fails in finish().
    if (m.damaged.size() < 1000) m.damaged.push_back({std::move(message), at});
  }

  void line(std::string_view raw) {
    ++n;
    if (fatal) return;
    if (!raw.empty() && raw.back() == '\r') raw.remove_suffix(1);
    const bool blank = raw.find_first_not_of(" \t") == std::string_view::npos;
    if (form == Form::unknown) {
      if (blank) return;
      choose_form(raw);
    }
    if (form == Form::json_pretty) return pretty_line(raw);
    if (blank) return;
    if (form == Form::prometheus) return prom_line_of(raw);
    if (raw.size() > kMaxInspectorLineBytes) return damage(fmt::format("a line of {} bytes, longer than any Inspector record", raw.size()), n);
    if (inspector_detail::json_depth(raw) > kMaxInspectorDepth)
      return damage(fmt::format("JSON nested deeper than {} levels, not an Inspector record", kMaxInspectorDepth), n);
    auto j = inspector_detail::Json::parse(raw, nullptr, false);
    if (j.is_discarded()) return damage("not a JSON object (cut short?)", n);
    record(j, n);
  }

  // Told once, by the first line that is not blank: a '{' that closes on its line is JSON
  // lines, one that does not a pretty-printed record; Prometheus text starts with its comments
  // or a sample of the plugin's metrics. Anything else is read as JSON lines (and refused there).
  void choose_form(std::string_view first) {
    const auto t = first.substr(first.find_first_not_of(" \t"));
    if (t.starts_with('#') || t.starts_with("nccl_")) {
      form = Form::prometheus;
      m.form = "Prometheus text";
    } else if (t.starts_with('{') && first.size() <= kMaxInspectorLineBytes && [&] {
                 inspector_detail::JsonScan s;
                 s.scan(first);
                 return s.depth > 0;
               }()) {
      form = Form::json_pretty;
      m.form = "pretty-printed JSON";
    } else {
      form = Form::json_lines;
      m.form = "JSON lines";
    }
  }

  void pretty_line(std::string_view raw) {
    // A '{' in the first column starts a record (jq and the README indent what is inside one).
    if (raw.starts_with('{') && (!buf.empty() || skipping)) {
      if (!skipping) damage("a record cut short (no closing brace before the next record)", buf_line);
      buf.clear();
      scan = {};
      skipping = false;
    }
    if (skipping) return;
    if (buf.empty()) {
      if (raw.find_first_not_of(" \t") == std::string_view::npos) return;
      buf_line = n;
    }
    if (buf.size() + raw.size() > kMaxInspectorLineBytes) {
      damage(fmt::format("a record of more than {} bytes, longer than any Inspector record", kMaxInspectorLineBytes), buf_line);
      buf.clear();
      scan = {};
      skipping = true;
      return;
    }
    buf.append(raw).push_back('\n');
    scan.scan(raw);
    if (scan.depth > 0) return;
    const bool deep = scan.deepest > kMaxInspectorDepth;
    std::string text = std::move(buf);
    buf.clear();
    scan = {};
    if (deep) return damage(fmt::format("JSON nested deeper than {} levels, not an Inspector record", kMaxInspectorDepth), buf_line);
    auto j = inspector_detail::Json::parse(text, nullptr, false);
    if (j.is_discarded()) return damage("not a JSON object", buf_line);
    record(j, buf_line);
  }

  void prom_line_of(std::string_view raw) {
    const auto t = raw.substr(raw.find_first_not_of(" \t"));
    if (t.starts_with('#')) return;
    std::string why;
    auto s = inspector_detail::prom_sample(t, why);
    if (!s) return damage(why, n);
    const bool coll_metric = s->name == "nccl_algorithm_bandwidth_gbs" || s->name == "nccl_bus_bandwidth_gbs" ||
                             s->name == "nccl_collective_exec_time_microseconds";
    const bool p2p_metric = s->name.starts_with("nccl_p2p_");
    if (!coll_metric && !p2p_metric) return damage(fmt::format("'{}' is not a metric of the Inspector", s->name), n);
    if (!s->label("rank")) {
      // v5's per-GPU aggregates: no rank to compare with its peers.
      const auto* v = s->label("version");
      fatal = ParseError{fmt::format("Prometheus text of the Inspector's aggregate form{} (per-GPU means over node, gpu, comm_name, no rank or "
                                     "communicator id): perfgap compares ranks; give it the JSON output (NCCL_INSPECTOR_PROM_DUMP=0)",
                                     v ? fmt::format(" {}", *v) : ""),
                         n};
      return;
    }
    if (!prom || s->labels_text != prom_labels) {
      prom_flush();
      prom_labels = std::string(s->labels_text);
      prom_line = n;
      prom_p2p = p2p_metric;
    }
    if (s->name == "nccl_collective_exec_time_microseconds") prom_exec = s->value;
    else if (s->name == "nccl_bus_bandwidth_gbs") prom_busbw = s->value;
    else if (s->name == "nccl_algorithm_bandwidth_gbs") prom_algbw = s->value;
    s->name = s->labels_text = {};  // views into this line
    prom = std::move(*s);
  }

  // The collective whose samples were just read, into the model.
  void prom_flush() {
    if (!prom) return;
    auto s = std::move(*prom);
    prom.reset();
    auto exec = std::exchange(prom_exec, std::nullopt), busbw = std::exchange(prom_busbw, std::nullopt), algbw = std::exchange(prom_algbw, std::nullopt);
    if (prom_p2p) {
      ++m.p2p_records;
      return;
    }
    if (m.version.empty()) m.version = "v4";
    const std::string* missing = nullptr;
    static const std::string kLabels[] = {"comm_id", "hostname", "collective", "message_size"};
    for (const auto& k : kLabels)
      if (!s.label(k)) missing = &k;
    if (missing) return damage(fmt::format("label {} is missing", *missing), prom_line);
    inspector_detail::CollRecord r;
    auto rank = inspector_detail::prom_int(s.label("rank"));
    auto n_ranks = inspector_detail::prom_int(s.label("nranks") ? s.label("nranks") : s.label("n_ranks"));
    auto nnodes = inspector_detail::prom_int(s.label("n_nodes"));
    auto bytes = inspector_detail::prom_size(*s.label("message_size"));
    if (!rank || !n_ranks || !nnodes) return damage("labels rank, nranks and n_nodes must be non-negative integers", prom_line);
    if (!bytes) return damage(fmt::format("label message_size '{}' is not a size like 2.00GB", *s.label("message_size")), prom_line);
    if (!exec || !std::isfinite(*exec) || *exec < 0) return damage("no nccl_collective_exec_time_microseconds sample of this collective", prom_line);
    if (*rank >= *n_ranks || *n_ranks > (1 << 24)) return damage(fmt::format("label rank {} is not below nranks {}", *rank, *n_ranks), prom_line);
    r.comm_id = *s.label("comm_id");
    r.host = *s.label("hostname");
    r.coll = *s.label("collective");
    r.rank = static_cast<int>(*rank);
    r.n_ranks = static_cast<int>(*n_ranks);
    r.nnodes = static_cast<std::uint64_t>(*nnodes);
    r.pid = static_cast<std::uint64_t>(inspector_detail::prom_int(s.label("pid")).value_or(0));
    r.bytes = *bytes;
    r.exec_us = *exec;
    const auto* source = s.label("coll_timing_source");
    r.cpu_timed = source && *source != "kernel_gpu";
    auto bw = [](std::optional<double> v) { return v && std::isfinite(*v) && *v >= 0 ? v : std::nullopt; };
    r.busbw = bw(busbw);
    r.algbw = bw(algbw);
    add(std::move(r), prom_line);
  }

  void record(const inspector_detail::Json& j, int at) {
    if (!j.is_object()) return damage("not a JSON object", at);
    auto h = j.find("header");
    auto md = j.find("metadata");
    auto cp = j.find("coll_perf");
    auto pp = j.find("p2p_perf");
    if (h == j.end() || md == j.end() || (cp == j.end() && pp == j.end()))
      return damage("not an Inspector record (no header, metadata and coll_perf or p2p_perf)", at);
    if (!h->is_object() || !md->is_object() || (cp != j.end() && !cp->is_object()) || (pp != j.end() && !pp->is_object()))
      return damage("header, metadata, coll_perf and p2p_perf must be objects", at);
    std::string why;
    inspector_detail::Fields meta{*md, "metadata", why};
    auto version = meta.str("inspector_output_format_version");
    if (!version) return damage(why, at);
    // "v4.0": the major version decides the fields; another is refused, not guessed at.
    std::string_view v(*version);
    const auto dot = v.find('.');
    if (v.size() < 2 || v[0] != 'v' || v.substr(1, dot == std::string_view::npos ? std::string_view::npos : dot - 1) != "4") {
      fatal = ParseError{fmt::format("Inspector output format version '{}' is not one perfgap reads (v4.x)", *version), at};
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
    if (!why.empty()) return damage(why, at);
    if (*rank >= *n_ranks || *n_ranks > (1 << 24)) return damage(fmt::format("header.rank {} is not below header.n_ranks {}", *rank, *n_ranks), at);
    if (cp == j.end()) {
      ++m.p2p_records;  // point-to-point: counted, not judged (no peers of the same operation to compare)
      return;
    }
    inspector_detail::Fields perf{*cp, "coll_perf", why};
    auto coll = perf.str("coll");
    auto size = perf.integer("coll_msg_size_bytes", true);
    auto exec = perf.micros("coll_exec_time_us");
    auto source = perf.str("coll_timing_source", false);
    auto busbw = perf.bandwidth("coll_busbw_gbs");
    auto algbw = perf.bandwidth("coll_algobw_gbs");
    if (!why.empty()) return damage(why, at);
    inspector_detail::CollRecord r;
    r.comm_id = *id;
    r.comm_name = name && *name != "unknown" ? *name : "";
    r.host = *host;
    r.coll = *coll;
    r.rank = static_cast<int>(*rank);
    r.n_ranks = static_cast<int>(*n_ranks);
    r.nnodes = static_cast<std::uint64_t>(*nnodes);
    r.pid = static_cast<std::uint64_t>(*pid);
    r.bytes = static_cast<std::uint64_t>(*size);
    r.exec_us = *exec;
    r.cpu_timed = source && *source != "kernel_gpu";
    r.busbw = busbw;
    r.algbw = algbw;
    add(std::move(r), at);
  }

  void add(inspector_detail::CollRecord r, int at) {
    ++m.coll_records;
    inspector_detail::GroupKey key{r.comm_id, r.rank, r.coll, r.bytes};
    auto it = index.find(key);
    if (it == index.end()) {
      if (m.colls.size() >= kMaxInspectorGroups) {
        ++m.dropped;
        return;
      }
      InspectorRankColl g;
      g.comm_id = std::move(r.comm_id);
      g.comm_name = std::move(r.comm_name);
      g.rank = r.rank;
      g.n_ranks = r.n_ranks;
      g.nnodes = r.nnodes;
      g.host = std::move(r.host);
      g.pid = r.pid;
      g.coll = std::move(r.coll);
      g.msg_bytes = r.bytes;
      g.first_line = at;
      it = index.emplace(std::move(key), m.colls.size()).first;
      m.colls.push_back(std::move(g));
    }
    auto& g = m.colls[it->second];
    ++g.count;
    g.sum_exec_us += r.exec_us;
    if (r.cpu_timed) ++g.cpu_timed;
    if (r.busbw) {
      g.min_busbw_gbs = g.bw_count ? std::min(g.min_busbw_gbs, *r.busbw) : *r.busbw;
      g.max_busbw_gbs = g.bw_count ? std::max(g.max_busbw_gbs, *r.busbw) : *r.busbw;
      ++g.bw_count;
      g.sum_busbw_gbs += *r.busbw;
      g.sum_algbw_gbs += r.algbw.value_or(0);
    }
  }

  Parsed<NcclInspector> finish() {
    if (!fatal && form == Form::json_pretty && !buf.empty()) {
      damage("a record cut short (no closing brace at the end of the input)", buf_line);
      buf.clear();
    }
    if (!fatal && form == Form::prometheus) prom_flush();
    if (fatal) return tl::unexpected(*fatal);
    if (m.coll_records == 0 && m.p2p_records == 0) {
      if (!m.damaged.empty()) return parse_fail("no readable NCCL Inspector record: " + m.damaged.front().message, m.damaged.front().line);
      return parse_fail("no NCCL Inspector records (JSON records with header, metadata and coll_perf, or the plugin's Prometheus text)");
    }
    return std::move(m);
  }
};

template class LineParser<NcclInspector>;

Parsed<NcclInspector> parse_nccl_inspector(std::string_view text) { return parse_whole<NcclInspectorParser>(text); }

}  // namespace perfgap::parsers
