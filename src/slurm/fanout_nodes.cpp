#include "slurm/fanout_nodes.hpp"

#include <algorithm>
#include <chrono>
#include <cstdlib>

#include "parsers/hostlist.hpp"
#include "sys/paths.hpp"

namespace perfgap::slurm {
namespace {

std::string env_text(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string allocation_nodelist() {
  std::string alloc = env_text("SLURM_JOB_NODELIST");
  if (alloc.empty()) alloc = env_text("SLURM_NODELIST");
  return alloc;
}

tl::expected<std::vector<std::string>, std::string> allocation_nodes(const std::string& asked, bool inside_allocation) {
  const std::string alloc = allocation_nodelist();
  const std::string nodelist = asked.empty() ? alloc : asked;
  if (nodelist.empty()) return tl::unexpected(std::string("no node list: SLURM_JOB_NODELIST is unset; give --nodelist"));
  auto nodes = parsers::expand_hostlist(nodelist);
  if (!nodes) return tl::unexpected("node list '" + nodelist + "': " + nodes.error());
  if (nodes->empty()) return tl::unexpected("node list '" + nodelist + "' names no node");
  if (inside_allocation && !asked.empty() && !alloc.empty()) {
    auto inside = parsers::expand_hostlist(alloc);
    if (!inside) return tl::unexpected("SLURM_JOB_NODELIST '" + alloc + "': " + inside.error());
    for (const auto& n : *nodes)
      if (std::find(inside->begin(), inside->end(), n) == inside->end())
        return tl::unexpected("--nodelist names " + n + ", which is not in the allocation (" + alloc + ")");
  }
  return std::move(*nodes);
}

tl::expected<sys::CommandResult, std::string> run_fanout_step(const FanoutPlan& plan, const std::vector<std::string>& command, double timeout_s) {
  if (auto made = sys::make_directories(plan.report_dir); !made)
    return tl::unexpected(plan.report_dir + ": cannot create the report directory: " + made.error());
  for (const auto& node : plan.nodes) sys::remove_path(report_path(plan.report_dir, node));
  sys::CommandOptions opts;
  opts.capture_output = false;  // the tasks' messages reach the user as they come
  opts.timeout = std::chrono::milliseconds(static_cast<long>(timeout_s * 1000));
  opts.term_grace = std::chrono::seconds(10);  // srun cancels its step on SIGTERM
  auto step = sys::run_command(command, opts);
  if (!step.started) return tl::unexpected("cannot run srun: " + step.error);
  return step;
}

CollectedReports collect_reports(const FanoutPlan& plan) {
  CollectedReports out;
  for (const auto& node : plan.nodes) {
    auto path = report_path(plan.report_dir, node);
    if (!sys::exists(path)) out.missing.push_back(node);
    out.files.push_back(path);
  }
  return out;
}

}  // namespace perfgap::slurm
