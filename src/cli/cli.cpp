#include "cli/cli.hpp"

#include <cstdio>
#include <exception>

#include <CLI/CLI.hpp>

#include "cli/analyze_cmd.hpp"
#include "cli/check_cmd.hpp"
#include "cli/gap_cmd.hpp"
#include "cli/errors.hpp"

#ifndef PERFGAP_VERSION
#define PERFGAP_VERSION "0.0.0"
#endif

namespace perfgap::cli {
namespace {

void one_line_error(const std::string& msg) {
  std::string line = msg;
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "perfgap: %s\n", line.c_str());
}

}  // namespace

int run(int argc, char** argv) {
  CLI::App app{"perfgap: find the configuration gap between this GPU node and the reference"};
  app.set_version_flag("--version", PERFGAP_VERSION);
  app.require_subcommand(1);
  CheckArgs check;
  add_check_command(app, check);
  AnalyzeArgs analyze;
  add_analyze_command(app, analyze);
  GapArgs gap;
  add_gap_command(app, gap);
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
