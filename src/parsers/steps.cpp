#include "parsers/steps.hpp"

#include <cmath>

#include <nlohmann/json.hpp>

#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

struct Key {
  const char* name;
  double scale;  // to milliseconds
};
constexpr Key kKeys[] = {{"step_time_ms", 1}, {"iteration_time_ms", 1}, {"time_ms", 1}, {"step_time_s", 1000}, {"time_s", 1000}};

bool good(double v) { return std::isfinite(v) && v > 0; }

}  // namespace

Parsed<StepLog> parse_steps(std::string_view text) {
  StepLog mega, jsonl, csv;
  mega.layout = StepLog::Layout::megatron;
  mega.field = "elapsed time per iteration (ms)";
  jsonl.layout = StepLog::Layout::jsonl;
  csv.layout = StepLog::Layout::csv;
  int csv_col = -1;
  double csv_scale = 1;
  std::size_t csv_cols = 0;
  int lineno = 0;
  for (auto raw : sys::split_lines(text)) {
    ++lineno;
    auto line = sys::trim_ws(tooltext::chomp(raw));
    if (line.empty()) continue;
    // Megatron / NeMo.
    if (auto p = line.find("elapsed time per iteration (ms):"); p != std::string_view::npos) {
      auto rest = sys::split_ws(line.substr(p + 32));
      auto v = rest.empty() ? std::nullopt : tooltext::number(rest[0]);
      if (!v || !good(*v)) {
        mega.damaged.push_back({"unreadable 'elapsed time per iteration (ms)' value", lineno});
        continue;
      }
      StepRecord r{*v, -1, lineno};
      if (auto q = line.find("iteration "); q != std::string_view::npos && q < p) {
        auto w = sys::split_ws(line.substr(q + 10));
        if (!w.empty()) {
          auto it = w[0].substr(0, w[0].find('/'));
          if (auto n = sys::to_int<long>(it)) r.iteration = *n;
        }
      }
      mega.records.push_back(r);
      continue;
    }
    // JSON lines.
    if (line.front() == '{') {
      nlohmann::json j;
      try {
        j = nlohmann::json::parse(line);
      } catch (const std::exception&) {
        if (!jsonl.records.empty() || line.find("time") != std::string_view::npos) jsonl.damaged.push_back({"JSON record cut short or invalid", lineno});
        continue;
      }
      if (!j.is_object()) continue;
      for (const auto& k : kKeys) {
        if (!j.contains(k.name)) continue;
        const auto& v = j[k.name];
        if (!v.is_number() || !good(v.get<double>())) {
          jsonl.damaged.push_back({std::string("non-numeric ") + k.name, lineno});
          break;
        }
        StepRecord r{v.get<double>() * k.scale, -1, lineno};
        for (const char* it : {"step", "iteration", "iter"})
          if (j.contains(it) && j[it].is_number_integer()) r.iteration = j[it].get<long>();
        if (jsonl.field.empty()) jsonl.field = k.name;
        jsonl.records.push_back(r);
        break;
      }
      continue;
    }
    // CSV: a header naming a known column, then rows.
    if (line.find(',') != std::string_view::npos) {
      auto cells = sys::split(line, ',');
      if (csv_col < 0) {
        for (const auto& k : kKeys) {
          for (std::size_t i = 0; i < cells.size() && csv_col < 0; ++i) {
            auto c = sys::trim_ws(cells[i]);
            if (c.size() >= 2 && c.front() == '"' && c.back() == '"') c = c.substr(1, c.size() - 2);
            if (c == k.name) {
              csv_col = static_cast<int>(i);
              csv_scale = k.scale;
              csv.field = k.name;
              csv_cols = cells.size();
            }
          }
          if (csv_col >= 0) break;
        }
        continue;
      }
      if (cells.size() <= static_cast<std::size_t>(csv_col)) {
        csv.damaged.push_back({"CSV row with " + std::to_string(cells.size()) + " of " + std::to_string(csv_cols) + " columns", lineno});
        continue;
      }
      auto v = tooltext::number(sys::trim_ws(cells[static_cast<std::size_t>(csv_col)]));
      if (!v || !good(*v)) {
        csv.damaged.push_back({"unreadable " + csv.field + " value", lineno});
        continue;
      }
      csv.records.push_back({*v * csv_scale, -1, lineno});
      continue;
    }
    if (csv_col >= 0) csv.damaged.push_back({"CSV row without separators", lineno});
  }
  // The layout with the most records wins (a log may echo a config in another shape).
  StepLog* best = &mega;
  if (jsonl.records.size() > best->records.size()) best = &jsonl;
  if (csv.records.size() > best->records.size()) best = &csv;
  if (best->records.empty()) {
    for (auto* l : {&mega, &jsonl, &csv})
      if (!l->damaged.empty()) return parse_fail("no readable step time: " + l->damaged.front().message, l->damaged.front().line);
    return parse_fail("no step times (Megatron 'elapsed time per iteration (ms)', CSV or JSON lines with step_time_ms/iteration_time_ms/time_ms/step_time_s/time_s)");
  }
  return std::move(*best);
}

}  // namespace perfgap::parsers
