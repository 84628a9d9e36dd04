// A Slurm node's state as `scontrol show node -o NAME` prints it, and what the health check
// does about it. The rules follow NHC's node-mark-offline/online helpers: a node drained,
// failed or in maintenance for someone else's reason is never touched; perfgap resumes only
// its own drains (reason starting with "perfgap:") and never cancels a pending reboot.
#pragma once

#include <set>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::slurm {

inline constexpr std::string_view kReasonPrefix = "perfgap:";

struct NodeState {
  std::string name;
  std::string base;             // IDLE, ALLOCATED, MIXED, DOWN, ... (upper case)
  std::set<std::string> flags;  // DRAIN, FAIL, MAINT, REBOOT_REQUESTED, NOT_RESPONDING, ...
  std::string reason;           // without the "[user@time]" stamp scontrol appends
  std::string reason_stamp;     // "root@2026-11-30T05:31:49", empty when absent

  bool has(std::string_view flag) const { return flags.count(std::string(flag)) > 0; }
  bool drained() const { return has("DRAIN"); }
  // Out of service for a reason a person or Slurm gave (not merely busy).
  bool offline() const { return drained() || has("FAIL") || has("MAINT") || base == "DOWN"; }
  bool reboot_pending() const { return has("REBOOT_REQUESTED") || has("REBOOT_ISSUED"); }
  bool drained_by_perfgap() const { return reason.rfind(kReasonPrefix, 0) == 0; }
  std::string state_text() const;  // IDLE+DRAIN as scontrol wrote it
};

// Parses `scontrol show node -o` output (one line per node) and returns the line of `node`.
// Errors say what is missing ("no line for node n3", "no State= field").
tl::expected<NodeState, std::string> parse_node_state(std::string_view text, std::string_view node);

enum class Action { none, drain, resume };

struct Decision {
  Action action = Action::none;
  std::string reason;  // the drain reason to set (Action::drain)
  std::string why;     // one phrase for the log line
};

// failing_ids: the drain-worthy ids that failed this run (sorted); empty means healthy.
Decision decide(const NodeState& state, const std::vector<std::string>& failing_ids);

// "perfgap: a,b,c"; long lists are cut with "+N more" so the reason stays readable in sinfo.
std::string drain_reason(const std::vector<std::string>& failing_ids);

}  // namespace perfgap::slurm
