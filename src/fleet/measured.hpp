// Fleet over measurements: reports of `analyze nccl-tests`, `analyze steps` and the profile
// analyses (`analyze nsys|kineto`) aggregated per node. A pure function from the reports read
// to fleet.pace findings: per measure, each node's figure, the outliers by median and MAD
// (fleet/stats), the node that sets the pace, and, joined with the check reports of the same
// fleet input, the configuration the outliers share and no other node has.
//
// The node of a measurement is what it shows: nccl-tests prints the host of every rank (a run
// over several hosts counts for each of them, a node's figure being the median of its runs);
// a step log or a profile shows no host, so its node is its file's name without extension
// (n3.log, n3.nsys-rep).
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "fleet/inputs.hpp"
#include "fleet/reader.hpp"
#include "fleet/stats.hpp"
#include "report/model.hpp"

namespace perfgap::fleet {

struct Measure {
  std::string_view finding, metric;  // nccl_tests.busbw max_busbw_gbps, steps.gap median_ms, ...
  std::string_view what, unit;       // "peak busbw", "GB/s"
  bool higher_is_better = false;
};
const std::vector<Measure>& measures();

// The short name of a host or node (before the first '.'): a log's host and a node report's
// name meet on it.
std::string_view short_node_name(std::string_view name);

// Why an nccl-tests report names no node (fleet.unreadable), and what its fix answers.
inline constexpr std::string_view kNcclTestsNoHostWhy =
    "an nccl-tests measurement whose log shows no host (no '#  Rank N ... on HOST' line for every rank): the node is unknown";

// Why a 1-rank nccl-tests report sets no pace (fleet.unreadable): its busbw is 0 by definition.
inline constexpr std::string_view kNcclTestsOneRankWhy =
    "a 1-rank nccl-tests run: no data moves between GPUs, so its busbw is 0 by definition and says nothing of the node";

// Why a step log of start-up records only sets no pace (fleet.unreadable; its reason follows).
inline constexpr std::string_view kStepsStartupOnlyWhy =
    "a step log of start-up steps only, no steady state to set a node's pace (steps.gap: start-up only)";

// Why an analyze report gives fleet nothing to pace (fleet.unreadable): none of the measures.
inline constexpr std::string_view kNoMeasurementWhy =
    "an analyze report with no per-node measurement (fleet reads analyze nccl-tests, steps, nsys, kineto, nccl-inspector and "
    "nccl-ras reports: nccl_tests.busbw, steps.gap, profile.iterations, nccl_*)";

// One fleet.pace finding per measure present in `measured` (analyze reports), and a
// fleet.node_names warning per file name that several measurements without hosts share (kept
// apart by their directories, never merged into one node's figure); analyze reports
// with no measure of these, or an nccl-tests run whose log shows no host, are appended to
// `bad` (fleet.unreadable). `nodes`: the check reports, for the shared configuration.
std::vector<report::Finding> pace(const std::vector<NodeReport>& measured, const std::vector<NodeReport>& nodes,
                                  const OutlierRule& rule, std::vector<Unreadable>& bad);

// The measurements' own verdicts in the fleet's (so that its headline and exit status count
// them): one fleet.measured finding per measure finding present (nccl_tests.busbw, steps.gap,
// profile.iterations; subject that id), fail or warn as the worst of its reports, naming the
// nodes each failing or warning report measured, pass when every report of it passes, skip
// when none judged. Job reports (nccl-inspector, nccl-ras) are fleet.waits_on's.
std::vector<report::Finding> measurement_verdicts(const std::vector<NodeReport>& measured);

// True for a report of `analyze nccl-inspector` or `analyze nccl-ras` (a job's ranks, not a
// node's figure): job_ranks reads it, pace does not.
bool is_job_report(const NodeReport& r);

// The job's ranks as NCCL's Inspector and RAS name them (their "nccl ranks" evidence lines),
// per node, joined with the check reports of the same input:
//   fleet.job_ranks  one per node with a slow, late, dead, missing or erring rank (subject: the
//                    node as the tool printed it; the Inspector gives host names, RAS node
//                    addresses, which become the Inspector's host where a process id is on one
//                    host only), with that node's failing and warning checks;
//   fleet.waits_on   one for the job: the node or communicator it waits on (a stopped job: the
//                    nodes of its dead and missing ranks), with the configuration that node has
//                    and no other node with a check report has; pass when the reports name no
//                    rank, skip when none judged any.
// Empty when `measured` holds no such report.
std::vector<report::Finding> job_ranks(const std::vector<NodeReport>& measured, const std::vector<NodeReport>& nodes);

}  // namespace perfgap::fleet
