// net.ib.counters' judgement, a pure function of two counter samples (tests call it with
// samples of their own; the check passes the sample window's).
#pragma once

#include <map>
#include <optional>
#include <string>
#include <vector>

#include "facts/rdma_counters.hpp"
#include "report/model.hpp"

namespace perfgap::checks {

struct IbCounterParams {
  double link_errors_per_hour_warn = 1;      // since boot, per hour of uptime
  double link_downed_warn = 3;               // link_downed since boot, whatever the uptime
  double transport_errors_per_hour_warn = 3600;
  double xmit_wait_share_warn = 0.05;        // share of the time the port waited to send
  double xmit_wait_bytes_per_tick = 8;       // bytes one port_xmit_wait tick stands for
};

// What the node says about a port beside its counters.
struct IbPortContext {
  std::string bdf;                  // PCI function of its device
  std::string gpus;                 // "PCIe switch of GPU 1", "NUMA node of GPU 0, GPU 1"; "" when unknown
  std::optional<double> rate_gbps;  // the port's rate
};

// `first` and `second` are the samples at the window's ends (the same sample under --root:
// then `live` is false and only totals since boot are judged). `ports` by "device:port".
std::vector<report::Finding> judge_ib_counters(const facts::RdmaCounterSample& first, const facts::RdmaCounterSample& second, bool live,
                                               double seconds, const std::map<std::string, IbPortContext>& ports, const IbCounterParams& p);

}  // namespace perfgap::checks
