#include "slurm/node_state.hpp"

#include <cctype>

namespace perfgap::slurm {
namespace {

std::vector<std::string_view> lines_of(std::string_view text) {
  std::vector<std::string_view> out;
  while (!text.empty()) {
    auto nl = text.find('\n');
    auto line = text.substr(0, nl);
    if (!line.empty() && line.back() == '\r') line.remove_suffix(1);
    out.push_back(line);
    if (nl == std::string_view::npos) break;
    text.remove_prefix(nl + 1);
  }
  return out;
}

// Where `KEY=` starts a field: at the line start or after a space.
std::string_view::size_type field_at(std::string_view line, std::string_view key, std::string_view::size_type from = 0) {
  for (auto pos = line.find(key, from); pos != std::string_view::npos; pos = line.find(key, pos + 1))
    if (pos == 0 || line[pos - 1] == ' ') return pos;
  return std::string_view::npos;
}

std::string_view word_at(std::string_view line, std::string_view::size_type value_start) {
  auto end = line.find(' ', value_start);
  return line.substr(value_start, end == std::string_view::npos ? std::string_view::npos : end - value_start);
}

std::string_view trim(std::string_view s) {
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.front()))) s.remove_prefix(1);
  while (!s.empty() && std::isspace(static_cast<unsigned char>(s.back()))) s.remove_suffix(1);
  return s;
}

// scontrol appends " [user@2026-11-30T05:31:49]" to the reason it shows.
void split_stamp(std::string_view reason, NodeState& out) {
  reason = trim(reason);
  if (!reason.empty() && reason.back() == ']') {
    auto open = reason.rfind('[');
    if (open != std::string_view::npos) {
      auto stamp = reason.substr(open + 1, reason.size() - open - 2);
      bool stamp_like = stamp.find('@') != std::string_view::npos && stamp.find(' ') == std::string_view::npos;
      if (stamp_like && (open == 0 || reason[open - 1] == ' ')) {
        out.reason_stamp = std::string(stamp);
        reason = trim(reason.substr(0, open));
      }
    }
  }
  out.reason = std::string(reason);
}

// Slurm prints some flags in full ("IDLE+MAINTENANCE+RESERVED" for a node in a maintenance
// reservation, 23.02 and later) and sinfo in other words; one spelling each here.
std::string canonical_flag(const std::string& word) {
  if (word == "DRAINED" || word == "DRAINING") return "DRAIN";
  if (word == "MAINTENANCE") return "MAINT";
  if (word == "FAILING") return "FAIL";
  if (word == "RESERVATION") return "RESERVED";
  return word;
}

}  // namespace

std::string NodeState::state_text() const {
  std::string s = base;
  for (const auto& f : flags) s += "+" + f;
  return s;
}

tl::expected<NodeState, std::string> parse_node_state(std::string_view text, std::string_view node) {
  if (node.empty()) return tl::unexpected(std::string("no node name to look for"));
  for (auto line : lines_of(text)) {
    auto name_at = field_at(line, "NodeName=");
    if (name_at == std::string_view::npos || word_at(line, name_at + 9) != node) continue;
    NodeState st;
    st.name = std::string(node);
    auto state_at = field_at(line, "State=", name_at);
    if (state_at == std::string_view::npos) return tl::unexpected("no State= field for node " + st.name);
    auto state = word_at(line, state_at + 6);
    if (state.empty()) return tl::unexpected("empty State= for node " + st.name);
    bool first = true;
    while (!state.empty()) {
      auto plus = state.find('+');
      auto part = state.substr(0, plus);
      state = plus == std::string_view::npos ? std::string_view{} : state.substr(plus + 1);
      // sinfo-style suffixes (IDLE*, ALLOC~): '*' is "not responding"; the others are
      // power states this code does not act on.
      while (!part.empty() && std::string_view("*~#!%$@^-").find(part.back()) != std::string_view::npos) {
        if (part.back() == '*') st.flags.insert("NOT_RESPONDING");
        part.remove_suffix(1);
      }
      std::string word;
      for (char c : part) word += static_cast<char>(std::toupper(static_cast<unsigned char>(c)));
      if (word.empty()) continue;
      if (first) st.base = word;
      else st.flags.insert(canonical_flag(word));
      first = false;
    }
    if (st.base.empty()) return tl::unexpected("unreadable State= for node " + st.name);
    // A base state written as DRAINED/DRAINING (sinfo's words) is a drained node.
    if (st.base == "DRAINED" || st.base == "DRAINING" || st.base == "DRAIN") {
      st.flags.insert("DRAIN");
      st.base = st.base == "DRAINING" ? "ALLOCATED" : "IDLE";
    }
    auto reason_at = field_at(line, "Reason=", state_at);
    if (reason_at != std::string_view::npos) split_stamp(line.substr(reason_at + 7), st);
    if (st.reason == "(null)" || st.reason == "none") st.reason.clear();
    return st;
  }
  return tl::unexpected("no line for node " + std::string(node) + " in scontrol's output");
}

std::string drain_reason(const std::vector<std::string>& failing_ids) {
  constexpr std::size_t kMax = 200;
  std::string reason(kReasonPrefix);
  reason += ' ';
  std::size_t shown = 0;
  for (const auto& id : failing_ids) {
    std::string more = " +" + std::to_string(failing_ids.size() - shown) + " more";
    if (shown > 0 && reason.size() + 1 + id.size() + more.size() > kMax) break;
    reason += (shown ? "," : "") + id;
    ++shown;
  }
  if (shown < failing_ids.size()) reason += " +" + std::to_string(failing_ids.size() - shown) + " more";
  return reason;
}

Decision decide(const NodeState& state, const std::vector<std::string>& failing_ids) {
  Decision d;
  const std::string shown_reason = state.reason.empty() ? "no reason" : "reason \"" + state.reason + "\"";
  const bool ours = state.drained() && state.drained_by_perfgap() && !state.has("FAIL") && !state.has("MAINT");
  if (!failing_ids.empty()) {
    d.reason = drain_reason(failing_ids);
    if (ours) {
      if (state.reason == d.reason) {
        d.why = "already drained by perfgap";
      } else {
        d.action = Action::drain;
        d.why = "own drain updated (was \"" + state.reason + "\")";
      }
    } else if (state.offline()) {
      d.why = "left alone: " + state.state_text() + " for someone else's " + shown_reason;
    } else {
      d.action = Action::drain;
      d.why = "drained (was " + state.state_text() + ")";
    }
    return d;
  }
  if (ours) {
    if (state.reboot_pending()) {
      d.why = "own drain kept: a reboot is pending";
    } else {
      d.action = Action::resume;
      d.why = "resumed own drain (" + shown_reason + ")";
    }
  } else if (state.offline()) {
    d.why = "left alone: " + state.state_text() + " for someone else's " + shown_reason;
  } else {
    d.why = "node " + state.state_text();
  }
  return d;
}

}  // namespace perfgap::slurm
