#include "node/check_run.hpp"

#include <memory>

#include <fmt/format.h>

#include "checks/live/live.hpp"
#include "core/baseline.hpp"
#include "core/config.hpp"
#include "core/node.hpp"
#include "core/runner.hpp"
#include "facts/facts.hpp"
#include "facts/platform.hpp"
#include "fleet/expect.hpp"
#include "probe/probe.hpp"
#include "snapshot/take.hpp"
#include "sys/bounded.hpp"
#include "sys/named_file.hpp"
#include "sys/paths.hpp"
#include "sys/sysroot.hpp"
#include "sys/text.hpp"

namespace perfgap::node {

namespace {

// A --only/--skip pattern that names no check but a live or probe id: say which command
// produces it (the README's "run by" column), not just that check does not know it.
std::optional<std::string> owned_elsewhere(const core::Registry& registry, const std::vector<std::string>& patterns) {
  for (const auto& p : patterns) {
    bool check = false;
    for (const auto& c : registry.all()) check = check || core::id_matches(p, c.id);
    if (check) continue;
    for (const auto& c : checks::live::catalogue())
      if (core::id_matches(p, c.id))
        return fmt::format("'{}'{} is judged by perfgap profile (or check --profile-seconds N), not by check (perfgap check --list names check's ids)", p, p == c.id ? "" : " (" + std::string(c.id) + ")");
    for (const auto& c : probe::probe_catalogue())
      if (core::id_matches(p, c.id))
        return fmt::format("'{}'{} is measured by perfgap probe, not by check (perfgap check --list names check's ids)", p, p == c.id ? "" : " (" + std::string(c.id) + ")");
  }
  return std::nullopt;
}

}  // namespace

std::string node_name_from_root(const std::string& root) {
  std::string_view name = root;
  while (name.size() > 1 && name.back() == '/') name.remove_suffix(1);
  if (auto slash = name.rfind('/'); slash != std::string_view::npos) name.remove_prefix(slash + 1);
  for (std::string_view suffix : {".tar.gz", ".tgz", ".tar"})
    if (name.size() > suffix.size() && name.substr(name.size() - suffix.size()) == suffix) {
      name.remove_suffix(suffix.size());
      break;
    }
  if (name == "." || name == ".." || name == "/") return {};
  return std::string(name);
}

tl::expected<NodeSelection, std::string> select_node_checks(const NodeCheckRequest& rq) {
  const auto& registry = core::builtin_registry();
  for (const auto* list : {&rq.only, &rq.skip})
    if (auto why = owned_elsewhere(registry, *list)) return tl::unexpected("--only/--skip: " + *why);
  NodeSelection sel;
  std::string config_path = rq.config;
  if (config_path.empty() && sys::exists(kDefaultCheckConfig)) config_path = kDefaultCheckConfig;
  if (!config_path.empty()) {
    auto loaded = core::load_config(config_path, registry);
    if (!loaded) return tl::unexpected(loaded.error());
    sel.config = std::move(*loaded);
  }
  // The request's lists win over the file's.
  auto only = rq.only.empty() ? sel.config.only : rq.only;
  auto skip = rq.skip.empty() ? sel.config.skip : rq.skip;
  auto selected = core::select_checks(registry, only, skip);
  if (!selected)
    return tl::unexpected(std::string(rq.only.empty() && rq.skip.empty() ? config_path + ": " : "--only/--skip: ") + selected.error());
  sel.checks = std::move(*selected);
  return sel;
}

tl::expected<report::Report, std::string> run_node_checks(const NodeCheckRequest& rq) {
  auto sel = select_node_checks(rq);
  if (!sel) return tl::unexpected(sel.error());
  return run_node_checks(rq, *sel);
}

tl::expected<report::Report, std::string> run_node_checks(const NodeCheckRequest& rq, const NodeSelection& selection) {

  // A directory, or a snapshot archive unpacked into a private directory that `tree` removes
  // on every way out of this function.
  std::unique_ptr<snapshot::ReplayRoot> tree;
  auto root = sys::Sysroot::live();
  if (!rq.root.empty()) {
    auto r = snapshot::open_checked_root(rq.root);
    if (!r) return tl::unexpected("--root " + r.error());
    tree = std::move(*r);
    root = tree->root();
  }
  facts::Options opts;
  opts.pids = rq.pids;
  opts.sample = rq.sample.count() > 0 ? rq.sample
              : selection.config.sample_ms ? std::chrono::milliseconds(*selection.config.sample_ms)
                                      : std::chrono::milliseconds(0);
  opts.sample_max = rq.sample_max;
  if (!rq.dmesg.empty()) {
    if (auto p = sys::probe_named_file(rq.dmesg); !p) return tl::unexpected("--dmesg " + rq.dmesg + ": " + p.error());
    opts.dmesg_path = rq.dmesg;
  }
  if (!rq.baseline.empty()) {
    auto b = core::load_baseline(rq.baseline);
    if (!b) return tl::unexpected("--baseline " + b.error());
    opts.baseline = std::move(*b);
  }
  // Read before any check runs: a bad file is exit 2 at once, and judged after (it needs the report).
  std::optional<fleet::Expectations> expect;
  if (!rq.expect.empty()) {
    auto e = fleet::load_expectations(rq.expect);
    if (!e) return tl::unexpected("--expect " + e.error());
    expect = std::move(*e);
  }
  core::RunOptions run_opts;
  if (rq.check_timeout.count() > 0) run_opts.check_timeout = rq.check_timeout;
  else if (selection.config.check_timeout_s)
    run_opts.check_timeout = std::chrono::milliseconds(static_cast<long>(*selection.config.check_timeout_s * 1000));
  opts.nvml = rq.nvml;
  // perfgap-gpu runs inside the first gpu check: both its runs fit in that check's deadline.
  opts.gpu_helper_budget = run_opts.check_timeout;
  auto facts = std::make_shared<facts::Facts>(root, opts);
  // A --dmesg FILE that holds no kernel log at all (lspci -vvv, a daemon's log) is bad input as
  // an unreadable one is: refused before any check runs, not a report whose log checks skip.
  // Read within a check's time (a pipe whose writer never ends is left to the log checks).
  if (opts.dmesg_path) {
    auto why = sys::run_bounded<std::optional<std::string>>([facts] { return facts::dmesg_not_a_log(*facts); }, run_opts.check_timeout);
    if (why && *why) return tl::unexpected("--dmesg " + **why);
  }
  // Processes named with --pid of which none can be read: every per-process check would skip,
  // and the run would look like a node check of nothing. Refused like any other bad input.
  if (!rq.pids.empty()) {
    const auto& t = facts->training();
    if (t.procs.empty()) {
      std::string why;
      for (const auto& p : t.problems) {
        if (!why.empty()) why += "; ";
        why += p;
      }
      return tl::unexpected("--pid: none of the named processes can be read (" + why + ")");
    }
  }

  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = sys::rfc3339_utc(rq.started ? rq.started : std::time(nullptr));
  rep.source.kind = root.is_live() ? "live" : "root";
  if (!root.is_live()) rep.source.root = rq.root;
  if (!rq.baseline.empty()) rep.source.inputs.push_back(rq.baseline);
  if (!rq.dmesg.empty()) rep.source.inputs.push_back(rq.dmesg);
  rep.findings = core::run_checks(selection.checks, facts, selection.config, run_opts);
  rep.node = core::describe_node(*facts);
  // A tree without a hostname still names a node, so that a fleet of captured trees reads.
  if (!rq.node_name.empty()) rep.node->name = rq.node_name;
  else if (rep.node->name.empty() && !root.is_live()) rep.node->name = node_name_from_root(rq.root);
  if (expect) {
    // From the report itself, as fleet --expect reads a saved one: the same facts, the same verdict.
    auto node = fleet::gather_facts(rep.node->name, rep.node->kernel, rep.node->settings, rep.findings);
    auto judged = fleet::judge_expectations(*expect, node);
    rep.findings.insert(rep.findings.end(), std::make_move_iterator(judged.begin()), std::make_move_iterator(judged.end()));
    rep.source.inputs.push_back(rq.expect);
  }
  return rep;
}

}  // namespace perfgap::node
