// perfgap profile [--seconds N] [--pid PID...]: one bounded, read-only window on the live
// system (node/profile_window: profile/collector, judged by checks/live into the perf.*,
// perf_stat.dtlb and live.* findings).
#include "cli/profile_cmd.hpp"

#include <ctime>
#include <memory>

#include <fmt/format.h>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "cli/pid_option.hpp"
#include "node/profile_window.hpp"
#include "profile/collector.hpp"
#include "report/render.hpp"

namespace perfgap::cli {
namespace {

struct ProfileArgs {
  int seconds = profile::kDefaultSeconds;
  std::vector<int> pids;
  std::string root, format, output;
  std::optional<double> rated_mhz;
  bool verbose = false;
};

int run_profile(const ProfileArgs& a) {
  if (!a.root.empty()) throw UsageError(kProfileRootRefusal);
  if (auto o = check_output(a.output); !o) throw UsageError(o.error());
  const auto started = std::time(nullptr);
  auto rep = node::profile_report(a.seconds, a.pids, a.rated_mhz, started);
  auto w = write_output(a.output, report::render(rep, chosen_format(a.format), render_options(a.output, a.verbose, static_cast<long long>(started))));
  if (!w) throw UsageError(w.error());
  return rep.has_fail() ? 1 : 0;
}

}  // namespace

CommandRunner add_profile_command(CLI::App& app) {
  auto a = std::make_shared<ProfileArgs>();
  auto* cmd = app.add_subcommand("profile", "Measure the live system for a bounded window (read-only): kernel hot frames, dTLB misses, busy MHz, idle residency, training threads' scheduling");
  // One spelling of the live window on every command (check --profile-seconds too); --seconds
  // stays for the scripts that use it.
  cmd->add_option("--profile-seconds,--seconds", a->seconds,
                  fmt::format("Length of the window in seconds (1-{}; default {}); the run takes at most one second more", profile::kMaxSeconds, profile::kDefaultSeconds))
      ->type_name("N")
      ->check(CLI::Range(1, profile::kMaxSeconds));
  cmd->add_option("--pid", a->pids, "Training process to examine (repeatable); default: auto-detect as check does")->check(process_id());
  cmd->add_option("--rated-mhz", a->rated_mhz, "The CPU's rated maximum (turbo) MHz for the busy cores; default: cpuinfo_max_freq")->check(CLI::PositiveNumber);
  cmd->add_option("--root", a->root, "Refused: a captured tree cannot be profiled (exit 2)");
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit and prometheus as check's");
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_profile(*a); };
}

}  // namespace perfgap::cli
