#include "sweep/run.hpp"

#include <unistd.h>

#include <cerrno>
#include <csignal>
#include <cstring>
#include <ctime>

#include <fmt/format.h>

#include "core/node.hpp"
#include "facts/facts.hpp"
#include "sweep/manifest.hpp"
#include "sweep/process.hpp"
#include "sys/output.hpp"
#include "sys/paths.hpp"
#include "sys/sysroot.hpp"
#include "sys/text.hpp"

extern char** environ;

namespace perfgap::sweep {
namespace {

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
tl::expected<std::string, std::string> make_run_dir(const std::string& asked) {
  using tl::unexpected;
  if (!asked.empty()) {
    if (sys::stat_path(asked)) {
      if (!sys::is_directory(asked)) return unexpected("--run-dir " + asked + ": exists and is not a directory");
      if (!sys::is_empty_directory(asked)) return unexpected("--run-dir " + asked + ": not empty (give a new or empty directory)");
      if (!sys::can_access(asked, W_OK)) return unexpected("--run-dir " + asked + ": not writable");
      return asked;
    }
    if (!sys::make_directory(asked)) return unexpected("--run-dir " + asked + ": cannot create: " + std::strerror(errno));
    return asked;
  }
  std::string base = "perfgap-sweep-" + utc(std::time(nullptr), "%Y%m%dT%H%M%SZ");
  for (int i = 1; i < 100; ++i) {
    std::string d = i == 1 ? base : fmt::format("{}-{}", base, i);
    if (sys::make_directory(d)) return d;
    if (errno != EEXIST) return unexpected("cannot create the run directory " + d + ": " + std::strerror(errno));
  }
  return unexpected("cannot create a run directory " + base + "-N in the current directory");
}

Launcher launcher_of(const SweepRequest& rq) {
  Launcher launcher = Launcher::direct;
  if (is_mpi_launcher_name(rq.command[0])) {
    std::string resolved = sys::real_path(rq.exe).value_or(rq.exe);
    launcher = classify_launcher(rq.command[0], resolved, "");
    if (launcher == Launcher::direct) launcher = classify_launcher(rq.command[0], resolved, launcher_version(rq.exe));
  }
  return launcher;
}

// The finished runs, their statistics and decision, and the report (runs cut short by the
// interruption are in the manifest but not in the statistics).
void judge_runs(const SweepRequest& rq, const Manifest& man, const std::string& manifest_path, SweepRun& out) {
  out.data.reserve(rq.settings.size());
  for (const auto& s : rq.settings) out.data.push_back({s, {}});
  std::vector<std::string> inputs{manifest_path};
  for (const auto& r : man.runs) {
    if (r.process.interrupted) continue;
    out.data[r.setting].runs.push_back(r.outcome);
    inputs.push_back(out.run_dir + "/" + r.outcome.file);
  }
  out.decision = decide(out.data, rq.sizes);
  const int stopped_by = out.stopped_by;
  out.interrupted = stopped_by ? fmt::format("sweep interrupted by {} after {} of {} runs",
                                             stopped_by == SIGINT ? "SIGINT" : stopped_by == SIGHUP ? "SIGHUP" : "SIGTERM", inputs.size() - 1,
                                             rq.plan.size())
                               : "";
  auto made = make_findings(out.data, out.decision, out.run_dir, out.interrupted);

  auto& rep = out.report;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = now_rfc3339();
  rep.source.kind = "sweep";
  rep.source.inputs = inputs;
  facts::Facts facts(sys::Sysroot::live(), facts::Options{});
  rep.node = core::describe_node(facts);
  rep.findings = std::move(made.findings);
  rep.recommendation = made.recommendation;
}

}  // namespace

tl::expected<SweepRun, std::string> run_sweep(const SweepRequest& rq, const SweepProgress& progress) {
  const Launcher launcher = launcher_of(rq);
  auto dir = make_run_dir(rq.run_dir);
  if (!dir) return tl::unexpected(dir.error());
  SweepRun out;
  out.run_dir = *dir;
  const std::string& run_dir = out.run_dir;
  const std::string manifest_path = run_dir + "/manifest.json";
  Manifest man;
  man.started_at = now_rfc3339();
  man.command = rq.command;
  man.launcher = launcher == Launcher::open_mpi ? "open-mpi" : "direct";
  man.grid = rq.axes;
  man.settings = rq.settings;
  man.order = rq.plan;
  man.repeat = rq.repeat;
  man.timeout_s = rq.timeout_s;
  man.sizes = rq.sizes;
  auto save_manifest = [&] { return sys::write_atomically(manifest_path, manifest_json(man)); };
  if (auto w = save_manifest(); !w) return tl::unexpected(w.error());

  std::vector<std::string> base_env;
  for (char** e = environ; *e; ++e) base_env.emplace_back(*e);
  RunLimits limits;
  limits.timeout_s = rq.timeout_s;
  const auto& plan = rq.plan;
  const int width = plan.size() >= 1000 ? static_cast<int>(std::to_string(plan.size()).size()) : 3;

  InterruptGuard guard;
  for (std::size_t i = 0; i < plan.size() && !interrupt_signal(); ++i) {
    const auto& p = plan[i];
    const auto& setting = rq.settings[p.setting];
    ManifestRun run;
    run.number = i + 1;
    run.setting = p.setting;
    run.repeat = p.repeat;
    run.argv = launch_argv(rq.command, setting, launcher);
    run.started_at = now_rfc3339();
    const std::string file = fmt::format("{:0{}}-{}.log", i + 1, width, setting.file_part());
    if (progress.started) progress.started(i + 1, plan.size(), setting);
    std::string output;
    run.process = run_process(run.argv, build_environment(base_env, setting), run_dir + "/" + file, limits, output);
    run.outcome = judge_run(run.process, output, setting, rq.timeout_s);
    run.outcome.file = file;
    if (progress.finished) progress.finished(run.outcome);
    man.runs.push_back(std::move(run));
    if (auto w = save_manifest(); !w) return tl::unexpected(w.error());
  }
  out.stopped_by = interrupt_signal();
  man.status = out.stopped_by ? "interrupted" : "complete";
  man.finished_at = now_rfc3339();
  if (auto w = save_manifest(); !w) return tl::unexpected(w.error());
  judge_runs(rq, man, manifest_path, out);
  return out;
}

}  // namespace perfgap::sweep
