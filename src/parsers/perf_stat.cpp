#include "parsers/perf_stat.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <cstdlib>
#include <nlohmann/json.hpp>

#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

bool digit(char c) { return c >= '0' && c <= '9'; }
bool all_digits(std::string_view s) { return !s.empty() && std::all_of(s.begin(), s.end(), digit); }

// The length of a thousands separator at s[i]: ASCII ',' '.' '\'' or a no-break space (U+00A0,
// U+202F, U+2009 thin space), as glibc's locales write them; 0 when there is none.
std::size_t separator_at(std::string_view s, std::size_t i) {
  char c = s[i];
  if (c == ',' || c == '.' || c == '\'') return 1;
  if (s.substr(i, 2) == "\xC2\xA0") return 2;
  if (s.substr(i, 3) == "\xE2\x80\xAF" || s.substr(i, 3) == "\xE2\x80\x89") return 3;
  return 0;
}

// A counter holds 64 bits (< 1.9e19); a larger figure is no count, and would make sums infinite.
std::optional<double> counter_range(double d) {
  if (!std::isfinite(d) || d > 1e20) return std::nullopt;
  return d;
}

// A count as perf's text prints it ("%'.0f", or "%'.2f" for events with a unit): digit groups
// between separators. The last group of an integer has 3 digits in every locale's grouping, so a
// last group of exactly 2 digits is the decimals of "%.2f", whatever character separates them.
std::optional<double> text_count(std::string_view tok) {
  std::vector<std::string_view> groups;
  std::size_t start = 0, i = 0;
  while (i < tok.size()) {
    if (digit(tok[i])) {
      ++i;
      continue;
    }
    std::size_t n = separator_at(tok, i);
    if (n == 0) return std::nullopt;
    groups.push_back(tok.substr(start, i - start));
    i += n;
    start = i;
  }
  groups.push_back(tok.substr(start));
  for (auto g : groups)
    if (g.empty()) return std::nullopt;
  std::string whole(groups[0]);
  if (groups.size() == 1) return counter_range(std::strtod(whole.c_str(), nullptr));
  bool decimals = groups.back().size() == 2;
  std::size_t int_groups = groups.size() - (decimals ? 1 : 0);
  for (std::size_t g = 1; g < int_groups; ++g) {
    // Middle groups: 3 digits (2 in the Indian grouping); the last integer group: 3.
    bool last = g + 1 == int_groups;
    if (groups[g].size() != 3 && (last || groups[g].size() != 2)) return std::nullopt;
    whole += groups[g];
  }
  if (groups[0].size() > 3) return std::nullopt;
  if (decimals) whole += "." + std::string(groups.back());
  return counter_range(std::strtod(whole.c_str(), nullptr));
}

// A plain number as CSV and JSON print it ("%.0f", "%.2f", "%f"): digits with one '.' or ','.
std::optional<double> plain_number(std::string_view tok) {
  tok = sys::trim_ws(tok);
  std::string s(tok);
  std::replace(s.begin(), s.end(), ',', '.');
  double d = 0;
  if (s.empty() || !digit(s[0]) || !tooltext::number_into(s, d) || d < 0) return std::nullopt;
  return counter_range(d);
}

// "1.001234567": the interval stamp ("%6lu.%09lu", never localised).
bool interval_stamp(std::string_view tok) {
  tok = sys::trim_ws(tok);
  auto dot = tok.find('.');
  return dot != std::string_view::npos && dot > 0 && all_digits(tok.substr(0, dot)) && tok.size() - dot - 1 == 9 && all_digits(tok.substr(dot + 1));
}

// The aggregation a row prefix names: CPU3, S0, S0-D1, S0-D0-C12, N1; "" when it is none.
std::string aggregation_of(std::string_view tok) {
  if (tok.size() > 3 && tok.substr(0, 3) == "CPU" && all_digits(tok.substr(3))) return "cpu";
  if (tok.size() > 1 && tok[0] == 'N' && all_digits(tok.substr(1))) return "node";
  if (tok.size() < 2 || tok[0] != 'S') return "";
  auto parts = sys::split(tok, '-');
  const char* kinds[] = {"socket", "die", "core"};
  const char lead[] = {'S', 'D', 'C'};
  if (parts.size() > 3) return "";
  for (std::size_t i = 0; i < parts.size(); ++i)
    if (parts[i].size() < 2 || parts[i][0] != lead[i] || !all_digits(parts[i].substr(1))) return "";
  return kinds[parts.size() - 1];
}

bool known_unit(std::string_view t) {
  static constexpr std::string_view kUnits[] = {"msec", "ms", "ns", "us", "sec", "Joules", "J", "MiB", "MB", "KiB", "kB", "GiB", "GB", "W", "Hz", "MHz"};
  return std::find(std::begin(kUnits), std::end(kUnits), t) != std::end(kUnits);
}

bool modifier_chars(std::string_view s) {
  return !s.empty() && s.find_first_not_of("ukhIGHpPSDWeb") == std::string_view::npos;
}

bool looks_like_event(std::string_view t) { return !t.empty() && (std::isalpha(static_cast<unsigned char>(t[0])) || t[0] == '_'); }
// A CSV or JSON event field: a name, no blanks but a " [pmu]" tag.
bool event_field(std::string_view t) { return looks_like_event(t) && t.find(' ') == t.find(" ["); }

struct Row {
  std::string event, unit;
  std::optional<double> value;
  bool not_supported = false;
  std::optional<double> running_pct, noise_pct;
  std::string aggregation;
  bool interval = false;
};

}  // namespace

std::string perf_stat_event_name(std::string_view raw) {
  auto s = sys::trim_ws(raw);
  if (auto sp = s.find(" ["); sp != std::string_view::npos) s = s.substr(0, sp);  // "dTLB-loads [cpu_core]"
  auto first = s.find('/');
  auto last = s.rfind('/');
  if (first != std::string_view::npos && last > first + 1) {
    auto inner = s.substr(first + 1, last - first - 1);
    if (inner.find('=') == std::string_view::npos) s = inner;  // "cpu_core/dTLB-loads/u"; raw configs stay whole
  }
  if (auto colon = s.rfind(':'); colon != std::string_view::npos && modifier_chars(s.substr(colon + 1))) s = s.substr(0, colon);
  return std::string(s);
}

const PerfStatEvent* PerfStat::find(std::string_view name) const {
  for (const auto& e : events)
    if (e.name == name) return &e;
  return nullptr;
}

template <>
struct ParserState<PerfStat> : FeedsLines<ParserState<PerfStat>> {
  PerfStat out;
  int lineno = 0;
  char csv_sep = 0;
  std::vector<std::string_view> tok;
  std::string bad_value;  // of the last line: a text row's count that is not a number
  // Whether the input is perf stat's at all: its text header, and the lines that were no row
  // (another tool's output, a program's, a JSON document's) against the rows read.
  bool header = false;
  std::size_t foreign = 0;
  void line(std::string_view raw);
  Parsed<PerfStat> finish();
  void add(const Row& r, const char* format);
  void damaged(std::string msg) {
    if (out.damaged.size() < 1000) out.damaged.push_back({std::move(msg), lineno});
  }
  // Each returns true when the line was a row of its format (or a damaged one) and is done.
  bool text_row(std::string_view line);
  bool csv_row(std::string_view line, char sep);
  void json_row(std::string_view line);
};

void ParserState<PerfStat>::add(const Row& r, const char* format) {
  if (out.format.empty()) out.format = format;
  if (out.aggregation.empty()) out.aggregation = r.aggregation;
  out.intervals = out.intervals || r.interval;
  auto name = perf_stat_event_name(r.event);
  PerfStatEvent* e = nullptr;
  for (auto& have : out.events)
    if (have.name == name) e = &have;
  if (!e) {
    if (out.events.size() >= kMaxPerfStatEvents) return damaged(fmt::format("more than {} distinct events", kMaxPerfStatEvents));
    out.events.push_back({});
    e = &out.events.back();
    e->name = name;
    e->unit = r.unit;
    e->line = lineno;
  }
  ++out.rows;
  if (!r.value) {
    ++(r.not_supported ? e->not_supported : e->not_counted);
  } else {
    e->value += *r.value;
    ++e->counted;
    if (r.running_pct) e->min_running_pct = std::min(e->min_running_pct, *r.running_pct);
  }
  if (r.noise_pct) e->noise_pct = std::max(e->noise_pct.value_or(0), *r.noise_pct);
}

bool ParserState<PerfStat>::text_row(std::string_view line) {
  sys::split_ws_into(line, tok);
  const auto n = tok.size();
  if (n < 2) return false;
  if (std::find(tok.begin(), tok.end(), "seconds") != tok.end()) return false;  // time elapsed, user, sys
  Row r;
  std::size_t i = 0;
  auto value_at = [&](std::size_t k) { return k < n && (tok[k] == "<not" || text_count(tok[k])); };
  if (n >= 3 && interval_stamp(tok[0])) {
    r.interval = true;
    i = 1;
  }
  if (i < n) {
    if (auto a = aggregation_of(tok[i]); !a.empty()) {
      r.aggregation = a;
      ++i;
      // --per-socket/die/core/node: the number of CPUs aggregated comes before the count.
      if (a != "cpu" && i + 1 < n && all_digits(tok[i]) && value_at(i + 1)) ++i;
    } else if (!value_at(i) && value_at(i + 1) && tok[i].find('-') != std::string_view::npos) {
      r.aggregation = "thread";  // --per-thread: comm-pid
      ++i;
    }
  }
  if (i >= n) return false;
  bool decimals = false;
  if (tok[i] == "<not") {
    if (i + 1 >= n || (tok[i + 1] != "supported>" && tok[i + 1] != "counted>")) return false;
    r.not_supported = tok[i + 1] == "supported>";
    i += 2;
  } else if (auto v = text_count(tok[i])) {
    r.value = v;
    auto last_sep = tok[i].find_last_not_of("0123456789");
    decimals = last_sep != std::string_view::npos && tok[i].size() - last_sep - 1 == 2;
    ++i;
  } else {
    // Starts like a counter row (a number, then an event name) but the number is not one:
    // damaged, unless the line is a CSV row (line() tries that first).
    if (digit(tok[i][0]) && i + 1 < n && looks_like_event(tok[i + 1])) bad_value = std::string(tok[i].substr(0, 40));
    return false;
  }
  std::size_t end = i;
  while (end < n && tok[end] != "#" && tok[end][0] != '(') ++end;
  std::size_t words = end - i;
  if (words == 0) return false;
  // A unit is a word ("msec", "Joules", "MiB"): "0.6%" after a count is a perf report's share,
  // no unit of perf stat's.
  bool unit = words >= 2 && tok[i + 1][0] != '[' && (known_unit(tok[i]) || (decimals && std::isalpha(static_cast<unsigned char>(tok[i][0]))));
  if (unit) r.unit = std::string(tok[i++]);
  if (!looks_like_event(tok[i])) return false;
  r.event = std::string(tok[i]);
  // The tail: "( +- 1.23% )" (-r) and "(66.67%)" (the share of time counted), any locale's comma.
  for (std::size_t k = end; k < n; ++k) {
    auto t = tok[k];
    if (t == "+-" && k + 1 < n && tok[k + 1].size() > 1 && tok[k + 1].back() == '%') r.noise_pct = plain_number(tok[k + 1].substr(0, tok[k + 1].size() - 1));
    if (t.size() > 3 && t.front() == '(' && t.substr(t.size() - 2) == "%)") r.running_pct = plain_number(t.substr(1, t.size() - 3));
  }
  add(r, "text");
  return true;
}

bool ParserState<PerfStat>::csv_row(std::string_view line, char sep) {
  auto f = sys::split(line, sep);
  for (auto& x : f) x = sys::trim_ws(x);
  const std::size_t n = f.size();
  std::size_t j = (n > 0 && f[0] == "summary") ? 1 : 0;
  auto bad = [](std::string_view s) { return s == "<not supported>" || s == "<not counted>"; };
  auto unit_ok = [](std::string_view s) { return s.empty() || std::isalpha(static_cast<unsigned char>(s[0])); };
  for (std::size_t i = j; i + 2 < n && i <= j + 4; ++i) {
    Row r;
    std::size_t ev = 0;  // the event's field
    if (i + 3 < n && all_digits(f[i]) && f[i + 1].size() == 2 && all_digits(f[i + 1]) && !f[i + 2].empty() && unit_ok(f[i + 2]) &&
        event_field(f[i + 3])) {
      // "%.2f" in a locale with a decimal comma, split by -x,: "0,94,msec,task-clock".
      r.value = plain_number(std::string(f[i]) + "." + std::string(f[i + 1]));
      ev = i + 3;
    } else if ((bad(f[i]) || plain_number(f[i])) && unit_ok(f[i + 1]) && event_field(f[i + 2])) {
      if (bad(f[i])) r.not_supported = f[i] == "<not supported>";
      else r.value = plain_number(f[i]);
      ev = i + 2;
    } else {
      continue;
    }
    r.unit = std::string(f[ev - 1]);
    r.event = std::string(f[ev]);
    // The prefix: [time,] [aggregation id [,cpus]]
    std::size_t p = j;
    if (p < i && interval_stamp(f[p])) {
      r.interval = true;
      ++p;
    }
    if (p < i) {
      r.aggregation = aggregation_of(f[p]);
      if (r.aggregation.empty()) r.aggregation = "thread";
    }
    // After the event: [cgroup,] [noise%,] run, enabled%, metric, metric unit.
    std::size_t k = ev + 1;
    if (k < n && !f[k].empty() && f[k].back() != '%' && !plain_number(f[k])) ++k;  // cgroup
    if (k < n && f[k].size() > 1 && f[k].back() == '%') {
      // -r: "1.76%" ("1,76%" split in two by a decimal comma)
      r.noise_pct = plain_number(f[k].substr(0, f[k].size() - 1));
      ++k;
    } else if (k + 1 < n && all_digits(f[k]) && f[k + 1].size() == 3 && f[k + 1].back() == '%' && all_digits(f[k + 1].substr(0, 2))) {
      r.noise_pct = plain_number(std::string(f[k]) + "." + std::string(f[k + 1].substr(0, 2)));
      k += 2;
    }
    if (k + 1 < n && all_digits(f[k])) {
      std::string pct(f[k + 1]);
      if (all_digits(pct) && k + 2 < n && f[k + 2].size() == 2 && all_digits(f[k + 2])) pct += "." + std::string(f[k + 2]);
      r.running_pct = plain_number(pct);
    }
    add(r, "csv");
    return true;
  }
  return false;
}

namespace {
// A JSON line of perf in a locale with a decimal comma ("pcnt-running" : 100,00): the commas
// between two digits outside strings made points, so the line parses.
std::string decimal_points(std::string_view s) {
  std::string o(s);
  bool in_str = false;
  for (std::size_t i = 0; i < o.size(); ++i) {
    if (o[i] == '"' && (i == 0 || o[i - 1] != '\\')) in_str = !in_str;
    if (!in_str && o[i] == ',' && i > 0 && i + 1 < o.size() && digit(o[i - 1]) && digit(o[i + 1])) o[i] = '.';
  }
  return o;
}
}  // namespace

void ParserState<PerfStat>::json_row(std::string_view line) {
  auto j = nlohmann::json::parse(line, nullptr, false);
  if (j.is_discarded()) j = nlohmann::json::parse(decimal_points(line), nullptr, false);
  if (j.is_discarded() || !j.is_object()) return damaged("not a JSON object");
  auto ev = j.find("event");
  if (ev == j.end()) return;  // the metric-only header and rows
  auto cv = j.find("counter-value");
  if (!ev->is_string() || cv == j.end() || !cv->is_string()) return damaged("a JSON row without a string event and counter-value");
  Row r;
  r.event = ev->get<std::string>();
  if (!looks_like_event(r.event)) return damaged(fmt::format("event '{}' is not an event name", r.event.substr(0, 40)));
  const auto& c = cv->get_ref<const std::string&>();
  if (c == "<not supported>" || c == "<not counted>") {
    r.not_supported = c == "<not supported>";
  } else if (auto v = plain_number(c)) {
    r.value = v;
  } else {
    return damaged(fmt::format("counter-value '{}' is not a number", c.substr(0, 40)));
  }
  auto num = [&](const char* key) -> std::optional<double> {
    auto it = j.find(key);
    if (it == j.end()) return std::nullopt;
    if (it->is_number()) return it->get<double>();
    if (it->is_string()) return plain_number(it->get<std::string>());
    return std::nullopt;
  };
  if (auto u = j.find("unit"); u != j.end() && u->is_string()) r.unit = u->get<std::string>();
  r.running_pct = num("pcnt-running");
  r.noise_pct = num("variance");
  r.interval = j.contains("interval");
  for (const char* a : {"cpu", "socket", "die", "core", "node", "thread"})
    if (j.contains(a)) r.aggregation = a;
  add(r, "json");
}

void ParserState<PerfStat>::line(std::string_view raw) {
  ++lineno;
  auto line = sys::trim_ws(tooltext::chomp(raw));
  if (line.empty()) return;
  if (line.find("Performance counter stats for") != std::string_view::npos) {
    header = true;
    // "... 'true' (3 runs):"
    auto p = line.rfind(" runs)");
    auto open = p == std::string_view::npos ? p : line.rfind('(', p);
    if (open != std::string_view::npos)
      if (auto k = sys::to_int<int>(line.substr(open + 1, p - open - 1)); k && *k > 0) out.runs = *k;
    return;
  }
  if (line[0] == '#') return;  // the interval header
  if (line[0] == '{') {
    const auto rows = out.rows;
    json_row(line);
    if (out.rows == rows && line.find("\"metric-value\"") == std::string_view::npos) ++foreign;  // not perf's metric-only line either
    return;
  }
  bad_value.clear();
  if (text_row(line)) return;
  if (csv_sep && csv_row(line, csv_sep)) return;
  if (!csv_sep)
    for (char sep : {',', ';', '\t', '|'})
      if (csv_row(line, sep)) {
        csv_sep = sep;
        return;
      }
  if (!bad_value.empty()) damaged(fmt::format("counter value '{}' is not a number", bad_value));
  // perf stat's own lines that are no row: the times elapsed, user and sys.
  if (line.find("seconds") == std::string_view::npos) ++foreign;
}

Parsed<PerfStat> ParserState<PerfStat>::finish() {
  if (out.rows == 0) {
    if (!out.damaged.empty()) return parse_fail("no perf stat counter row could be read: " + out.damaged.front().message, out.damaged.front().line);
    return parse_fail("no perf stat counter rows (default text, -x CSV or -j JSON)");
  }
  // A few lines of another tool's output read as counter rows ("4, true, cutlass::..." in a
  // Kineto trace, "   2 ranks" in a report): without perf's text header, perf stat output is
  // its rows (-x CSV, -j JSON, -I intervals), so rows that are fewer than the other lines are no
  // perf stat output.
  if (!header && static_cast<std::size_t>(out.rows) < foreign)
    return parse_fail(fmt::format("not perf stat output: {} line{} of other text and {} that read{} like a counter row, without perf stat's "
                                  "'Performance counter stats for' header (default text, -x CSV or -j JSON)",
                                  foreign, foreign == 1 ? "" : "s", out.rows, out.rows == 1 ? "s" : ""));
  return std::move(out);
}

template class LineParser<PerfStat>;

Parsed<PerfStat> parse_perf_stat(std::string_view text) { return parse_whole<PerfStatParser>(text); }

}  // namespace perfgap::parsers
