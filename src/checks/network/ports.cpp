// network layer, RDMA ports: every port up, and none slower than its peers.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// NVIDIA (Mellanox) NICs by PCI device id, as pci.ids names them: what `expect` tells node
// kinds apart by, and what a person reads. Others are named by their ids.
std::string nic_model_name(std::uint32_t vendor, std::uint32_t device) {
  static const std::map<std::uint32_t, const char*> kMellanox = {
      {0x1013, "ConnectX-4"},    {0x1015, "ConnectX-4 Lx"}, {0x1017, "ConnectX-5"},  {0x1019, "ConnectX-5 Ex"},
      {0x101b, "ConnectX-6"},    {0x101d, "ConnectX-6 Dx"}, {0x101f, "ConnectX-6 Lx"}, {0x1021, "ConnectX-7"},
      {0x1023, "ConnectX-8"},    {0xa2d6, "BlueField-2"},   {0xa2dc, "BlueField-3"}};
  auto ids = fmt::format("pci {:04x}:{:04x}", vendor, device);
  if (vendor == 0x15b3)
    if (auto it = kMellanox.find(device); it != kMellanox.end()) return fmt::format("{} ({})", it->second, ids);
  return ids;
}

std::string gbps(double v) { return fmt::format("{:g} Gb/s", v); }

std::vector<Finding> ib_ports(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "net.ib.ports";
  const auto& ib = facts::infiniband(f);
  if (!ib) return {core::finding(id, layer::network, Status::skip, "RDMA devices not readable: " + ib.error())};
  if (auto why = facts::rdma_not_captured(f); !why.empty()) return {core::finding(id, layer::network, Status::skip, why)};
  if (ib->empty()) return {core::finding(id, layer::network, Status::skip, "no RDMA devices (/sys/class/infiniband absent or empty)")};

  // Peers: ports of the same link layer on the same NIC model (a storage or management NIC of
  // another model is not a peer of the compute rails).
  std::map<std::string, std::uint32_t> device_of;
  std::map<std::string, std::string> model_name_of;  // bdf -> "ConnectX-7 (pci 15b3:1021)"
  if (const auto& pci = f.pci())
    for (const auto& d : *pci) {
      device_of[d.bdf] = d.device;
      model_name_of[d.bdf] = nic_model_name(d.vendor, d.device);
    }
  // The NIC model: its PCI device id, else the driver's hca_type, else its board id. Ports
  // whose model is unknown are compared with nobody: an mlx4 at 40 Gb/s is no peer of an
  // Omni-Path HFI at 100 Gb/s.
  auto model_of = [&](const facts::IbDevice& d) -> std::string {
    if (auto it = device_of.find(d.bdf); it != device_of.end()) return fmt::format("pci {:04x}", it->second);
    if (!d.hca_type.empty()) return "hca_type " + d.hca_type;
    if (!d.board_id.empty()) return "board_id " + d.board_id;
    return "";
  };
  auto peer_key = [&](const facts::IbDevice& d, const facts::IbPort& p) {
    auto model = model_of(d);
    return model.empty() ? std::string() : p.link_layer + "|" + d.driver_name() + "|" + model;
  };
  auto up = [](const facts::IbPort& p) { return p.state == "ACTIVE" && p.phys_state == "LinkUp"; };
  std::map<std::string, std::pair<double, int>> peers;  // key -> (fastest rate, active ports)
  for (const auto& d : *ib)
    for (const auto& p : d.ports)
      if (up(p) && p.rate_gbps && !peer_key(d, p).empty()) {
        auto& [best, n] = peers[peer_key(d, p)];
        best = std::max(best, *p.rate_gbps);
        ++n;
      }

  std::vector<Finding> out;
  for (const auto& d : *ib) {
    if (d.ports.empty()) {
      auto fnd = core::finding(id, layer::network, Status::skip, "no readable ports under /sys/class/infiniband/" + d.name + "/ports");
      fnd.subject = d.name;
      out.push_back(std::move(fnd));
      continue;
    }
    for (const auto& p : d.ports) {
      auto fnd = core::finding(id, layer::network, Status::pass, "");
      fnd.subject = fmt::format("{}:{}", d.name, p.port);
      if (p.state.empty() || p.phys_state.empty()) {
        fnd.status = Status::skip;
        fnd.title = "port state not readable (" + p.dir + "/state, phys_state)";
        out.push_back(std::move(fnd));
        continue;
      }
      fnd.add(p.dir + "/state", p.state, "ACTIVE");
      fnd.add(p.dir + "/phys_state", p.phys_state, "LinkUp");
      fnd.add(p.dir + "/rate", p.rate_text.empty() ? "not readable" : p.rate_text);
      fnd.add(p.dir + "/link_layer", p.link_layer.empty() ? "not readable" : p.link_layer);
      if (!d.fw_ver.empty()) fnd.add("/sys/class/infiniband/" + d.name + "/fw_ver", d.fw_ver);  // expect learns the firmware from it
      // The NIC's model (expect's kind of node holds it): the PCI ids, else the driver's names.
      if (auto it = model_name_of.find(d.bdf); it != model_name_of.end()) fnd.add("NIC model", it->second);
      else if (!d.hca_type.empty()) fnd.add("NIC model", "hca_type " + d.hca_type);
      else if (!d.board_id.empty()) fnd.add("NIC model", "board_id " + d.board_id);
      if (p.rate_gbps) fnd.metric("rate_gbps", *p.rate_gbps);
      static const std::set<std::string> kPhysStates = {"Sleep", "Polling", "Disabled", "PortConfigurationTraining", "LinkUp",
                                                         "LinkErrorRecovery", "Phy Test"};
      if (p.state == "ACTIVE" && !kPhysStates.count(p.phys_state)) {
        // ACTIVE needs a physical link; a phys_state no kernel prints is a damaged capture.
        fnd.status = Status::warn;
        fnd.title = fmt::format("port ACTIVE, but its phys_state '{}' is not a physical state the kernel reports (LinkUp expected)", p.phys_state);
        out.push_back(std::move(fnd));
        continue;
      }
      if (!up(p)) {
        fnd.status = Status::fail;
        const bool ib_layer = p.link_layer == "InfiniBand";
        if (p.phys_state == "LinkUp")
          fnd.title = fmt::format("port {} although the link is up{}", p.state,
                                  ib_layer ? ": no subnet manager has brought it to ACTIVE" : "");
        else if (p.state == "ACTIVE")
          fnd.title = fmt::format("port link not up: phys_state {} (state ACTIVE)", p.phys_state);
        else
          fnd.title = fmt::format("port down: state {}, phys_state {}", p.state, p.phys_state);
        fnd.fix = p.phys_state == "LinkUp"
                      ? (ib_layer ? "Check that a subnet manager (opensm or the switch's/UFM's SM) runs and sees this port (`sminfo`, `ibstat " + d.name + "`)."
                                  : "Bring the network interface up (`ip link set <netdev> up`) and check its configuration.")
                      : "Check the cable and transceiver (`mlxlink -d " + d.name + "`, `ibstat " + d.name +
                            "`), the switch port, and that the port is meant to be used; replace or reseat the cable.";
        fnd.impact = "A rail without its port: NCCL drops the NIC or routes its traffic over the others, so collectives "
                     "lose that rail's bandwidth (or the job fails when NCCL_IB_HCA names it).";
        out.push_back(std::move(fnd));
        continue;
      }
      if (!p.rate_gbps) {
        fnd.status = Status::error;
        fnd.title = "active port with an unreadable rate: '" + p.rate_text.substr(0, 60) + "'";
        out.push_back(std::move(fnd));
        continue;
      }
      const auto key = peer_key(d, p);
      if (key.empty()) fnd.add("NIC model", "unknown (no PCI device id, hca_type or board_id): not compared with other ports");
      const auto [best, n] = key.empty() ? std::pair<double, int>{0, 0} : peers[key];
      if (n >= 2 && *p.rate_gbps < best) {
        fnd.status = Status::fail;
        fnd.title = fmt::format("port runs at {} while its {} peers ({} {}, {}) run at up to {}", gbps(*p.rate_gbps),
                                n - 1, d.driver_name(), model_of(d), p.link_layer.empty() ? "same link layer" : p.link_layer, gbps(best));
        fnd.evidence[2].expected = gbps(best) + " (its peers)";
        fnd.metric("peer_rate_gbps", best);
        fnd.fix = "Find what trained the link down (`mlxlink -d " + d.name + " -p " + std::to_string(p.port) +
                  "` shows width and speed: a lane down, a lower-rated cable or transceiver, or a switch port configured "
                  "slower); reseat or replace the cable, fix the switch port's speed.";
        fnd.impact = fmt::format("Collectives run at the slowest rail: this port moves {:.0f}% of what its peers do, and NCCL "
                                 "rings/trees through it wait on it.", 100.0 * *p.rate_gbps / best);
        out.push_back(std::move(fnd));
        continue;
      }
      fnd.title = fmt::format("ACTIVE, LinkUp, {}{}", p.rate_text, p.link_layer.empty() ? "" : ", " + p.link_layer);
      // One lane of an InfiniBand port's four (a lane or cable fault; 2X is a split port by
      // design): seen even with no peer to compare the rate with.
      if (p.link_layer == "InfiniBand" && p.rate_text.find("(1X ") != std::string::npos) {
        fnd.status = Status::warn;
        fnd.title = fmt::format("port trained at one lane: {} (InfiniBand ports run 4X, or 2X when split)", p.rate_text);
        fnd.fix = "Check the link's width with `mlxlink -d " + d.name + " -p " + std::to_string(p.port) +
                  "` (lanes up, cable type) and the switch port; reseat or replace the cable or transceiver.";
        fnd.impact = "a 1X link moves a quarter of a 4X port's bandwidth: collectives through this rail run at its pace";
      }
      out.push_back(std::move(fnd));
    }
  }
  return out;
}

}  // namespace

void add_network_ports(core::Registry& r) {
  r.add({.id = "net.ib.ports",
         .layer = layer::network,
         .summary = "every RDMA port is ACTIVE/LinkUp and none is slower than its peers",
         .rule = "Per RDMA port (subject `device:port`): `fail` when state is not ACTIVE or phys_state not LinkUp, or when an active port's rate is below the fastest active port of its peers (same link layer, driver and NIC model: PCI device id, else hca_type, else board_id; ports whose model is unknown are compared with none; at least two ports); `warn` for an ACTIVE port whose phys_state is no value the kernel prints, and for an active InfiniBand port trained at one lane (rate `(1X ...)`; 4X is the norm, 2X a split port); `error` for an active port whose rate is unreadable; `pass` otherwise. `skip` without RDMA devices."
                 " In a tree from elsewhere without /sys/class/infiniband, `skip` says RDMA devices were not captured where PCI shows an RDMA-capable NIC (NVIDIA/Mellanox network class, InfiniBand class, Amazon EFA; named) or is unreadable, instead of \"no RDMA devices\".",
         .fix = "Cable, transceiver and switch port (mlxlink, ibstat); a subnet manager for ports stuck in INIT.",
         .reads = reads::of({reads::infiniband(), reads::pci()}),
         .params = {},
         .run = ib_ports});
}

}  // namespace perfgap::checks
