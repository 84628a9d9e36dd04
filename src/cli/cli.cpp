#include "cli/cli.hpp"

#include <algorithm>
#include <cstdio>
#include <exception>
#include <sstream>
#include <string_view>
#include <vector>

#include <CLI/CLI.hpp>

#include "tool_outputs/registry.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/suggest.hpp"
#include "cli/version.hpp"
#include "report/text_style.hpp"

namespace perfgap::cli {
namespace {

// Every command, in the order --help lists them (version, which only prints, comes last).
struct CommandEntry {
  const char* name;
  CommandRunner (*add)(CLI::App&);
};
constexpr CommandEntry kCommands[] = {
    {"check", add_check_command},     {"analyze", add_analyze_command}, {"gap", add_gap_command},
    {"whatif", add_whatif_command},   {"snapshot", add_snapshot_command}, {"fleet", add_fleet_command},
    {"health", add_health_command},   {"fanout", add_fanout_command},   {"sweep", add_sweep_command},
    {"compare", add_compare_command}, {"explain", add_explain_command}, {"profile", add_profile_command},
    {"probe", add_probe_command},     {"history", add_history_command}, {"expect", add_expect_command},
};

// Errors quote file and entry names that may come from a tree or an archive: control
// characters are shown escaped, never sent to the terminal.
void one_line_error(const std::string& msg) {
  std::string line = msg;
  for (auto& c : line)
    if (c == '\n' || c == '\r') c = ' ';
  std::fprintf(stderr, "perfgap: %s\n", report::printable(line).c_str());
}

std::vector<std::string> option_names(const CLI::App& cmd) {
  std::vector<std::string> out;
  for (const CLI::Option* o : cmd.get_options()) {
    for (const auto& l : o->get_lnames()) out.push_back("--" + l);
    for (const auto& s : o->get_snames()) out.push_back("-" + s);
  }
  return out;
}

// What CLI11 says of a command line it refuses names its own internals ("A subcommand is
// required", "The following arguments were not expected: json --formt", "files is
// required"). This says what is wrong in the user's words, or "" to keep CLI11's message.
std::string explain_parse_error(const CLI::App& app, const std::vector<std::string>& args, const CLI::ParseError& e) {
  std::vector<std::string> commands;
  for (const CLI::App* sub : app.get_subcommands({})) commands.push_back(sub->get_name());
  if (args.empty()) return "a command is required: " + joined(commands) + " (perfgap --help)";
  const std::string& first = args.front();
  const CLI::App* cmd = nullptr;
  for (const CLI::App* sub : app.get_subcommands({}))
    if (sub->get_name() == first) cmd = sub;
  if (!cmd) {
    if (!first.empty() && first[0] == '-') return "";
    return "unknown command '" + first + "'" + did_you_mean(first, commands) + "; commands: " + joined(commands);
  }
  // An option the command does not have: the first one named, with the closest it has.
  const auto known = option_names(*cmd);
  for (std::size_t i = 1; i < args.size(); ++i) {
    const std::string& a = args[i];
    if (a == "--") break;
    if (a.size() < 2 || a[0] != '-' || (a[1] >= '0' && a[1] <= '9')) continue;
    const std::string name = a.substr(0, a.find('='));
    if (std::find(known.begin(), known.end(), name) != known.end() || name == "--help" || name == "-h" || name == "--version") continue;
    return "unknown option " + name + " for '" + first + "'" + did_you_mean(name, known) + " (perfgap " + first + " --help)";
  }
  if (first == "analyze" && dynamic_cast<const CLI::RequiredError*>(&e)) {
    std::vector<std::string> kinds;
    for (const auto& k : tool_outputs::analyzers()) kinds.emplace_back(k.kind);
    std::string kind;
    for (std::size_t i = 1; i < args.size() && kind.empty(); ++i)
      if (!args[i].empty() && args[i][0] != '-') kind = args[i];
    if (kind.empty()) return "analyze needs a KIND and input files: perfgap analyze KIND FILE... (KIND: " + joined(kinds) + ")";
    if (std::find(kinds.begin(), kinds.end(), kind) == kinds.end())
      return "unknown analyze KIND '" + kind + "'" + did_you_mean(kind, kinds) + " (one of: " + joined(kinds) + ")";
    return "analyze " + kind + " needs at least one input file (or - for standard input)";
  }
  // A word the command takes no place for: CLI11 says "The following arguments were not
  // expected: x" and lists them last first.
  if (dynamic_cast<const CLI::ExtrasError*>(&e)) {
    const std::string what = e.what();
    const auto colon = what.find(": ");
    if (colon == std::string::npos) return "";
    std::vector<std::string> words;
    std::stringstream ss(what.substr(colon + 2));
    for (std::string w; ss >> w;) words.insert(words.begin(), w);
    return std::string(words.size() == 1 ? "unexpected argument '" : "unexpected arguments '") + joined(words) + "' for '" + first + "' (perfgap " +
           first + " --help)";
  }
  return "";
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
  std::vector<std::pair<std::string, CommandRunner>> commands;
  for (const auto& c : kCommands) commands.emplace_back(c.name, c.add(app));
  app.add_subcommand("version", "Print version, git commit, build type, architecture and linkage");
  commands.emplace_back("version", [&version] {
    std::printf("%s\n", version.c_str());
    return 0;
  });
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
    const std::string better = explain_parse_error(app, std::vector<std::string>(argv + 1, argv + argc), e);
    one_line_error(better.empty() ? e.what() : better);
    return 2;
  }
  try {
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
