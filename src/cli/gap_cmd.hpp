#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/model.hpp"

namespace perfgap::cli {

struct GapArgs {
  std::string reference;  // a step log or milliseconds per iteration
  std::string measured;
  double threshold = 0.95;
  std::optional<long> warmup;
  std::string format;
  std::string output;
  bool verbose = false;
};

void add_gap_command(CLI::App& app, GapArgs& args);
int run_gap(const GapArgs& args);

// What gap computes, shared with explain: steps.gap and steps.tail of --measured against
// --reference (each a step log or ms per iteration), any damaged-line findings, and the step
// logs read (source.inputs). Bad arguments or unusable logs throw UsageError (exit 2).
struct GapScore {
  std::vector<report::Finding> findings;
  std::vector<std::string> inputs;
};
// --reference and --measured mean the same on every command: a number ("830", "830ms") is
// milliseconds per iteration, anything else a file. The milliseconds when `arg` is a number
// (UsageError naming `opt` when it is not positive), else none.
std::optional<double> milliseconds_argument(const char* opt, const std::string& arg);
bool looks_like_milliseconds(const std::string& arg);

GapScore score_gap(const std::string& reference, const std::string& measured, double threshold, std::optional<long> warmup);

}  // namespace perfgap::cli
