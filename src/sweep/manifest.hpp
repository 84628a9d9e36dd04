// The run directory's manifest.json: what was run, in which order, and how each run ended.
// Rewritten (atomically) after every run, so an interrupted sweep leaves a valid one.
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "sweep/sweep.hpp"

namespace perfgap::sweep {

inline constexpr std::string_view kManifestSchema = "perfgap.sweep-manifest/1";

struct ManifestRun {
  std::size_t number = 0;  // 1-based, as in the log file name
  std::size_t setting = 0;
  int repeat = 0;
  std::vector<std::string> argv;  // as run (with -x NAME for Open MPI)
  std::string started_at;
  ProcessResult process;
  RunOutcome outcome;
};

struct Manifest {
  std::string status = "running";  // running | complete | interrupted
  std::string started_at, finished_at;
  std::vector<std::string> command;
  std::string launcher;  // "direct" | "open-mpi"
  std::vector<Axis> grid;
  std::vector<Setting> settings;
  std::vector<PlannedRun> order;
  int repeat = 0;
  double timeout_s = 0;
  std::vector<std::uint64_t> sizes;
  std::vector<ManifestRun> runs;
};

std::string manifest_json(const Manifest& m);

}  // namespace perfgap::sweep
