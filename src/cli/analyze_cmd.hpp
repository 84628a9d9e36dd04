#pragma once

#include <optional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

#include "report/model.hpp"

namespace perfgap::cli {

struct AnalyzeArgs {
  std::string kind;
  std::vector<std::string> files;
  std::string format;  // "" = text
  std::string output;
  bool verbose = false;
  std::optional<double> rated_mhz;          // turbostat
  std::string reference;                    // nccl-tests, steps: a file
  std::string sizes;                        // nccl-tests
  std::optional<std::string> expect_topo_file;  // nccl-log
  std::string expect_net;                   // nccl-log: IB|Socket
  bool expect_gdr = false;                  // nccl-log
  std::optional<double> reference_ms;       // steps
  std::optional<long> warmup;               // steps
  std::string iteration_range;              // nsys, kineto
};

void add_analyze_command(CLI::App& app, AnalyzeArgs& args);
int run_analyze(const AnalyzeArgs& args);

// Shared with gap: read an input file as text, or say why it is unusable (empty, binary,
// unreadable).
struct InputText {
  std::string text;
  std::string problem;  // empty: usable text
};
InputText read_input(const std::string& path);

// A report of `kind` (analyze|gap) for these inputs, rendered to stdout or --output; returns
// the exit status (1 with a fail finding).
int emit_report(const std::string& kind, const std::vector<std::string>& inputs, std::vector<report::Finding> findings,
                const std::string& format, const std::string& output, bool verbose);

}  // namespace perfgap::cli
