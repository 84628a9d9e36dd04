#include "facts/rdma_counters.hpp"

#include <algorithm>
#include <cerrno>

#include "facts/facts.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

const std::vector<RdmaCounterInfo>& rdma_counter_catalogue() {
  using K = RdmaCounterInfo::Kind;
  static const std::vector<RdmaCounterInfo> c = {
      {"counters/symbol_error", 16, K::link_error},
      {"counters/link_error_recovery", 8, K::link_error},
      {"counters/link_downed", 8, K::link_error},
      {"counters/port_rcv_errors", 16, K::link_error},
      {"counters/port_rcv_remote_physical_errors", 16, K::link_error},
      {"counters/local_link_integrity_errors", 4, K::link_error},
      {"counters/excessive_buffer_overrun_errors", 4, K::link_error},
      {"counters/port_xmit_discards", 16, K::discard},
      {"counters/port_rcv_constraint_errors", 8, K::discard},
      {"counters/port_xmit_constraint_errors", 8, K::discard},
      {"counters/port_xmit_wait", 32, K::wait},
      {"hw_counters/out_of_buffer", 0, K::transport},
      {"hw_counters/out_of_sequence", 0, K::transport},
      {"hw_counters/packet_seq_err", 0, K::transport},
      {"hw_counters/local_ack_timeout_err", 0, K::transport},
      {"hw_counters/rnr_nak_retry_err", 0, K::transport},
      {"hw_counters/implied_nak_seq_err", 0, K::transport},
      {"hw_counters/req_cqe_error", 0, K::transport},
      {"hw_counters/resp_cqe_error", 0, K::transport},
      {"hw_counters/roce_adp_retrans", 0, K::transport},
      {"hw_counters/roce_adp_retrans_to", 0, K::transport},
      {"hw_counters/roce_slow_restart", 0, K::transport},
      {"hw_counters/rx_icrc_encapsulated", 0, K::transport},
  };
  return c;
}

namespace rdma_counters_read {
namespace {

void read_group(const sys::Sysroot& root, RdmaPortCounters& p, std::string_view group, bool& listed, std::string* list_error) {
  const std::string dir = p.dir + "/" + std::string(group);
  auto names = root.list(dir);
  if (!names) {
    if (list_error && names.error().err != ENOENT) *list_error = describe(names.error());
    return;
  }
  listed = true;
  std::sort(names->begin(), names->end());
  // The catalogue's counters the directory has, read with one resolution of the directory.
  std::vector<std::string_view> judged;
  std::vector<std::string> files;
  for (const auto& c : rdma_counter_catalogue()) {
    auto slash = c.name.find('/');
    if (c.name.substr(0, slash) != group) continue;
    auto file = c.name.substr(slash + 1);
    if (!std::binary_search(names->begin(), names->end(), file, [](const auto& a, const auto& b) { return std::string_view(a) < std::string_view(b); }))
      continue;
    judged.push_back(c.name);
    files.emplace_back(file);
  }
  auto values = root.read_values_in(dir, files);
  for (std::size_t i = 0; i < judged.size(); ++i) {
    const auto& v = values[i];
    if (!v) {
      p.unreadable.push_back(std::string(judged[i]) + ": " + describe(v.error()));
      continue;
    }
    auto n = sys::to_int<std::uint64_t>(*v);
    if (!n) {
      p.unreadable.push_back(std::string(judged[i]) + ": '" + v->substr(0, 40) + "' is not a counter");
      continue;
    }
    p.values.emplace(std::string(judged[i]), *n);
  }
}

}  // namespace
}  // namespace rdma_counters_read

RdmaCounterSample read_rdma_counters(const sys::Sysroot& root) {
  RdmaCounterSample s;
  const std::string base = "/sys/class/infiniband";
  auto devs = root.list(base);
  if (!devs) {
    if (devs.error().err != ENOENT) s.error = describe(devs.error());
    return s;
  }
  std::sort(devs->begin(), devs->end());
  for (const auto& d : *devs) {
    auto ports = root.list(base + "/" + d + "/ports");
    if (!ports) continue;  // net.ib.ports says so
    std::vector<int> numbers;
    for (const auto& p : *ports)
      if (auto n = sys::to_int<int>(p)) numbers.push_back(*n);
    std::sort(numbers.begin(), numbers.end());
    for (int n : numbers) {
      RdmaPortCounters p;
      p.device = d;
      p.port = n;
      p.dir = base + "/" + d + "/ports/" + std::to_string(n);
      rdma_counters_read::read_group(root, p, "counters", p.has_counters, &p.counters_error);
      rdma_counters_read::read_group(root, p, "hw_counters", p.has_hw_counters, nullptr);
      s.ports.push_back(std::move(p));
    }
  }
  if (auto up = root.read_value("/proc/uptime")) {
    auto fields = sys::split_ws(*up);
    if (!fields.empty()) s.uptime_s = sys::to_double(fields[0]);
  }
  return s;
}

}  // namespace perfgap::facts
