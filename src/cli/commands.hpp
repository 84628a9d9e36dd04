// Every command of perfgap: each registers its subcommand on the app and returns what runs it
// once the command line is parsed (its options live in the closure). cli.cpp lists them in
// the order --help shows them; a runner throws UsageError for exit status 2.
#pragma once

#include <functional>
#include <string>
#include <vector>

#include <CLI/CLI.hpp>

namespace perfgap::cli {

using CommandRunner = std::function<int()>;

CommandRunner add_check_command(CLI::App& app);     // check_cmd.cpp (node/check_run; fanout --node-task too)
CommandRunner add_analyze_command(CLI::App& app);   // analyze_cmd.cpp (the analyze registry)
CommandRunner add_gap_command(CLI::App& app);       // gap_cmd.cpp (step logs scored)
CommandRunner add_snapshot_command(CLI::App& app);  // snapshot_cmd.cpp
CommandRunner add_fleet_command(CLI::App& app);     // fleet_cmd.cpp
CommandRunner add_health_command(CLI::App& app);    // health_cmd.cpp (also argv[0] perfgap-health)
CommandRunner add_fanout_command(CLI::App& app);    // fanout_cmd.cpp (srun over an allocation)
CommandRunner add_sweep_command(CLI::App& app);     // sweep_cmd.cpp
CommandRunner add_compare_command(CLI::App& app);   // compare_cmd.cpp
CommandRunner add_explain_command(CLI::App& app);   // explain_cmd.cpp (gap.budget)
CommandRunner add_profile_command(CLI::App& app);   // profile_cmd.cpp (live window; check --profile too)
CommandRunner add_probe_command(CLI::App& app);     // probe_cmd.cpp (opt-in active probes)
CommandRunner add_history_command(CLI::App& app);   // history_cmd.cpp (check --history DIR's runs)
CommandRunner add_whatif_command(CLI::App& app);    // whatif_cmd.cpp (a job's traces replayed)
CommandRunner add_expect_command(CLI::App& app);    // expect_cmd.cpp (expect learn; check --expect)

// What `perfgap fleet` does once its options are read; fanout calls it on the reports it
// collected. inputs: files, directories, globs. Returns the exit status of the contract.
struct FleetRequest {
  std::vector<std::string> inputs;
  std::string format;  // text|json|junit|prometheus; empty: text on a terminal, else text
  std::string output;  // empty: stdout
  bool verbose = false;
};
int run_fleet(const FleetRequest& request);  // fleet_cmd.cpp

}  // namespace perfgap::cli
