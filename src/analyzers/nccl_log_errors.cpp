// nccl_log.errors: the NCCL WARN lines and error return chains of a job's NCCL_DEBUG=INFO log.
// A job that failed in NCCL (an RDMA completion error, a socket that could not connect, a net
// plugin that could not open its provider) says so in WARN lines, with "file.cc:N -> R" lines
// passing the error up; its channels and network may still read as healthy.
#include <fmt/format.h>

#include <algorithm>
#include <set>
#include <string>
#include <string_view>
#include <vector>

#include "analyzers/analyzers.hpp"
#include "sys/text.hpp"

namespace perfgap::analyzers {
namespace {

// WARN lines that are NCCL probing, not an error: it looks for libibverbs and a net plugin in
// every job (on nodes without RDMA NICs these fail as expected); XML topology warnings are
// nccl_log.topo_file's.
bool nccl_benign_warning(std::string_view w) {
  for (std::string_view s : {"Failed to open libibverbs", "Could not find: libnccl-net", "NET/Plugin : No plugin found", "NET/Plugin: Could not find"})
    if (sys::find(w, s) != std::string_view::npos) return true;
  return w.starts_with("XML ");
}

// What a WARN line's words say failed, for the title and the fix; "" when they name nothing known.
std::string nccl_warning_kind(std::string_view w) {
  // ibv_wc_status of "Got completion from peer ... with error N" (infiniband/verbs.h).
  if (sys::find(w, "Got completion") != std::string_view::npos) {
    if (sys::find(w, "error 12,") != std::string_view::npos || sys::find(w, "status=12") != std::string_view::npos)
      return "RDMA transport retries exhausted (completion error 12): the link, the fabric or the peer stopped answering";
    if (sys::find(w, "error 4,") != std::string_view::npos || sys::find(w, "status=4") != std::string_view::npos)
      return "RDMA local protection error (completion error 4): a registered buffer the NIC cannot reach, most often GPUDirect RDMA "
             "(nvidia-peermem or dma-buf, PCIe ACS, the IOMMU)";
    return "RDMA completion error";
  }
  if (sys::find(w, "ibv_") != std::string_view::npos) return "an RDMA verbs call failed";
  if (sys::find(w, "OFI") != std::string_view::npos || sys::find(w, "Libfabric") != std::string_view::npos || sys::find(w, "fi_") != std::string_view::npos)
    return "the network plugin (aws-ofi-nccl / libfabric) failed";
  if (sys::find(w, "ocket") != std::string_view::npos || sys::find(w, "onnect") != std::string_view::npos)
    return "a TCP connection between ranks failed (bootstrap or NET/Socket)";
  if (sys::find(w, "Cuda failure") != std::string_view::npos || sys::find(w, "CUDA") != std::string_view::npos) return "a CUDA call failed";
  if (sys::find(w, "imeout") != std::string_view::npos) return "a timeout";
  return "";
}

}  // namespace

Finding nccl_log_errors_finding(const std::vector<NcclLogInput>& logs, const std::string& subject) {
  Finding f;
  f.id = "nccl_log.errors";
  f.layer = "network";
  f.subject = subject;
  int warnings = 0, returns = 0, kept = 0, topo_warnings = 0;
  std::string first_return;
  std::vector<std::string> distinct, kinds;
  std::set<std::string, std::less<>> seen;
  for (const auto& in : logs) {
    for (const auto& [w, line] : in.log->warnings) {
      if (nccl_benign_warning(w)) {
        topo_warnings += w.starts_with("XML ") ? 1 : 0;
        continue;
      }
      ++warnings;
      if (kept < 8) f.add(in.source + ":" + std::to_string(line), "NCCL WARN " + w), ++kept;
      if (seen.insert(w).second && distinct.size() < 3) distinct.push_back(w.size() > 160 ? w.substr(0, 157) + "..." : w);
      if (auto k = nccl_warning_kind(w); !k.empty() && std::find(kinds.begin(), kinds.end(), k) == kinds.end()) kinds.push_back(k);
    }
    // WARN lines past the ones kept (the parser keeps the first 200) are counted too.
    if (in.log->warning_lines > static_cast<int>(in.log->warnings.size())) warnings += in.log->warning_lines - static_cast<int>(in.log->warnings.size());
    returns += in.log->error_return_lines;
    for (const auto& [r, line] : in.log->error_returns) {
      f.add(in.source + ":" + std::to_string(line), r + " (an error passed up)");
      if (first_return.empty()) first_return = r;
    }
  }
  f.metric("warn_lines", warnings);
  f.metric("error_returns", returns);
  if (warnings == 0 && returns == 0) {
    f.status = report::Status::pass;
    f.title = "no NCCL WARN line and no error return in the log";
    for (const auto& in : logs)
      f.add(in.source, fmt::format("{} NCCL lines read: {} WARN line{} in all{}", in.log->nccl_lines, in.log->warning_lines,
                                   in.log->warning_lines == 1 ? "" : "s",
                                   in.log->warning_lines > 0 ? " (NCCL's probes for libibverbs and a net plugin, or topology XML warnings)" : ""),
            "no WARN line but NCCL's probes, no 'file:line -> N' error return");
    return f;
  }
  // Error returns without a WARN line (the WARNs cut from the log, or a path NCCL recovers
  // from): a warning; WARN lines of a failure: a failure.
  f.status = warnings > 0 ? report::Status::fail : report::Status::warn;
  f.title = warnings > 0 ? fmt::format("NCCL reported {} WARN line{}{}: {}", warnings, warnings == 1 ? "" : "s",
                                       kinds.empty() ? "" : " (" + kinds.front() + ")", fmt::join(distinct, "; "))
                         : fmt::format("NCCL passed an error code up {} time{} (first: {}) with no WARN line of its own{}: a path NCCL may "
                                       "have recovered from (a plugin or file it fell back from); where the job failed, its WARN lines say what",
                                       returns, returns == 1 ? "" : "s", first_return,
                                       topo_warnings > 0 ? ", after topology XML warnings (nccl_log.topo_file)" : "");
  for (std::size_t i = 1; i < kinds.size(); ++i) f.add("also", kinds[i]);
  f.fix = "the WARN lines say what failed, before any performance can be judged: RDMA completion errors point at the link, the fabric or "
          "the peer named (net.ib.ports and net.ib.counters on both nodes; error 4 at GPUDirect RDMA: nvidia-peermem, ACS, IOMMU), socket "
          "errors at the interface NCCL picked (NCCL_SOCKET_IFNAME), a firewall or a rank that died, a net plugin's at its provider "
          "(libfabric's EFA provider, the plugin's version); NCCL_DEBUG_SUBSYS=INIT,NET gives more";
  if (warnings > 0) f.impact = "the job failed or stalled in NCCL: no step completes until the cause is fixed";
  return f;
}

}  // namespace perfgap::analyzers
