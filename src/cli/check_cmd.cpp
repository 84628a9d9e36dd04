// perfgap check: the node checks of this machine or of a captured tree (node/check_run), with
// an optional live profile window beside them (node/profile_window) and the history step
// (history::record_run).
#include <fmt/format.h>

#include <algorithm>
#include <chrono>
#include <ctime>
#include <future>
#include <memory>
#include <nlohmann/json.hpp>
#include <sstream>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "cli/pid_option.hpp"
#include "cli/profile_cmd.hpp"
#include "history/history.hpp"
#include "node/check_run.hpp"
#include "node/profile_window.hpp"
#include "profile/collector.hpp"
#include "report/render.hpp"

namespace perfgap::cli {

namespace {

struct CheckArgs {
  std::string root;
  std::vector<int> pids;
  std::vector<std::string> only, skip;
  bool list = false;
  std::string config;
  bool verbose = false;
  std::string format;  // "" = text
  std::string output;
  std::string dmesg;     // --dmesg FILE
  std::string baseline;  // --baseline HOST.json
  std::string expect;    // --expect FILE
  std::string sample_ms; // --sample-ms N (validated by core::parse_sample_ms)
  bool nvml = false;     // --nvml: perfgap-gpu queries GPUs out of persistence mode too
  int profile = 0;       // --profile N: a live profile window of N s beside the checks (0: none)
  std::string history;   // --history DIR: keep this run, say what changed (config: history)
  std::string node_name; // --node-name NAME: the report's node.name (default: hostname, SLURMD_NODENAME, or a tree's name)
};

std::vector<std::string> split_list(const std::vector<std::string>& items) {
  std::vector<std::string> out;
  for (const auto& item : items) {
    std::stringstream ss(item);
    std::string part;
    while (std::getline(ss, part, ','))
      if (!part.empty()) out.push_back(part);
  }
  return out;
}

std::string render_list(const std::vector<const core::CheckInfo*>& checks, const std::string& format) {
  if (format == "json") {
    nlohmann::ordered_json arr = nlohmann::ordered_json::array();
    for (const auto* c : checks) {
      nlohmann::ordered_json params = nlohmann::ordered_json::object();
      for (const auto& p : c->params) params[std::string(p.name)] = p.default_value;
      std::vector<std::string> reads(c->reads.begin(), c->reads.end());
      arr.push_back({{"id", c->id}, {"layer", c->layer}, {"summary", c->summary}, {"reads", reads}, {"thresholds", params}});
    }
    return arr.dump(2) + "\n";
  }
  std::size_t w = 0;
  for (const auto* c : checks) w = std::max(w, c->id.size());
  std::string out;
  for (const auto* c : checks) out += fmt::format("{:<{}}  {:<16}  {}\n", c->id, w, c->layer, c->summary);
  return out;
}

int run_check(const CheckArgs& a) {
  node::NodeCheckRequest request;
  request.root = a.root;
  request.config = a.config;
  request.dmesg = a.dmesg;
  request.baseline = a.baseline;
  request.expect = a.expect;
  request.only = split_list(a.only);
  request.skip = split_list(a.skip);
  request.pids = a.pids;
  request.started = std::time(nullptr);
  request.nvml = a.nvml;
  request.node_name = a.node_name;
  if (!a.sample_ms.empty()) {
    auto ms = core::parse_sample_ms(a.sample_ms);
    if (!ms) throw UsageError("--sample-ms " + a.sample_ms + ": " + ms.error());
    request.sample = std::chrono::milliseconds(*ms);
  }

  const report::Format format = chosen_format(a.format);
  // A directory (or other unwritable) --output is refused before any check runs.
  if (auto o = check_output(a.output); !o) throw UsageError(o.error());
  if (a.list && format != report::Format::text && format != report::Format::json) throw UsageError("--list takes --format text or json");
  // The config is read once: its selection is listed or run, and its `history:` applies
  // without --history. A bad one is refused before any window or check starts.
  auto selection = node::select_node_checks(request);
  if (!selection) throw UsageError(selection.error());
  if (a.list) {
    auto text = render_list(selection->checks, format == report::Format::json ? "json" : "text");
    auto w = write_output(a.output, text);
    if (!w) throw UsageError(w.error());
    return 0;
  }

  if (a.profile > 0 && !a.root.empty()) throw UsageError(std::string("--profile-seconds: ") + kProfileRootRefusal);
  if (a.profile > profile::kMaxSeconds) throw UsageError(fmt::format("--profile-seconds {}: 1 to {} seconds", a.profile, profile::kMaxSeconds));
  // The profile window runs on its own thread while the checks run: its counters see the node
  // as the checks leave it, and the run takes the longer of the two, not their sum.
  std::future<std::vector<report::Finding>> profiled;
  if (a.profile > 0) profiled = std::async(std::launch::async, [&] { return node::profile_findings(a.profile, a.pids, std::nullopt); });
  auto rep = node::run_node_checks(request, *selection);
  if (profiled.valid()) {
    auto extra = profiled.get();
    if (rep) node::merge_profile_findings(rep->findings, std::move(extra));
  }
  if (!rep) throw UsageError(rep.error());
  std::string history_dir = a.history;
  if (history_dir.empty() && selection->config.history) history_dir = *selection->config.history;
  if (!history_dir.empty()) history::record_run(history_dir, *rep);
  auto w = write_output(a.output, report::render(*rep, format, render_options(a.output, a.verbose, static_cast<long long>(request.started))));
  if (!w) throw UsageError(w.error());
  return rep->has_fail() ? 1 : 0;
}

}  // namespace

CommandRunner add_check_command(CLI::App& app) {
  auto args = std::make_shared<CheckArgs>();
  auto& a = *args;
  auto* cmd = app.add_subcommand("check", "Run the node checks on this machine (or on a captured tree with --root)");
  cmd->add_option("--root", a.root, "Check a captured node tree (a sysroot directory, or a .tar.gz made by perfgap snapshot) instead of the live system");
  cmd->add_option("--pid", a.pids, "Training process to examine (repeatable); default: auto-detect")->check(process_id());
  cmd->add_option("--only", a.only, "Run only these checks: comma list of ids or globs (cpu.*)");
  cmd->add_option("--skip", a.skip, "Skip these checks: comma list of ids or globs");
  cmd->add_flag("--list", a.list, "List every check id with its layer and one line, then exit");
  cmd->add_option("--config", a.config, std::string("Thresholds and only/skip lists (YAML); default ") + node::kDefaultCheckConfig + " when present");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
  using report::Format;
  add_format_option(cmd, a.format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; prometheus: node_exporter textfile; --list: text or json");
  cmd->add_option("--output", a.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_option("--dmesg", a.dmesg, "A saved kernel log to read instead of the live one (or the tree's .perfgap/dmesg.txt)");
  cmd->add_option("--baseline", a.baseline, "A JSON report taken on the host: compare this environment (e.g. a container) with it");
  cmd->add_option("--expect", a.expect, "Hold the node to its kind's expected state (a file of perfgap expect learn): expect.* findings");
  cmd->add_flag("--nvml", a.nvml, "Let perfgap-gpu query GPUs whose persistence mode is off too (without it their gpu checks skip: NVML would initialise them)");
  // The live window is spelled as on profile (--profile-seconds); --profile stays for scripts.
  cmd->add_option("--profile-seconds,--profile", a.profile, "Also run a live profile window of N seconds (1-60) beside the checks and add its perf.* and live.* findings (as perfgap profile)")
      ->type_name("N")
      ->check(CLI::Range(1, 60));
  cmd->add_option("--history", a.history, "Keep this run's report in DIR (bounded, oldest removed) and say what changed since the previous run and since the last run without fail (history.changed, history.since_good; config: history)");
  cmd->add_option("--sample-ms", a.sample_ms, "Fixed live sample window of cpu.steal and placement.shared_cores in ms (10-60000); default: 100 ms, taken on to at most 1000 while their counters cannot decide (config: sample_ms)")
      ->type_name("MS");
  cmd->add_option("--node-name", a.node_name, "The node's name in the report (node.name); default: SLURMD_NODENAME or the hostname, and for a --root tree without one the tree's directory or archive name")
      ->type_name("NAME");
  return [args] { return run_check(*args); };
}

}  // namespace perfgap::cli
