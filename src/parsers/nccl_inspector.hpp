// NCCL Inspector profiler plugin output (NVIDIA/nccl plugins/profiler/inspector, JSON mode):
// one compact JSON object per line, per completed collective (or P2P operation) and
// communicator, written by each process to <NCCL_INSPECTOR_DUMP_DIR>/<hostname>-pid<pid>.log:
//   {"header":{"id":"0x..","comm_name":"..","rank":R,"n_ranks":N,"nnodes":K},
//    "metadata":{"inspector_output_format_version":"v4.0","git_rev":"..","rec_mechanism":"..",
//                "dump_timestamp_us":T,"hostname":"..","pid":P},
//    "coll_perf":{"coll":"AllReduce","coll_sn":S,"coll_msg_size_bytes":B,"coll_exec_time_us":U,
//                 "coll_timing_source":"kernel_gpu","coll_algobw_gbs":X,"coll_busbw_gbs":Y, ...}}
// ("p2p_perf" with p2p_* fields instead of "coll_perf" for Send/Recv). comm_name and
// coll_timing_source are absent from older v4 writers; the bandwidths are "nan" (a string)
// when the time was 0; coll_exec_time_us is fractional ("5663.0") in records that went through
// another tool. Output format versions v4.x are read; another major version is an error.
// The form is told once, by the first line that is not blank:
// - JSON lines (above), as the plugin writes them (.log, .jsonl; .gz is inflated by the input);
// - pretty-printed JSON: the same records over several lines each (the plugin's README, jq);
// - Prometheus text (NCCL_INSPECTOR_PROM_DUMP=1, nccl_inspector_metrics_<GPU UUID>.prom), the
//   per-rank form of v4: one sample each of nccl_algorithm_bandwidth_gbs, nccl_bus_bandwidth_gbs
//   and nccl_collective_exec_time_microseconds per collective, labelled comm_id, hostname, rank,
//   nranks, n_nodes, collective, coll_sn, message_size ("2.00GB", 1024-based, 2 decimals), pid
//   when present. The aggregate form of v5 (labels version="v5.x", node, gpu, comm_name,
//   message_size="4-5GB": per-GPU means with no rank, communicator id or exact size) cannot name
//   a rank and is refused as such.
// The model keeps one aggregate per (communicator, rank, collective, message size), so its
// size is bounded by what repeats, not by the number of records.
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// A line longer than this is no Inspector record (a verbose one with 64 channels is ~15 KiB).
inline constexpr std::size_t kMaxInspectorLineBytes = 256u << 10;
// JSON nested deeper than this is no Inspector record (it nests 4 deep).
inline constexpr int kMaxInspectorDepth = 16;
// Distinct (communicator, rank, collective, size) aggregates kept; more are counted as dropped.
inline constexpr std::size_t kMaxInspectorGroups = 200000;
// The evidence line by which the findings of `analyze nccl-inspector` and `analyze nccl-ras`
// name the ranks they are about, for `perfgap fleet` (fleet/reader): observed
// "HOST: rank R of 'COMM' (pid P); HOST: pid P (GPU G)", one item per rank or process, the
// host as the tool printed it (the Inspector's hostname, RAS's node address).
inline constexpr std::string_view kNcclRanksEvidence = "nccl ranks";

struct InspectorRankColl {
  std::string comm_id;    // header.id, "0x7f8c496ae9f661"
  std::string comm_name;  // header.comm_name; "" when absent or "unknown"
  int rank = -1, n_ranks = 0;
  std::uint64_t nnodes = 0;
  std::string host;       // metadata.hostname
  std::uint64_t pid = 0;
  std::string coll;       // "AllReduce", "AllGather", ...
  std::uint64_t msg_bytes = 0;
  std::size_t count = 0;          // records
  std::size_t bw_count = 0;       // records with a numeric busbw
  double sum_exec_us = 0;
  double sum_busbw_gbs = 0, sum_algbw_gbs = 0;
  double min_busbw_gbs = 0, max_busbw_gbs = 0;
  std::size_t cpu_timed = 0;      // records timed on the CPU (timing source not kernel_gpu)
  int first_line = 0;
  double mean_exec_us() const { return count ? sum_exec_us / static_cast<double>(count) : 0; }
  double mean_busbw_gbs() const { return bw_count ? sum_busbw_gbs / static_cast<double>(bw_count) : 0; }
};

struct NcclInspector {
  std::string version;  // "v4.0" ("v4" for Prometheus text, which carries no version)
  std::string form;     // "JSON lines", "pretty-printed JSON", "Prometheus text"
  std::vector<InspectorRankColl> colls;  // in order of first appearance
  std::size_t coll_records = 0, p2p_records = 0;
  std::size_t dropped = 0;  // records of aggregates beyond kMaxInspectorGroups
  std::vector<ParseError> damaged;  // lines that are not readable records (cut short, wrong types)
};

// Error when no record is readable, or at the first record of an output format version other
// than v4.x (its line).
Parsed<NcclInspector> parse_nccl_inspector(std::string_view text);
using NcclInspectorParser = LineParser<NcclInspector>;
extern template class LineParser<NcclInspector>;

}  // namespace perfgap::parsers
