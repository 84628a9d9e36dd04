#include "parsers/perf.hpp"

#include <algorithm>
#include <cstring>
#include <optional>
#include <unordered_map>

#include "parsers/line_feed.hpp"
#include "parsers/tool_text.hpp"
#include "sys/text.hpp"

namespace perfgap::parsers {
// Named, not anonymous: ParserState (external linkage, a template specialization) holds
// these types, and GCC warns (-Wsubobject-linkage) when such a type is file-local.
namespace perf_detail {

using tooltext::chomp;
using tooltext::number;

bool is_hex(std::string_view t) {
  if (t.empty() || t.size() > 18) return false;
  for (char c : t)
    if (!((c >= '0' && c <= '9') || (c >= 'a' && c <= 'f') || (c >= 'A' && c <= 'F'))) return false;
  return true;
}

std::optional<double> pct(std::string_view tok) {
  if (tok.size() < 2 || tok.back() != '%') return std::nullopt;
  auto v = number(tok.substr(0, tok.size() - 1));
  if (!v || *v < 0 || *v > 100.0001) return std::nullopt;
  return v;
}

bool is_marker(std::string_view t) {
  return t.size() == 3 && t[0] == '[' && t[2] == ']' &&
         (t[1] == 'k' || t[1] == '.' || t[1] == 'g' || t[1] == 'u' || t[1] == 'H' || t[1] == 'G');
}

bool kernel_dso(std::string_view dso) { return dso.find("kernel") != std::string_view::npos; }

// Trailing blanks and TUI scrollbar glyphs ("▒", U+2592, UTF-8 E2 96 92).
std::string_view clean_tail(std::string_view s) {
  for (;;) {
    s = sys::trim_ws(s);
    if (s.size() >= 3 && s.substr(s.size() - 3) == "\xE2\x96\x92") {
      s.remove_suffix(3);
      continue;
    }
    return s;
  }
}

// A 64-bit address in the kernel half (x86-64 and arm64 alike): 16 hex digits from ffff.
bool kernel_address(std::string_view hex) {
  if (sys::starts_with(hex, "0x")) hex.remove_prefix(2);
  return hex.size() == 16 && (sys::starts_with(hex, "ffff") || sys::starts_with(hex, "FFFF")) && is_hex(hex);
}

// One stack line of perf script: "<hex> <sym>[+0x..] (<dso>)". Returns the symbol and dso,
// and whether the frame's address is a kernel one (perf prints "[unknown] ([unknown])" for
// kernel frames it could not name when kallsyms was unreadable).
bool script_frame(std::string_view line, std::string_view& sym, std::string_view& dso, bool* kernel_addr = nullptr) {
  auto t = sys::trim_ws(line);
  if (t.empty() || t.back() != ')') return false;
  auto sp = t.find_first_of(" \t");
  if (sp == std::string_view::npos || !is_hex(t.substr(0, sp))) return false;
  if (kernel_addr) *kernel_addr = kernel_address(t.substr(0, sp));
  auto open = t.rfind(" (");
  if (open == std::string_view::npos || open < sp) return false;
  dso = t.substr(open + 2, t.size() - open - 3);
  sym = sys::trim_ws(t.substr(sp, open - sp));
  auto plus = sym.rfind("+0x");
  if (plus != std::string_view::npos && plus > 0) sym = sym.substr(0, plus);
  if (sym.empty()) sym = "[unknown]";
  return true;
}

// A perf script sample header has a "<seconds>.<fraction>:" token.
bool script_header(std::string_view line, std::size_t& after) {
  auto colon = line.find(": ");
  while (colon != std::string_view::npos) {
    std::size_t b = colon;
    while (b > 0 && line[b - 1] != ' ' && line[b - 1] != '\t') --b;
    auto tok = line.substr(b, colon - b);
    auto dot = tok.find('.');
    if (dot != std::string_view::npos && dot > 0 && dot + 1 < tok.size() &&
        std::all_of(tok.begin(), tok.end(), [](char c) { return (c >= '0' && c <= '9') || c == '.'; })) {
      after = colon + 2;
      return true;
    }
    colon = line.find(": ", colon + 1);
  }
  return false;
}

// Folds `perf script` text as it streams by, one line at a time: counts each sample's leaf
// frame (the first stack line after a sample header, or the frame on the header line itself
// when the recording has no call graphs) in a map keyed by views into the text.
class ScriptFolder {
 public:
  void feed(std::string_view line, int lineno) {
    if (line.empty()) {
      awaiting_ = false;
      return;
    }
    char c0 = line[0];
    if (c0 == '\t' && !awaiting_) return;  // deeper frames: the common case, kept cheap
    std::string_view sym, dso;
    bool kaddr = false;
    if ((c0 == '\t' || c0 == ' ') && awaiting_ && script_frame(line, sym, dso, &kaddr)) {
      add(sym, dso, lineno, kaddr);
      awaiting_ = false;
      return;
    }
    if (c0 == '\t') return;
    std::size_t after = 0;
    if (script_header(line, after)) {
      awaiting_ = true;
      // Without call graphs the leaf sits on the header line, after the event name.
      auto rest = line.substr(after);
      auto ev_end = rest.find(": ");
      select_event(ev_end == std::string_view::npos ? std::string_view() : rest.substr(0, ev_end));
      events_[cur_].samples += 1;
      if (ev_end != std::string_view::npos) {
        auto frame = rest.substr(ev_end + 1);
        if (script_frame(frame, sym, dso, &kaddr)) {
          add(sym, dso, lineno, kaddr);
          awaiting_ = false;
        }
      }
    }
  }

  Parsed<PerfProfile> finish() {
    PerfProfile out;
    out.layout = PerfProfile::Layout::script;
    // Samples of several events are not added up: one is counted, the others named.
    std::vector<std::pair<std::string, double>> evs;
    for (const auto& e : events_)
      if (e.samples > 0) evs.emplace_back(e.name.empty() ? std::string("(event not printed)") : e.name, e.samples);
    if (evs.empty()) return parse_fail("no perf sample rows or perf script samples");
    const std::size_t pick = perf_pick_event(evs);
    std::size_t with_samples = 0;
    const EventFold* ev = nullptr;
    for (const auto& e : events_)
      if (e.samples > 0 && with_samples++ == pick) ev = &e;
    if (evs.size() > 1) {
      out.event = evs[pick].first;
      for (std::size_t i = 0; i < evs.size(); ++i)
        if (i != pick) out.other_events.push_back(evs[i]);
    }
    out.samples = ev->samples;
    out.symbols.reserve(ev->order.size());
    for (const auto* e : ev->order) {
      const auto& s = e->first;
      const auto& c = e->second;
      PerfSymbol ps;
      ps.symbol = s;
      ps.dso = c.dso;
      ps.kernel = kernel_dso(c.dso) || sys::starts_with(s, "0xffff") || c.kernel_addr;
      ps.self_pct = 100.0 * c.n / out.samples;
      ps.line = c.line;
      out.symbols.push_back(std::move(ps));
    }
    std::stable_sort(out.symbols.begin(), out.symbols.end(), [](const auto& a, const auto& b) { return a.self_pct > b.self_pct; });
    return out;
  }

 private:
  struct Count {
    double n = 0;
    std::string dso;
    int line = 0;
    bool kernel_addr = false;
  };
  // Keys are owned (the text goes away block by block) and looked up by view. An unnamed
  // kernel frame is kept apart from unnamed user frames (both print as "[unknown]").
  void add(std::string_view sym, std::string_view dso, int lineno, bool kernel_addr) {
    if (kernel_addr && sym == "[unknown]") sym = kUnknownKernel;
    auto& ev = events_[cur_];
    auto it = ev.counts.find(sym);
    if (it == ev.counts.end()) {
      it = ev.counts.emplace(std::string(sym), Count{0, std::string(dso), lineno, kernel_addr}).first;
      ev.order.push_back(&*it);
    }
    it->second.n += 1;
  }
  // The event of a sample header ("... 1234.5678: 250000 cycles:pp: ..." : its last word before
  // the ": "); the folds are per event, a few at most (events past kMaxEvents share the last).
  void select_event(std::string_view before) {
    auto t = sys::trim_ws(before);
    auto sp = t.find_last_of(" \t");
    auto name = sp == std::string_view::npos ? t : t.substr(sp + 1);
    if (name.ends_with(':')) name.remove_suffix(1);
    if (!name.empty() && std::all_of(name.begin(), name.end(), [](char c) { return c >= '0' && c <= '9'; })) name = {};  // a period alone
    if (events_[cur_].name == name) return;
    for (std::size_t i = 0; i < events_.size(); ++i)
      if (events_[i].name == name) {
        cur_ = i;
        return;
      }
    if (events_.size() == 1 && events_[0].samples == 0) {
      events_[0].name = std::string(name);
      return;
    }
    if (events_.size() >= kMaxEvents) {
      cur_ = events_.size() - 1;
      return;
    }
    events_.emplace_back();
    events_.back().name = std::string(name);
    cur_ = events_.size() - 1;
  }
  static constexpr std::string_view kUnknownKernel = "[unknown kernel address]";
  static constexpr std::size_t kMaxEvents = 64;
  struct EventFold {
    std::string name;
    double samples = 0;
    std::unordered_map<std::string, Count, sys::ViewHash, std::equal_to<>> counts;
    std::vector<const std::pair<const std::string, Count>*> order;  // by first appearance
  };
  std::vector<EventFold> events_ = std::vector<EventFold>(1);
  std::size_t cur_ = 0;
  bool awaiting_ = false;
};

// The next occurrence of a needle at or after a position, searched for once per occurrence
// across the whole text rather than once per line.
class NextHit {
 public:
  NextHit(std::string_view text, std::string_view needle) : text_(text), needle_(needle) {}
  // Whether the needle occurs entirely inside [begin, end).
  bool within(std::size_t begin, std::size_t end) {
    if (!searched_ || at_ < begin) {
      at_ = text_.find(needle_, begin);
      searched_ = true;
    }
    return at_ != std::string_view::npos && at_ + needle_.size() <= end;
  }

 private:
  std::string_view text_, needle_;
  std::size_t at_ = 0;
  bool searched_ = false;
};

// The columns a report row holds between its percent cell(s) and the [k]/[.] marker, as
// the header names them ("# Overhead  Command  Shared Object  Symbol").
enum class MidColumn { comm, dso, other };

bool read_header(std::string_view line, std::vector<MidColumn>& cols) {
  auto sym = line.find("Symbol");
  if (sym == std::string_view::npos) return false;
  std::size_t from = line.find("Overhead");
  std::size_t width = 8;
  if (auto self = line.find("Self"); self != std::string_view::npos && self < sym) {
    from = self;
    width = 4;
  }
  if (from == std::string_view::npos || from > sym) return false;
  std::string mid(line.substr(from + width, sym - from - width));
  for (auto p = mid.find("Shared Object"); p != std::string::npos; p = mid.find("Shared Object")) mid[p + 6] = '_';
  cols.clear();
  for (auto t : sys::split_ws(mid)) {
    if (t == "Command" || t == "Pid:Command") cols.push_back(MidColumn::comm);
    else if (t == "Shared_Object") cols.push_back(MidColumn::dso);
    else cols.push_back(MidColumn::other);
  }
  return true;
}

bool looks_like_dso(std::string_view t) {
  return t.front() == '[' || t.find(".so") != std::string_view::npos || t.find('/') != std::string_view::npos;
}

}  // namespace perf_detail
using namespace perf_detail;

std::size_t perf_pick_event(const std::vector<std::pair<std::string, double>>& events) {
  // "cycles:pp" -> "cycles", "cpu_core/cycles/u" -> "cycles".
  auto base = [](std::string_view n) {
    if (auto a = n.find('/'); a != std::string_view::npos) {
      n = n.substr(a + 1);
      n = n.substr(0, n.find('/'));
    }
    return n.substr(0, n.find(':'));
  };
  for (std::string_view want : {"cycles", "cpu-cycles", "cpu-clock", "task-clock"})
    for (std::size_t i = 0; i < events.size(); ++i)
      if (base(events[i].first) == want) return i;
  std::size_t best = 0;
  for (std::size_t i = 1; i < events.size(); ++i)
    if (events[i].second > events[best].second) best = i;
  return best;
}

std::string perf_base_symbol(std::string_view sym) {
  auto plus = sym.find("+0x");
  if (plus != std::string_view::npos && plus > 0) sym = sym.substr(0, plus);
  for (;;) {
    auto dot = sym.rfind('.');
    if (dot == std::string_view::npos || dot == 0) break;
    auto tail = sym.substr(dot + 1);
    bool digits = !tail.empty() && std::all_of(tail.begin(), tail.end(), [](char c) { return c >= '0' && c <= '9'; });
    if (digits || tail == "cold" || tail == "constprop" || tail == "isra" || tail == "part" || tail == "llvm" || tail == "lto_priv") {
      sym = sym.substr(0, dot);
      continue;
    }
    break;
  }
  return std::string(sym);
}

// One pass over the text, line by line, without a vector of all lines. Every line feeds the
// perf-script folder; only lines that can matter to the report/top/legacy layouts (a '%'
// somewhere: every such row has a percent cell; "PerfTop:" frames; the Children/Self header)
// go through the column reader. Other lines can only mark the text as perf-script-like.
// perf script wins only when no report/top/legacy row is found anywhere, as before.
template <>
struct ParserState<PerfProfile> {
  PerfProfile out;
  bool script_like = false, saw_top = false, saw_legacy = false;
  std::vector<PerfSymbol> frame;
  ScriptFolder script;
  std::vector<MidColumn> header;  // the columns before the symbol, when a header names them
  bool header_known = false;
  int lineno = 0;
  // A report row whose symbol may be wrapped onto the next line (mail archives): decided
  // by that line, which may come in the next block.
  std::optional<PerfSymbol> wrap;
  // perf report of several events: one section per event ("# Samples: 97  of event 'cycles:pp'"),
  // each its own 100%: the events (name, samples) and where each one's rows start in `frame`.
  std::vector<std::pair<std::string, double>> sections;
  std::vector<std::size_t> section_start;
  void feed(std::string_view text);
  bool command_line(std::string_view raw);
  void row(std::string_view line);
  void event_section(std::string_view header_line, std::size_t of_event);
  Parsed<PerfProfile> finish();
  Parsed<PerfProfile> finish_rows();
};


void ParserState<PerfProfile>::feed(std::string_view text) {
  NextHit percent(text, "%"), perftop(text, "PerfTop:"), children(text, "Children");
  std::size_t pos = 0;
  const std::size_t n = text.size();
  while (pos < n) {
    const char* base = text.data() + pos;
    const void* nlp = std::memchr(base, '\n', n - pos);
    std::size_t len = nlp ? static_cast<std::size_t>(static_cast<const char*>(nlp) - base) : n - pos;
    std::size_t next = nlp ? pos + len + 1 : n;
    ++lineno;
    auto raw = chomp(std::string_view(base, len));
    script.feed(raw, lineno);
    pos = next;
    if (wrap) {
      auto wrapped = clean_tail(tooltext::unquote_mail(raw));
      bool taken = !wrapped.empty() && wrapped.find('%') == std::string_view::npos && sys::split_ws(wrapped).size() == 1;
      if (taken) wrap->symbol = std::string(wrapped);
      else out.damaged.push_back({"sample row without a symbol", wrap->line});
      if (taken) frame.push_back(std::move(*wrap));
      wrap.reset();
      if (taken) continue;
    }
    const std::size_t line_begin = static_cast<std::size_t>(raw.data() - text.data()), line_end = line_begin + raw.size();
    if (!percent.within(line_begin, line_end)) {
      if (command_line(raw)) continue;
      if (perftop.within(line_begin, line_end)) {
        saw_top = true;
        frame.clear();
        continue;
      }
      if (children.within(line_begin, line_end) && raw.find("Self") != std::string_view::npos) {
        out.children_column = true;
        header_known = read_header(tooltext::unquote_mail(raw), header);
        continue;
      }
      if (auto c = raw.find_first_not_of(" \t"); c != std::string_view::npos && (raw[c] == '#' || raw[c] == '>')) {
        auto h = tooltext::unquote_mail(raw);
        if (auto ev = h.find(" of event '"); ev != std::string_view::npos) {
          event_section(h, ev);
          continue;
        }
        if (h.find("Overhead") != std::string_view::npos && read_header(h, header)) {
          header_known = true;
          continue;
        }
      }
      // Without a percent cell no report/top/legacy row can start here.
      if (!script_like) {
        auto line = tooltext::unquote_mail(raw);
        std::size_t after = 0;
        if (!line.empty() && line[0] != '#' && script_header(line, after)) script_like = true;
      }
      continue;
    }
    row(tooltext::unquote_mail(raw));
  }
}

// The command a capture was made with, where the person kept it as its first lines ("perf top
// -C 0 *", "$ perf record -C 0-3 ..."): a perf top layout, and the CPUs it was limited to, whose
// shares are of those CPUs only, not of the machine's.
bool ParserState<PerfProfile>::command_line(std::string_view raw) {
  if (!out.symbols.empty() || !frame.empty()) return false;
  auto l = sys::trim_ws(tooltext::unquote_mail(raw));
  if (sys::starts_with(l, "$ ")) l = sys::trim_ws(l.substr(2));
  const bool top = sys::starts_with(l, "perf top"), record = sys::starts_with(l, "perf record");
  if (!top && !record) return false;
  if (top) saw_top = true;
  const auto w = sys::split_ws(l);
  for (std::size_t i = 2; i < w.size(); ++i) {
    std::string_view list;
    if ((w[i] == "-C" || w[i] == "--cpu") && i + 1 < w.size()) list = w[i + 1];
    else if (sys::starts_with(w[i], "--cpu=")) list = w[i].substr(6);
    else if (sys::starts_with(w[i], "-C") && w[i].size() > 2) list = w[i].substr(2);
    if (!list.empty() && list.find_first_not_of("0123456789,-") == std::string_view::npos) out.cpu_list = std::string(list);
  }
  return true;
}

// "# Samples: 97  of event 'cycles:pp'" (counts may be "3K"): a new event's section of rows.
void ParserState<PerfProfile>::event_section(std::string_view h, std::size_t of_event) {
  auto name = h.substr(of_event + 11);
  name = name.substr(0, name.find('\''));
  double samples = 0;
  if (auto at = h.find("Samples:"); at != std::string_view::npos && at < of_event) {
    auto w = sys::split_ws(h.substr(at + 8, of_event - at - 8));
    if (!w.empty()) {
      auto t = w[0];
      double mult = 1;
      if (!t.empty() && (t.back() == 'K' || t.back() == 'M' || t.back() == 'G')) {
        mult = t.back() == 'K' ? 1e3 : t.back() == 'M' ? 1e6 : 1e9;
        t.remove_suffix(1);
      }
      if (auto v = number(t)) samples = *v * mult;
    }
  }
  sections.emplace_back(std::string(name), samples);
  section_start.push_back(frame.size());
}

// A line with a percent cell somewhere: a report/top/legacy row, or a header.
void ParserState<PerfProfile>::row(std::string_view line) {
  if (line.find("PerfTop:") != std::string_view::npos) {
    saw_top = true;
    frame.clear();
    return;
  }
  if (line.find("Children") != std::string_view::npos && line.find("Self") != std::string_view::npos) {
    out.children_column = true;
    header_known = read_header(line, header);
    return;
  }
  auto f = sys::split_ws(line);
  if (f.empty()) return;
  std::size_t k = 0;
  if (f[0] == "-" || f[0] == "+") k = 1;  // TUI fold markers
  if (k >= f.size()) return;
  auto p1 = pct(f[k]);
  if (!p1) {
    // Legacy: "<samples> <pcnt>% <function> <DSO>".
    if (f.size() >= 3 && pct(f[1]) && !is_marker(f[2]) && number(f[0])) {
      PerfSymbol s;
      s.self_pct = *pct(f[1]);
      s.symbol = std::string(f[2]);
      s.dso = f.size() >= 4 ? std::string(f.back()) : "";
      s.kernel = kernel_dso(s.dso);
      s.line = lineno;
      frame.push_back(std::move(s));
      saw_legacy = true;
      return;
    }
    if (!script_like) {
      std::size_t after = 0;
      if (!line.empty() && line[0] != '#' && script_header(line, after)) script_like = true;
    }
    return;
  }
  double self = *p1;
  std::size_t j = k + 1;
  if (j < f.size()) {
    if (auto p2 = pct(f[j])) {
      self = *p2;  // Children, Self
      ++j;
    }
  }
  // The symbol follows the [k]/[.] marker; without one this is a call-graph line.
  std::size_t m = j;
  while (m < f.size() && !is_marker(f[m])) ++m;
  if (m >= f.size()) return;
  PerfSymbol s;
  s.self_pct = self;
  s.kernel = f[m] == "[k]" || f[m] == "[g]" || f[m] == "[G]";
  // The cells between the percents and the marker: Command and Shared Object as the header
  // orders them; without a header, two or more cells are command ... object, and a single
  // cell is the object when it looks like one ("[kernel.kallsyms]", "libc.so.6"), else the
  // command (--sort comm,sym).
  if (header_known && header.size() == m - j) {
    for (std::size_t c = 0; c < header.size(); ++c) {
      if (header[c] == MidColumn::comm) s.comm = std::string(f[j + c]);
      if (header[c] == MidColumn::dso) s.dso = std::string(f[j + c]);
    }
  } else if (m - j >= 2) {
    s.comm = std::string(f[j]);
    s.dso = std::string(f[m - 1]);
  } else if (m - j == 1) {
    if (looks_like_dso(f[j])) s.dso = std::string(f[j]);
    else s.comm = std::string(f[j]);
  }
  if (!s.kernel && !s.dso.empty() && kernel_dso(s.dso) && f[m] != "[.]") s.kernel = true;
  auto rest = line.substr(static_cast<std::size_t>(f[m].data() - line.data()) + 3);
  auto sym = clean_tail(rest);
  s.line = lineno;
  if (sym.empty()) {
    wrap = std::move(s);  // the next line may hold it
    return;
  }
  s.symbol = std::string(sym);
  frame.push_back(std::move(s));
}

// Kernel rows perf could not name: "[unknown]" or a bare address. Their share, for text
// input, is what perf.data's reader computes from its symbol tables.
bool unnamed_kernel_row(const PerfSymbol& s) {
  if (!s.kernel) return false;
  std::string_view sym = s.symbol;
  if (sym == "[unknown]" || sym == "[unknown kernel address]") return true;
  if (sys::starts_with(sym, "0x")) sym.remove_prefix(2);
  return !sym.empty() && is_hex(sym);
}

void set_unresolved(PerfProfile& p) {
  double unnamed = 0;
  for (const auto& s : p.symbols)
    if (unnamed_kernel_row(s)) unnamed += s.self_pct;
  p.unresolved_kernel_pct = unnamed;
  if (unnamed > 0)
    p.symbol_source = "perf printed them as [unknown] or bare addresses (kernel symbols were unreadable where perf report/script ran)";
}

Parsed<PerfProfile> ParserState<PerfProfile>::finish() {
  auto r = finish_rows();
  if (r) set_unresolved(*r);
  return r;
}

Parsed<PerfProfile> ParserState<PerfProfile>::finish_rows() {
  auto& st = *this;
  if (st.wrap) {
    st.out.damaged.push_back({"sample row without a symbol", st.wrap->line});
    st.wrap.reset();
  }
  auto& out = st.out;
  if (st.frame.empty()) {
    if (st.script_like) return st.script.finish();
    return parse_fail("no perf sample rows (perf report/top) or perf script samples");
  }
  out.symbols = std::move(st.frame);
  // Several events' sections: one event's rows, the others named (their shares are of other things).
  if (st.sections.size() > 1 && !st.saw_top) {
    const std::size_t pick = perf_pick_event(st.sections);
    const std::size_t begin = std::min(st.section_start[pick], out.symbols.size());
    const std::size_t end = pick + 1 < st.section_start.size() ? std::min(st.section_start[pick + 1], out.symbols.size()) : out.symbols.size();
    out.symbols = std::vector<PerfSymbol>(std::make_move_iterator(out.symbols.begin() + static_cast<std::ptrdiff_t>(begin)),
                                          std::make_move_iterator(out.symbols.begin() + static_cast<std::ptrdiff_t>(end)));
    out.event = st.sections[pick].first;
    for (std::size_t i = 0; i < st.sections.size(); ++i)
      if (i != pick) out.other_events.push_back(st.sections[i]);
    if (out.symbols.empty()) return parse_fail("perf report: no sample rows in the section of event " + out.event);
  }
  out.command_column = std::any_of(out.symbols.begin(), out.symbols.end(), [](const PerfSymbol& s) { return !s.comm.empty(); });
  out.layout = st.saw_top ? PerfProfile::Layout::top : st.saw_legacy ? PerfProfile::Layout::legacy : PerfProfile::Layout::report;
  return std::move(out);
}

template class LineParser<PerfProfile>;

Parsed<PerfProfile> parse_perf(std::string_view text) { return parse_whole<PerfParser>(text); }

}  // namespace perfgap::parsers
