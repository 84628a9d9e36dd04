// network layer, RDMA port counters: link errors, discards, transport retries and send waits
// since boot and over the sample window.
#include "checks/network/counters.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cmath>

#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {

namespace ib_counter_checks {
namespace {

using Kind = facts::RdmaCounterInfo::Kind;

const facts::RdmaPortCounters* find_port(const facts::RdmaCounterSample& s, const facts::RdmaPortCounters& p) {
  for (const auto& q : s.ports)
    if (q.device == p.device && q.port == p.port) return &q;
  return nullptr;
}

constexpr std::string_view kNoPorts = "no RDMA ports (/sys/class/infiniband absent or without ports)";

std::string per_hour(double v) { return v >= 100 ? fmt::format("{:.0f}", v) : fmt::format("{:.3g}", v); }

// Why a port's counters cannot be judged at all, if they cannot.
std::optional<std::string> ib_port_unreadable(const facts::RdmaPortCounters& port) {
  if (!port.has_counters && !port.has_hw_counters)
    return port.counters_error.empty() ? port.dir + "/counters and hw_counters absent" : port.counters_error;
  if (port.values.empty()) return port.unreadable.empty() ? "none of the judged counters present in " + port.dir : port.unreadable.front();
  return std::nullopt;
}

// The PortCounters of the catalogue this port does not give, and those of them a bad link moves
// first (symbol_error, port_rcv_errors); returns how many PortCounters the catalogue has.
std::size_t ib_port_counters_not_read(const facts::RdmaPortCounters& port, std::vector<std::string>& not_read,
                                      std::vector<std::string>& core_missing) {
  std::size_t port_counters = 0;
  for (const auto& c : facts::rdma_counter_catalogue()) {
    if (!sys::starts_with(c.name, "counters/")) continue;
    ++port_counters;
    if (port.values.count(c.name)) continue;
    const auto shortname = std::string(c.name.substr(c.name.find('/') + 1));
    not_read.push_back(shortname);
    if (shortname == "symbol_error" || shortname == "port_rcv_errors") core_missing.push_back(shortname);
  }
  return port_counters;
}

// Each link_downed is an outage of the rail (NCCL's connections over it fail or stall): judged
// on its own count, whatever the uptime; saturated (8 bits) it went down at least 255 times.
std::optional<std::string> ib_link_downs(const facts::RdmaPortCounters& port, const IbCounterParams& p) {
  auto d = port.values.find("counters/link_downed");
  if (d == port.values.end() || d->second == 0 || static_cast<double>(d->second) < p.link_downed_warn) return std::nullopt;
  return fmt::format("the link went down {}{} times since boot (link_downed; warn from {:.0f}): each is an outage of this rail",
                     d->second == 255 ? "at least " : "", d->second, p.link_downed_warn);
}

void ib_counters_fix(Finding& fnd, const facts::RdmaPortCounters& port) {
  fnd.fix = "Link errors and downs: reseat or replace the cable/transceiver and check the switch port (`mlxlink -d " + port.device + " -p " +
            std::to_string(port.port) +
            " -c` shows the BER and errors; `perfquery -x` the counters); drain the node while they grow. "
            "Transport retries/timeouts: find the lossy or congested hop (switch counters, PFC/ECN on RoCE). Send waits: congestion in the fabric (adaptive routing, job placement).";
  fnd.impact = "A link with errors stays ACTIVE at full rate while it retransmits: NCCL bandwidth over this rail drops (5-30% measured in "
               "public reports), and every collective waits on the slowest rail; a link that goes down stops it.";
}

}  // namespace
}  // namespace ib_counter_checks

std::vector<Finding> judge_ib_counters(const facts::RdmaCounterSample& first, const facts::RdmaCounterSample& second, bool live,
                                       double seconds, const std::map<std::string, IbPortContext>& ports, const IbCounterParams& p) {
  using namespace ib_counter_checks;
  constexpr std::string_view id = "net.ib.counters";
  if (!second.error.empty()) return {core::finding(id, layer::network, Status::skip, "RDMA devices not readable: " + second.error)};
  if (second.ports.empty()) return {core::finding(id, layer::network, Status::skip, std::string(kNoPorts))};
  std::vector<Finding> out;
  // Hours of uptime; 0 when unknown (then no rate per hour).
  const double hours = second.uptime_s && *second.uptime_s > 0 ? *second.uptime_s / 3600 : 0;
  for (const auto& port : second.ports) {
    auto fnd = core::finding(id, layer::network, Status::pass, "");
    fnd.subject = fmt::format("{}:{}", port.device, port.port);
    const auto ctx_it = ports.find(fnd.subject);
    const IbPortContext ctx = ctx_it == ports.end() ? IbPortContext{} : ctx_it->second;
    std::string name = fnd.subject;
    if (!ctx.bdf.empty()) name += " (" + ctx.bdf + (ctx.gpus.empty() ? "" : ", " + ctx.gpus) + ")";
    if (auto why = ib_port_unreadable(port)) {
      fnd.status = Status::skip;
      fnd.title = "counters not readable: " + *why;
      out.push_back(std::move(fnd));
      continue;
    }
    const auto* before = live ? find_port(first, port) : nullptr;
    if (!port.has_hw_counters) fnd.add(port.dir + "/hw_counters", "absent (no transport counters from this driver)");
    double link_total = 0, link_growth = 0, transport_total = 0, transport_growth = 0;
    std::vector<std::string> grew, wrapped, saturated, zero;
    std::optional<double> wait_share;
    std::string wait_text;
    for (const auto& c : facts::rdma_counter_catalogue()) {
      auto it = port.values.find(c.name);
      if (it == port.values.end()) continue;
      const auto total = it->second;
      const bool sat = c.bits > 0 && c.bits < 64 && total == (std::uint64_t{1} << c.bits) - 1;
      std::optional<std::uint64_t> growth;
      std::string note;
      if (before) {
        if (auto b = before->values.find(c.name); b != before->values.end()) {
          if (total >= b->second) {
            growth = total - b->second;
          } else {
            note = fmt::format(" (wrapped or cleared during the window: {} -> {}; growth unknown)", b->second, total);
            wrapped.push_back(std::string(c.name));
          }
        }
      }
      if (sat) {
        saturated.push_back(std::string(c.name));
        note += fmt::format(" (saturated at its {}-bit maximum: the true count is higher)", c.bits);
      }
      if (c.kind == Kind::wait) {
        if (ctx.rate_gbps && *ctx.rate_gbps > 0) {
          const double bytes_per_s = *ctx.rate_gbps * 1e9 / 8;
          if (growth && seconds > 0) wait_share = static_cast<double>(*growth) * p.xmit_wait_bytes_per_tick / (bytes_per_s * seconds);
          else if (!live && !sat && second.uptime_s && *second.uptime_s > 0)
            wait_share = static_cast<double>(total) * p.xmit_wait_bytes_per_tick / (bytes_per_s * *second.uptime_s);
        }
        wait_text = fmt::format("{}{}{}", total, growth ? fmt::format(" (+{} in {:.2f} s)", *growth, seconds) : std::string(), note);
        fnd.add(port.dir + "/" + std::string(c.name), wait_text);
        continue;
      }
      if (total == 0 && note.empty()) {
        zero.push_back(std::string(c.name.substr(c.name.find('/') + 1)));
        continue;
      }
      const bool error_kind = c.kind == Kind::link_error || c.kind == Kind::discard;
      (error_kind ? link_total : transport_total) += static_cast<double>(total);
      if (growth && *growth > 0) {
        (error_kind ? link_growth : transport_growth) += static_cast<double>(*growth);
        grew.push_back(fmt::format("{} +{}", c.name.substr(c.name.find('/') + 1), *growth));
      }
      fnd.add(port.dir + "/" + std::string(c.name),
              fmt::format("{} since boot{}{}", total, growth ? fmt::format(" (+{} in {:.2f} s)", *growth, seconds) : std::string(), note));
      fnd.metric(std::string(c.name.substr(c.name.find('/') + 1)), static_cast<double>(total));
    }
    if (!zero.empty()) fnd.add(port.dir, fmt::format("{} counters at 0: {}", zero.size(), fmt::join(zero, ", ")));
    for (const auto& u : port.unreadable) fnd.add("not readable", u);
    // The PortCounters this port does not give (an old driver, a partial tree): named, and the
    // verdict says it stands on the others only.
    std::vector<std::string> not_read, core_missing;
    const std::size_t port_counters = ib_port_counters_not_read(port, not_read, core_missing);
    if (!not_read.empty()) fnd.add(port.dir + "/counters", fmt::format("not present: {}", fmt::join(not_read, ", ")));
    const auto link_rate = hours > 0 ? std::optional<double>(link_total / hours) : std::nullopt;
    const auto transport_rate = hours > 0 ? std::optional<double>(transport_total / hours) : std::nullopt;
    if (link_rate) fnd.metric("link_errors_per_hour", *link_rate);
    if (wait_share) fnd.metric("xmit_wait_share", *wait_share);
    std::vector<std::string> problems;
    Status st = Status::pass;
    auto worse = [&](Status s) {
      if (s == Status::fail || (s == Status::warn && st == Status::pass)) st = s;
    };
    if (link_growth > 0) {
      worse(Status::fail);
      problems.push_back(fmt::format("link errors grew during the {:.2f} s window ({})", seconds, fmt::join(grew, ", ")));
    } else if (link_rate && *link_rate >= p.link_errors_per_hour_warn) {
      worse(Status::warn);
      problems.push_back(fmt::format("{} link errors/discards since boot, {} per hour of uptime (warn from {})", link_total, per_hour(*link_rate),
                                     per_hour(p.link_errors_per_hour_warn)));
    }
    const double window_transport_rate = seconds > 0 ? transport_growth / seconds * 3600 : 0;
    if (live && transport_growth > 0 && window_transport_rate >= p.transport_errors_per_hour_warn) {
      worse(Status::warn);
      problems.push_back(fmt::format("transport errors/retries grew by {} in {:.2f} s", transport_growth, seconds));
    } else if (transport_rate && *transport_rate >= p.transport_errors_per_hour_warn) {
      worse(Status::warn);
      problems.push_back(fmt::format("{} transport errors/retries since boot, {} per hour of uptime (warn from {})", transport_total,
                                     per_hour(*transport_rate), per_hour(p.transport_errors_per_hour_warn)));
    }
    if (auto downs = ib_link_downs(port, p); downs && link_growth == 0) {
      worse(Status::warn);
      problems.push_back(*downs);
    }
    if (wait_share && *wait_share >= p.xmit_wait_share_warn) {
      worse(Status::warn);
      problems.push_back(fmt::format("waited to send {:.1f}% of the {} (port_xmit_wait: congestion or missing credits)", 100 * *wait_share,
                                     live ? "window" : "uptime"));
    }
    if (!wrapped.empty()) fnd.add("wrapped or cleared", fmt::format("{}: not counted as growth", fmt::join(wrapped, ", ")));
    if (hours <= 0 && !live) fnd.add("/proc/uptime", "not readable: rates per hour unknown");
    fnd.status = st;
    // Errors counted since boot without the uptime to turn them into a rate: undecided, not
    // healthy (a tree without /proc/uptime; node_exporter's fixture is one).
    if (problems.empty() && !live && hours <= 0 && (link_total > 0 || transport_total > 0)) {
      fnd.status = Status::skip;
      fnd.title = fmt::format("{}: {} link errors/discards and {} transport errors since boot, but /proc/uptime is not readable: their rate is unknown",
                              name, link_total, transport_total);
      out.push_back(std::move(fnd));
      continue;
    }
    // Without both symbol_error and port_rcv_errors (the counters a bad cable or transceiver
    // moves first) the link's health is unknown, whatever the others say.
    if (problems.empty() && core_missing.size() == 2) {
      fnd.status = Status::skip;
      fnd.title = fmt::format("{}: {} not present: link errors unknown ({} in the {} of {} PortCounters read)", name,
                              fmt::join(core_missing, " and "), link_total, port_counters - not_read.size(), port_counters);
      out.push_back(std::move(fnd));
      continue;
    }
    if (problems.empty()) {
      fnd.title = fmt::format("{}: {} link errors since boot{}{}{}", name, link_total,
                              live ? fmt::format(", none during the {:.2f} s window", seconds) : std::string(),
                              saturated.empty() ? "" : fmt::format(" ({} saturated)", fmt::join(saturated, ", ")),
                              not_read.empty() ? "" : fmt::format(" in the PortCounters read (not present: {})", fmt::join(not_read, ", ")));
    } else {
      fnd.title = fmt::format("{}: {}", name, fmt::join(problems, "; "));
      ib_counters_fix(fnd, port);
    }
    out.push_back(std::move(fnd));
  }
  return out;
}

namespace ib_counter_checks {
namespace {

// The GPUs a NIC serves, as NCCL pairs them: those under the same root port or PCIe switch
// (the longest bridge path shared below the host bridge), else those on its NUMA node.
std::string gpus_served(const facts::PciDevice& nic, const std::vector<facts::Gpu>& gpus) {
  auto shared = [&](const facts::PciDevice& gpu) {
    std::size_t n = 0;
    while (n < nic.pci_path.size() && n < gpu.pci_path.size() && nic.pci_path[n] == gpu.pci_path[n]) ++n;
    return n;
  };
  std::size_t best = 0;
  for (const auto& g : gpus)
    if (g.pci) best = std::max(best, shared(*g.pci));
  std::vector<std::string> names;
  if (best >= 2) {  // a bridge below the host bridge in common
    for (const auto& g : gpus)
      if (g.pci && shared(*g.pci) == best) names.push_back(fmt::format("GPU {}", g.index));
    return fmt::format("PCIe switch of {}", fmt::join(names, ", "));
  }
  if (!nic.numa_node || *nic.numa_node < 0) return {};
  for (const auto& g : gpus)
    if (g.pci && g.pci->numa_node == nic.numa_node) names.push_back(fmt::format("GPU {}", g.index));
  return names.empty() ? std::string() : fmt::format("NUMA node of {}", fmt::join(names, ", "));
}

std::vector<Finding> ib_counters(facts::Facts& f, const core::Thresholds& th) {
  // A tree from elsewhere that did not keep /sys/class/infiniband says nothing of its ports.
  if (auto why = facts::rdma_not_captured(f); !why.empty()) return {core::finding("net.ib.counters", layer::network, Status::skip, why)};
  // Nothing to sample: skip at once rather than wait out a window for no port.
  if (const auto& ib = facts::infiniband(f);
      ib && std::none_of(ib->begin(), ib->end(), [](const facts::IbDevice& d) { return !d.ports.empty(); }))
    return {core::finding("net.ib.counters", layer::network, Status::skip, std::string(kNoPorts))};
  const auto& w = f.window();
  if (!w.rdma_second) return {core::finding("net.ib.counters", layer::network, Status::skip, "the sample window took no RDMA counters")};
  IbCounterParams p;
  p.link_errors_per_hour_warn = th.get("link_errors_per_hour_warn");
  p.link_downed_warn = th.get("link_downed_warn");
  p.transport_errors_per_hour_warn = th.get("transport_errors_per_hour_warn");
  p.xmit_wait_share_warn = th.get("xmit_wait_share_warn");
  p.xmit_wait_bytes_per_tick = th.get("xmit_wait_bytes_per_tick");
  std::map<std::string, IbPortContext> ctx;
  std::map<std::string, const facts::PciDevice*> pci_of;
  if (const auto& pci = f.pci(); pci)
    for (const auto& d : *pci) pci_of[d.bdf] = &d;
  if (const auto& ib = facts::infiniband(f); ib) {
    for (const auto& d : *ib)
      for (const auto& port : d.ports) {
        IbPortContext c;
        c.bdf = d.bdf;
        c.rate_gbps = port.rate_gbps;
        auto nic = pci_of.find(d.bdf);
        if (nic != pci_of.end())
          if (const auto& gpus = f.visible_gpus(); gpus) c.gpus = gpus_served(*nic->second, *gpus);
        ctx[fmt::format("{}:{}", d.name, port.port)] = std::move(c);
      }
  }
  return judge_ib_counters(w.rdma_first ? *w.rdma_first : *w.rdma_second, *w.rdma_second, w.live, w.seconds, ctx, p);
}

}  // namespace
}  // namespace ib_counter_checks

void add_network_counters(core::Registry& r) {
  using ib_counter_checks::ib_counters;
  r.add({.id = "net.ib.counters",
         .layer = layer::network,
         .summary = "no RDMA port counts link errors, transport retries or send waits above its thresholds",
         .rule = "Per RDMA port (subject `device:port`; named with its PCI device and the GPUs it serves: those under the same root port or PCIe switch, else those on its NUMA node), from ports/N/counters (IB PortCounters: symbol_error, link_error_recovery, link_downed, port_rcv_errors, port_rcv_remote_physical_errors, local_link_integrity_errors, excessive_buffer_overrun_errors, port_xmit_discards, port_rcv/xmit_constraint_errors, port_xmit_wait) and hw_counters where the driver has them (out_of_buffer, out_of_sequence, packet_seq_err, local_ack_timeout_err, rnr_nak_retry_err, implied_nak_seq_err, req/resp_cqe_error, roce_adp_retrans(_to), roce_slow_restart, rx_icrc_encapsulated): `fail` when a link error or discard counter grew during the live sample window; `warn` when link errors and discards since boot reach link_errors_per_hour_warn per hour of uptime, when the link went down link_downed_warn times or more since boot (link_downed, each an outage of the rail: judged on its count whatever the uptime, and without it; saturated at 255, at least that many), when transport errors/retries reach transport_errors_per_hour_warn per hour (over the window live, else since boot), or when port_xmit_wait (ticks of xmit_wait_bytes_per_tick bytes at the port's rate) is xmit_wait_share_warn of the window (of the uptime under --root; not judged when saturated); `pass` otherwise. A counter lower at the window's end than at its start wrapped or was cleared: said so, never counted as growth; a PortCounters field at its width's maximum is said saturated. PortCounters a port does not give are named (evidence `counters = not present: ...`): with symbol_error or port_rcv_errors read, a `pass` says it stands on the counters read and names the others; without both (the counters a bad cable or transceiver moves first) the port is `skip` (link errors unknown) unless what was read warns or fails. `skip` for a port whose counters cannot be read (naming why), without RDMA ports (in a tree from elsewhere without /sys/class/infiniband: RDMA devices not captured, as nccl.gdr says), and under --root for a port with errors counted since boot when /proc/uptime cannot be read (their rate is unknown). Under --root (a tree, a snapshot) there is one sample: totals since boot only. `perfgap profile` judges the counters over its own window (and `check --profile-seconds N` reports that window in place of check's shorter one).",
         .fix = "Reseat or replace the cable/transceiver, check the switch port (mlxlink, perfquery); find the lossy or congested hop for transport retries.",
         .reads = reads::of({reads::window(), reads::infiniband(), reads::pci(), reads::visible_gpus()}),
         .params = {{"link_errors_per_hour_warn", 1, "link errors and discards since boot per hour of uptime from which a port warns"},
                    {"link_downed_warn", 3, "times a port's link went down since boot (link_downed) from which it warns, whatever the uptime"},
                    {"transport_errors_per_hour_warn", 3600, "transport errors/retries (hw_counters) per hour from which a port warns"},
                    {"xmit_wait_share_warn", 0.05, "share of the time a port waited to send (port_xmit_wait) from which it warns"},
                    {"xmit_wait_bytes_per_tick", 8, "bytes one port_xmit_wait tick stands for (8 on current NVIDIA devices, ibdiagnet's manual)"}},
         .run = ib_counters,
         .sampled = true});
}

}  // namespace perfgap::checks
