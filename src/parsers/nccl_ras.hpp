// The text status of NCCL's RAS client (`ncclras`, or `echo status | nc localhost 28028`;
// NVIDIA/nccl src/ras/client_support.cc), NCCL 2.24 and later:
//   NCCL version 2.30.1+cuda12.9 compiled with CUDA 12.9
//   CUDA runtime version 12090, driver version 12090
//   Job summary / =========== / a table of nodes, processes and GPUs
//   Communicators... (0.01s) / ============= / "Group Comms Nodes Ranks ... Status Errors" rows
//   Errors / ====== / INCOMPLETE (job processes without data), DEAD (processes unreachable),
//     "#G-C (hash) INCOMPLETE|ERROR" blocks naming ranks ("Rank R -- GPU G managed by process P on node H")
//   Warnings / ======== / TIMEOUT, "#G-C (hash) MISMATCH" blocks
// The JSON format (`ncclras -f json`) is not this one and is refused with a message saying so.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// A process or rank the status names: "Process P on node H managing GPU(s) G" or
// "Rank R [has status S|reported E|...] -- GPU G managed by process P on node H".
struct RasPeer {
  long rank = -1;      // -1: a process line
  long pid = -1;       // -1: "[process information not found]"
  std::string node;    // the node's IP address as printed
  std::string gpus;    // "0", "0,1", "3 (NVML 5)"
  std::string detail;  // "has status INIT", "reported Remote process error", ...
  // A MISMATCH's rank: the operation its group launched up to (the count line it follows, or its
  // own "has launched up to operation N"); -1 unknown, 0 none launched.
  long launched = -1;
  int line = 0;
};

// A row of the communicators table: comms grouped by size, status and errors.
struct RasCommGroup {
  long group = 0, comms = 0, nodes = 0, ranks_per_comm = 0, ranks_in_group = 0;
  std::string ranks_per_node;  // "8" or "4-8"
  std::string status;          // NOCOMM, INIT, RUNNING, FINALIZE, ABORT
  std::string errors;          // OK, MISMATCH, ERROR, INCOMPLETE and their combinations
  int line = 0;
};

// An "#G-C (hash) KIND" block of the Errors or Warnings section.
struct RasCommIssue {
  std::string id;    // "#0-1"
  std::string hash;  // "9a3e7c0f12ab45cd"
  std::string kind;  // INCOMPLETE, ERROR, MISMATCH
  std::vector<std::string> details;  // its lines other than rank lines, trimmed
  std::vector<RasPeer> ranks;
  // A MISMATCH's operation counts in the order printed (the most ranks first): {ranks, operation}
  // ("26 ranks have launched up to operation 6650"; "6 ranks have not launched any operations": 0).
  std::vector<std::pair<long, long>> launched;
  int line = 0;
};

struct NcclRas {
  std::string nccl_version;  // "2.30.1+cuda12.9"
  long nodes = -1, processes = -1, gpus = -1;  // the job summary's totals
  bool job_summary = false, comms_section = false, errors_section = false, warnings_section = false;
  bool no_comm_data = false;  // "No communicator data collected!"
  std::vector<RasCommGroup> groups;
  long missing_processes = 0;  // INCOMPLETE: job processes that sent no communicator data
  std::vector<RasPeer> missing;
  long dead_processes = 0;     // DEAD
  std::vector<RasPeer> dead;
  long unnamed_missing = 0, unnamed_dead = 0;  // "[could not find information on N processes]"
  std::vector<RasCommIssue> issues;
  long timeouts = 0;           // TIMEOUT: communication timeouts while gathering the data
  std::vector<ParseError> damaged;
};

// Error when the text has neither the job summary nor the communicators section, for the
// JSON format, and for an NCCL major version other than 2.
Parsed<NcclRas> parse_nccl_ras(std::string_view text);
using NcclRasParser = LineParser<NcclRas>;
extern template class LineParser<NcclRas>;

}  // namespace perfgap::parsers
