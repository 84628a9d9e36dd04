#pragma once

#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace perfgap::cli {

struct CheckArgs {
  std::string root;
  std::vector<int> pids;
  std::vector<std::string> only, skip;
  bool list = false;
  std::string config;
  bool verbose = false;
  std::string format;  // "" = text
  std::string output;
  std::string dmesg;     // --dmesg FILE
  std::string baseline;  // --baseline HOST.json
  std::string expect;    // --expect FILE
  std::string sample_ms; // --sample-ms N (validated by core::parse_sample_ms)
  bool nvml = false;     // --nvml: perfgap-gpu queries GPUs out of persistence mode too
  int profile = 0;       // --profile N: a live profile window of N s beside the checks (0: none)
  std::string history;   // --history DIR: keep this run, say what changed (config: history)
  std::string node_name; // --node-name NAME: the report's node.name (default: hostname, SLURMD_NODENAME, or a tree's name)
};

void add_check_command(CLI::App& app, CheckArgs& args);
int run_check(const CheckArgs& args);

}  // namespace perfgap::cli
