#include "parsers/turbostat.hpp"

#include <algorithm>

#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
namespace {

bool is_header(const std::vector<std::string_view>& f) {
  bool busy = false, mhz = false;
  for (auto t : f) {
    if (t == "Busy%") busy = true;
    if (t == "Bzy_MHz" || t == "Avg_MHz") mhz = true;
  }
  return busy || mhz;
}

// "38 * 100.0 = 3800.0 MHz max turbo 4 active cores"
bool turbo_line(std::string_view line, int& cores, double& mhz) {
  auto p = line.find("MHz max turbo ");
  if (p == std::string_view::npos) return false;
  auto eq = line.rfind('=', p);
  if (eq == std::string_view::npos) return false;
  auto v = tooltext::number(sys::trim_ws(line.substr(eq + 1, p - eq - 1)));
  auto rest = sys::split_ws(line.substr(p + 14));
  if (!v || rest.empty()) return false;
  auto n = sys::to_int<int>(rest[0]);
  if (!n || *n <= 0) return false;
  cores = *n;
  mhz = *v;
  return true;
}

}  // namespace

template <>
struct ParserState<Turbostat> : FeedsLines<ParserState<Turbostat>> {
  Turbostat out;
  std::vector<std::string> header;
  int cpu_col = -1;
  int lineno = 0;
  void line(std::string_view raw);
  Parsed<Turbostat> finish();
};

void ParserState<Turbostat>::line(std::string_view raw) {
  ++lineno;
  auto line = tooltext::chomp(raw);
  int cores = 0;
  double mhz = 0;
  if (turbo_line(line, cores, mhz)) {
    out.max_turbo_mhz[cores] = mhz;
    return;
  }
  auto f = sys::split_ws(line);
  if (f.empty()) return;
  if (is_header(f)) {
    header.assign(f.begin(), f.end());
    ++out.blocks;
    out.columns.assign(f.begin(), f.end());
    cpu_col = -1;
    for (std::size_t i = 0; i < f.size(); ++i)
      if (f[i] == "CPU") cpu_col = static_cast<int>(i);
    return;
  }
  if (header.empty()) return;
  // A row: every cell numeric or "-". Anything else (jitter notes, prompts) is not a row.
  bool row = true;
  for (auto t : f)
    if (t != "-" && !tooltext::number(t)) {
      row = false;
      break;
    }
  if (!row) {
    // A line that starts like a row but holds junk: damaged.
    if (tooltext::number(f[0]) && f.size() > 2) out.damaged.push_back({"row with a non-numeric cell", lineno});
    return;
  }
  TurbostatRow r;
  r.line = lineno;
  r.block = out.blocks;
  // Cells past the header are ignored (some versions glue two header names together).
  for (std::size_t i = 0; i < f.size() && i < header.size(); ++i)
    if (auto v = tooltext::number(f[i])) r.values.emplace(std::string(header[i]), *v);
  bool summary = true;
  if (cpu_col >= 0 && static_cast<std::size_t>(cpu_col) < f.size() && f[static_cast<std::size_t>(cpu_col)] != "-") {
    auto c = sys::to_int<int>(f[static_cast<std::size_t>(cpu_col)]);
    if (!c || *c < 0) {
      out.damaged.push_back({"bad CPU number", lineno});
      return;
    }
    r.cpu = *c;
    summary = false;
  }
  if (cpu_col >= 0 && static_cast<std::size_t>(cpu_col) >= f.size()) {
    out.damaged.push_back({"row cut short before the CPU column", lineno});
    return;
  }
  (summary ? out.summary_rows : out.cpu_rows).push_back(std::move(r));
}

Parsed<Turbostat> ParserState<Turbostat>::finish() {
  if (out.blocks == 0) return parse_fail("no turbostat header (a line with Busy% or Bzy_MHz)");
  if (out.cpu_rows.empty() && out.summary_rows.empty()) return parse_fail("turbostat header without rows");
  return std::move(out);
}

template class LineParser<Turbostat>;

Parsed<Turbostat> parse_turbostat(std::string_view text) { return parse_whole<TurbostatParser>(text); }

}  // namespace perfgap::parsers
