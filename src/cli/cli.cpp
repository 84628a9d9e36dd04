#include "cli/cli.hpp"

#include <cstdio>
#include <exception>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "cli/analyze_cmd.hpp"
#include "cli/check_cmd.hpp"
#include "cli/commands.hpp"
#include "cli/gap_cmd.hpp"
#include "cli/errors.hpp"
#include "cli/version.hpp"
#include "report/text_style.hpp"

#ifndef PERFGAP_VERSION
#define PERFGAP_VERSION "0.0.0"
#endif

namespace perfgap::cli {
namespace {

// Errors quote file and entry names that may come from a tree or an archive: control
// characters are shown escaped, never sent to the terminal.
void one_line_error(const std::string& msg) {
  std::string line = msg;
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "perfgap: %s\n", report::printable(line).c_str());
}

}  // namespace

int run(int argc, char** argv) {
  // Slurm runs HealthCheckProgram/Prolog without arguments: invoked as perfgap-health, the
  // binary is `perfgap health`.
  std::vector<char*> args(argv, argv + argc);
  static char health_word[] = "health";
  if (argc > 0) {
    std::string_view self = argv[0];
    if (auto slash = self.rfind('/'); slash != std::string_view::npos) self.remove_prefix(slash + 1);
    if (self == "perfgap-health") args.insert(args.begin() + 1, health_word);
  }
  argc = static_cast<int>(args.size());
  argv = args.data();
  CLI::App app{"perfgap: find the configuration gap between this GPU node and the reference"};
  const std::string version = version_text();
  app.set_version_flag("--version", version);
  app.require_subcommand(1);
  CheckArgs check;
  add_check_command(app, check);
  AnalyzeArgs analyze;
  add_analyze_command(app, analyze);
  GapArgs gap;
  add_gap_command(app, gap);
  std::vector<std::pair<std::string, CommandRunner>> commands;
  commands.emplace_back("snapshot", add_snapshot_command(app));
  commands.emplace_back("fleet", add_fleet_command(app));
  commands.emplace_back("health", add_health_command(app));
  commands.emplace_back("fanout", add_fanout_command(app));
  commands.emplace_back("sweep", add_sweep_command(app));
  commands.emplace_back("compare", add_compare_command(app));
  commands.emplace_back("explain", add_explain_command(app));
  commands.emplace_back("profile", add_profile_command(app));
  commands.emplace_back("probe", add_probe_command(app));
  app.add_subcommand("version", "Print version, git commit, build type, architecture and linkage");
  // Every command answers --version the same way (`perfgap check --version`).
  for (CLI::App* sub : app.get_subcommands({})) sub->set_version_flag("--version", version);
  try {
    app.parse(argc, argv);
  } catch (const CLI::CallForHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForAllHelp& e) {
    return app.exit(e);
  } catch (const CLI::CallForVersion& e) {
    return app.exit(e);
  } catch (const CLI::ParseError& e) {
    one_line_error(e.what());
    return 2;
  }
  try {
    if (app.got_subcommand("check")) return run_check(check);
    if (app.got_subcommand("analyze")) return run_analyze(analyze);
    if (app.got_subcommand("gap")) return run_gap(gap);
    if (app.got_subcommand("version")) {
      std::printf("%s\n", version.c_str());
      return 0;
    }
    for (const auto& [name, runner] : commands)
      if (app.got_subcommand(name)) return runner();
  } catch (const UsageError& e) {
    one_line_error(e.what());
    return 2;
  } catch (const std::exception& e) {
    one_line_error(std::string("internal error: ") + e.what());
    return 2;
  }
  return 2;
}

}  // namespace perfgap::cli
