#include "parsers/nccl_ras.hpp"

#include <fmt/format.h>

#include <optional>

#include "sys/text.hpp"

namespace perfgap::parsers {
namespace ras_detail {

using sys::starts_with;

std::string_view trim(std::string_view s) {
  while (!s.empty() && (s.front() == ' ' || s.front() == '\t')) s.remove_prefix(1);
  while (!s.empty() && (s.back() == ' ' || s.back() == '\t' || s.back() == '\r')) s.remove_suffix(1);
  return s;
}

std::vector<std::string_view> tokens(std::string_view s) {
  std::vector<std::string_view> out;
  std::size_t i = 0;
  while (i < s.size()) {
    while (i < s.size() && (s[i] == ' ' || s[i] == '\t')) ++i;
    std::size_t j = i;
    while (j < s.size() && s[j] != ' ' && s[j] != '\t') ++j;
    if (j > i) out.push_back(s.substr(i, j - i));
    i = j;
  }
  return out;
}

// A non-negative decimal integer that is the whole token.
std::optional<long> integer(std::string_view t) {
  if (t.empty() || t.size() > 12) return std::nullopt;
  long v = 0;
  for (char c : t) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  return v;
}

// The integer at the start of `s` ("12 job processes ..."), and the rest after it.
std::optional<long> leading_integer(std::string_view s, std::string_view* rest = nullptr) {
  std::size_t i = 0;
  while (i < s.size() && s[i] >= '0' && s[i] <= '9') ++i;
  auto v = integer(s.substr(0, i));
  if (v && rest) *rest = s.substr(i);
  return v;
}

bool all_equals(std::string_view s) { return !s.empty() && s.find_first_not_of('=') == std::string_view::npos; }

// "GPU 3 (NVML 5) managed by process 4242 on node 10.0.0.7" or "[process information not found]".
bool parse_rank_where(std::string_view s, RasPeer& p) {
  if (s == "[process information not found]") return true;
  if (!starts_with(s, "GPU ")) return false;
  auto by = s.find(" managed by process ");
  if (by == std::string_view::npos) return false;
  p.gpus = std::string(s.substr(4, by - 4));
  std::string_view rest = s.substr(by + 20);
  auto on = rest.find(" on node ");
  if (on == std::string_view::npos) return false;
  auto pid = integer(rest.substr(0, on));
  if (!pid) return false;
  p.pid = *pid;
  p.node = std::string(rest.substr(on + 9));
  return !p.node.empty();
}

// "Process 4242 on node 10.0.0.7 managing GPU 0" / "... managing GPUs 0,1 (NVML 2,3)".
std::optional<RasPeer> parse_process(std::string_view s, int line) {
  if (!starts_with(s, "Process ")) return std::nullopt;
  std::string_view rest = s.substr(8);
  auto on = rest.find(" on node ");
  if (on == std::string_view::npos) return std::nullopt;
  auto pid = integer(rest.substr(0, on));
  if (!pid) return std::nullopt;
  rest = rest.substr(on + 9);
  auto managing = rest.find(" managing GPU");
  if (managing == std::string_view::npos) return std::nullopt;
  RasPeer p;
  p.pid = *pid;
  p.node = std::string(rest.substr(0, managing));
  rest = rest.substr(managing + 13);
  if (starts_with(rest, "s")) rest.remove_prefix(1);
  p.gpus = std::string(trim(rest));
  p.line = line;
  if (p.node.empty()) return std::nullopt;
  return p;
}

// "Rank 5 -- GPU ...", "Rank 5 has status INIT -- GPU ...", "Rank 5 reported X -- [process information not found]".
std::optional<RasPeer> parse_rank(std::string_view s, int line) {
  if (!starts_with(s, "Rank ")) return std::nullopt;
  std::string_view rest;
  auto r = leading_integer(s.substr(5), &rest);
  if (!r) return std::nullopt;
  auto dash = rest.find(" -- ");
  if (dash == std::string_view::npos) return std::nullopt;
  RasPeer p;
  p.rank = *r;
  p.detail = std::string(trim(rest.substr(0, dash)));
  p.line = line;
  if (!parse_rank_where(rest.substr(dash + 4), p)) return std::nullopt;
  return p;
}

// "26 ranks have launched up to operation 6650" -> {26, 6650}; "6 ranks have not launched any
// operations" -> {6, 0}; "has launched up to operation 60" (a rank line's detail) -> {1, 60}.
std::optional<std::pair<long, long>> launched_count(std::string_view s) {
  long ranks = 1;
  std::string_view rest = s;
  if (auto n = leading_integer(s, &rest)) {
    ranks = *n;
    rest = trim(rest);
    if (!starts_with(rest, "ranks ") && !starts_with(rest, "rank ")) return std::nullopt;
    rest = trim(rest.substr(rest.find(' ')));
  }
  for (std::string_view verb : {"have ", "has "})
    if (starts_with(rest, verb)) rest = rest.substr(verb.size());
  if (starts_with(rest, "not launched any operation")) return std::pair{ranks, 0L};
  constexpr std::string_view k = "launched up to operation ";
  if (!starts_with(rest, k)) return std::nullopt;
  auto op = leading_integer(rest.substr(k.size()));
  if (!op) return std::nullopt;
  return std::pair{ranks, *op};
}

// "[could not find information on 3 processes]"
std::optional<long> unnamed_count(std::string_view s) {
  constexpr std::string_view k = "[could not find information on ";
  if (!starts_with(s, k)) return std::nullopt;
  return leading_integer(s.substr(k.size()));
}

enum class Section { none, summary, comms, errors, warnings };
enum class Block { none, missing, dead, issue, timeout };

}  // namespace ras_detail

template <>
struct ParserState<NcclRas> : FeedsLines<ParserState<NcclRas>> {
  NcclRas m;
  int n = 0;
  ras_detail::Section section = ras_detail::Section::none;
  ras_detail::Block block = ras_detail::Block::none;
  bool totals_header = false;  // the last summary header row was "(total) ..." columns
  bool seen_text = false;
  std::optional<ParseError> fatal;

  void damage(std::string message) {
    if (m.damaged.size() < 1000) m.damaged.push_back({std::move(message), n});
  }

  void line(std::string_view raw) {
    using ras_detail::all_equals, ras_detail::Block, ras_detail::integer, ras_detail::leading_integer, ras_detail::parse_process, ras_detail::parse_rank, ras_detail::Section, ras_detail::starts_with, ras_detail::tokens, ras_detail::trim, ras_detail::unnamed_count;
    ++n;
    if (fatal) return;
    if (raw.size() > 64 * 1024) return damage(fmt::format("a line of {} bytes, longer than any ncclras status line", raw.size()));
    const bool indented = !raw.empty() && (raw[0] == ' ' || raw[0] == '\t');
    std::string_view s = trim(raw);
    if (s.empty()) return;
    if (!seen_text) {
      seen_text = true;
      if (s == "{" || starts_with(s, "{\"") || starts_with(s, "\"nccl_version\"")) {
        fatal = ParseError{"the JSON format of the RAS client (ncclras -f json); give its text status (ncclras without -f json)", n};
        return;
      }
    }
    if (starts_with(s, "NCCL version ")) {
      auto t = tokens(s.substr(13));
      if (!t.empty()) {
        m.nccl_version = std::string(t[0]);
        if (!starts_with(t[0], "2.")) fatal = ParseError{fmt::format("NCCL version {}: not a RAS status format perfgap knows (NCCL 2.x)", t[0]), n};
      }
      return;
    }
    if (starts_with(s, "CUDA runtime version ")) return;
    if (!indented) {
      if (s == "Job summary") {
        section = Section::summary;
        m.job_summary = true;
        return;
      }
      if (starts_with(s, "Communicators...")) {
        section = Section::comms;
        m.comms_section = true;
        return;
      }
      if (s == "Errors") {
        section = Section::errors;
        m.errors_section = true;
        block = Block::none;
        return;
      }
      if (s == "Warnings") {
        section = Section::warnings;
        m.warnings_section = true;
        block = Block::none;
        return;
      }
      if (all_equals(s)) return;
    }
    switch (section) {
      case Section::none:
        return damage(fmt::format("'{}' before the status's Job summary", s.substr(0, 80)));
      case Section::summary: return summary_line(s);
      case Section::comms: return comms_line(s);
      case Section::errors:
      case Section::warnings: return problem_line(s, indented);
    }
  }

  void summary_line(std::string_view s) {
    using ras_detail::all_equals, ras_detail::Block, ras_detail::integer, ras_detail::leading_integer, ras_detail::parse_process, ras_detail::parse_rank, ras_detail::Section, ras_detail::starts_with, ras_detail::tokens, ras_detail::trim, ras_detail::unnamed_count;
    auto t = tokens(s);
    bool numbers = !t.empty();
    for (auto x : t) numbers = numbers && integer(x).has_value();
    if (numbers) {
      // Only the rows under a "(total)" header are the job's totals; the others are the
      // distributions of processes per node and GPUs per process.
      if (totals_header && t.size() == 5) {
        m.nodes = *integer(t[0]);
        m.processes = *integer(t[3]);
        m.gpus = *integer(t[4]);
      } else if (totals_header && t.size() == 3) {
        m.nodes = *integer(t[0]);
        m.processes = *integer(t[1]);
        m.gpus = *integer(t[2]);
      }
      return;
    }
    if (t[0] == "(total)") {
      totals_header = true;
      return;
    }
    totals_header = false;
    if (t[0] == "Nodes" || t[0] == "Processes" || t[0] == "per" || t[0] == "GPUs" || starts_with(s, "The outlier node") ||
        (t[0] == "Node" && s.find(" running process") != std::string_view::npos))
      return;
    damage(fmt::format("'{}' in the job summary", s.substr(0, 80)));
  }

  void comms_line(std::string_view s) {
    using ras_detail::all_equals, ras_detail::Block, ras_detail::integer, ras_detail::leading_integer, ras_detail::parse_process, ras_detail::parse_rank, ras_detail::Section, ras_detail::starts_with, ras_detail::tokens, ras_detail::trim, ras_detail::unnamed_count;
    if (starts_with(s, "Group ") || starts_with(s, "# ")) return;
    if (s == "No communicator data collected!") {
      m.no_comm_data = true;
      return;
    }
    auto t = tokens(s);
    if (t.size() == 8) {
      auto g = integer(t[0]), c = integer(t[1]), nn = integer(t[2]), rpc = integer(t[4]), rig = integer(t[5]);
      if (g && c && nn && rpc && rig) {
        RasCommGroup row;
        row.group = *g;
        row.comms = *c;
        row.nodes = *nn;
        row.ranks_per_node = std::string(t[3]);
        row.ranks_per_comm = *rpc;
        row.ranks_in_group = *rig;
        row.status = std::string(t[6]);
        row.errors = std::string(t[7]);
        row.line = n;
        m.groups.push_back(std::move(row));
        return;
      }
    }
    damage(fmt::format("'{}' in the communicators table", s.substr(0, 80)));
  }

  void problem_line(std::string_view s, bool indented) {
    using ras_detail::all_equals, ras_detail::Block, ras_detail::integer, ras_detail::leading_integer, ras_detail::parse_process, ras_detail::parse_rank, ras_detail::Section, ras_detail::starts_with, ras_detail::tokens, ras_detail::trim, ras_detail::unnamed_count;
    if (!indented) {
      if (s == "INCOMPLETE" && section == Section::errors) {
        block = Block::missing;
        return;
      }
      if (s == "DEAD" && section == Section::errors) {
        block = Block::dead;
        return;
      }
      if (s == "TIMEOUT" && section == Section::warnings) {
        block = Block::timeout;
        return;
      }
      // "#0-1 (9a3e7c0f12ab45cd) ERROR"
      if (starts_with(s, "#")) {
        auto t = tokens(s);
        if (t.size() == 3 && t[1].size() > 2 && t[1].front() == '(' && t[1].back() == ')') {
          RasCommIssue is;
          is.id = std::string(t[0]);
          is.hash = std::string(t[1].substr(1, t[1].size() - 2));
          is.kind = std::string(t[2]);
          is.line = n;
          m.issues.push_back(std::move(is));
          block = Block::issue;
          return;
        }
      }
      block = Block::none;
      return damage(fmt::format("'{}' in the {} section", s.substr(0, 80), section == Section::errors ? "Errors" : "Warnings"));
    }
    if (auto c = unnamed_count(s)) {
      if (block == Block::missing) m.unnamed_missing += *c;
      else if (block == Block::dead) m.unnamed_dead += *c;
      return;
    }
    switch (block) {
      case Block::missing:
        if (starts_with(s, "Missing communicator data from ")) {
          if (auto v = leading_integer(s.substr(31))) m.missing_processes = *v;
          return;
        }
        if (auto p = parse_process(s, n)) {
          m.missing.push_back(std::move(*p));
          return;
        }
        break;
      case Block::dead:
        if (s.find("considered dead") != std::string_view::npos) {
          if (auto v = leading_integer(s)) m.dead_processes = *v;
          return;
        }
        if (auto p = parse_process(s, n)) {
          m.dead.push_back(std::move(*p));
          return;
        }
        break;
      case Block::timeout:
        if (starts_with(s, "Encountered ")) {
          if (auto v = leading_integer(s.substr(12))) m.timeouts = *v;
          return;
        }
        break;
      case Block::issue: {
        auto& is = m.issues.back();
        if (auto r = parse_rank(s, n)) {
          // Its own count ("Rank 7 has launched up to operation 60 -- ..."), else its group's line above.
          if (auto own = ras_detail::launched_count(r->detail)) {
            r->launched = own->second;
            if (is.launched.size() < 64) is.launched.emplace_back(1, own->second);
          } else if (!is.launched.empty()) {
            r->launched = is.launched.back().second;
          }
          if (is.ranks.size() < 4096) is.ranks.push_back(std::move(*r));
          return;
        }
        if (auto c = ras_detail::launched_count(s); c && is.launched.size() < 64) is.launched.push_back(*c);
        if (is.details.size() < 64) is.details.emplace_back(s.substr(0, 200));
        return;
      }
      case Block::none: break;
    }
    damage(fmt::format("'{}' not understood here", s.substr(0, 80)));
  }

  Parsed<NcclRas> finish() {
    if (fatal) return tl::unexpected(*fatal);
    if (!m.job_summary && !m.comms_section) {
      if (!m.damaged.empty()) return parse_fail("no ncclras status: " + m.damaged.front().message, m.damaged.front().line);
      return parse_fail("no ncclras status (its 'Job summary' and 'Communicators' sections)");
    }
    return std::move(m);
  }
};

template class LineParser<NcclRas>;

Parsed<NcclRas> parse_nccl_ras(std::string_view text) { return parse_whole<NcclRasParser>(text); }

}  // namespace perfgap::parsers
