// nccl-tests (and rccl-tests) output: the text tables of every version (old: no root
// column, `error` column holding a max absolute error or N/A; current: redop/root/#wrong, optional
// per-iteration columns and timestamps), with launcher prefixes (mpirun --tag-output,
// srun --label, "[N]" rank tags) and NCCL INFO lines interleaved; and the JSON file that
// `-J FILE` writes ("results": [{size, count, type, redop, root, out_of_place:{time, alg_bw,
// bus_bw, nwrong}, in_place:{...}}]).
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/launch_command.hpp"
#include "parsers/line_feed.hpp"
#include "parsers/nccl_nodes.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct NcclTestsFigures {
  double time_us = 0, algbw = 0, busbw = 0;
  std::optional<double> wrong;      // #wrong: a count of wrong elements; nullopt: not checked
                                    // ("N/A") or an old-layout row
  std::optional<double> max_error;  // the old layout's `error` column: the largest absolute
                                    // error of the check, not a count (1e-06 is float rounding)
};

struct NcclTestsRow {
  std::uint64_t size = 0, count = 0;
  std::string type, redop;
  std::optional<long> root;  // the root column (-1: none, as all_reduce prints); nullopt: not printed
  std::optional<NcclTestsFigures> out_of_place, in_place;
  int line = 0;
};

// A sweep whose rows end below the maxBytes its header asked for, with no "# Avg bus bandwidth"
// line after them: nccl-tests prints that line when a sweep ends, so the run stopped early
// (crashed, hung, killed) or the capture is cut.
struct NcclTestsStop {
  std::uint64_t reached = 0;    // the size of its last row (0: it printed none)
  std::uint64_t max_bytes = 0;  // what its header asked for ("maxBytes", or "Reducing maxBytes to")
  int header_line = 0;          // the "# nThread ... maxBytes" line
  int last_line = 0;            // its last row's line (0: none)
};

struct NcclTestsRun {
  std::string collective;       // "all_reduce_perf" when the output names it
  std::string nccl_version;     // "2.18.5" when printed
  // In file order: the last row of each size, and every row with a wrong result or an error
  // above zero (a plain row is dropped when a later row of its size follows: only the last
  // row of a size is judged, so many repeated runs keep one row per size).
  std::vector<NcclTestsRow> rows;
  bool results_checked = false;  // some out-of-place result had a #wrong count or an error value (not -c 0)
  std::optional<double> avg_busbw;  // "# Avg bus bandwidth"
  // The rows' kinds ("float sum"; with the root where the table has that column) where there are
  // several (-d all, -o all): rows of one size but another kind are another measurement.
  std::vector<std::string> row_kinds;
  std::vector<int> elided;             // lines of "..." where rows were cut out of the table
  std::optional<double> out_of_bounds;  // "# Out of bounds values : N OK|FAILED": wrong elements over all
                                        // sizes (the largest when the file holds several runs)
  int out_of_bounds_line = 0;
  bool json = false;
  // Who ran it: "#  Rank N Group G Pid P on HOST device D" lines (ranks: the distinct rank
  // numbers; hosts: the distinct HOSTs, capped), and NCCL INFO comm lines ("nRanks 16 nNodes 2").
  std::size_t rank_lines = 0;
  long max_rank = -1;
  // A '...' between the Rank lines and the table: the poster cut the list (its ranks and hosts are some of the job's).
  bool rank_lines_cut = false;
  // Every rank's Rank line is in the output: ranks 0 to max_rank, each once, the list not cut.
  bool every_rank_line() const { return rank_lines > 0 && !rank_lines_cut && static_cast<long>(rank_lines) == max_rank + 1; }
  std::vector<std::string> hosts;  // distinct, in the order seen
  // The GPU models the Rank lines name after the device's bus id ("NVIDIA H100 80GB HBM3"):
  // distinct, in the order seen, capped; empty where no Rank line names one.
  std::vector<std::string> gpu_models;
  std::optional<long> info_ranks, info_nodes;
  // What the NCCL INFO lines say of the nodes besides nNodes: the hostnames of their prefixes,
  // the ranks' hosts and bootstrap/OOB addresses (parsers/nccl_nodes.hpp).
  NcclNodeSigns info_nodes_signs;
  // The ranks and nodes the output shows, when it shows them whole (an excerpt that starts at
  // the last Rank line names one host of many: nodes unknown then).
  std::optional<long> ranks() const;
  std::optional<long> nodes() const;
  // The nodes as the output shows them: NCCL's nNodes or every rank's Rank line (basis empty:
  // said outright), else what the NCCL INFO lines' hosts or addresses show, with how they were
  // counted (a lower bound, at_least, where the lines may not show every rank); count 0: not
  // shown. nodes() is its exact count.
  NcclNodes nodes_shown() const;
  // The launcher command the output quotes ("mpirun -n 256 -npernode 16 ... all_reduce_perf -g 1"),
  // when it quotes one (or several that agree): how many ranks and nodes it was started on,
  // where nothing else says.
  std::optional<LaunchCommand> launch;
  std::vector<ParseError> damaged;  // rows cut short or with unreadable cells
  std::vector<NcclTestsStop> stopped_early;  // in file order
};

// The evidence source under which `analyze nccl-tests` names the hosts of the run (observed: the
// hosts, comma-separated, as the Rank lines show them), and which `fleet` reads back to name
// the node of a measurement.
inline constexpr std::string_view kNcclTestsHostsEvidence = "nccl-tests hosts";

// The evidence source under which `analyze nccl-tests` names the GPU models the run's Rank lines
// show (observed: the models, " + "-joined), and which `explain` and `compare` read back to tell
// a measurement of another GPU from the job's (compare/same_job).
inline constexpr std::string_view kNcclTestsGpusEvidence = "nccl-tests GPUs";

// The evidence source under which `analyze nccl-tests` and `analyze nccl-inspector` name the
// collective a bandwidth was measured with (observed: the profile's name of it, "AllReduce",
// "AllToAll", ..., then in parentheses how it was known where the output does not name it), and
// which `explain` reads to price only that collective's exposed time (docs/EXPLAIN.md).
inline constexpr std::string_view kCollectiveMeasuredEvidence = "collective measured";

// Error when neither a result table header nor result rows nor -J JSON results are found.
Parsed<NcclTestsRun> parse_nccl_tests(std::string_view text);
// The same with every line read the general way and every row kept until the end (no short
// way for table rows, no parking of plain rows): the reference the tests and the fuzzer hold
// parse_nccl_tests to.
Parsed<NcclTestsRun> parse_nccl_tests_reference(std::string_view text);
// The same fed a piece at a time (parsers/line_feed.hpp); -J JSON output is kept whole.
using NcclTestsParser = LineParser<NcclTestsRun>;
extern template class LineParser<NcclTestsRun>;

// "1M,64M,1G" (nccl-tests -b/-e syntax: bytes, K/M/G suffixes in powers of 1024).
Parsed<std::vector<std::uint64_t>> parse_sizes(std::string_view list);
std::optional<std::uint64_t> parse_size(std::string_view s);
std::string format_size(std::uint64_t bytes);  // "1 MiB", "512 B"

}  // namespace perfgap::parsers
