// What `perfgap fleet` does between its options and its output (and what fanout's fleet does on
// the reports it collected): the inputs expanded and read, the measurements (analyze reports)
// set beside the node reports (fleet.pace, the job's ranks, their own verdicts), the nodes
// deduplicated and aggregated, --expect judged, and the fleet report assembled. Rendering
// (the fleet's text view or report::render) stays with the command. Also `expect learn`'s
// reading of the reports it learns from, the same way.
#pragma once

#include <cstddef>
#include <ctime>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "fleet/aggregate.hpp"
#include "fleet/expect.hpp"
#include "fleet/inputs.hpp"
#include "fleet/reader.hpp"
#include "fleet/stats.hpp"
#include "report/model.hpp"

namespace perfgap::fleet {

struct FleetRequest {
  std::vector<std::string> inputs;  // files, directories, globs
  std::string expect_file;          // --expect FILE; empty: none
  OutlierRule rule;
  ReadOptions read;                 // what the output needs of every node's findings (--expect reads them all)
  std::time_t started = 0;          // generated_at
};

struct FleetRun {
  Fleet fleet;                      // the node reports, deduplicated
  std::vector<Unreadable> bad;      // inputs that gave no usable report
  std::size_t measurements = 0;     // analyze reports read
  std::size_t unusable = 0;         // of those, the ones no pace can use (also in `bad`)
  report::Report report;            // source.kind "fleet": the inputs and the fleet's findings
};

// Errors are bad input for exit status 2: an unreadable --expect file, or no usable report at all.
tl::expected<FleetRun, std::string> run_fleet(const FleetRequest& request);

struct LearnRequest {
  std::vector<std::string> inputs;  // files, directories, globs
  double agree_pct = 80;            // 50-100, checked by the caller
  std::string update;               // --update FILE: a reviewed file whose entries are kept; empty: none
};

struct Learned {
  Expectations expectations;
  std::vector<Unreadable> unused;   // inputs that gave no node (measurements included)
};

// expect learn: the node reports read as fleet reads them, then learn (and keep_reviewed).
// Errors are for exit status 2: a bad --update file, no usable node report.
tl::expected<Learned, std::string> learn_expectations(const LearnRequest& request);

}  // namespace perfgap::fleet
