// The nodes an NCCL_DEBUG=INFO log shows a job on, from what its lines say, for the NCCL-log
// and nccl-tests parsers: NCCL's own "nNodes N" (2.19+); else the hostnames of the
// "host:pid:tid" prefixes of the lines that name every rank ("comm 0x.. rank 3 nranks 16 ...
// Init COMPLETE", "... Destroy COMPLETE"); else, as a lower bound where the lines may not show
// every rank, the prefixes' hostnames or the ranks' bootstrap/OOB addresses ("Bootstrap : Using
// eth0:10.0.0.1<0>", "NET/IB : Using [0]mlx5_0:1/RoCE [RO]; OOB eth0:10.0.0.1<0>",
// "NET/Socket : Using [0]eth0:10.1.2.3<0>"). A count is never more than the ranks.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <optional>
#include <set>
#include <string>
#include <string_view>

namespace perfgap::parsers {

// What the lines said, each distinct value once (at most kMaxKept of each kind).
struct NcclNodeSigns {
  static constexpr std::size_t kMaxKept = 4096;
  std::optional<long> n_nodes;  // the largest "nNodes N"
  int n_nodes_line = 0;
  std::optional<long> n_ranks;  // the largest "nranks N" / "nRanks N"
  // Per communicator size, each rank's host, from lines naming both ("rank 3 nranks 16"): the
  // ranks of the largest size, all of them seen, are the job's.
  std::map<long, std::map<long, std::string>> rank_hosts;
  std::set<std::string, std::less<>> hosts;  // hostnames of the line prefixes (with a letter or digit)
  // The addresses of each kind of line ("10.0.0.1"; an IPv6 one as printed): one per process,
  // the first interface of a NET/Socket line.
  std::set<std::string, std::less<>> bootstrap, oob, socket;
  bool loopback = false;      // an address on the loopback interface
  bool non_loopback = false;  // an address on another
  // The processes whose lines these are ("host:pid [dev]", a few kept: only one or more matters),
  // and the largest rank a channel line names ("Ring 00 : 155[3d000] -> 157[b2000]"): one rank's
  // own file (NCCL_DEBUG_FILE=%h.%p) names its peers but shows one speaker.
  std::set<std::string, std::less<>> speakers;
  long max_channel_rank = -1;

  // A line prefix's speaker ("host:pid:tid [dev]" -> "host:pid [dev]").
  void add_speaker(std::string_view prefix);

  // One NCCL INFO message (the text after "NCCL INFO "), `line` its line number.
  void info(std::string_view msg, std::string_view host, int line);
  // A hostname of a line prefix, the first time the caller sees it.
  void add_host(std::string_view host);
  void merge(const NcclNodeSigns& o);
};

// The nodes the signs show: count 0 when nothing tells (then `detail` says what was seen, if
// anything). `basis` says how they were counted, `detail` what with.
struct NcclNodes {
  long count = 0;
  bool at_least = false;  // a lower bound: the lines may not show every rank
  std::string basis, detail;
};
NcclNodes nccl_nodes(const NcclNodeSigns& s);

// "3 nodes", "at least 2 nodes": the count only; "" when not shown.
std::string nccl_nodes_count_words(const NcclNodes& n);

// The host of a line prefix "host:pid:tid [dev]" (after blanks and launcher labels); empty
// when the prefix has none. A launcher's tag glued in front of it (Open MPI's --tag-output
// "[1,0]<stdout>:host:pid:tid") and a timestamp glued in front (a CloudWatch copy's
// "2025-05-16T16:39:51.208-07:00host:pid:tid") are not part of the host.
std::string_view nccl_line_host(std::string_view prefix);

}  // namespace perfgap::parsers
