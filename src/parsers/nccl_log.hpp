// NCCL_DEBUG=INFO logs of NCCL 2.x: one file per rank or several ranks interleaved, with
// launcher prefixes, nccl-tests rows and other program output mixed in. Lines are
// "host:pid:tid [dev] NCCL INFO|WARN ..." (WARN lines also carry "file.cc:line", and a
// timestamp since 2.26), or "NCCL INFO ..." without the prefix (some launchers and
// NCCL_DEBUG_FILE setups drop it); "NCCL version X" may also stand alone.
#pragma once

#include <cstddef>
#include <functional>
#include <map>
#include <memory>
#include <optional>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/nccl_nodes.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// Channel lines of one kind (transport, network, direction, GDRDMA), counted: a 1,024-rank
// log has hundreds of thousands of channel lines and a handful of kinds.
struct NcclChannel {
  std::string transport;  // "P2P", "SHM", "NET", "COLLNET", ...
  std::string net;        // for NET: "IB", "IBext_v8", "Socket", ...
  std::string direction;  // "send", "receive" or ""
  bool gdrdma = false;
  int count = 0;           // lines of this kind
  std::vector<int> lines;  // the first kFirstLines of them, in order
  int line = 0;            // the first
};

// Lines that repeat once per rank are kept once per distinct value (with its first line),
// so the model stays small whatever the log's length.
struct NcclLog {
  static constexpr std::size_t kFirstLines = 4;   // lines kept per channel kind
  static constexpr std::size_t kMaxWarnings = 200;  // WARN lines kept (warning_lines counts all)
  int nccl_lines = 0;                                   // lines with NCCL INFO/WARN
  struct Version {
    std::string host;     // "" when the line names no host (a bare "NCCL version X" line)
    std::string version;  // "2.21.5"
    int line = 0;
  };
  std::vector<Version> versions;                        // each distinct (host, version), first line
  std::set<std::string, std::less<>> hosts;                          // hosts named by line prefixes
  std::optional<int> n_nodes;                           // the largest "nNodes N" of comm init lines
  std::optional<int> n_nodes_line;
  NcclNodeSigns nodes;                                     // what the lines say of the nodes (nNodes, the ranks' hosts and addresses)
  std::vector<std::pair<std::string, int>> using_network;  // "Socket", "IB", ... -> first line (each once)
  std::vector<std::pair<std::string, int>> rdma_devices;   // "mlx5_0:1/IB" from NET/IB : Using (each once)
  std::vector<std::pair<std::string, int>> socket_devices; // "eth0:10.0.0.1<0>" from NET/Socket : Using (each once)
  std::optional<std::pair<std::string, int>> net_plugin;  // "aws-ofi-nccl 1.13.2-aws", "IBext_v8" (plugin lines)
  std::optional<int> ib_no_device;                      // "NET/IB : No device found."
  std::optional<int> ibverbs_missing;                   // "Failed to open libibverbs"
  std::vector<std::pair<std::string, int>> env_settings;   // "NCCL_IB_DISABLE=1" (set by environment; each once)
  std::optional<std::pair<std::string, int>> topo_file_env;     // NCCL_TOPO_FILE set by environment to X
  std::vector<std::pair<std::string, int>> topo_loaded;         // Loading topology file X
  std::vector<std::pair<std::string, int>> topo_open_failed;    // Could not open XML topology file X
  // WARN lines of NCCL's XML reader/importer ("XML Parse : ...", "XML Import Channel : dev 1 not
  // found."): a topology or graph file NCCL read but could not use (the first kFirstLines).
  std::vector<std::pair<std::string, int>> topo_xml_warnings;
  int topo_xml_warning_lines = 0;
  std::vector<std::pair<std::string, int>> warnings;            // NCCL WARN text (the first kMaxWarnings)
  int warning_lines = 0;
  // NCCL's error return chains, INFO lines "init.cc:915 -> 2" (a non-zero ncclResult_t passed up):
  // the first kFirstLines, and how many there were.
  std::vector<std::pair<std::string, int>> error_returns;
  int error_return_lines = 0;
  std::vector<NcclChannel> channels;                     // by kind, in order of first appearance
  std::optional<int> coll_channels, nvls_channels, p2p_channels;  // "16 coll channels, 0 nvls channels, ..."
  std::vector<std::pair<std::string, int>> gdr_enabled;  // "GPU Direct RDMA Enabled for ..." (each once)
  int gdr_enabled_lines = 0;
  // "NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (no module)": the first such line.
  std::optional<std::pair<std::string, int>> gdr_disabled;
  int gdr_disabled_lines = 0;
};

// Error when the text has no NCCL log line at all.
Parsed<NcclLog> parse_nccl_log(std::string_view text);
// The same fed a piece at a time (parsers/line_feed.hpp).
using NcclLogParser = LineParser<NcclLog>;
extern template class LineParser<NcclLog>;

}  // namespace perfgap::parsers
