// One `perfgap health` run's work below the CLI: the node check request its configuration
// makes, what the finished checks mean for the node (which failing ids drain), and bringing
// the node's Slurm state in line through scontrol. The run's lock, watchdog and log line stay
// with the command (cli/health_cmd.cpp).
#pragma once

#include <chrono>
#include <cstddef>
#include <string>
#include <vector>

#include "node/check_run.hpp"
#include "report/model.hpp"
#include "slurm/health_config.hpp"

namespace perfgap::slurm {

using HealthClock = std::chrono::steady_clock;

// A duration as the run's log line writes it: "1.5s".
std::string seconds_text(HealthClock::duration d);

// The checks of a health run on `node`: the configuration's check settings ({node} expanded),
// its checks and skip lists, and `budget` (the time limit less what the scontrol calls need)
// as the checks' deadline.
node::NodeCheckRequest health_check_request(const HealthConfig& cfg, const std::string& node, std::chrono::milliseconds budget);

// What a finished check run means for the node.
struct HealthVerdict {
  std::vector<std::string> failing;  // drain-worthy: failing ids drain_on names (all when empty), and the hardware drains
  std::vector<std::string> other;    // failing ids that do not drain
  std::size_t checks_run = 0;        // distinct ids in the report
};
HealthVerdict judge_health(const HealthConfig& cfg, const std::vector<report::Finding>& findings);

// Reads the node's state (scontrol show node) and, when decide() asks for it, drains or resumes
// it (scontrol update; dry_run: says the command instead), each call bounded by `deadline`.
// Returns what happened to the node, for the run's log line; a problem is said there too
// ("error: ...; node left as it is"), never thrown.
std::string act_on_node(const HealthConfig& cfg, const std::string& node, const std::vector<std::string>& failing,
                        HealthClock::time_point deadline, bool dry_run);

}  // namespace perfgap::slurm
