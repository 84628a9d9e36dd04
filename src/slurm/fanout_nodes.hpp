// The nodes of `perfgap fanout`: which it may use (the allocation's, or --nodelist's inside it),
// the srun step over them, and what they left after it (their reports, and who wrote none).
#pragma once

#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "slurm/fanout.hpp"
#include "sys/process.hpp"

namespace perfgap::slurm {

// The allocation's node list as Slurm gives it to a job: SLURM_JOB_NODELIST, else
// SLURM_NODELIST; empty outside an allocation.
std::string allocation_nodelist();

// The nodes fanout may use: `nodelist` (--nodelist) expanded, else the allocation's. With
// `inside_allocation`, every node --nodelist names must lie in the allocation (a step outside
// it would be refused by srun, or worse, land on another job's node). Errors for exit 2.
tl::expected<std::vector<std::string>, std::string> allocation_nodes(const std::string& nodelist, bool inside_allocation);

// The step: the report directory made and this plan's nodes' reports of an earlier run in it
// removed (they would pass for this run's), then `command` (build_srun_command) run with the
// tasks' output reaching the user as it comes, stopped after `timeout_s` (SIGTERM, then 10 s:
// srun cancels its step). Errors (no directory, srun not started) are for exit status 2.
tl::expected<sys::CommandResult, std::string> run_fanout_step(const FanoutPlan& plan, const std::vector<std::string>& command, double timeout_s);

// After the step: every node's report path, in node order (a node that wrote none is passed on
// anyway, so that fleet names it unreadable instead of forgetting it), and those nodes.
struct CollectedReports {
  std::vector<std::string> files;
  std::vector<std::string> missing;
};
CollectedReports collect_reports(const FanoutPlan& plan);

}  // namespace perfgap::slurm
