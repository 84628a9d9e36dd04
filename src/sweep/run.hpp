// One `perfgap sweep` once its options are checked: the run directory made, the benchmark run
// once per setting and repeat (interleaved) with the manifest kept up to date after every run,
// an interruption honoured, and the runs turned into statistics, a decision and the sweep's
// report. The command (cli/sweep_cmd.cpp) says progress, renders and picks the exit status.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"
#include "sweep/sweep.hpp"

namespace perfgap::sweep {

struct SweepRequest {
  std::vector<std::string> command;  // the benchmark and its arguments
  std::string exe;                   // command[0] as found (sys::find_executable)
  std::vector<Axis> axes;
  std::vector<Setting> settings;     // expand_grid(axes)
  std::vector<PlannedRun> plan;      // plan_runs(settings.size(), repeat)
  int repeat = 3;
  double timeout_s = 900;
  std::vector<std::uint64_t> sizes;  // the sizes that matter; empty: every size >= 1 MiB
  std::string run_dir;               // --run-dir; empty: a new perfgap-sweep-<UTC time> here
};

// Told before and after each run (the command shows them on a terminal).
struct SweepProgress {
  std::function<void(std::size_t number, std::size_t total, const Setting& setting)> started;
  std::function<void(const RunOutcome& outcome)> finished;
};

struct SweepRun {
  std::string run_dir;
  std::vector<SettingRuns> data;   // per setting, the runs that finished (not cut short by the interruption)
  Decision decision;
  int stopped_by = 0;              // the signal that interrupted the sweep, 0: it completed
  std::string interrupted;         // "sweep interrupted by SIGINT after N of M runs", empty when complete
  report::Report report;           // source.kind "sweep": the manifest and the run logs as inputs
};

// Errors are for exit status 2: the run directory unusable, the manifest not writable.
tl::expected<SweepRun, std::string> run_sweep(const SweepRequest& request, const SweepProgress& progress);

}  // namespace perfgap::sweep
