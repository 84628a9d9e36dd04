#include "parsers/steps.hpp"

#include <algorithm>
#include <cmath>
#include <map>
#include <memory>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
// Named, not anonymous: ParserState (external linkage, a template specialization) holds
// these types, and GCC warns (-Wsubobject-linkage) when such a type is file-local.
namespace steps_detail {

using sys::starts_with;

struct Key {
  const char* name;
  double scale;  // to milliseconds
};
constexpr Key kKeys[] = {{"step_time_ms", 1}, {"iteration_time_ms", 1}, {"time_ms", 1}, {"step_time_s", 1000}, {"time_s", 1000}};

bool good(double v) { return std::isfinite(v) && v > 0; }
bool digit(char c) { return c >= '0' && c <= '9'; }

// A number starting at `at` (after blanks): digits, '.', an exponent, and thousands
// separators ("1,116", "529,837": a comma followed by exactly three digits). `end` is set
// past it.
std::optional<double> number_at(std::string_view s, std::size_t at, std::size_t* end = nullptr) {
  while (at < s.size() && (s[at] == ' ' || s[at] == '\t')) ++at;
  std::string tok;
  std::size_t i = at;
  if (i < s.size() && (s[i] == '-' || s[i] == '+')) tok += s[i++];
  bool any = false;
  for (; i < s.size(); ++i) {
    char c = s[i];
    if (digit(c) || c == '.') {
      tok += c;
      any = any || digit(c);
    } else if (c == ',' && any && tok.find_first_of(".eE") == std::string::npos && i + 3 < s.size() && digit(s[i + 1]) &&
               digit(s[i + 2]) && digit(s[i + 3]) && (i + 4 >= s.size() || !digit(s[i + 4]))) {
      continue;  // thousands separator
    } else if ((c == 'e' || c == 'E') && any && i + 1 < s.size() && (digit(s[i + 1]) || s[i + 1] == '-' || s[i + 1] == '+')) {
      tok += c;
      if (s[i + 1] == '-' || s[i + 1] == '+') tok += s[++i];
    } else {
      break;
    }
  }
  if (!any) return std::nullopt;
  if (end) *end = i;
  return tooltext::number(tok);
}

// The integer right after `at` (blanks skipped), or -1.
long integer_at(std::string_view s, std::size_t at) {
  while (at < s.size() && s[at] == ' ') ++at;
  std::size_t b = at;
  while (at < s.size() && digit(s[at])) ++at;
  if (at == b || at - b > 15) return -1;
  return sys::to_int<long>(s.substr(b, at - b)).value_or(-1);
}

// `needle` at a word start (not preceded by a letter, digit or '_').
std::size_t find_word(std::string_view s, std::string_view needle, std::size_t from = 0) {
  for (auto p = s.find(needle, from); p != std::string_view::npos; p = s.find(needle, p + 1)) {
    if (p == 0) return p;
    char c = s[p - 1];
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return p;
  }
  return std::string_view::npos;
}

// Seconds since the epoch of the first "YYYY-MM-DD HH:MM:SS[,.fff]" (or 'T' between) in s.
std::optional<double> timestamp(std::string_view s) {
  for (std::size_t i = 0; i + 19 <= s.size(); ++i) {
    auto d = [&](std::size_t k) { return digit(s[i + k]); };
    if (!(d(0) && d(1) && d(2) && d(3) && s[i + 4] == '-' && d(5) && d(6) && s[i + 7] == '-' && d(8) && d(9) &&
          (s[i + 10] == ' ' || s[i + 10] == 'T') && d(11) && d(12) && s[i + 13] == ':' && d(14) && d(15) && s[i + 16] == ':' && d(17) &&
          d(18)))
      continue;
    auto num = [&](std::size_t k, std::size_t n) { return std::stoi(std::string(s.substr(i + k, n))); };
    int y = num(0, 4), mo = num(5, 2), da = num(8, 2), h = num(11, 2), mi = num(14, 2), se = num(17, 2);
    if (mo < 1 || mo > 12 || da < 1 || da > 31 || h > 23 || mi > 59 || se > 60) continue;
    // Days from the civil date (Howard Hinnant's algorithm).
    y -= mo <= 2;
    long era = (y >= 0 ? y : y - 399) / 400;
    long yoe = y - era * 400;
    long doy = (153 * (mo + (mo > 2 ? -3 : 9)) + 2) / 5 + da - 1;
    long doe = yoe * 365 + yoe / 4 - yoe / 100 + doy;
    double t = static_cast<double>(era * 146097 + doe - 719468) * 86400.0 + h * 3600 + mi * 60 + se;
    std::size_t f = i + 19;
    if (f + 1 < s.size() && (s[f] == ',' || s[f] == '.') && digit(s[f + 1])) {
      double scale = 0.1;
      for (++f; f < s.size() && digit(s[f]) && scale > 1e-9; ++f, scale /= 10) t += (s[f] - '0') * scale;
    }
    return t;
  }
  return std::nullopt;
}

// ---- the recognisers -------------------------------------------------------------------

// A field's name: letters, no digit (a timestamp, an srun label or a value is no name).
bool field_name(std::string_view k) {
  return !k.empty() && k.size() <= 64 && std::none_of(k.begin(), k.end(), digit) &&
         std::any_of(k.begin(), k.end(), [](char c) { return std::isalpha(static_cast<unsigned char>(c)) != 0; });
}

// The name of a step line's last field: of its last cell between '|' or ',' that has one (the
// text before its first ':' or '='), else its last blank-separated word ending in ':'
// (torchtitan's "mfu:"); empty when none.
std::string_view last_field(std::string_view line) {
  std::size_t e = line.size();
  for (std::size_t i = line.size(); i-- > 0;) {
    if (line[i] != '|' && line[i] != ',' && i != 0) continue;
    const std::size_t b = line[i] == '|' || line[i] == ',' ? i + 1 : 0;
    auto cell = line.substr(b, e - b);
    if (auto c = cell.find_first_of(":="); c != std::string_view::npos)
      if (auto k = sys::trim_ws(cell.substr(0, c)); field_name(k)) return k;
    e = i;
  }
  auto words = sys::split_ws(line);
  for (auto w = words.rbegin(); w != words.rend(); ++w)
    if (w->size() > 1 && w->back() == ':' && field_name(w->substr(0, w->size() - 1))) return *w;
  return {};
}

// Whether `line` holds the field `name` with a value after it.
bool has_field(std::string_view line, std::string_view name) {
  auto p = line.rfind(name);
  if (p == std::string_view::npos) return false;
  p += name.size();
  while (p < line.size() && line[p] == ' ') ++p;
  if (name.back() != ':') {
    if (p >= line.size() || (line[p] != ':' && line[p] != '=')) return false;
    ++p;
  }
  while (p < line.size() && line[p] == ' ') ++p;
  return p < line.size();
}

class Recogniser {
 public:
  explicit Recogniser(StepLayout l) { log.layout = l; }
  virtual ~Recogniser() = default;
  // Whether the line is this layout's; it may add a record or a damaged line.
  virtual bool feed(std::string_view line, int lineno) = 0;
  virtual void finish() {}
  StepLog log;
  // The line fed is the file's last and ends without a newline: the write may have been cut
  // there (a job killed, a log copied while written), and a record on it is used only when it
  // carries what the other records carry.
  bool open_line = false;

 protected:
  // A record read from `line`, its value ending at `value_end` (npos: the value is not in the
  // line's text, as torchtitan's timestamps).
  void add(double value, long iteration, int lineno, bool skipped, std::string_view line, std::size_t value_end) {
    if (auto why = cut_short(line, value_end)) return damaged("cut short: " + *why, lineno);
    log.records.push_back({value, iteration, lineno, skipped});
  }
  // The record just added: its global batch size and consumed samples where the line names
  // them (`batch_key` and `consumed_key`, a ':' or '=' after a name that does not end in one).
  void step_batch(std::string_view line, int lineno, std::string_view batch_key, std::string_view consumed_key) {
    if (log.records.empty() || log.records.back().line != lineno) return;  // the line's record was not taken
    auto value_after = [&](std::string_view key) -> double {
      auto p = find_word(line, key);
      if (p == std::string_view::npos) return -1;
      p += key.size();
      while (p < line.size() && line[p] == ' ') ++p;
      if (key.back() != ':') {
        if (p >= line.size() || (line[p] != ':' && line[p] != '=')) return -1;
        ++p;
      }
      auto v = number_at(line, p);
      return v && *v >= 0 && *v < 1e15 ? *v : -1;
    };
    log.records.back().global_batch = value_after(batch_key);
    log.records.back().consumed_samples = value_after(consumed_key);
  }
  void damaged(std::string msg, int lineno) {
    if (open_line && !msg.starts_with("cut short")) msg = "cut short: the file's last line ends without a newline (" + msg + ")";
    log.damaged.push_back({std::move(msg), lineno});
  }
  // Why the record of `line` is cut short, or nullopt. Complete lines (all but an open last
  // one) teach the field every record ends with (Megatron's "number of nan iterations", NeMo's
  // "consumed_samples") and whether text follows the value: an open line without that field
  // and its value, or ending at the value where the others go on, was cut.
  std::optional<std::string> cut_short(std::string_view line, std::size_t value_end) {
    const bool tail = value_end == std::string_view::npos || (value_end < line.size() && !sys::trim_ws(line.substr(value_end)).empty());
    if (!open_line) {
      const auto last = last_field(line);
      if (complete_++ == 0) last_field_ = last;
      else if (!last_field_.empty() && last != last_field_) last_field_.clear();  // records end differently: no rule
      all_tail_ = all_tail_ && tail;
      return std::nullopt;
    }
    if (complete_ == 0) return std::nullopt;  // nothing to hold it to
    if (!last_field_.empty() && !has_field(line, last_field_))
      return fmt::format("the file's last line ends without a newline and without the '{}' field every other record ends with", last_field_);
    if (!tail && all_tail_) return std::string("the file's last line ends without a newline right after the value, where every other record goes on");
    return std::nullopt;
  }

 private:
  std::size_t complete_ = 0;  // records on complete lines
  std::string last_field_;    // the name of the field they all end with; empty: none in common
  bool all_tail_ = true;      // text follows the value in all of them
};

class Megatron : public Recogniser {
 public:
  Megatron() : Recogniser(StepLayout::megatron) { log.field = "elapsed time per iteration (ms)"; }
  bool feed(std::string_view line, int lineno) override {
    auto p = line.find("elapsed time per iteration (ms):");
    if (p == std::string_view::npos) return false;
    std::size_t end = 0;
    auto v = number_at(line, p + 32, &end);
    if (!v || !good(*v)) {
      damaged("unreadable 'elapsed time per iteration (ms)' value", lineno);
      return true;
    }
    long it = -1;
    if (auto q = find_word(line, "iteration "); q != std::string_view::npos && q < p) it = integer_at(line, q + 10);
    bool skipped = false;
    if (auto s = line.find("number of skipped iterations:"); s != std::string_view::npos) skipped = integer_at(line, s + 29) > 0;
    add(*v, it, lineno, skipped, line, end);
    step_batch(line, lineno, "global batch size:", "consumed samples:");
    return true;
  }
};

class Nemo : public Recogniser {
 public:
  Nemo() : Recogniser(StepLayout::nemo) { log.field = "train_step_timing in s"; }
  bool feed(std::string_view line, int lineno) override {
    auto p = line.find("train_step_timing in s");
    if (p == std::string_view::npos) return false;
    std::size_t i = p + 22;
    while (i < line.size() && line[i] == ' ') ++i;
    if (i >= line.size() || (line[i] != ':' && line[i] != '=')) return false;
    std::size_t end = 0;
    auto v = number_at(line, i + 1, &end);
    if (!v || !good(*v)) {
      damaged("unreadable 'train_step_timing in s' value", lineno);
      return true;
    }
    long it = -1;
    if (auto g = line.find("global_step"); g != std::string_view::npos) {
      std::size_t k = g + 11;
      while (k < line.size() && line[k] == ' ') ++k;
      if (k < line.size() && (line[k] == ':' || line[k] == '='))
        if (auto n = number_at(line, k + 1); n && *n >= 0 && *n < 1e15) it = static_cast<long>(*n);
    } else if (auto q = find_word(line, "iteration "); q != std::string_view::npos) {
      it = integer_at(line, q + 10);
    }
    // A progress bar redraws the same step: one record per step.
    if (it >= 0 && !log.records.empty() && log.records.back().iteration == it) return true;
    add(*v * 1000, it, lineno, false, line, end);
    step_batch(line, lineno, "global_batch_size", "consumed_samples");
    return true;
  }
};

class Nanochat : public Recogniser {
 public:
  Nanochat() : Recogniser(StepLayout::nanochat) { log.field = "dt"; }
  bool feed(std::string_view line, int lineno) override {
    auto p = find_word(line, "dt: ");
    if (p == std::string_view::npos) return false;
    std::size_t end = 0;
    auto v = number_at(line, p + 4, &end);
    if (!v) return false;
    auto unit = line.substr(end, 2);
    double scale;
    if (unit == "ms") scale = 1;
    else if (!unit.empty() && unit[0] == 's' && (unit.size() == 1 || !std::isalpha(static_cast<unsigned char>(unit[1])))) scale = 1000;
    else if (open_line && (end == line.size() || line.substr(end) == "m")) {
      damaged("cut short: the file's last line ends without a newline inside the 'dt' value (no unit)", lineno);
      return true;
    } else return false;
    if (!good(*v)) {
      damaged("unreadable 'dt' value", lineno);
      return true;
    }
    long it = -1;
    if (auto q = find_word(line, "step "); q != std::string_view::npos && q < p) it = integer_at(line, q + 5);
    add(*v * scale, it, lineno, false, line, end + (scale == 1 ? 2 : 1));
    return true;
  }
};

class HfDict : public Recogniser {
 public:
  HfDict() : Recogniser(StepLayout::hf_dict) {}
  bool feed(std::string_view line, int lineno) override {
    auto b = line.find("{'");
    if (b == std::string_view::npos) return false;
    auto d = line.substr(b);
    auto value_of = [&](std::string_view key) -> std::optional<std::size_t> {
      auto k = d.find(key);
      if (k == std::string_view::npos) return std::nullopt;
      return k + key.size();
    };
    bool summary = d.find("'train_samples_per_second'") != std::string_view::npos || d.find("'train_steps_per_second'") != std::string_view::npos;
    static constexpr const char* kStepKeys[] = {"'train_step_runtime':", "'step_time':", "'train_runtime':"};
    for (const char* key : kStepKeys) {
      if (summary && std::string_view(key) == "'train_runtime':") continue;  // the whole run's time
      auto at = value_of(key);
      if (!at) continue;
      auto v = number_at(d, *at);
      std::string name(key + 1, std::string_view(key).size() - 3);
      if (!v || !good(*v)) {
        damaged("unreadable '" + name + "' value", lineno);
        return true;
      }
      long it = -1;
      for (const char* ik : {"'step':", "'global_step':"})
        if (auto i = value_of(ik)) {
          it = integer_at(d, *i);
          break;
        }
      if (log.field.empty()) log.field = "'" + name + "'";
      // The Trainer prints each dict whole: one without its closing brace is cut.
      if (open_line && d.find('}') == std::string_view::npos) {
        damaged("cut short: the file's last line ends without a newline inside a Trainer dict (no closing '}')", lineno);
        return true;
      }
      add(*v * 1000, it, lineno, false, d, std::string_view::npos);
      return true;
    }
    // Other Trainer dicts (loss, learning rate, the end-of-run summary) are this layout's
    // too, without a step time.
    return summary || d.find("'epoch':") != std::string_view::npos || d.find("'loss':") != std::string_view::npos;
  }
};

class Torchtitan : public Recogniser {
 public:
  Torchtitan() : Recogniser(StepLayout::torchtitan) { log.field = "timestamps of consecutive 'step:' lines"; }
  bool feed(std::string_view line, int lineno) override {
    auto p = find_word(line, "step:");
    if (p == std::string_view::npos) return false;
    long step = integer_at(line, p + 5);
    if (step < 0) return false;
    auto rest = line.substr(p);
    if (find_word(rest, "loss:") == std::string_view::npos && find_word(rest, "tps:") == std::string_view::npos &&
        find_word(rest, "wps:") == std::string_view::npos)
      return false;
    auto t = timestamp(line.substr(0, p));
    if (!t) return false;  // without timestamps only its throughput (tps) can be read
    if (prev_ && step > prev_->second && *t >= prev_->first) {
      double ms = (*t - prev_->first) * 1000 / static_cast<double>(step - prev_->second);
      if (good(ms)) add(ms, step, lineno, false, line, std::string_view::npos);
      else damaged("the same timestamp as the previous step line: the step time is below the timestamps' resolution", lineno);
    }
    prev_ = std::make_pair(*t, step);
    return true;
  }

 private:
  std::optional<std::pair<double, long>> prev_;
};

class JsonLines : public Recogniser {
 public:
  JsonLines() : Recogniser(StepLayout::jsonl) {}
  bool feed(std::string_view line, int lineno) override {
    if (line.empty() || line.front() != '{') return false;
    nlohmann::json j;
    try {
      j = nlohmann::json::parse(line);
    } catch (const std::exception&) {
      if (line.find("{'") != std::string_view::npos) return false;  // a python dict
      if (!log.records.empty() || line.find("time") != std::string_view::npos) {
        damaged(open_line ? "cut short: the file's last line ends without a newline inside a JSON record" : "JSON record cut short or invalid", lineno);
        return true;
      }
      return false;
    }
    if (!j.is_object()) return false;
    for (const auto& k : kKeys) {
      if (!j.contains(k.name)) continue;
      const auto& v = j[k.name];
      if (!v.is_number() || !good(v.get<double>())) {
        damaged(std::string("non-numeric ") + k.name, lineno);
        return true;
      }
      long it = -1;
      for (const char* ik : {"step", "iteration", "iter"})
        if (j.contains(ik) && j[ik].is_number_integer()) it = j[ik].get<long>();
      if (log.field.empty()) log.field = k.name;
      add(v.get<double>() * k.scale, it, lineno, false, line, std::string_view::npos);
      return true;
    }
    return true;  // a JSON object without a step time (a config echo)
  }
};

class Csv : public Recogniser {
 public:
  Csv() : Recogniser(StepLayout::csv) {}
  bool feed(std::string_view line, int lineno) override {
    bool commas = line.find(',') != std::string_view::npos;
    if (col_ < 0) {
      if (!commas) return false;
      // A header naming a known column.
      auto cells = sys::split(line, ',');
      for (const auto& k : kKeys) {
        for (std::size_t i = 0; i < cells.size(); ++i) {
          auto c = sys::trim_ws(cells[i]);
          if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
          if (c == k.name) {
            col_ = static_cast<int>(i);
            scale_ = k.scale;
            log.field = k.name;
            cols_ = cells.size();
            return true;
          }
        }
      }
      return false;
    }
    if (!commas) {
      // A bare number after the header: a row without separators.
      if (!tooltext::number(line)) return false;
      damaged("CSV row without separators", lineno);
      return true;
    }
    auto cells = sys::split(line, ',');
    // A row of this table has its columns, or (cut short) fewer cells that are all plain
    // values; a line with commas in another shape (a log line) is not this layout's.
    auto plain = [&] {
      for (auto c : cells) {
        c = sys::trim_ws(c);
        if (!c.empty() && !tooltext::number(c)) return false;
      }
      return true;
    };
    auto number_cell = [&](std::size_t i) { return i < cells.size() && tooltext::number(sys::trim_ws(cells[i])).has_value(); };
    if (cells.size() == cols_) {
      if (!number_cell(0) && !number_cell(static_cast<std::size_t>(col_))) return false;  // no value where the table has them
    } else if (!(cells.size() < cols_ && plain())) {
      return false;
    }
    if (open_line && cells.size() < cols_) {
      damaged(fmt::format("cut short: the file's last line ends without a newline after {} of the header's {} columns", cells.size(), cols_), lineno);
      return true;
    }
    if (cells.size() <= static_cast<std::size_t>(col_)) {
      damaged("CSV row with " + std::to_string(cells.size()) + " of " + std::to_string(cols_) + " columns", lineno);
      return true;
    }
    auto v = tooltext::number(sys::trim_ws(cells[static_cast<std::size_t>(col_)]));
    if (!v || !good(*v)) {
      damaged("unreadable " + log.field + " value", lineno);
      return true;
    }
    long it = -1;
    if (auto first = sys::trim_ws(cells[0]); col_ != 0 && tooltext::is_integer(first)) it = integer_at(first, 0);
    add(*v * scale_, it, lineno, false, line, std::string_view::npos);
    return true;
  }

 private:
  int col_ = -1;
  double scale_ = 1;
  std::size_t cols_ = 0;
};

// The throughput spellings of the logs, each with its unit (one table: the throughput layout
// reads lines with it, and throughput_figure reads a figure such as --reference's).
struct ThroughputPattern {
  const char* needle;
  const char* unit;
  bool before;  // the number precedes the needle ("10.9 samples/sec")
};
constexpr ThroughputPattern kThroughputPatterns[] = {
    {"CurrSamplesPerSec=", "samples/s", false}, {"samples/sec:", "samples/s", false}, {"samples/s:", "samples/s", false},
    {"samples_per_second:", "samples/s", false}, {"tokens/sec:", "tokens/s", false},   {"tokens/s:", "tokens/s", false},
    {"tok/sec:", "tokens/s", false},             {"tok/s:", "tokens/s", false},        {"tokens_per_second:", "tokens/s", false},
    {"tps:", "tokens/s", false},                 {"samples/sec", "samples/s", true},   {"samples/s", "samples/s", true},
    {"tokens/sec", "tokens/s", true},            {"tokens/s", "tokens/s", true},       {"tok/sec", "tokens/s", true},
    {"tok/s", "tokens/s", true},
};

class Throughput : public Recogniser {
 public:
  Throughput() : Recogniser(StepLayout::throughput) { log.throughput = true; }
  bool feed(std::string_view line, int lineno) override {
    for (const auto& pat : kThroughputPatterns) {
      std::string_view needle = pat.needle;
      auto p = find_word(line, needle);
      if (p == std::string_view::npos) continue;
      std::optional<double> v;
      std::size_t value_end = p + needle.size();
      if (pat.before) {
        // Word end after the needle, and a number right before it.
        auto after = p + needle.size();
        if (after < line.size() && (std::isalnum(static_cast<unsigned char>(line[after])) || line[after] == '_')) continue;
        std::size_t e = p;
        while (e > 0 && line[e - 1] == ' ') --e;
        std::size_t b = e;
        while (b > 0 && (digit(line[b - 1]) || line[b - 1] == '.' || line[b - 1] == ',')) --b;
        if (b == e) continue;
        std::size_t end = 0;
        v = number_at(line, b, &end);
        if (!v || end != e) continue;
      } else {
        v = number_at(line, p + needle.size(), &value_end);
        if (!v) {
          damaged(std::string("unreadable '") + pat.needle + "' value", lineno);
          return true;
        }
      }
      if (!good(*v)) {
        damaged(std::string("non-positive throughput at '") + pat.needle + "'", lineno);
        return true;
      }
      long it = -1;
      for (const char* ik : {"step ", "step: ", "step=", "Batch ", "iteration ", "iter "})
        if (auto q = find_word(line, ik); q != std::string_view::npos && q < p) {
          it = integer_at(line, q + std::string_view(ik).size());
          if (it >= 0) break;
        }
      if (auto why = cut_short(line, value_end)) {
        damaged("cut short: " + *why, lineno);
        return true;
      }
      auto& u = by_unit_[pat.unit];
      if (u.field.empty()) u.field = pat.needle;
      u.records.push_back({*v, it, lineno, false});
      return true;
    }
    return false;
  }
  void finish() override {
    const Unit* best = nullptr;
    std::string unit;
    for (const auto& [name, u] : by_unit_)
      if (!best || u.records.size() > best->records.size()) {
        best = &u;
        unit = name;
      }
    if (!best) return;
    log.unit = unit;
    log.field = best->field;
    log.records = best->records;
  }

 private:
  struct Unit {
    std::string field;
    std::vector<StepRecord> records;
  };
  std::map<std::string, Unit> by_unit_;
};

std::unique_ptr<Recogniser> make(StepLayout l) {
  switch (l) {
    case StepLayout::megatron: return std::make_unique<Megatron>();
    case StepLayout::nemo: return std::make_unique<Nemo>();
    case StepLayout::nanochat: return std::make_unique<Nanochat>();
    case StepLayout::hf_dict: return std::make_unique<HfDict>();
    case StepLayout::torchtitan: return std::make_unique<Torchtitan>();
    case StepLayout::jsonl: return std::make_unique<JsonLines>();
    case StepLayout::csv: return std::make_unique<Csv>();
    case StepLayout::throughput: return std::make_unique<Throughput>();
  }
  return nullptr;
}

// One line split at '\r' as well, without ANSI colour codes, trimmed: f(segment) for each
// non-empty one. `clean` is scratch space kept between lines.
template <class F>
void for_each_segment(std::string_view raw, std::string& clean, F&& f) {
  auto line = tooltext::chomp(raw);
  if (line.size() > 65536) line = line.substr(0, 65536);
  std::size_t pos = 0;
  while (pos <= line.size()) {
    auto cr = line.find('\r', pos);
    auto seg = line.substr(pos, cr == std::string_view::npos ? std::string_view::npos : cr - pos);
    pos = cr == std::string_view::npos ? line.size() + 1 : cr + 1;
    if (seg.find('\x1b') != std::string_view::npos) {
      clean.clear();
      for (std::size_t i = 0; i < seg.size(); ++i) {
        if (seg[i] == '\x1b' && i + 1 < seg.size() && seg[i + 1] == '[') {
          std::size_t j = i + 2;
          while (j < seg.size() && !(seg[j] >= '@' && seg[j] <= '~')) ++j;
          i = j;
          continue;
        }
        clean += seg[i];
      }
      seg = clean;
    }
    const bool last = pos > line.size();
    seg = sys::trim_ws(seg);
    if (!seg.empty()) f(seg, last);
  }
}

// The recognisers of a table, fed line by line: the first that claims a line owns it.
struct Run {
  std::vector<StepLayout> layouts;
  std::vector<std::unique_ptr<Recogniser>> recognisers;
  std::vector<int> claimed, last_line;
  std::vector<std::optional<StepLayout>>* owners = nullptr;
  int lineno = 0;
  std::string clean;

  explicit Run(const std::vector<StepLayout>& ls, std::vector<std::optional<StepLayout>>* own = nullptr) : layouts(ls), owners(own) {
    for (auto l : layouts) recognisers.push_back(make(l));
    claimed.assign(layouts.size(), 0);
    last_line.assign(layouts.size(), 0);
  }
  void feed(std::string_view lines) {
    // Pieces are whole lines: one that does not end in '\n' ends the input.
    const char* open_end = !lines.empty() && lines.back() != '\n' ? lines.data() + lines.size() : nullptr;
    for_each_line(lines, [&](std::string_view raw) {
      ++lineno;
      const bool open = raw.data() + raw.size() == open_end;
      for_each_segment(raw, clean, [&](std::string_view seg, bool last) { segment(seg, open && last); });
    });
  }
  void segment(std::string_view seg, bool open) {
    for (std::size_t i = 0; i < recognisers.size(); ++i) {
      recognisers[i]->open_line = open;
      if (!recognisers[i]->feed(seg, lineno)) continue;
      if (last_line[i] != lineno) ++claimed[i];
      last_line[i] = lineno;
      if (owners) {
        if (owners->size() < static_cast<std::size_t>(lineno)) owners->resize(static_cast<std::size_t>(lineno));
        (*owners)[static_cast<std::size_t>(lineno) - 1] = layouts[i];
      }
      break;
    }
  }
  void finish() {
    for (auto& rec : recognisers) rec->finish();
  }
};

}  // namespace steps_detail

std::optional<std::pair<double, std::string>> throughput_figure(std::string_view text) {
  for (const auto& pat : steps_detail::kThroughputPatterns) {
    const std::string_view unit = pat.needle;
    if (!pat.before || !text.ends_with(unit)) continue;
    std::string_view n = text.substr(0, text.size() - unit.size());
    while (!n.empty() && n.back() == ' ') n.remove_suffix(1);
    if (auto v = tooltext::number(n)) return std::pair{*v, std::string(pat.unit)};
  }
  return std::nullopt;
}
using namespace steps_detail;

const std::vector<StepLayout>& step_layouts() {
  static const std::vector<StepLayout> order = {StepLayout::megatron, StepLayout::nemo,  StepLayout::nanochat, StepLayout::hf_dict,
                                                StepLayout::torchtitan, StepLayout::jsonl, StepLayout::csv,      StepLayout::throughput};
  return order;
}

const char* step_layout_name(StepLayout l) {
  switch (l) {
    case StepLayout::megatron: return "Megatron-LM";
    case StepLayout::nemo: return "NeMo/Lightning";
    case StepLayout::nanochat: return "nanochat";
    case StepLayout::hf_dict: return "Hugging Face Trainer";
    case StepLayout::torchtitan: return "torchtitan";
    case StepLayout::jsonl: return "JSON lines";
    case StepLayout::csv: return "CSV";
    case StepLayout::throughput: return "throughput";
  }
  return "?";
}

template <>
struct ParserState<StepLog> {
  Run run{step_layouts()};
  void feed(std::string_view lines) { run.feed(lines); }
  Parsed<StepLog> finish();
};


Parsed<StepLog> ParserState<StepLog>::finish() {
  auto& r = run;
  r.finish();
  // The layout with the most records wins (a log may echo a config in another shape); ties
  // go to the earlier, more specific one.
  Recogniser* best = nullptr;
  for (auto& rec : r.recognisers)
    if (!best || rec->log.records.size() > best->log.records.size()) best = rec.get();
  if (!best || best->log.records.empty()) {
    for (auto& rec : r.recognisers)
      if (!rec->log.damaged.empty()) return parse_fail("no readable step time: " + rec->log.damaged.front().message, rec->log.damaged.front().line);
    return parse_fail(
        "no step times or throughput (Megatron 'elapsed time per iteration (ms)', NeMo 'train_step_timing in s', 'dt: Xms', "
        "Trainer dicts, torchtitan 'step:' lines with timestamps, CSV or JSON lines with step_time_ms/iteration_time_ms/time_ms/"
        "step_time_s/time_s, samples/sec or tokens/s)");
  }
  return std::move(best->log);
}

template class LineParser<StepLog>;

Parsed<StepLog> parse_steps(std::string_view text) { return parse_whole<StepsParser>(text); }

StepClaims parse_steps_as(std::string_view text, StepLayout layout) {
  Run r({layout});
  r.feed(text);
  r.finish();
  return {std::move(r.recognisers[0]->log), r.claimed[0]};
}

std::vector<std::optional<StepLayout>> step_line_owners(std::string_view text) {
  std::vector<std::optional<StepLayout>> owners;
  Run r(step_layouts(), &owners);
  r.feed(text);
  r.finish();
  return owners;
}

}  // namespace perfgap::parsers
