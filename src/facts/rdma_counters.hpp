// RDMA port counters (/sys/class/infiniband/<dev>/ports/<n>/counters and hw_counters): the
// error, discard and wait counters net.ib.counters judges, read at both ends of the sample
// window (Facts::window: rdma_first, rdma_second; one sample under --root, since boot).
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "sys/sysroot.hpp"

namespace perfgap::facts {

struct RdmaPortCounters {
  std::string device;  // mlx5_0
  int port = 0;
  std::string dir;     // /sys/class/infiniband/mlx5_0/ports/1
  // "counters/symbol_error", "hw_counters/out_of_buffer" -> value; only the names judged.
  std::map<std::string, std::uint64_t, std::less<>> values;
  std::vector<std::string> unreadable;  // "counters/symbol_error: <why>"
  bool has_counters = false, has_hw_counters = false;  // the directories could be listed
  std::string counters_error;  // why counters/ could not be listed ("" when listed, or absent)
};

struct RdmaCounterSample {
  std::vector<RdmaPortCounters> ports;  // by device, then port
  std::string error;                    // /sys/class/infiniband could not be listed ("" when absent: no ports)
  std::optional<double> uptime_s;       // /proc/uptime when the sample was taken
};

// The counters of every port; cheap enough to take twice per check (docs: bench/README.md).
RdmaCounterSample read_rdma_counters(const sys::Sysroot& root);

// The counters read, and what they are: IB PortCounters in counters/ (their width in bits: they
// stop at all ones, the spec says, rather than wrap), mlx5's hw_counters (32 or 64 bits).
struct RdmaCounterInfo {
  std::string_view name;  // "counters/symbol_error"
  int bits;               // 0: not a saturating PortCounters field
  enum class Kind { link_error, discard, wait, transport } kind;
};
const std::vector<RdmaCounterInfo>& rdma_counter_catalogue();

}  // namespace perfgap::facts
