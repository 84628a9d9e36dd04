#pragma once

#include <string>

#include <CLI/CLI.hpp>

#include "analyze/registry.hpp"

namespace perfgap::cli {

struct AnalyzeArgs {
  std::string kind;
  std::string format;  // "" = text
  std::string output;
  bool verbose = false;
  analyze::Request request;  // the inputs and every kind's options (analyze/registry.hpp)
};

void add_analyze_command(CLI::App& app, AnalyzeArgs& args);
int run_analyze(const AnalyzeArgs& args);

}  // namespace perfgap::cli
