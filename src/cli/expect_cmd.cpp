// perfgap expect learn REPORTS... --output FILE: the expected state of each kind of node, from
// what its nodes' check reports agree on (docs/EXPECT.md). The reports are read as fleet reads
// them (fleet/inputs: files, directories, globs; the one report reader).
#include <fmt/format.h>

#include <iostream>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/output.hpp"
#include "fleet/aggregate.hpp"
#include "fleet/expect.hpp"
#include "fleet/inputs.hpp"

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
  // The reviewed file first: a bad one is refused before any report is read.
  std::optional<fleet::Expectations> reviewed;
  if (!a.update.empty()) {
    auto r = fleet::load_expectations(a.update);
    if (!r) throw UsageError("expect learn --update " + r.error());
    reviewed = std::move(*r);
  }
  auto expanded = fleet::expand_inputs(a.inputs);
  auto loaded = fleet::load_reports(expanded.files, {.findings = true, .details = true, .metrics = true});
  auto bad = std::move(expanded.problems);
  bad.insert(bad.end(), loaded.unreadable.begin(), loaded.unreadable.end());
  std::erase_if(loaded.nodes, [&](const fleet::NodeReport& n) {
    if (n.kind != "analyze") return false;
    bad.push_back({n.file, "a measurement (analyze report), not a node's check report"});
    return true;
  });
  auto fl = fleet::dedupe_nodes(std::move(loaded.nodes));
  if (fl.nodes.empty())
    throw UsageError(bad.empty() ? "expect learn: no report given"
                                 : fmt::format("expect learn: no usable node report: {}: {}{}", bad[0].file, bad[0].why,
                                               bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : ""));
  std::vector<fleet::NodeFacts> facts;
  facts.reserve(fl.nodes.size());
  for (const auto& n : fl.nodes) facts.push_back(fleet::gather_facts(n.name, n.kernel, n.settings, n.report_findings));
  auto learned = fleet::learn(facts, a.agree_pct);
  if (reviewed) fleet::keep_reviewed(learned, *reviewed);
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
  auto* l = app.add_subcommand("expect", "expect learn REPORTS...: what the nodes of each kind agree on, from their check reports, into a YAML file (check --expect)");
  l->add_option("action", args->action, "learn")->required();
  l->add_option("reports", args->inputs, "Report files, directories (their *.json) or quoted globs, as fleet reads them")->required();
  l->add_option("--output", args->output, "Write the expectations to FILE (atomically; default stdout)");
  l->add_option("--agree", args->agree_pct, "Percent of a kind's nodes that must agree on a value for it to be learned (default 80; never under half)")
      ->type_name("PCT");
  l->add_option("--update", args->update, "A reviewed expectation file: its entries are kept over the learned ones");
  return [args]() -> int { return learn(*args); };
}

}  // namespace perfgap::cli
