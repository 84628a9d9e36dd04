#include "slurm/health_run.hpp"

#include <algorithm>
#include <set>

#include <fmt/format.h>

#include "core/config.hpp"
#include "slurm/locate.hpp"
#include "slurm/node_state.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"

namespace perfgap::slurm {
namespace {

using std::chrono::milliseconds;

milliseconds left_until(HealthClock::time_point deadline) {
  return std::max(milliseconds(0), std::chrono::duration_cast<milliseconds>(deadline - HealthClock::now()));
}

bool matches_any(const std::vector<std::string>& patterns, const std::string& id) {
  for (const auto& p : patterns)
    if (core::id_matches(p, id)) return true;
  return false;
}

std::string first_output_line(std::string text) {
  while (!text.empty() && (text.back() == '\n' || text.back() == ' ')) text.pop_back();
  auto nl = text.find('\n');
  return nl == std::string::npos ? text : text.substr(0, nl);
}

}  // namespace

std::string seconds_text(HealthClock::duration d) {
  return fmt::format("{:.1f}s", std::chrono::duration<double>(d).count());
}

node::NodeCheckRequest health_check_request(const HealthConfig& cfg, const std::string& node, milliseconds budget) {
  node::NodeCheckRequest request;
  request.root = expand_node(cfg.check.root, node);
  request.config = expand_node(cfg.check.config, node);
  request.dmesg = expand_node(cfg.check.dmesg, node);
  request.baseline = expand_node(cfg.check.baseline, node);
  request.expect = expand_node(cfg.check.expect, node);
  request.only = cfg.checks;
  request.skip = cfg.skip;
  request.check_timeout = std::max(milliseconds(100), budget);
  request.sample = milliseconds(cfg.sample_ms);
  request.sample_max = milliseconds(kHealthSampleMaxMs);
  return request;
}

HealthVerdict judge_health(const HealthConfig& cfg, const std::vector<report::Finding>& findings) {
  std::set<std::string> ids, drain_ids, other;
  for (const auto& f : findings) {
    ids.insert(f.id);
    if (f.status != report::Status::fail) continue;
    if (cfg.drain_on.empty() || matches_any(cfg.drain_on, f.id)) drain_ids.insert(f.id);
    else other.insert(f.id);
  }
  HealthVerdict verdict;
  verdict.checks_run = ids.size();
  // Hardware the configuration drains on whatever the finding's status (an Xid listed in
  // drain_on_xids, an RDMA counter over its drain_on_counters threshold).
  for (auto& r : hardware_drain_reasons(cfg, findings)) drain_ids.insert(std::move(r));
  verdict.failing.assign(drain_ids.begin(), drain_ids.end());
  verdict.other.assign(other.begin(), other.end());
  return verdict;
}

std::string act_on_node(const HealthConfig& cfg, const std::string& node, const std::vector<std::string>& failing,
                        HealthClock::time_point deadline, bool dry_run) {
  auto scontrol = find_slurm_command("scontrol", cfg.scontrol);
  if (!scontrol) return "error: scontrol not found (PATH, next to slurmd, /usr/bin, /usr/local/bin, /opt/slurm/bin); node left as it is";
  sys::CommandOptions run_opts;
  if (auto conf = find_slurm_conf(cfg.slurm_conf)) run_opts.env.emplace_back("SLURM_CONF", conf->path);
  auto call = [&](const std::vector<std::string>& argv) {
    run_opts.timeout = std::max(milliseconds(1), std::min(left_until(deadline), milliseconds(15000)));
    return sys::run_command(argv, run_opts);
  };
  auto trouble = [&](const sys::CommandResult& r, const std::string& what) -> std::string {
    if (!r.started) return "error: " + what + ": " + r.error;
    if (r.timed_out) return "error: " + what + " did not answer within " + seconds_text(run_opts.timeout) + " (killed)";
    if (r.status != 0) return fmt::format("error: {} exited {}: {}", what, r.status, first_output_line(r.err.empty() ? r.out : r.err));
    return "";
  };

  auto shown = call({scontrol->path, "show", "node", "-o", node});
  if (auto t = trouble(shown, "scontrol show node " + node); !t.empty()) return t + "; node left as it is";
  auto state = parse_node_state(shown.out, node);
  if (!state) return "error: " + state.error() + "; node left as it is";
  auto decision = decide(*state, failing);
  if (decision.action == Action::none) return decision.why;
  std::vector<std::string> update = {scontrol->path, "update", "nodename=" + node};
  if (decision.action == Action::drain) {
    update.push_back("state=drain");
    update.push_back("reason=" + decision.reason);
  } else {
    update.push_back("state=resume");
  }
  if (dry_run) return "dry run, would run: " + sys::quote_command(update) + " (" + decision.why + ")";
  auto updated = call(update);
  if (auto t = trouble(updated, "scontrol update"); !t.empty()) return t + " (wanted: " + decision.why + ")";
  std::string action = decision.why;
  if (decision.action == Action::drain) action += " reason=\"" + decision.reason + "\"";
  return action;
}

}  // namespace perfgap::slurm
