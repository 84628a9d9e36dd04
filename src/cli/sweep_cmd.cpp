// perfgap sweep --env NAME=v1,v2,... [--repeat N] [--sizes LIST] [--timeout S] [--run-dir DIR] -- CMD...
// Runs CMD once per setting and repeat (interleaved), keeps every raw output and a manifest
// in the run directory, and reports per setting and size the median busbw with the
// recommendation (src/sweep, docs/SWEEP.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstdlib>
#include <cstring>
#include <ctime>
#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "core/node.hpp"
#include "parsers/nccl_tests.hpp"
#include "report/render.hpp"
#include "sweep/manifest.hpp"
#include "sweep/process.hpp"
#include "sys/executable.hpp"
#include "sys/paths.hpp"
#include "sweep/sweep.hpp"
#include "sys/text.hpp"
#include "sys/spawn.hpp"

extern char** environ;

namespace perfgap::cli {
namespace {

struct SweepArgs {
  std::vector<std::string> env;
  int repeat = 3;
  std::string sizes;
  double timeout_s = 900;
  std::string run_dir;
  std::string format;
  std::string output;
  bool verbose = false;
  std::vector<std::string> command;
};

std::string utc(std::time_t t, const char* fmt) {
  std::tm tm{};
  ::gmtime_r(&t, &tm);
  char buf[40];
  std::strftime(buf, sizeof buf, fmt, &tm);
  return buf;
}

std::string now_rfc3339() { return sys::rfc3339_utc(std::time(nullptr)); }

// --run-dir: an empty or new directory (never mix two sweeps' files); default: a new
// perfgap-sweep-<UTC time> in the current directory.
std::string make_run_dir(const std::string& asked) {
  if (!asked.empty()) {
    if (sys::stat_path(asked)) {
      if (!sys::is_directory(asked)) throw UsageError("--run-dir " + asked + ": exists and is not a directory");
      if (!sys::is_empty_directory(asked)) throw UsageError("--run-dir " + asked + ": not empty (give a new or empty directory)");
      if (!sys::can_access(asked, W_OK)) throw UsageError("--run-dir " + asked + ": not writable");
      return asked;
    }
    if (!sys::make_directory(asked)) throw UsageError("--run-dir " + asked + ": cannot create: " + std::strerror(errno));
    return asked;
  }
  std::string base = "perfgap-sweep-" + utc(std::time(nullptr), "%Y%m%dT%H%M%SZ");
  for (int i = 1; i < 100; ++i) {
    std::string d = i == 1 ? base : fmt::format("{}-{}", base, i);
    if (sys::make_directory(d)) return d;
    if (errno != EEXIST) throw UsageError("cannot create the run directory " + d + ": " + std::strerror(errno));
  }
  throw UsageError("cannot create a run directory " + base + "-N in the current directory");
}


int run_sweep(const SweepArgs& a) {
  auto axes = sweep::parse_axes(a.env);
  if (!axes) throw UsageError(axes.error());
  std::vector<std::uint64_t> sizes;
  if (!a.sizes.empty()) {
    auto s = parsers::parse_sizes(a.sizes);
    if (!s) throw UsageError("--sizes " + a.sizes + ": " + s.error().describe());
    sizes = *s;
  }
  if (a.command.empty()) throw UsageError("sweep: give the benchmark after --: perfgap sweep --env NAME=v1,v2 -- CMD ARGS...");
  const std::string exe = sys::find_executable(a.command[0]);
  if (exe.empty()) throw UsageError(fmt::format("sweep: cannot run '{}': not found or not executable", a.command[0]));
  const auto settings = sweep::expand_grid(*axes);
  const auto plan = sweep::plan_runs(settings.size(), a.repeat);
  if (plan.size() > 100000) throw UsageError(fmt::format("sweep: {} runs ({} settings x {} repeats) is too many", plan.size(), settings.size(), a.repeat));
  if (auto o = check_output(a.output); !o) throw UsageError("--output " + o.error());

  sweep::Launcher launcher = sweep::Launcher::direct;
  if (sweep::is_mpi_launcher_name(a.command[0])) {
    std::string resolved = sys::real_path(exe).value_or(exe);
    launcher = sweep::classify_launcher(a.command[0], resolved, "");
    if (launcher == sweep::Launcher::direct) launcher = sweep::classify_launcher(a.command[0], resolved, sweep::launcher_version(exe));
  }

  const std::string run_dir = make_run_dir(a.run_dir);
  const std::string manifest_path = run_dir + "/manifest.json";
  sweep::Manifest man;
  man.started_at = now_rfc3339();
  man.command = a.command;
  man.launcher = launcher == sweep::Launcher::open_mpi ? "open-mpi" : "direct";
  man.grid = *axes;
  man.settings = settings;
  man.order = plan;
  man.repeat = a.repeat;
  man.timeout_s = a.timeout_s;
  man.sizes = sizes;
  auto save_manifest = [&] {
    auto w = write_atomically(manifest_path, sweep::manifest_json(man));
    if (!w) throw UsageError(w.error());
  };
  save_manifest();

  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) base_env.emplace_back(*e);
  sweep::RunLimits limits;
  limits.timeout_s = a.timeout_s;
  const bool progress = ::isatty(2);
  const int width = plan.size() >= 1000 ? static_cast<int>(std::to_string(plan.size()).size()) : 3;

  sweep::InterruptGuard guard;
  for (std::size_t i = 0; i < plan.size() && !sweep::interrupt_signal(); ++i) {
    const auto& p = plan[i];
    const auto& setting = settings[p.setting];
    sweep::ManifestRun run;
    run.number = i + 1;
    run.setting = p.setting;
    run.repeat = p.repeat;
    run.argv = sweep::launch_argv(a.command, setting, launcher);
    run.started_at = now_rfc3339();
    const std::string file = fmt::format("{:0{}}-{}.log", i + 1, width, setting.file_part());
    if (progress) std::fprintf(stderr, "perfgap sweep: run %zu/%zu %s ...", i + 1, plan.size(), setting.label().c_str());
    std::string output;
    run.process = sweep::run_process(run.argv, sweep::build_environment(base_env, setting), run_dir + "/" + file, limits, output);
    run.outcome = sweep::judge_run(run.process, output, setting, a.timeout_s);
    run.outcome.file = file;
    if (progress) std::fprintf(stderr, " %s\n", run.outcome.ok ? "ok" : run.outcome.problem.c_str());
    man.runs.push_back(std::move(run));
    save_manifest();
  }
  const int stopped_by = sweep::interrupt_signal();
  man.status = stopped_by ? "interrupted" : "complete";
  man.finished_at = now_rfc3339();
  save_manifest();

  // Runs cut short by the interruption are in the manifest but not in the statistics.
  std::vector<sweep::SettingRuns> data;
  data.reserve(settings.size());
  for (const auto& s : settings) data.push_back({s, {}});
  std::vector<std::string> inputs{manifest_path};
  for (const auto& r : man.runs) {
    if (r.process.interrupted) continue;
    data[r.setting].runs.push_back(r.outcome);
    inputs.push_back(run_dir + "/" + r.outcome.file);
  }
  const auto decision = sweep::decide(data, sizes);
  const std::string interrupted =
      stopped_by ? fmt::format("sweep interrupted by {} after {} of {} runs", stopped_by == SIGINT ? "SIGINT" : stopped_by == SIGHUP ? "SIGHUP" : "SIGTERM", inputs.size() - 1, plan.size()) : "";
  auto made = sweep::make_findings(data, decision, run_dir, interrupted);

  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = now_rfc3339();
  rep.source.kind = "sweep";
  rep.source.inputs = inputs;
  facts::Facts facts(sys::Sysroot::live(), facts::Options{});
  rep.node = core::describe_node(facts);
  rep.findings = std::move(made.findings);
  rep.recommendation = made.recommendation;

  const report::Format format = chosen_format(a.format);
  std::string text;
  if (format != report::Format::text) {
    if (format == report::Format::html) rep.charts.push_back(sweep::busbw_chart(data));
    text = report::render(rep, format, render_options(a.output, a.verbose, static_cast<long long>(std::time(nullptr))));
  } else {
    // The sweep's own text view (the table of settings and the recommendation).
    sweep::TextContext ctx{sys::quote_command(a.command), run_dir, a.verbose, output_is_stdout(a.output) && color_wanted()};
    text = sweep::render_text(rep, data, decision, ctx);
    if (stopped_by) text += fmt::format("\n{}: the table and the recommendation use the finished runs only\n", interrupted);
  }
  auto w = write_output(a.output, text);
  if (!w) throw UsageError(w.error());
  // Interrupted: the shell's convention (128 + signal), so a script can tell a partial sweep
  // from a finished one; the report and the manifest of the finished runs are written first.
  if (stopped_by) return 128 + stopped_by;
  for (const auto& f : rep.findings)
    if (f.id == "sweep.result" && f.status == report::Status::error) return 1;
  return rep.has_fail() ? 1 : 0;
}

}  // namespace

CommandRunner add_sweep_command(CLI::App& app) {
  auto args = std::make_shared<SweepArgs>();
  auto* cmd = app.add_subcommand("sweep", "Run a benchmark once per setting of environment variables and recommend a value with its evidence");
  cmd->add_option("--env", args->env, "NAME=v1,v2,... (repeatable: a grid); the first value is the baseline, `unset` removes the variable")
      ->allow_extra_args(false);
  cmd->add_option("--repeat", args->repeat, "Runs per setting, interleaved (default 3; 1 cannot judge noise)")->check(CLI::Range(1, 1000));
  cmd->add_option("--sizes", args->sizes, "Message sizes that matter (1M,64M,1G; K/M/G are powers of 1024); default every size >= 1 MiB");
  cmd->add_option("--timeout", args->timeout_s, "Seconds per run before the benchmark is stopped (default 900; 0: none)")
      ->check(CLI::NonNegativeNumber);
  cmd->add_option("--run-dir", args->run_dir, "Directory for raw outputs and manifest.json (new or empty; default ./perfgap-sweep-<UTC time>)");
  using report::Format;
  add_format_option(cmd, args->format, {Format::text, Format::json, Format::html}, "html: one self-contained page with the busbw chart");
  cmd->add_option("--output", args->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", args->verbose, "Show every size, every run and all evidence");
  cmd->add_option("command", args->command, "The benchmark and its arguments, after --");
  return [args]() { return run_sweep(*args); };
}

}  // namespace perfgap::cli
