#include "node/profile_window.hpp"

#include <algorithm>
#include <chrono>
#include <memory>

#include "checks/live/live.hpp"
#include "core/config.hpp"
#include "core/node.hpp"
#include "core/runner.hpp"
#include "facts/facts.hpp"
#include "profile/collector.hpp"
#include "sys/sysroot.hpp"
#include "sys/text.hpp"

namespace perfgap::node {
namespace {

std::shared_ptr<facts::Facts> profile_window_facts(int seconds, const std::vector<int>& pids) {
  facts::Options opts;
  opts.pids = pids;
  opts.sample = std::chrono::milliseconds(seconds * 1000);
  opts.sample_max = opts.sample;
  return std::make_shared<facts::Facts>(sys::Sysroot::live(), opts);
}

// The perf.* and live.* findings of the window, then the registry's checks that judge the
// same window (net.ib.counters: the RDMA counters read at both of its ends).
std::vector<report::Finding> judge_profile_window(const std::shared_ptr<facts::Facts>& f, int seconds, std::optional<double> rated_mhz) {
  profile::ProfileOptions o;
  o.window = std::chrono::milliseconds(seconds * 1000);
  o.rated_mhz = rated_mhz;
  auto out = checks::live::judge_window(profile::collect(*f, o));
  std::vector<const core::CheckInfo*> window_checks;
  for (auto id : kProfileWindowChecks)
    if (const auto* info = core::builtin_registry().find(id)) window_checks.push_back(info);
  for (auto& finding : core::run_checks(window_checks, f, core::Config{}, core::RunOptions{}))
    out.push_back(std::move(finding));
  return out;
}

}  // namespace

std::vector<report::Finding> profile_findings(int seconds, const std::vector<int>& pids, std::optional<double> rated_mhz) {
  auto facts = profile_window_facts(seconds, pids);
  return judge_profile_window(facts, seconds, rated_mhz);
}

report::Report profile_report(int seconds, const std::vector<int>& pids, std::optional<double> rated_mhz, std::time_t started) {
  auto facts = profile_window_facts(seconds, pids);
  report::Report rep;
  rep.tool_version = PERFGAP_VERSION;
  rep.generated_at = sys::rfc3339_utc(started);
  rep.source.kind = "live";
  rep.source.command = "profile";
  rep.findings = judge_profile_window(facts, seconds, rated_mhz);
  rep.node = core::describe_node(*facts);
  return rep;
}

void merge_profile_findings(std::vector<report::Finding>& findings, std::vector<report::Finding> extra) {
  auto is_window_check = [](const std::string& id) {
    return std::find(std::begin(kProfileWindowChecks), std::end(kProfileWindowChecks), id) != std::end(kProfileWindowChecks);
  };
  for (auto& e : extra)
    if (!is_window_check(e.id)) findings.push_back(std::move(e));
  for (auto id : kProfileWindowChecks) {
    auto first = std::find_if(findings.begin(), findings.end(), [&](const report::Finding& f) { return f.id == id; });
    if (first == findings.end()) continue;  // not selected
    std::vector<report::Finding> replacement;
    for (auto& e : extra)
      if (e.id == id) replacement.push_back(std::move(e));
    if (replacement.empty()) continue;
    const auto at = first - findings.begin();
    findings.erase(std::remove_if(findings.begin(), findings.end(), [&](const report::Finding& f) { return f.id == id; }), findings.end());
    findings.insert(findings.begin() + at, std::make_move_iterator(replacement.begin()), std::make_move_iterator(replacement.end()));
  }
}

}  // namespace perfgap::node
