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

}  // namespace perfgap::cli
