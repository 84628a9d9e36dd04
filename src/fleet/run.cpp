#include "fleet/run.hpp"

#include <algorithm>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

#include "fleet/measured.hpp"
#include "sys/text.hpp"

namespace perfgap::fleet {
namespace {

// The one-line exit-2 message when no input gave a node report: the first few, then a count.
std::string nothing_usable(const std::vector<Unreadable>& bad) {
  if (bad.empty()) return "fleet: no report given";
  std::string msg = "fleet: no usable node report: ";
  for (std::size_t i = 0; i < bad.size() && i < 3; ++i) msg += fmt::format("{}{}: {}", i ? "; " : "", bad[i].file, bad[i].why);
  if (bad.size() > 3) msg += fmt::format("; and {} more", bad.size() - 3);
  return msg;
}

}  // namespace

tl::expected<FleetRun, std::string> run_fleet(const FleetRequest& req) {
  // Read first: a bad file is exit 2 before any report is read.
  std::optional<Expectations> expect;
  if (!req.expect_file.empty()) {
    auto e = load_expectations(req.expect_file);
    if (!e) return tl::unexpected("fleet --expect " + e.error());
    expect = std::move(*e);
  }
  auto expanded = expand_inputs(req.inputs);
  // --expect reads every node's findings: the node's facts are in their evidence and metrics.
  ReadOptions read = req.read;
  if (expect) read = {.findings = true, .details = true, .metrics = true};
  auto loaded = load_reports(expanded.files, read);
  FleetRun run;
  run.bad = std::move(expanded.problems);
  auto& bad = run.bad;
  for (auto& u : loaded.unreadable) bad.push_back(std::move(u));
  // Measurements (analyze reports) beside the node reports: fleet.pace, joined with them. Probe
  // reports hold nodes to their kind's floors (--expect) and to nothing else.
  std::vector<NodeReport> measured, probes;
  std::erase_if(loaded.nodes, [&](NodeReport& n) {
    if (n.kind != "analyze" && n.kind != "probe") return false;
    if (n.kind == "probe" && !expect) bad.push_back({n.file, "a probe report: fleet holds its figures to the floors of an expectation file (--expect)"});
    else (n.kind == "probe" ? probes : measured).push_back(std::move(n));
    return true;
  });
  run.fleet = dedupe_nodes(std::move(loaded.nodes));
  auto& fl = run.fleet;
  const std::size_t unreadable_before_pace = bad.size();
  auto pace = fleet::pace(measured, fl.nodes, req.rule, bad);  // appends the analyze reports it cannot use
  run.measurements = measured.size();
  run.unusable = bad.size() - unreadable_before_pace;
  auto job = job_ranks(measured, fl.nodes);  // the job's ranks (NCCL Inspector, RAS)
  pace.insert(pace.end(), std::make_move_iterator(job.begin()), std::make_move_iterator(job.end()));
  auto verdicts = measurement_verdicts(measured);  // the measurements' own fail and warn
  pace.insert(pace.begin(), std::make_move_iterator(verdicts.begin()), std::make_move_iterator(verdicts.end()));
  if (fl.nodes.empty() && pace.empty()) return tl::unexpected(nothing_usable(bad));
  std::vector<report::Finding> findings;
  if (!fl.nodes.empty()) {
    std::optional<report::Finding> expected;
    if (expect) {
      measured.insert(measured.end(), std::make_move_iterator(probes.begin()), std::make_move_iterator(probes.end()));
      expected = judge_fleet(*expect, fl.nodes, measured);
    }
    findings = aggregate(fl, bad, req.rule);
    if (expected) findings.insert(findings.begin() + 1, std::move(*expected));  // after fleet.node_failures
  } else {
    findings = unreadable(bad);  // measurements only: no node findings to aggregate
  }
  // After the node findings and before fleet.unreadable (the last).
  auto first_unreadable = std::find_if(findings.begin(), findings.end(), [](const report::Finding& f) { return f.id == "fleet.unreadable"; });
  findings.insert(first_unreadable, std::make_move_iterator(pace.begin()), std::make_move_iterator(pace.end()));

  auto& rep = run.report;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = sys::rfc3339_utc(req.started);
  rep.source.kind = "fleet";
  // Every file read, then the arguments that named none (a pattern that matched nothing).
  std::unordered_set<std::string> listed(expanded.files.begin(), expanded.files.end());
  rep.source.inputs = std::move(expanded.files);
  if (expect) rep.source.inputs.push_back(req.expect_file);
  for (const auto& b : bad)
    if (listed.insert(b.file).second) rep.source.inputs.push_back(b.file);
  rep.findings = std::move(findings);
  return run;
}

tl::expected<Learned, std::string> learn_expectations(const LearnRequest& rq) {
  // The reviewed file first: a bad one is refused before any report is read.
  std::optional<Expectations> reviewed;
  if (!rq.update.empty()) {
    auto r = load_expectations(rq.update);
    if (!r) return tl::unexpected("expect learn --update " + r.error());
    reviewed = std::move(*r);
  }
  auto expanded = expand_inputs(rq.inputs);
  auto loaded = load_reports(expanded.files, {.findings = true, .details = true, .metrics = true});
  Learned out;
  auto& bad = out.unused;
  bad = std::move(expanded.problems);
  bad.insert(bad.end(), loaded.unreadable.begin(), loaded.unreadable.end());
  // Measurements (analyze nccl-tests reports, probe reports) give the nodes they name the measured aspect.
  std::vector<NodeReport> measured;
  std::erase_if(loaded.nodes, [&](NodeReport& n) {
    if (n.kind != "analyze" && n.kind != "probe") return false;
    measured.push_back(std::move(n));
    return true;
  });
  auto fl = dedupe_nodes(std::move(loaded.nodes));
  if (fl.nodes.empty())
    for (const auto& m : measured)
      bad.push_back({m.file, fmt::format("a measurement ({} report): it needs the check reports of the nodes it measured", m.kind)});
  if (fl.nodes.empty())
    return tl::unexpected(bad.empty() ? std::string("expect learn: no report given")
                                      : fmt::format("expect learn: no usable node report: {}: {}{}", bad[0].file, bad[0].why,
                                                    bad.size() > 1 ? fmt::format(" (and {} more)", bad.size() - 1) : ""));
  std::vector<NodeFacts> facts;
  facts.reserve(fl.nodes.size());
  for (const auto& n : fl.nodes) facts.push_back(gather_facts(n.name, n.kernel, n.settings, n.report_findings));
  for (auto i : add_measurements(measured, facts)) {
    const auto& m = measured[i];
    if (m.kind == "probe")
      bad.push_back({m.file, fmt::format("no figure for these nodes (a probe of {}: no check report of it, or no figure measured)", m.name)});
    else
      bad.push_back({m.file, m.hosts.empty() ? "an analyze report that names no host (only nccl-tests runs whose log shows its hosts are learned)"
                                             : fmt::format("no figure for these nodes (the run's hosts: {})", fmt::join(m.hosts, ", "))});
  }
  out.expectations = learn(facts, rq.agree_pct);
  if (reviewed) keep_reviewed(out.expectations, *reviewed);
  return out;
}

}  // namespace perfgap::fleet
