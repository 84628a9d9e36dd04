// `perfgap fanout [options] [-- CHECK-ARGS...]`: inside a Slurm allocation, runs `check` on
// every node through one srun step (one task per node, optionally inside the job's container
// through pyxis, or through a wrapper command such as bwrap or runc), collects REPORT_DIR/<node>.json and hands them to `fleet`. A node that wrote
// no report is passed on anyway, so the fleet names it unreadable instead of forgetting it.
//
// On the nodes srun starts `perfgap fanout --node-task`: it replaces {node} in CHECK-ARGS with
// the node's Slurm name (SLURMD_NODENAME) and runs check with --format json --output
// REPORT_DIR/<node>.json, so per-node trees or configs work: `-- --root /captures/{node}`.
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <memory>

#include <fmt/format.h>

#include "cli/output.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "facts/runtime.hpp"
#include "slurm/fanout.hpp"
#include "slurm/fanout_nodes.hpp"
#include "slurm/locate.hpp"
#include "slurm/pair_search.hpp"
#include "sys/paths.hpp"
#include "sys/process.hpp"
#include "sys/spawn.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::cli {
namespace {

struct FanoutArgs {
  std::string report_dir, nodelist, container_image, container_mounts, container_perfgap, container_wrap;
  std::string srun, perfgap, format, output;
  std::vector<std::string> srun_args, check_args;
  double timeout_s = 900;
  bool verbose = false, dry_run = false, node_task = false;
  // --pairs: the benchmark after -- runs on node pairs (slurm/pair_search).
  bool pairs = false;
  double budget_s = 1800, pairs_ratio = 0.5;
  int confirm_rounds = 4;
};

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

std::string absolute(const std::string& path) {
  auto p = sys::absolute_path(path);
  return p ? sys::lexically_normal(*p) : path;
}

std::string self_executable() {
  auto exe = sys::read_link("/proc/self/exe");
  if (!exe) throw UsageError("cannot find the perfgap binary (/proc/self/exe); give --perfgap PATH");
  return *exe;
}

// On one node: check with {node} expanded, its JSON report into the shared directory.
int run_node_task(const FanoutArgs& a) {
  const std::string node = slurm::self_node_name();
  if (node.empty()) throw UsageError("fanout --node-task: no node name (SLURMD_NODENAME unset, no hostname)");
  if (a.report_dir.empty()) throw UsageError(node + ": fanout --node-task needs --report-dir");
  if (auto v = slurm::validate_check_args(a.check_args); !v) throw UsageError(node + ": " + v.error());
  (void)sys::make_directories(a.report_dir);  // the launcher made it; a shared FS may lag
  std::vector<std::string> words = {"perfgap", "check"};
  for (const auto& arg : a.check_args) words.push_back(slurm::expand_node(arg, node));
  words.insert(words.end(), {"--format", "json", "--output", slurm::report_path(a.report_dir, node)});
  CLI::App app{"perfgap fanout node task"};
  const CommandRunner run_check = add_check_command(app);
  std::vector<char*> argv;
  argv.reserve(words.size());
  for (auto& w : words) argv.push_back(w.data());
  try {
    app.parse(static_cast<int>(argv.size()), argv.data());
  } catch (const CLI::ParseError& e) {
    throw UsageError(node + ": check " + e.what());
  }
  try {
    return run_check();
  } catch (const UsageError& e) {
    throw UsageError(node + ": " + e.what());
  }
}

std::vector<std::string> allocation_nodes(const FanoutArgs& a) {
  auto nodes = slurm::allocation_nodes(a.nodelist, a.pairs);
  if (!nodes) throw UsageError(nodes.error());
  return std::move(*nodes);
}

// fanout --pairs: the benchmark on node pairs, the slow node or link named (slurm/pairs).
int run_pairs(const FanoutArgs& a) {
  if (a.check_args.empty())
    throw UsageError("fanout --pairs needs the benchmark after --: perfgap fanout --pairs --srun-arg=--mpi=pmix -- all_reduce_perf -b 1G -e 1G");
  if (!(a.pairs_ratio > 0 && a.pairs_ratio < 1)) throw UsageError("--pairs-ratio must be between 0 and 1");
  const std::string job = env_or_empty("SLURM_JOB_ID");
  if (job.empty() && !a.dry_run)
    throw UsageError("fanout runs inside a Slurm allocation (SLURM_JOB_ID is unset): start it under salloc or sbatch");
  auto nodes = allocation_nodes(a);
  if (nodes.size() < 3 && !a.dry_run)
    throw UsageError(fmt::format("fanout --pairs needs at least 3 nodes to tell a slow node from a slow pair ({} given)", nodes.size()));
  slurm::PairSearchPlan plan;
  plan.nodes = std::move(nodes);
  if (!a.srun.empty()) plan.srun = a.srun;
  else if (auto found = slurm::find_slurm_command("srun", "")) plan.srun = found->path;
  plan.srun_args = a.srun_args;
  plan.benchmark = a.check_args;
  plan.budget_s = a.budget_s;
  plan.pair_timeout_s = a.timeout_s;
  plan.rule.ratio = a.pairs_ratio;
  plan.max_confirm_rounds = a.confirm_rounds;
  if (a.dry_run) {
    int round = 0;
    for (const auto& pairs : slurm::cover_rounds(plan.nodes)) {
      ++round;
      for (const auto& p : pairs) std::printf("round %d: %s\n", round, sys::quote_command(slurm::pair_srun_command(plan, p)).c_str());
    }
    std::printf("then confirm rounds: each suspect against healthy partners (at most %d rounds)\n", plan.max_confirm_rounds);
    return 0;
  }
  auto res = slurm::run_pair_search(plan, stderr);
  std::fprintf(stderr, "perfgap fanout --pairs: %d round%s, %zu pair run%s in %.1fs%s\n", res.summary.rounds,
               res.summary.rounds == 1 ? "" : "s", res.runs.size(), res.runs.size() == 1 ? "" : "s", res.summary.wall_s,
               res.signal ? fmt::format("; interrupted by signal {}: every benchmark stopped", res.signal).c_str()
               : res.summary.budget_spent ? fmt::format("; time budget of {:.0f}s spent", plan.budget_s).c_str()
                                          : "");
  std::vector<report::Finding> findings = {slurm::pairs_finding(plan.nodes, res.runs, plan.rule, res.summary)};
  int rc = emit_report("fleet", {}, std::move(findings), chosen_format(a.format), a.output, a.verbose);
  if (res.signal) {
    // The report of what was measured is written: now the signal takes its normal course.
    ::signal(res.signal, SIG_DFL);
    ::raise(res.signal);
  }
  return rc;
}

int run_fanout(const FanoutArgs& a) {
  if (a.node_task) return run_node_task(a);
  if (a.pairs) return run_pairs(a);
  if (auto v = slurm::validate_check_args(a.check_args); !v) throw UsageError(v.error());

  const std::string job = env_or_empty("SLURM_JOB_ID");
  if (job.empty() && !a.dry_run)
    throw UsageError("fanout runs inside a Slurm allocation (SLURM_JOB_ID is unset): start it under salloc or sbatch");
  const std::string nodelist = a.nodelist.empty() ? slurm::allocation_nodelist() : a.nodelist;

  slurm::FanoutPlan plan;
  plan.nodes = allocation_nodes(a);
  plan.nodelist = nodelist;
  plan.perfgap = a.perfgap.empty() ? self_executable() : absolute(a.perfgap);
  if (!a.srun.empty()) {
    plan.srun = a.srun;
  } else if (auto found = slurm::find_slurm_command("srun", "")) {
    plan.srun = found->path;
  }
  plan.container_image = a.container_image;
  plan.container_mounts = a.container_mounts;
  plan.container_perfgap = a.container_perfgap;
  if (plan.container_image.empty() && (!a.container_mounts.empty() || !a.container_perfgap.empty()))
    throw UsageError("--container-mounts and --container-perfgap go with --container-image");
  if (!a.container_wrap.empty()) {
    if (!plan.container_image.empty())
      throw UsageError("--container-wrap and --container-image are two ways into a container (a wrapper command, or pyxis): give one");
    auto words = slurm::split_command_words(a.container_wrap);
    if (!words) throw UsageError("--container-wrap '" + a.container_wrap + "': " + words.error());
    plan.container_wrap = std::move(*words);
  }
  if (!plan.container_image.empty() && !a.dry_run) {
    // --container-image is pyxis's option: without pyxis srun refuses it. Said before the
    // step so the user knows the other way in (the plugstack may also live elsewhere).
    facts::Facts here(sys::Sysroot::live(), facts::Options{});
    if (facts::launcher_config(here).pyxis.empty())
      std::fprintf(stderr, "perfgap fanout: no pyxis line in /etc/slurm/plugstack.conf(.d) here: srun may refuse --container-image; "
                           "--container-wrap 'COMMAND' runs each node's check through another container command (bwrap, runc, ...)\n");
  }
  plan.srun_args = a.srun_args;
  plan.check_args = a.check_args;

  // The report directory must be one the nodes share (a home or project file system).
  if (!a.report_dir.empty()) {
    plan.report_dir = absolute(a.report_dir);
  } else if (!a.dry_run) {
    std::string pattern = absolute(fmt::format("perfgap-fanout-{}-XXXXXX", job));
    if (!sys::make_temp_directory(pattern)) throw UsageError(pattern + ": cannot create the report directory: " + std::strerror(errno));
    plan.report_dir = pattern;
  } else {
    plan.report_dir = absolute(fmt::format("perfgap-fanout-{}-XXXXXX", job.empty() ? "JOBID" : job));
  }
  const auto command = slurm::build_srun_command(plan);
  if (a.dry_run) {
    std::printf("%s\n", sys::quote_command(command).c_str());
    return 0;
  }
  auto ran = slurm::run_fanout_step(plan, command, a.timeout_s);
  if (!ran) throw UsageError(ran.error());
  const auto& step = *ran;

  auto collected = slurm::collect_reports(plan);
  const auto& missing = collected.missing;
  FleetRequest fleet;
  fleet.inputs = std::move(collected.files);
  std::fprintf(stderr, "perfgap fanout: %zu node%s, %zu report%s in %s%s%s\n", plan.nodes.size(),
               plan.nodes.size() == 1 ? "" : "s", plan.nodes.size() - missing.size(),
               plan.nodes.size() - missing.size() == 1 ? "" : "s", plan.report_dir.c_str(),
               missing.empty() ? "" : fmt::format(" (none from {})", fmt::join(missing, ",")).c_str(),
               step.timed_out ? fmt::format("; srun stopped after {:.0f}s", a.timeout_s).c_str()
               : step.status > 1 ? fmt::format("; srun exited {}", step.status).c_str() : "");
  fleet.format = a.format;
  fleet.output = a.output;
  fleet.verbose = a.verbose;
  return run_fleet(fleet);
}

}  // namespace

CommandRunner add_fanout_command(CLI::App& app) {
  auto a = std::make_shared<FanoutArgs>();
  auto* cmd = app.add_subcommand("fanout",
                                 "Inside a Slurm allocation: run check on every node through srun, then fleet over the reports "
                                 "(CHECK-ARGS after --; {node} in them becomes each node's name)");
  cmd->add_option("--report-dir", a->report_dir,
                  "Directory the nodes write <node>.json into; must be shared by them (default: a new "
                  "perfgap-fanout-<job>-XXXXXX here)");
  cmd->add_option("--nodelist", a->nodelist, "Nodes to check (Slurm host list); default: the whole allocation");
  cmd->add_option("--container-image", a->container_image, "Run check inside this image (pyxis --container-image)");
  cmd->add_option("--container-mounts", a->container_mounts, "More pyxis mounts SRC:DST[:FLAGS],... (with --container-image)");
  cmd->add_option("--container-perfgap", a->container_perfgap,
                  "perfgap's path inside the image; default: the host binary, mounted read-only at its own path");
  cmd->add_option("--container-wrap", a->container_wrap,
                  "Without pyxis: run each node's check through this command (split like a shell's words, no "
                  "expansion), e.g. 'bwrap --ro-bind /srv/rootfs / --proc /proc --dev /dev --ro-bind /usr/local/bin/perfgap "
                  "/usr/local/bin/perfgap --bind DIR DIR'; it must show perfgap and the report directory at the same paths");
  cmd->add_option("--srun", a->srun, "srun to use; default: srun from PATH");
  cmd->add_option("--srun-arg", a->srun_args, "Extra srun option, repeatable (--srun-arg=--partition=gpu)")->allow_extra_args(false);
  cmd->add_option("--perfgap", a->perfgap, "The perfgap binary the nodes run; default: this one");
  cmd->add_option("--timeout", a->timeout_s, "Seconds the srun step may take before it is cancelled (default 900)")
      ->check(CLI::PositiveNumber);
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus}, "the fleet report's (or --pairs's)");
  cmd->add_option("--output", a->output, "Write the fleet report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence in the fleet report");
  cmd->add_flag("--dry-run", a->dry_run, "Print the srun command line and exit");
  cmd->add_flag("--pairs", a->pairs,
                 "Run the collective benchmark after -- (nccl-tests or perfgap-collbench) on node pairs: disjoint pairs at once, "
                 "rounds covering every node with two partners, then the suspects against healthy partners; names the slow node or link "
                 "(--timeout is then each pair's limit)");
  cmd->add_option("--budget", a->budget_s, "--pairs: seconds the whole search may take; no round starts that would not fit (default 1800)")
      ->check(CLI::PositiveNumber);
  cmd->add_option("--pairs-ratio", a->pairs_ratio,
                  "--pairs: a node or pair below this share of the fleet's median best-pair busbw is slow (default 0.5)");
  cmd->add_option("--confirm-rounds", a->confirm_rounds, "--pairs: at most this many rounds after the cover rounds (default 4)")
      ->check(CLI::Range(0, 100));
  cmd->add_flag("--node-task", a->node_task, "(internal) the per-node task srun starts")->group("");
  cmd->add_option("check_args", a->check_args, "Options for check on every node, after --");
  return [a]() -> int { return run_fanout(*a); };
}

}  // namespace perfgap::cli
