// perfgap compare BEFORE AFTER: two reports of the same kind in, what changed out. The reader
// takes the report's text (parsers take text); the comparison is a pure function of the two.
#pragma once

#include <cstddef>
#include <functional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::compare {

struct ReportFinding {
  std::string id, layer, subject, title;
  report::Status status = report::Status::skip;
  std::vector<std::pair<std::string, double>> metrics;
  std::vector<std::pair<std::string, std::string>> evidence;  // (source, observed): explain reads fleet.node_failures' ids from them
};

struct ReportView {
  std::string kind;  // source.kind as written
  std::string node;  // node.name, empty for reports without a node
  // The node's description flattened, in report order: "kernel", "arch", "container",
  // "virtualized", "settings.governor", "environment.NCCL_IB_HCA", "nccl_conf.NCCL_...".
  std::vector<std::pair<std::string, std::string>> node_facts;
  std::string generated_at;
  std::vector<std::string> inputs;  // source.inputs
  std::vector<ReportFinding> findings;
};

// A perfgap.report/1 document, or why it is not one in report::Reader's words ("byte 120: not
// JSON (...)", "findings[3]: no id"): the view is built from that reader's checked one.
tl::expected<ReportView, std::string> read_report(std::string_view text);

// A fleet report of thousands of nodes is larger than a --baseline; the JSON model of one is
// about ten times its text.
inline constexpr std::size_t kMaxReportFileBytes = 256u << 20;
// A report file named on the command line (compare, explain), read (sys::read_named_file, at
// most kMaxReportFileBytes) and then read_report; the error says why, without the path.
tl::expected<ReportView, std::string> load_report(const std::string& path);

// live and root are both node reports; the rest compare only with their own kind.
std::string comparable_kind(std::string_view kind);

enum class Direction { unknown, higher_is_better, lower_is_better };
// Which way a metric is better, by its name (docs/ANALYZE.md, "compare"): bandwidths, rates and
// shares of the reference up; times, remote and stolen shares, error and problem counts down.
Direction metric_direction(std::string_view name);

struct Options {
  double tolerance_pct = 5;  // a metric that moves the wrong way by more than this regressed
  // A finding id's cost in percent of training throughput (the knowledge base's estimate; 0 when
  // it has none): the headline's largest improvement and regression are the moves of the
  // findings that cost the most, then the largest relative moves (a move from 0 after any other).
  // Given by the command (compare sits below the knowledge base); empty ranks by the move alone.
  std::function<double(std::string_view id)> impact_pct;
  // compare.tlb_parity: the after report's dTLB figure within this many times the before's is
  // back to parity, beyond `tlb_fail_beyond` a fail (the knowledge base's reference_ratios).
  double tlb_pass_within = 1.2, tlb_fail_beyond = 1.5;
};

// Findings matched by (id, subject), a subject that names one of its report's inputs standing
// for that input's place (analyze a.txt vs analyze b.txt match input by input), in the order of the after report, then what only the
// before report had: compare.fixed / improved (pass), regressed (fail), new (fail or warn),
// unchanged (warn for a problem still there), gone (skip), metric (fail when a metric with a
// known direction got worse beyond the tolerance, else pass with the deltas), summary (pass).
std::vector<report::Finding> compare_reports(const ReportView& before, const std::string& before_name, const ReportView& after,
                                             const std::string& after_name, const Options& options);

// Why a comparison decided nothing, for its headline (report::Report::undecided): no finding was
// judged in both reports (each a skip, or an informational summary's pass: report::decides), none
// is new as a problem and no metric moved beyond the tolerance; empty when something was compared
// (or when compare.summary is itself a skip: reports of different jobs, which say why).
std::string undecided_why(const std::vector<report::Finding>& findings);

}  // namespace perfgap::compare
