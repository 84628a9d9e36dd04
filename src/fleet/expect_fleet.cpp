// fleet --expect (expect.hpp): each node report judged against its kind, and the nodes grouped
// by what differs.
#include <algorithm>

#include <fmt/format.h>

#include "fleet/expect.hpp"
#include "parsers/hostlist.hpp"

namespace perfgap::fleet {

namespace {

using report::Status;

// The node's own expect.* findings (from check --expect) give way to this file's verdict.
void replace_expect_findings(NodeReport& n, const std::vector<report::Finding>& judged) {
  const auto is_expect = [](std::string_view id) { return id.rfind("expect.", 0) == 0; };
  std::erase_if(n.findings, [&](const NodeFinding& f) { return is_expect(f.id); });
  std::erase_if(n.report_findings, [&](const report::Finding& f) { return is_expect(f.id); });
  for (const auto& j : judged) {
    NodeFinding f;
    for (auto a : kAspects)
      if (aspect_id(a) == j.id) f.id = aspect_id(a);  // static storage, as the pooled ids
    f.layer = "fleet";
    f.status = j.status;
    n.findings.push_back(std::move(f));
    n.report_findings.push_back(j);
  }
}

std::string plural_nodes(std::size_t n) { return fmt::format("{} node{}", n, n == 1 ? "" : "s"); }

}  // namespace

report::Finding judge_fleet(const Expectations& e, std::vector<NodeReport>& nodes, std::span<const NodeReport> measured) {
  // (status, what differs) -> nodes; fail groups first, then warn, each by text.
  std::map<std::pair<int, std::string>, std::vector<std::string_view>> groups;
  std::vector<std::string_view> unknown_kind, nothing_learned, differing;
  std::size_t failing = 0;
  std::vector<NodeFacts> all_facts;
  all_facts.reserve(nodes.size());
  for (const auto& n : nodes) all_facts.push_back(gather_facts(n.name, n.kernel, n.settings, n.report_findings));
  add_measurements(measured, all_facts);
  for (std::size_t i = 0; i < nodes.size(); ++i) {
    auto& n = nodes[i];
    const auto& facts = all_facts[i];
    replace_expect_findings(n, judge_expectations(e, facts));
    const auto* k = find_kind(e, facts);
    if (!k) {
      unknown_kind.push_back(n.name);
      continue;
    }
    // A kind the fleet agreed on nothing for (every entry left out): its nodes were held to
    // nothing, so they neither pass nor differ.
    if (std::all_of(k->entries.begin(), k->entries.end(), [](const auto& a) { return a.second.empty(); })) {
      nothing_learned.push_back(n.name);
      continue;
    }
    auto diffs = expect_differences(*k, facts, e.file);
    if (diffs.empty()) continue;
    differing.push_back(n.name);
    bool fails = false;
    for (const auto& d : diffs) {
      fails = fails || d.status == Status::fail;
      groups[{d.status == Status::fail ? 0 : 1, std::string(aspect_name(d.aspect)) + ": " + d.line}].push_back(n.name);
    }
    failing += fails ? 1 : 0;
  }
  report::Finding f;
  f.id = "fleet.expect";
  f.layer = "fleet";
  const std::size_t judged = nodes.size() - unknown_kind.size() - nothing_learned.size();
  const std::string not_judged = unknown_kind.empty() && nothing_learned.empty()
                                     ? std::string()
                                     : fmt::format("; {} not judged", plural_nodes(unknown_kind.size() + nothing_learned.size()));
  if (judged == 0) {
    f.status = Status::skip;
    f.title = unknown_kind.empty() ? fmt::format("no node could be judged: {} expects nothing of their kinds ({})", e.file, plural_nodes(nodes.size()))
                                   : fmt::format("no node could be judged against {} ({}: kind not in the file or nothing learned of it)",
                                                 e.file, plural_nodes(nodes.size()));
  } else if (differing.empty()) {
    f.status = Status::pass;
    f.title = fmt::format("every node judged matches its kind in {} ({}{})", e.file, plural_nodes(judged), not_judged);
  } else {
    f.status = failing ? Status::fail : Status::warn;
    f.title = fmt::format("{} of {} differ from their kind in {}: {}", plural_nodes(differing.size()), judged, e.file,
                          parsers::compress_hostlist(differing));
    f.fix = "perfgap check --expect " + e.file + " on a node named shows each difference with its device; "
            "missing or degraded hardware fails (fleet.drain names those nodes), versions and settings warn.";
  }
  for (const auto& [key, names] : groups)
    f.add(parsers::compress_hostlist(names), fmt::format("{}: {}", key.first == 0 ? "fail" : "warn", key.second));
  if (!unknown_kind.empty())
    f.add(parsers::compress_hostlist(unknown_kind), fmt::format("skip: kind not in {}", e.file));
  if (!nothing_learned.empty())
    f.add(parsers::compress_hostlist(nothing_learned),
          fmt::format("skip: {} has no entry for their kind (the fleet agreed on nothing: see its left_out)", e.file));
  f.metric("differing_nodes", static_cast<double>(differing.size())).metric("failing_nodes", static_cast<double>(failing));
  return f;
}

}  // namespace perfgap::fleet
