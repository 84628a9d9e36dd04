#include "parsers/nccl_tests.hpp"

#include <algorithm>
#include <cmath>
#include <cstring>
#include <span>
#include <unordered_map>
#include <unordered_set>

#include <fmt/format.h>
#include <nlohmann/json.hpp>

#include "parsers/line_feed.hpp"
#include "parsers/nccl_nodes.hpp"
#include "parsers/nccl_tests_rows.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
// Named, not anonymous: ParserState (external linkage, a template specialization) holds
// these types, and GCC warns (-Wsubobject-linkage) when such a type is file-local.
namespace nccl_tests_detail {

using tooltext::number;
// Bounds on what the Rank lines add up (a run of 100k ranks is beyond any job).
constexpr std::size_t kMaxNcclTestsHosts = 16384, kMaxNcclTestsRanks = 1u << 20;
// Bounds on the GPU models the Rank lines name: a few kinds at most in one run, each a short name.
constexpr std::size_t kMaxNcclTestsGpuModels = 16, kMaxNcclTestsGpuModel = 128;

// t == w for a literal w: by length, then a memcmp of that constant length, which the compiler
// expands inline (string_view's == calls an out-of-line compare() on every equal length).
template <std::size_t N>
bool is(std::string_view t, const char (&w)[N]) {
  return t.size() == N - 1 && std::memcmp(t.data(), w, N - 1) == 0;
}

bool is_word(std::string_view t) {
  if (t.empty()) return false;
  char c = t[0];
  return (c >= 'a' && c <= 'z') || (c >= 'A' && c <= 'Z') || c == '_';
}

// Up to 19 digits cannot overflow and are summed inline (every row has two); anything else
// (longer, or a trailing CR that to_int trims) goes through to_int.
std::optional<std::uint64_t> uint_tok(std::string_view t) {
  if (t.empty() || t[0] < '0' || t[0] > '9') return std::nullopt;
  if (t.size() > 19) return sys::to_int<std::uint64_t>(t);
  std::uint64_t v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return sys::to_int<std::uint64_t>(t);
    v = v * 10 + static_cast<std::uint64_t>(c - '0');
  }
  return v;
}

// A sweep's "# nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ..." header, and
// how far its rows went.
struct Sweep {
  std::uint64_t min_bytes = 0, max_bytes = 0, step = 0;
  bool factor = true;  // step: N(factor) multiplies, N(bytes) adds
  int header_line = 0;
  std::uint64_t last_size = 0;
  int last_line = 0;
  bool closed = false;  // "# Avg bus bandwidth" followed
};

// The sweep stopped before its last size: the largest size the header's sequence reaches
// (min x step^k, or min + k x step, up to max) is beyond the last row's, which is that size
// or, where nccl-tests rounds it down to whole elements per rank, a little less.
bool stopped_early(const Sweep& w) {
  if (w.closed || w.max_bytes == 0 || w.min_bytes > w.max_bytes) return false;
  if (w.last_line == 0) return true;
  std::uint64_t last = w.min_bytes;  // the sequence's last size
  if (w.factor && w.step >= 2) {
    if (last == 0) return false;
    while (last <= w.max_bytes / w.step) last *= w.step;
    return w.last_size <= last / w.step;
  }
  if (w.factor || w.step == 0) return w.last_size < w.max_bytes / 2;  // unknown step: well short of max only
  last = w.min_bytes + (w.max_bytes - w.min_bytes) / w.step * w.step;
  return w.last_size + w.step <= last;
}

// Reads 4 cells: time algbw busbw wrong. The last is N/A, a #wrong count, or the old
// layout's max error: named `error` by the header, or (no header) not an integer ("1e-06").
bool figures(const std::vector<std::string_view>& f, std::size_t at, const Header& hdr, NcclTestsFigures& out) {
  if (at + 4 > f.size()) return false;
  auto t = number(f[at]), a = number(f[at + 1]), b = number(f[at + 2]);
  if (!t || !a || !b) return false;
  out.time_us = *t;
  out.algbw = *a;
  out.busbw = *b;
  out.wrong = out.max_error = std::nullopt;
  auto cell = f[at + 3];
  if (cell == "N/A") return true;
  auto w = number(cell);
  if (!w || *w < 0) return false;
  bool error = hdr.seen ? hdr.error_column : !tooltext::is_integer(cell);
  (error ? out.max_error : out.wrong) = *w;
  return true;
}

// A cell that tooltext::number reads by its fast path ("[-]ddd[.ddd]", 1 to 15 digits), told
// by its characters alone; `nonzero`: a digit is not 0.
bool decimal_cell(std::string_view t, bool& nonzero) {
  const std::size_t sign = t[0] == '-' ? 1 : 0;
  bool dot = false;
  unsigned any = 0;
  for (std::size_t i = sign; i < t.size(); ++i) {
    const auto d = static_cast<unsigned char>(t[i] - '0');
    if (d < 10) any |= d;
    else if (t[i] == '.' && !dot) dot = true;
    else return false;
  }
  const std::size_t digits = t.size() - sign - (dot ? 1 : 0);
  nonzero = any != 0;
  return digits >= 1 && digits <= 15;
}

// What figures() makes of the 4 cells at `at`, told without reading the numbers: none (too few
// cells), read with nothing wrong (#wrong or error 0, or N/A), or unsure (anything else:
// figures() decides). `checked`: the last cell is not N/A.
enum class Quick { none, plain, unsure };
Quick quick_figures(const std::vector<std::string_view>& f, std::size_t at, bool& checked) {
  if (at + 4 > f.size()) return Quick::none;
  bool nonzero = false;
  for (std::size_t k = at; k < at + 3; ++k)
    if (!decimal_cell(f[k], nonzero)) return Quick::unsure;
  const auto cell = f[at + 3];
  checked = cell != "N/A";
  if (checked && (cell[0] == '-' || !decimal_cell(cell, nonzero) || nonzero)) return Quick::unsure;
  return Quick::plain;
}

// The size of the row in f (3 cells or more) when line() would keep it as a plain row (read
// without damage, nothing wrong in place or out of place), told from the cells' characters;
// nullopt when it would not or it is not sure. `checked` as checked() of that row;
// `figures_at`: its first figure cell (time).
std::optional<std::uint64_t> quick_plain_row(const std::vector<std::string_view>& f, const Header& hdr, bool& checked, std::size_t& figures_at) {
  auto size = uint_tok(f[0]);
  if (!size || !is_word(f[2])) return std::nullopt;
  // The count's value is read at the end, with the row; here only that uint_tok would read it
  // (up to 19 digits always are).
  const auto count = f[1];
  if (count.size() > 19 || std::any_of(count.begin(), count.end(), [](char c) { return c < '0' || c > '9'; })) {
    if (!uint_tok(count)) return std::nullopt;
  }
  std::size_t i = 3;
  if (i < f.size() && is_word(f[i]) && f[i] != "N/A") ++i;
  const std::size_t left = f.size() - i;
  if (hdr.seen ? hdr.root : left == 9 || left == 17 || (left > 9 && f[i] == "-1")) {
    if (i >= f.size() || !tooltext::is_integer(f[i])) return std::nullopt;
    ++i;
  }
  figures_at = i;
  if (quick_figures(f, i, checked) != Quick::plain) return std::nullopt;
  bool in_place_checked = false;
  const auto in_place = quick_figures(f, i + (hdr.per_iter ? 8 : 4), in_place_checked);
  if (in_place == Quick::unsure || (in_place == Quick::none && hdr.in_place)) return std::nullopt;
  return size;
}

// A plain row waits here until a later row of its size supersedes it (only the last row of a
// size is judged): most rows of a long output are superseded, so only the rows left at the
// end have their figures read.
struct ParkedRow {
  std::uint64_t size = 0;
  bool live = false;  // a row of this size is parked (false: taken back by a row with a wrong result)
  std::string text;   // the line as its cells were split (launcher prefixes and rank tags gone)
  // Or, while `in_block`, that line is still in the block being fed: copied into `text` when
  // feed() returns, so of the many rows of a size that one block supersedes none is copied.
  std::string_view in_block_text;
  bool in_block = false;
  Header hdr;  // the table header in force there
  int line = 0;
};

Parsed<NcclTestsRun> parse_json(std::string_view text) {
  NcclTestsRun run;
  run.json = true;
  nlohmann::json j;
  try {
    j = nlohmann::json::parse(text);
  } catch (const std::exception& e) {
    // rccl-tests' --output_format json: one result object per line ({"size":..,"busBw":..}), not one document.
    const auto body = text.substr(std::min(text.size(), text.find_first_not_of(" \t\r\n")));
    const auto first = body.substr(0, body.find('\n'));
    const auto one = nlohmann::json::parse(first, nullptr, false);
    if (one.is_object() && (one.contains("busBw") || one.contains("algBw")) && first.size() < body.size())
      return parse_fail("rccl-tests JSON lines (--output_format json: one result object per line): not read; give the run's text output instead",
                        1 + static_cast<int>(std::count(text.begin(), text.end() - static_cast<std::ptrdiff_t>(body.size()), '\n')));
    return parse_fail(std::string("not nccl-tests JSON: ") + e.what());
  }
  if (!j.is_object() || !j.contains("results") || !j["results"].is_array()) return parse_fail("JSON without a nccl-tests \"results\" list");
  if (j.contains("nccl_version") && j["nccl_version"].is_number_integer()) {
    long v = j["nccl_version"].get<long>();
    run.nccl_version = fmt::format("{}.{}.{}", v / 10000, (v / 100) % 100, v % 100);
  }
  auto fig = [](const nlohmann::json& o) -> std::optional<NcclTestsFigures> {
    if (!o.is_object()) return std::nullopt;
    auto num = [&](const char* k) -> std::optional<double> {
      if (!o.contains(k) || !o[k].is_number()) return std::nullopt;
      return o[k].get<double>();
    };
    auto t = num("time") ? num("time") : num("cpu_time");
    auto a = num("alg_bw"), b = num("bus_bw");
    if (!t || !a || !b) return std::nullopt;
    NcclTestsFigures f{*t, *a, *b, std::nullopt, std::nullopt};
    f.wrong = num("nwrong");
    return f;
  };
  int idx = 0;
  for (const auto& r : j["results"]) {
    ++idx;
    if (!r.is_object() || !r.contains("size") || !r["size"].is_number_unsigned()) {
      run.damaged.push_back({fmt::format("result {} has no size", idx), 0});
      continue;
    }
    NcclTestsRow row;
    row.size = r["size"].get<std::uint64_t>();
    if (r.contains("count") && r["count"].is_number_unsigned()) row.count = r["count"].get<std::uint64_t>();
    if (r.contains("type") && r["type"].is_string()) row.type = r["type"].get<std::string>();
    if (r.contains("redop") && r["redop"].is_string()) row.redop = r["redop"].get<std::string>();
    if (r.contains("root") && r["root"].is_number_integer()) row.root = r["root"].get<long>();
    if (r.contains("out_of_place")) row.out_of_place = fig(r["out_of_place"]);
    if (r.contains("in_place")) row.in_place = fig(r["in_place"]);
    if (!row.out_of_place && !row.in_place) {
      run.damaged.push_back({fmt::format("result {} (size {}) has no figures", idx, row.size), 0});
      continue;
    }
    run.rows.push_back(std::move(row));
  }
  if (run.rows.empty() && run.damaged.empty()) return parse_fail("nccl-tests JSON with no results");
  if (run.rows.empty()) return parse_fail("nccl-tests JSON: no readable result (" + run.damaged.front().message + ")");
  return run;
}

}  // namespace nccl_tests_detail
using namespace nccl_tests_detail;

std::optional<long> NcclTestsRun::ranks() const {
  if (info_ranks) return info_ranks;
  if (every_rank_line()) return max_rank + 1;
  return std::nullopt;
}

std::optional<long> NcclTestsRun::nodes() const {
  if (auto n = nodes_shown(); n.count > 0 && !n.at_least) return n.count;
  return std::nullopt;
}

NcclNodes NcclTestsRun::nodes_shown() const {
  NcclNodes out;
  if (info_nodes) {
    out.count = *info_nodes;
    return out;
  }
  // Every rank's line seen: its hosts are the nodes.
  if (every_rank_line() && !hosts.empty() && hosts.size() < kMaxNcclTestsHosts) {
    out.count = static_cast<long>(hosts.size());
    return out;
  }
  // The NCCL INFO lines' hosts or addresses; the ranks the output shows bound them.
  NcclNodeSigns signs = info_nodes_signs;
  if (auto r = ranks(); r && (!signs.n_ranks || *r > *signs.n_ranks)) signs.n_ranks = *r;
  return nccl_nodes(signs);
}

// The table reader's state between lines.
template <>
struct ParserState<NcclTestsRun> {
  NcclTestsRun run;
  Header hdr;
  LaunchCommandReader launch;  // the launcher command line the output quotes
  int lineno = 0;
  bool started = false;             // a non-blank byte was seen
  bool json = false;                // -J output: kept whole, parsed at the end
  std::string json_text;
  std::string scratch;              // a line whose rank tags had to be replaced
  std::string hashed;               // a '#' line that lost its '#', given it back
  std::vector<std::string_view> f;  // its cells, reused from line to line
  // Size -> its last row, when plain: a slot per size in the order first parked, found by a
  // hint before the map (sweeps repeat their sizes in order: the slot after the last parked,
  // or the first when a sweep starts again).
  std::vector<ParkedRow> parked;
  std::unordered_map<std::uint64_t, std::size_t> parked_at;
  std::size_t park_hint = 0, parked_live = 0;
  RowShapes shapes;  // the layouts of the last plain rows read the exact way
  std::optional<Sweep> sweep;  // the sweep whose rows are being read
  RunsTracker runs;            // separate runs' lines interleaved (nccl-tests without MPI)
  std::vector<bool> ranks_seen;  // by rank (below 1 << 24): named by a Rank line; run.rank_lines of them
  std::unordered_set<std::string, sys::ViewHash, std::equal_to<>> hosts_seen;  // looked up by view
  std::string last_host;  // the host of the last Rank line, in hosts_seen (ranks of a host come together)
  // parse_nccl_tests_reference: every line the general way and every row kept to the end.
  bool reference = false;
  void feed(std::string_view lines);
  void line(std::string_view raw);
  void comment(std::string_view line);
  bool comment_without_cells(std::string_view line);
  bool bounds_searches(std::string_view line);
  void rank_line_without_cells(std::string_view line, std::size_t at, bool searched);
  bool rank_seen(std::string_view cell);
  void host_seen(std::string_view host);
  void gpu_seen(std::string_view line);
  void closing_searches(std::string_view line);
  const char* shaped_row(const char* p, const char* end);
  bool fast_row(std::string_view raw);
  std::optional<NcclTestsRow> read_row(const Header& h, int at_line);  // from the cells in f
  void keep(NcclTestsRow&& row, std::string_view text);
  void park(std::uint64_t size, std::string_view text, bool in_block);
  void keep_parked_text();
  void unpark(std::uint64_t size);
  void row_read(std::uint64_t size, std::string_view text) {
    runs.row(size, text, lineno, hdr.seen && hdr.root);
    if (sweep) {
      sweep->last_size = size;
      sweep->last_line = lineno;
    }
  }
  void end_sweep() {
    if (sweep && stopped_early(*sweep))
      run.stopped_early.push_back({sweep->last_line ? sweep->last_size : 0, sweep->max_bytes, sweep->header_line, sweep->last_line});
    sweep.reset();
  }
  Parsed<NcclTestsRun> finish();
};


void ParserState<NcclTestsRun>::feed(std::string_view lines) {
  auto& s = *this;
  if (!s.started) {
    auto first = lines.find_first_not_of(" \t\r\n");
    if (first != std::string_view::npos) {
      s.started = true;
      s.json = lines[first] == '{';
    }
  }
  if (s.json) {
    s.json_text.append(lines);
    return;
  }
  // Lines as for_each_line finds them, but the end of a row with a known layout is found by
  // shaped_row's scan of it, without a memchr of its own.
  const char* p = lines.data();
  const char* const end = p + lines.size();
  while (p < end) {
    if (const char* next = s.shaped_row(p, end)) {
      p = next;
      continue;
    }
    const void* nl = std::memchr(p, '\n', static_cast<std::size_t>(end - p));
    const char* e = nl ? static_cast<const char*>(nl) : end;
    s.line(std::string_view(p, static_cast<std::size_t>(e - p)));
    p = nl ? e + 1 : end;
  }
  s.keep_parked_text();
}

// The line at p, when it has the layout of a plain row read before (parsers/nccl_tests_rows.hpp),
// parked as fast_row would park it: the next line's start; nullptr when it has not (line()
// reads it). Only a line that starts as a row can (a blank or a digit): others cost one test.
const char* ParserState<NcclTestsRun>::shaped_row(const char* p, const char* end) {
  if (reference || !(*p == ' ' || (*p >= '0' && *p <= '9'))) return nullptr;
  const char* at = p;
  char pad[kRowShapeReach];
  if (static_cast<std::size_t>(end - p) < kRowShapeReach) {
    // The last bytes of the text: read from a copy, zeros past the end (no '\n' there).
    std::memset(pad, 0, sizeof pad);
    std::memcpy(pad, p, static_cast<std::size_t>(end - p));
    at = pad;
  }
  ShapedRow r;
  if (!shapes.match(at, hdr, r)) return nullptr;
  ++lineno;
  run.results_checked = run.results_checked || r.checked;
  row_read(r.size, std::string_view(p, r.length));
  park(r.size, std::string_view(p, r.length), true);
  return p + r.length + 1;
}

// A result row the short way: the first cell is digits and a blank (not srun's "0: " label),
// the line holds no '[' (no Open MPI prefix or rank tag to replace) and no cell ends in "NCCL"
// ("NCCL INFO", "NCCL version ") or "_perf" (the collective's binary). Then none of line()'s
// searches can match and the row is what line() makes of it, for a fraction of the cost: such
// rows are most of a large output.
bool ParserState<NcclTestsRun>::fast_row(std::string_view raw) {
  std::size_t i = 0;
  while (i < raw.size() && (raw[i] == ' ' || raw[i] == '\t')) ++i;
  std::size_t d = i;
  while (d < raw.size() && raw[d] >= '0' && raw[d] <= '9') ++d;
  if (d == i || d == raw.size() || (raw[d] != ' ' && raw[d] != '\t')) return false;
  if (std::memchr(raw.data(), '[', raw.size()) != nullptr) return false;
  const std::string_view text = tooltext::chomp(raw);
  sys::split_ws_into(text, f);
  if (f.size() < 3) return false;
  for (auto t : f) {
    const char last = t.back();
    if ((last == 'L' && t.ends_with("NCCL")) || (last == 'f' && t.ends_with("_perf"))) return false;
  }
  bool checked = false;
  std::size_t figures_at = 0;
  if (auto size = quick_plain_row(f, hdr, checked, figures_at)) {
    run.results_checked = run.results_checked || checked;
    row_read(*size, text);
    park(*size, text, true);
    // Its layout, for the rows like it (a CR-ended line never has one).
    if (text.size() == raw.size()) shapes.learn(text, figures_at, checked, hdr);
  } else if (auto row = read_row(hdr, lineno)) {
    keep(std::move(*row), text);
  }
  return true;
}

void ParserState<NcclTestsRun>::line(std::string_view raw) {
  ++lineno;
  if (!reference && fast_row(raw)) return;
  // A '#' line without a '[' has no launcher prefix or rank tag to strip: only a CR.
  std::string_view line = !reference && !raw.empty() && raw[0] == '#' && std::memchr(raw.data(), '[', raw.size()) == nullptr
                              ? tooltext::chomp(raw)
                              : tooltext::strip_launcher_prefixes(raw, scratch);
  if (!reference && comment_without_cells(line)) return;
  sys::split_ws_into(line, f);
  if (f.empty()) return;
  launch.line(f, lineno);  // a launcher command line quoted in the output (its binary names the collective below)
  if (f[0][0] == '#' || hashless_comment(f)) {
    if (f[0][0] != '#') sys::split_ws_into(line = hashed.assign("# ").append(line), f);  // read as the '#' line it was
    comment(line);
    return;
  }
  // NCCL INFO comm lines: "comm 0x.. rank 0 nRanks 16 nNodes 2 localRanks 8 ..." (2.12+), or
  // "rank 0 nranks 16" (destroy lines): the job's size when no Rank lines say it.
  if (auto at = f.size() > 4 ? sys::find(line, "NCCL INFO") : std::string_view::npos; at != std::string_view::npos) {
    // What the line says of the nodes: its prefix's host, the ranks' hosts and addresses.
    const auto host = nccl_line_host(line.substr(0, at));
    run.info_nodes_signs.add_host(host);
    run.info_nodes_signs.info(sys::trim_ws(line.substr(at + 9)), host, lineno);
    for (std::size_t i = 0; i + 1 < f.size(); ++i) {
      if (!tooltext::is_integer(f[i + 1])) continue;
      const long v = std::strtol(std::string(f[i + 1]).c_str(), nullptr, 10);
      if (v <= 0 || v >= (1L << 24)) continue;
      if (f[i] == "nRanks" || f[i] == "nranks") run.info_ranks = std::max(run.info_ranks.value_or(0), v);
      if (f[i] == "nNodes") run.info_nodes = std::max(run.info_nodes.value_or(0), v);
    }
  }
  if (auto p = run.nccl_version.empty() ? sys::find(line, "NCCL version ") : std::string_view::npos; p != std::string_view::npos) {
    auto w = sys::split_ws(line.substr(p + 13));
    if (!w.empty()) run.nccl_version = std::string(w[0].substr(0, w[0].find('+')));
    return;
  }
  if (run.collective.empty()) {
    for (auto t : f) {
      if (t.size() <= 5 || t.substr(t.size() - 5) != "_perf") continue;  // cheap test first: rows never match
      auto slash = t.rfind('/');
      auto base = slash == std::string_view::npos ? t : t.substr(slash + 1);
      if (base.size() > 5) {
        run.collective = std::string(base);
        break;
      }
    }
  }
  // "..." where rows were cut out (a shortened paste): noted, so the report can say so; after the
  // Rank lines, before any table, the rank list was cut.
  const bool dots = f.size() == 1 && f[0].size() >= 3 && f[0].find_first_not_of('.') == std::string_view::npos;
  if (dots && run.rank_lines > 0 && !hdr.seen && run.rows.empty() && parked_live == 0) run.rank_lines_cut = true;
  if (dots && (hdr.seen || !run.rows.empty() || parked_live > 0)) {
    run.elided.push_back(lineno);
    runs.restart();
    return;
  }
  if (auto row = read_row(hdr, lineno)) keep(std::move(*row), line);
}

// A '#' line, its cells in f: table headers, sweep headers, Rank lines and the sweep's closing lines.
void ParserState<NcclTestsRun>::comment(std::string_view line) {
  // Header lines: their cells less the '#' (f is scratch: trimmed in place, not copied).
  std::span<std::string_view> h(f);
  if (h[0] == "#") h = h.subspan(1);
  else h[0].remove_prefix(1);
  if (h.size() >= 3 && is(h[0], "size") && is(h[1], "count")) {
    hdr.seen = true;
    hdr.root = false;
    hdr.per_iter = false;
    hdr.error_column = false;
    int times = 0;
    for (auto t : h) {
      if (is(t, "root")) hdr.root = true;
      if (is(t, "i_min")) hdr.per_iter = true;
      if (is(t, "error")) hdr.error_column = true;
      if (is(t, "time")) ++times;
    }
    hdr.in_place = times >= 2;
    runs.header();
    return;
  }
  if (h.size() >= 4 && (is(h[0], "nThread") || is(h[0], "nThreads"))) {
    // A sweep starts: "nThread 1 nGpus 1 minBytes 8 maxBytes 8589934592 step: 2(factor) ...".
    Sweep w;
    w.header_line = lineno;
    for (std::size_t i = 0; i + 1 < h.size(); ++i) {
      if (is(h[i], "minBytes")) w.min_bytes = uint_tok(h[i + 1]).value_or(0);
      else if (is(h[i], "maxBytes")) w.max_bytes = uint_tok(h[i + 1]).value_or(0);
      else if (is(h[i], "step:")) {
        auto t = h[i + 1];
        auto paren = t.find('(');
        w.step = uint_tok(t.substr(0, paren)).value_or(0);
        w.factor = t.substr(paren == std::string_view::npos ? t.size() : paren) != "(bytes)";
      }
    }
    end_sweep();
    runs.header();
    if (w.max_bytes > 0) sweep = w;
    return;
  }
  if (bounds_searches(line)) return;
  if (h.size() >= 2 && is(h[0], "Rank") && tooltext::is_integer(h[1])) {
    if (rank_seen(h[1])) {
      for (std::size_t i = 2; i + 1 < h.size(); ++i)
        if (is(h[i], "on")) {
          host_seen(h[i + 1]);
          break;
        }
      gpu_seen(line);
    }
    return;
  }
  closing_searches(line);
}

// A Rank line's rank (an integer): counted when in range, which the return says.
bool ParserState<NcclTestsRun>::rank_seen(std::string_view cell) {
  long r = -1;  // out of long's range: strtol's clamp was refused by the range test too
  std::from_chars(cell.data(), cell.data() + cell.size(), r);
  if (r < 0 || r >= (1L << 24)) return false;
  if (run.rank_lines < kMaxNcclTestsRanks) {
    const auto at = static_cast<std::size_t>(r);
    if (at >= ranks_seen.size()) ranks_seen.resize(at + 1);
    if (!ranks_seen[at]) {
      ranks_seen[at] = true;
      ++run.rank_lines;
    }
  }
  run.max_rank = std::max(run.max_rank, r);
  runs.rank(r, lineno);
  return true;
}

// Every rank's line names its host again: found by view, copied only when new, not looked up
// when it is the last Rank line's.
void ParserState<NcclTestsRun>::host_seen(std::string_view host) {
  if (run.hosts.size() < kMaxNcclTestsHosts && host != last_host) {
    if (!hosts_seen.contains(host)) {
      hosts_seen.emplace(host);
      run.hosts.emplace_back(host);
    }
    last_host.assign(host);
  }
}

// A Rank line's GPU model: what follows its device's bus id ("... device  0 [0000:19:00] NVIDIA H100
// 80GB HBM3"), trimmed; distinct models kept in the order seen, capped. A line without a bracketed
// bus id after "device" names none.
void ParserState<NcclTestsRun>::gpu_seen(std::string_view line) {
  const auto dev = sys::find(line, " device ");
  if (dev == std::string_view::npos) return;
  const auto open = line.find('[', dev);
  if (open == std::string_view::npos) return;
  const auto close = line.find(']', open);
  if (close == std::string_view::npos) return;
  auto model = line.substr(close + 1);
  while (!model.empty() && (model.front() == ' ' || model.front() == '\t')) model.remove_prefix(1);
  while (!model.empty() && (model.back() == ' ' || model.back() == '\t' || model.back() == '\r')) model.remove_suffix(1);
  if (model.empty() || model.size() > kMaxNcclTestsGpuModel) return;
  if (run.gpu_models.size() >= kMaxNcclTestsGpuModels || std::find(run.gpu_models.begin(), run.gpu_models.end(), model) != run.gpu_models.end()) return;
  run.gpu_models.emplace_back(model);
}

// A '#' line's searches that go before its Rank line test: "Reducing maxBytes to", "Out of
// bounds values". True when one was found (the line is read).
bool ParserState<NcclTestsRun>::bounds_searches(std::string_view line) {
  if (auto p = sys::find(line, "Reducing maxBytes to"); p != std::string_view::npos) {
    // nccl-tests lowers maxBytes to what the GPU's memory holds, and says so.
    auto w = sys::split_ws(line.substr(p + 20));
    if (sweep && !w.empty())
      if (auto v = uint_tok(w[0]); v && *v > 0) sweep->max_bytes = *v;
    return true;
  }
  if (auto p = sys::find(line, "Out of bounds values"); p != std::string_view::npos) {
    auto colon = line.find(':', p);
    if (colon != std::string_view::npos) {
      auto w = sys::split_ws(line.substr(colon + 1));
      if (!w.empty())
        if (auto v = number(w[0]); v && *v >= 0 && (!run.out_of_bounds || *v > *run.out_of_bounds)) {
          run.out_of_bounds = *v;
          run.out_of_bounds_line = lineno;
        }
    }
    return true;
  }
  return false;
}

// A '#' line's searches after it: "Collective test starting:", "Avg bus bandwidth".
void ParserState<NcclTestsRun>::closing_searches(std::string_view line) {
  if (auto p = sys::find(line, "Collective test starting:"); p != std::string_view::npos) {
    auto w = sys::split_ws(line.substr(p + 25));
    if (!w.empty()) run.collective = std::string(w[0]);
  }
  if (auto p = sys::find(line, "Avg bus bandwidth"); p != std::string_view::npos) {
    auto colon = line.find(':', p);
    if (colon != std::string_view::npos) {
      auto w = sys::split_ws(line.substr(colon + 1));
      if (!w.empty())
        if (auto v = number(w[0])) run.avg_busbw = *v;
    }
    if (sweep) sweep->closed = true;
    runs.closing(lineno);
  }
}

// What comment() does with a '#' line whose first word after the '#' (comment()'s h[0]) is not
// one it reads by cells (size, nThread(s), Rank): its searches, without splitting it into
// cells. False when the line is not such a '#' line.
bool ParserState<NcclTestsRun>::comment_without_cells(std::string_view line) {
  auto blank = [&](std::size_t i) { return line[i] == ' ' || line[i] == '\t'; };
  std::size_t i = 0;
  while (i < line.size() && blank(i)) ++i;
  if (i == line.size() || line[i] != '#') return false;
  ++i;
  // h[0]: the rest of the '#' cell, or the next cell when the '#' stands alone.
  while (i < line.size() && blank(i)) ++i;
  std::size_t j = i;
  while (j < line.size() && !blank(j)) ++j;
  const auto first = line.substr(i, j - i);
  if (is(first, "size") || is(first, "nThread") || is(first, "nThreads")) return false;
  // Each needle of bounds_searches and closing_searches has an 's': a line without one (most
  // Rank lines, some table headers) is searched no further.
  const bool searched = std::memchr(line.data(), 's', line.size()) != nullptr;
  if (is(first, "Rank")) {
    rank_line_without_cells(line, j, searched);
    return true;
  }
  if (searched && !bounds_searches(line)) closing_searches(line);
  return true;
}

// comment() of a '#' line whose h[0] is "Rank" (ending at `at`), its cells found as they are
// needed: h[1] after it, and the first cell "on" after that with a cell after it (the host).
void ParserState<NcclTestsRun>::rank_line_without_cells(std::string_view line, std::size_t at, bool searched) {
  if (searched && bounds_searches(line)) return;
  auto blank = [&](std::size_t i) { return line[i] == ' ' || line[i] == '\t'; };
  auto next_cell = [&](std::size_t& i) {  // the cell from i on, i left after it ("" at the end)
    while (i < line.size() && blank(i)) ++i;
    const std::size_t b = i;
    while (i < line.size() && !blank(i)) ++i;
    return line.substr(b, i - b);
  };
  std::size_t i = at;
  const auto rank = next_cell(i);
  if (!tooltext::is_integer(rank)) {  // also when there is none
    if (searched) closing_searches(line);
    return;
  }
  if (!rank_seen(rank)) return;
  gpu_seen(line);
  // A cell "on": an 'o', then 'n', with blanks (or the line's start or end) around them.
  for (const char* o = static_cast<const char*>(std::memchr(line.data() + i, 'o', line.size() - i)); o != nullptr;
       o = static_cast<const char*>(std::memchr(o + 1, 'o', static_cast<std::size_t>(line.data() + line.size() - o - 1)))) {
    const auto k = static_cast<std::size_t>(o - line.data());
    if (!blank(k - 1) || k + 1 >= line.size() || line[k + 1] != 'n' || (k + 2 < line.size() && !blank(k + 2))) continue;
    std::size_t after = k + 2;
    if (const auto host = next_cell(after); !host.empty()) host_seen(host);
    return;  // the first "on" is the only one read, with a host or (the last cell) without
  }
}

// A result row starts with size and count; anything else is not a row. A row that cannot be
// read is noted in `damaged`.
std::optional<NcclTestsRow> ParserState<NcclTestsRun>::read_row(const Header& h, int at_line) {
  auto size = uint_tok(f[0]);
  if (!size || f.size() < 2) return std::nullopt;
  auto count = uint_tok(f[1]);
  if (!count) return std::nullopt;
  if (f.size() < 3 || !is_word(f[2])) {
    if (f.size() >= 3) run.damaged.push_back({"result row without a data type", at_line});
    return std::nullopt;
  }
  NcclTestsRow row;
  row.size = *size;
  row.count = *count;
  row.type = std::string(f[2]);
  row.line = at_line;
  std::size_t i = 3;
  if (i < f.size() && is_word(f[i]) && f[i] != "N/A") row.redop = std::string(f[i++]);
  std::size_t left = f.size() - i;
  bool has_root;
  if (h.seen) has_root = h.root;
  else has_root = left == 9 || left == 17 || (left > 9 && f[i] == "-1");
  if (has_root) {
    if (i >= f.size() || !tooltext::is_integer(f[i])) {
      run.damaged.push_back({"result row without the root column", at_line});
      return std::nullopt;
    }
    row.root = std::strtol(std::string(f[i]).c_str(), nullptr, 10);
    ++i;
  }
  NcclTestsFigures oop;
  if (!figures(f, i, h, oop)) {
    run.damaged.push_back({fmt::format("result row for size {} cut short or unreadable ({} cells)", row.size, f.size()), at_line});
    return std::nullopt;
  }
  row.out_of_place = oop;
  i += h.per_iter ? 8 : 4;
  NcclTestsFigures inp;
  if (figures(f, i, h, inp)) {
    row.in_place = inp;
  } else if (h.in_place && f.size() < i + 4) {
    // The table has in-place columns and this row stops before them: its line was cut (a
    // crash or a hang while nccl-tests printed it, a capture cut there).
    run.damaged.push_back({fmt::format("result row for size {} cut short: {} cells, without the in-place figures the table's header has", row.size, f.size()), at_line});
    return std::nullopt;
  }
  return row;
}

namespace {
// A row with nothing to report but its figures: no wrong element, no error above zero.
bool plain(const NcclTestsRow& r) {
  for (const auto* fig : {&r.out_of_place, &r.in_place})
    if (*fig && (((*fig)->wrong && *(*fig)->wrong != 0) || ((*fig)->max_error && *(*fig)->max_error != 0))) return false;
  return true;
}
// The out-of-place result was checked (-c 1): it has a #wrong count or an error value.
bool checked(const NcclTestsRow& r) { return r.out_of_place && (r.out_of_place->wrong || r.out_of_place->max_error); }
}  // namespace

// Only the last row of each size is judged, so a file of many repeated runs keeps one row per
// size (plus the rows with wrong results), not one per line: a plain row is parked until a
// later row of its size replaces it; a row with wrong results is kept and supersedes the
// parked one.
void ParserState<NcclTestsRun>::keep(NcclTestsRow&& row, std::string_view text) {
  row_read(row.size, text);
  if (checked(row)) run.results_checked = true;
  if (plain(row) && !reference) {
    park(row.size, text, false);  // the line may be in `scratch`
    return;
  }
  unpark(row.size);
  run.rows.push_back(std::move(row));
}

void ParserState<NcclTestsRun>::park(std::uint64_t size, std::string_view text, bool in_block) {
  std::size_t i = park_hint;
  if (i >= parked.size() || parked[i].size != size) {
    if (!parked.empty() && parked[0].size == size) {
      i = 0;
    } else {
      const auto [at, added] = parked_at.try_emplace(size, parked.size());
      if (added) parked.emplace_back().size = size;
      i = at->second;
    }
  }
  auto& p = parked[i];
  if (!p.live) {
    p.live = true;
    ++parked_live;
  }
  p.in_block = in_block;
  if (in_block) p.in_block_text = text;
  else p.text.assign(text);  // the buffer of the row it replaces: no allocation once sizes repeat
  p.hdr = hdr;
  p.line = lineno;
  park_hint = i + 1;
}

// The parked rows still in the block fed, copied before the block goes.
void ParserState<NcclTestsRun>::keep_parked_text() {
  for (auto& p : parked)
    if (p.in_block) {
      p.text.assign(p.in_block_text);
      p.in_block = false;
    }
}

void ParserState<NcclTestsRun>::unpark(std::uint64_t size) {
  if (auto at = parked_at.find(size); at != parked_at.end() && parked[at->second].live) {
    parked[at->second].live = false;
    --parked_live;
  }
}

namespace {
// The rule the parked rows implement, applied to every row at once: a plain row is dropped
// when a later row of its size follows.
void drop_superseded(std::vector<NcclTestsRow>& rows) {
  std::unordered_map<std::uint64_t, std::size_t> last;  // size -> its last row
  for (std::size_t i = 0; i < rows.size(); ++i) last[rows[i].size] = i;
  std::size_t to = 0;
  for (std::size_t i = 0; i < rows.size(); ++i) {
    if (plain(rows[i]) && last[rows[i].size] != i) continue;
    if (to != i) rows[to] = std::move(rows[i]);  // not onto itself: a self-moved string is emptied
    ++to;
  }
  rows.resize(to);
}
}  // namespace

Parsed<NcclTestsRun> ParserState<NcclTestsRun>::finish() {
  auto& s = *this;
  if (s.json) {
    auto run = parse_json(s.json_text);
    if (run) run->results_checked = std::any_of(run->rows.begin(), run->rows.end(), checked);
    return run;
  }
  auto& run = s.run;
  s.end_sweep();
  if (s.runs.line() > 0) return parse_fail(s.runs.message(), s.runs.line());
  if (s.runs.kinds().size() > 1) run.row_kinds = s.runs.kinds();
  s.launch.end();
  run.launch = s.launch.command();
  // The parked rows read as they were when parked (they were read or checked then: no damage),
  // and put back in file order.
  for (const auto& p : s.parked) {
    if (!p.live) continue;
    sys::split_ws_into(p.text, s.f);
    if (auto row = s.read_row(p.hdr, p.line)) run.rows.push_back(std::move(*row));
  }
  s.parked.clear();
  if (s.reference) drop_superseded(run.rows);
  std::sort(run.rows.begin(), run.rows.end(), [](const NcclTestsRow& a, const NcclTestsRow& b) { return a.line < b.line; });
  if (run.rows.empty()) {
    if (!run.damaged.empty()) return parse_fail("no readable nccl-tests result row: " + run.damaged.front().message, run.damaged.front().line);
    if (s.hdr.seen) return parse_fail("nccl-tests table header without result rows");
    return parse_fail("no nccl-tests result table");
  }
  return std::move(run);
}

template class LineParser<NcclTestsRun>;

Parsed<NcclTestsRun> parse_nccl_tests(std::string_view text) { return parse_whole<NcclTestsParser>(text); }

Parsed<NcclTestsRun> parse_nccl_tests_reference(std::string_view text) {
  ParserState<NcclTestsRun> s;
  s.reference = true;
  s.feed(text);
  return s.finish();
}

std::optional<std::uint64_t> parse_size(std::string_view s) {
  s = sys::trim_ws(s);
  if (s.empty()) return std::nullopt;
  std::uint64_t mult = 1;
  char last = s.back();
  if (last == 'B' || last == 'b') {
    s.remove_suffix(1);
    if (s.empty()) return std::nullopt;
    last = s.back();
  }
  switch (last) {
    case 'K': case 'k': mult = 1ull << 10; break;
    case 'M': case 'm': mult = 1ull << 20; break;
    case 'G': case 'g': mult = 1ull << 30; break;
    case 'T': case 't': mult = 1ull << 40; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  auto v = uint_tok(s);
  if (!v || s.size() != std::to_string(*v).size()) return std::nullopt;
  if (*v > (~0ull) / mult) return std::nullopt;
  return *v * mult;
}

Parsed<std::vector<std::uint64_t>> parse_sizes(std::string_view list) {
  std::vector<std::uint64_t> out;
  for (auto part : sys::split(list, ',')) {
    if (sys::trim_ws(part).empty()) continue;
    auto v = parse_size(part);
    if (!v) return parse_fail("bad size '" + std::string(part) + "' (bytes with K, M or G suffixes: 1M,64M,1G)");
    out.push_back(*v);
  }
  if (out.empty()) return parse_fail("empty size list");
  return out;
}

std::string format_size(std::uint64_t b) {
  static const char* units[] = {"B", "KiB", "MiB", "GiB", "TiB"};
  int u = 0;
  std::uint64_t v = b;
  while (u < 4 && v >= 1024 && v % 1024 == 0) {
    v /= 1024;
    ++u;
  }
  return fmt::format("{} {}", v, units[u]);
}

}  // namespace perfgap::parsers
