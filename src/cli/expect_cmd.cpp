// perfgap expect learn REPORTS... --output FILE: the expected state of each kind of node, from
// what its nodes' check reports agree on (docs/EXPECT.md). The reports are read as fleet reads
// them (fleet/run: learn_expectations; files, directories, globs; the one report reader).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/output.hpp"
#include "fleet/expect.hpp"
#include "fleet/inputs.hpp"
#include "fleet/run.hpp"

namespace perfgap::cli {
namespace {

struct LearnArgs {
  std::string action;  // "learn": the one action so far (a word, not a nested command: one level of options and errors)
  std::vector<std::string> inputs;
  std::string output, update;
  double agree_pct = 80;
};

// Every report that gave no node, in one line each on stderr: learning goes on without them.
void say_unused(const std::vector<fleet::Unreadable>& bad) {
  for (const auto& b : bad) std::cerr << fmt::format("perfgap: expect learn: {}: not used: {}\n", b.file, b.why);
}

int learn(const LearnArgs& a) {
  if (a.action != "learn") throw UsageError("expect: unknown action '" + a.action + "': perfgap expect learn REPORTS... --output FILE");
  // Checked here, not by CLI11: its error for a nested command's value names the wrong command.
  if (!(a.agree_pct >= 50 && a.agree_pct <= 100))
    throw UsageError(fmt::format("expect learn --agree {}: a percent from 50 to 100 (a value is learned from a majority, never a minority)", a.agree_pct));
  if (auto o = check_output(a.output); !o) throw UsageError(o.error());
  auto result = fleet::learn_expectations({.inputs = a.inputs, .agree_pct = a.agree_pct, .update = a.update});
  if (!result) throw UsageError(result.error());
  const auto& learned = result->expectations;
  const auto& bad = result->unused;
  auto w = write_output(a.output, fleet::write_expectations(learned, a.agree_pct));
  if (!w) throw UsageError(w.error());
  say_unused(bad);
  for (const auto& k : learned.kinds) {
    std::size_t entries = 0;
    for (const auto& [aspect, e] : k.entries) entries += e.size();
    std::cerr << fmt::format("perfgap: expect learn: {}: {} node(s), {} entries learned, {} left out (no clear majority)\n", k.kind,
                             k.nodes, entries, k.left_out.size());
  }
  return 0;
}

}  // namespace

CommandRunner add_expect_command(CLI::App& app) {
  auto args = std::make_shared<LearnArgs>();
  auto* l = app.add_subcommand("expect", "expect learn REPORTS...: what the nodes of each kind agree on, from their check reports (and the analyze nccl-tests reports of their runs), into a YAML file (check --expect)");
  l->add_option("action", args->action, "learn")->required();
  l->add_option("reports", args->inputs, "Report files, directories (their *.json) or quoted globs, as fleet reads them")->required();
  l->add_option("--output", args->output, "Write the expectations to FILE (atomically; default stdout)");
  l->add_option("--agree", args->agree_pct, "Percent of a kind's nodes that must agree on a value for it to be learned (default 80; never under half)")
      ->type_name("PCT");
  l->add_option("--update", args->update, "A reviewed expectation file: its entries are kept over the learned ones");
  return [args]() -> int { return learn(*args); };
}

}  // namespace perfgap::cli
