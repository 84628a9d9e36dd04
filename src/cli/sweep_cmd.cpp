// perfgap sweep --env NAME=v1,v2,... [--repeat N] [--sizes LIST] [--timeout S] [--run-dir DIR] -- CMD...
// Runs CMD once per setting and repeat (interleaved), keeps every raw output and a manifest
// in the run directory, and reports per setting and size the median busbw with the
// recommendation (sweep/run: the runs and their judging; docs/SWEEP.md).
#include <fmt/format.h>
#include <unistd.h>

#include <cstdio>
#include <ctime>
#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "parsers/nccl_tests.hpp"
#include "report/render.hpp"
#include "sweep/run.hpp"
#include "sweep/sweep.hpp"
#include "sys/executable.hpp"
#include "sys/spawn.hpp"

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

  sweep::SweepRequest request;
  request.command = a.command;
  request.exe = exe;
  request.axes = std::move(*axes);
  request.settings = settings;
  request.plan = plan;
  request.repeat = a.repeat;
  request.timeout_s = a.timeout_s;
  request.sizes = sizes;
  request.run_dir = a.run_dir;
  sweep::SweepProgress progress;
  if (::isatty(2)) {
    progress.started = [](std::size_t number, std::size_t total, const sweep::Setting& setting) {
      std::fprintf(stderr, "perfgap sweep: run %zu/%zu %s ...", number, total, setting.label().c_str());
    };
    progress.finished = [](const sweep::RunOutcome& outcome) { std::fprintf(stderr, " %s\n", outcome.ok ? "ok" : outcome.problem.c_str()); };
  }
  auto swept = sweep::run_sweep(request, progress);
  if (!swept) throw UsageError(swept.error());
  auto& rep = swept->report;
  const auto& data = swept->data;
  const int stopped_by = swept->stopped_by;

  const report::Format format = chosen_format(a.format);
  std::string text;
  if (format != report::Format::text) {
    if (format == report::Format::html) rep.charts.push_back(sweep::busbw_chart(data));
    text = report::render(rep, format, render_options(a.output, a.verbose, static_cast<long long>(std::time(nullptr))));
  } else {
    // The sweep's own text view (the table of settings and the recommendation).
    sweep::TextContext ctx{sys::quote_command(a.command), swept->run_dir, a.verbose, output_is_stdout(a.output) && color_wanted()};
    text = sweep::render_text(rep, data, swept->decision, ctx);
    if (stopped_by) text += fmt::format("\n{}: the table and the recommendation use the finished runs only\n", swept->interrupted);
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
