// `perfgap health` (also `perfgap-health`): Slurm's HealthCheckProgram / Prolog mode. Runs the
// configured checks in-process, drains this node through scontrol when a drain-worthy check
// fails, resumes only its own drains when they pass again, never touches a node someone else
// took out of service, and writes one log line per run. Everything is bounded by the
// configured time limit: checks, scontrol calls, and a watchdog over the whole run.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdio>
#include <cstdlib>
#include <optional>
#include <ctime>
#include <thread>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/output.hpp"
#include "core/check.hpp"
#include "node/check_run.hpp"
#include "report/render.hpp"
#include "slurm/health_config.hpp"
#include "slurm/health_run.hpp"
#include "slurm/locate.hpp"
#include "sys/dir_lock.hpp"
#include "sys/paths.hpp"
#include "sys/bounded.hpp"
#include "sys/text.hpp"

namespace perfgap::cli {
namespace {

using Clock = slurm::HealthClock;
using slurm::seconds_text;
using std::chrono::milliseconds;

struct HealthArgs {
  std::string config;
  bool dry_run = false;
};

// One syslog-like line per run, to stderr and (appended in one write) to the log file.
class RunLog {
 public:
  RunLog(std::string node, std::string file) : node_(std::move(node)), file_(std::move(file)) {}
  void write(const std::string& message) const {
    std::string line = fmt::format("{} {} perfgap-health[{}]: {}", sys::rfc3339_utc(std::time(nullptr)), node_.empty() ? "-" : node_, ::getpid(), message);
    for (auto& c : line)
      if (c == '\n' || c == '\r') c = ' ';
    line += '\n';
    std::fputs(line.c_str(), stderr);
    std::fflush(stderr);
    if (file_.empty()) return;
    if (!sys::append_to_file(file_, line)) std::fprintf(stderr, "perfgap-health: %s: cannot open the log file\n", file_.c_str());
  }

 private:
  std::string node_, file_;
};

// Where this run stands, gathered into the one log line.
struct Outcome {
  std::string health;   // "ok", "FAIL a,b", "timeout"
  std::string action;   // what happened to the node
  std::string notes;    // non-draining failures, skipped actions
};

// Holds the state dir's lock for this run: Prolog and HealthCheckProgram may overlap.
class RunLock {
 public:
  explicit RunLock(const std::string& dir) {
    if (dir.empty()) return;
    lock_.emplace(dir, "health.lock");
  }
  bool held() const { return !lock_ || lock_->held(); }
  std::string error() const { return lock_ ? lock_->error() : std::string(); }

 private:
  std::optional<sys::DirLock> lock_;
};

int run_health(const HealthArgs& args) {
  const auto started = Clock::now();
  const auto& registry = core::builtin_registry();
  std::string config_path = args.config;
  if (config_path.empty()) {
    const char* env = std::getenv("PERFGAP_HEALTH_CONFIG");
    config_path = env && *env ? env : slurm::kDefaultHealthConfig;
  }
  auto loaded = slurm::load_health_config(config_path, registry);
  if (!loaded) throw UsageError(loaded.error());
  slurm::HealthConfig cfg = std::move(*loaded);
  const std::string self = slurm::self_node_name();
  // {node} in paths: one configuration for several slurmd on one host (multiple-slurmd setups).
  cfg.log_file = slurm::expand_node(cfg.log_file, self);
  cfg.state_dir = slurm::expand_node(cfg.state_dir, self);
  const RunLog log(self, cfg.log_file);
  if (self.empty()) {
    log.write("error: no node name (SLURMD_NODENAME unset and no hostname); nothing checked");
    return 2;
  }

  const auto limit = milliseconds(static_cast<long>(cfg.time_limit_s * 1000));
  const auto deadline = started + limit;
  // The watchdog: whatever blocks (a kernel read no thread can interrupt, a stuck write),
  // the run ends shortly after its limit, with its line in the log.
  std::thread([deadline, log] {
    std::this_thread::sleep_until(deadline + std::chrono::seconds(2));
    log.write("error: watchdog: the run overran its time limit; exiting without finishing");
    std::_Exit(2);
  }).detach();

  const RunLock lock(cfg.state_dir);
  if (!lock.held()) {
    log.write(lock.error().empty() ? "skipped: another perfgap health run holds " + cfg.state_dir + "/health.lock"
                                   : "error: " + lock.error());
    return lock.error().empty() ? 0 : 2;
  }

  std::string context;
  if (const char* c = std::getenv("SLURM_SCRIPT_CONTEXT"); c && *c) context += std::string(" [") + c;
  if (const char* j = std::getenv("SLURM_JOB_ID"); j && *j) context += (context.empty() ? " [job " : " job ") + std::string(j);
  if (!context.empty()) context += "]";

  // Checks get the time limit less what the two scontrol calls may need.
  const auto scontrol_reserve = std::min(milliseconds(10000), limit / 3);
  const auto request = slurm::health_check_request(cfg, self, limit - scontrol_reserve);
  using Result = tl::expected<report::Report, std::string>;
  auto result = sys::run_bounded<Result>([request] { return node::run_node_checks(request); },
                                         std::max(milliseconds(1), limit - scontrol_reserve));

  Outcome outcome;
  std::vector<std::string> failing;  // drain-worthy ids that failed
  std::size_t checks_run = 0;
  if (!result) {
    outcome.health = "timeout";
    outcome.notes = fmt::format("checks did not finish within {}", seconds_text(limit - scontrol_reserve));
    // NHC drains when its watchdog fires: a node whose checks hang is not healthy.
    if (cfg.drain_on_timeout) failing.push_back("timeout");
  } else if (!*result) {
    // Bad input (a check config, a root, a baseline): not the node's fault, so no drain.
    log.write("error: " + result->error() + context);
    return 2;
  } else {
    const auto& rep = **result;
    auto verdict = slurm::judge_health(cfg, rep.findings);
    checks_run = verdict.checks_run;
    failing = std::move(verdict.failing);
    outcome.health = failing.empty() ? "ok" : "FAIL " + fmt::format("{}", fmt::join(failing, ","));
    if (!verdict.other.empty()) outcome.notes = fmt::format("also failing, not draining: {}", fmt::join(verdict.other, ","));
    if (!cfg.state_dir.empty()) {
      // The last report beside the lock: what an operator reads to learn why a node drained.
      if (auto w = write_atomically(cfg.state_dir + "/last.json", report::render_json(rep)); !w)
        outcome.notes += (outcome.notes.empty() ? "" : "; ") + w.error();
    }
  }

  outcome.action = slurm::act_on_node(cfg, self, failing, deadline, args.dry_run);
  std::string line = outcome.health;
  if (!outcome.action.empty()) line += "; " + outcome.action;
  if (!outcome.notes.empty()) line += "; " + outcome.notes;
  line += fmt::format("; {} check{} in {}{}", checks_run, checks_run == 1 ? "" : "s", seconds_text(Clock::now() - started), context);
  log.write(line);
  return failing.empty() ? 0 : 1;
}

}  // namespace

CommandRunner add_health_command(CLI::App& app) {
  auto args = std::make_shared<HealthArgs>();
  auto* cmd = app.add_subcommand("health",
                                 "Slurm HealthCheckProgram/Prolog mode: run the configured checks, drain this node on failure "
                                 "(also run as perfgap-health)");
  cmd->add_option("--config", args->config,
                  std::string("Health configuration (YAML); default $PERFGAP_HEALTH_CONFIG, else ") + slurm::kDefaultHealthConfig);
  cmd->add_flag("--dry-run", args->dry_run, "Read the node's state and say what would be done, without changing it");
  return [args]() -> int { return run_health(*args); };
}

}  // namespace perfgap::cli
