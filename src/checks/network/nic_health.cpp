// net.nic_health: ConnectX (mlx5) failures in the kernel log, per NIC: firmware health, commands
// the firmware never answered, too little power from the PCIe slot (checks/kernel_log).
#include <fmt/format.h>

#include <map>
#include <string>
#include <vector>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace nic_health_checks {
namespace {

using namespace kernel_log;

enum class Failure { power, health, command_timeout };

Failure failure_of(const KernelEvent& e) {
  if (e.detail.find("insufficient power") != std::string::npos) return Failure::power;
  if (e.detail.find("Will cause a leak of a command resource") != std::string::npos) return Failure::command_timeout;
  return Failure::health;
}

// "insufficient power on the PCIe slot (27W)", "firmware command timeout (ACCESS_REG(0x805))",
// the health lines as the driver words them.
std::string describe(const KernelEvent& e) {
  switch (failure_of(e)) {
    case Failure::power: {
      auto open = e.detail.rfind('(');
      auto close = e.detail.rfind(')');
      std::string watts = open != std::string::npos && close != std::string::npos && close > open ? " " + e.detail.substr(open, close - open + 1) : std::string();
      return "insufficient power on the PCIe slot" + watts;
    }
    case Failure::command_timeout: {
      auto cmd = e.detail.substr(0, e.detail.find(' '));
      return cmd.empty() || cmd == "timeout." ? std::string("firmware command timeout") : fmt::format("firmware command {} timed out", cmd);
    }
    case Failure::health: break;
  }
  if (e.detail.find("health compromised") != std::string::npos) return "firmware health compromised (health counter missed)";
  return "firmware reported an unrecoverable hardware error";
}

std::vector<Finding> nic_health(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "net.nic_health", layer::network, "mlx5 NIC failure (firmware health, command timeout, slot power)",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::nic_failure; }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, Group& g) {
        std::vector<std::string> order;
        std::map<std::string, std::size_t> counts;
        bool power = false, firmware = false;
        for (const auto* e : g.events) {
          (failure_of(*e) == Failure::power ? power : firmware) = true;
          auto d = describe(*e);
          if (counts[d]++ == 0) order.push_back(d);
        }
        std::vector<std::string> parts;
        parts.reserve(order.size());
        for (const auto& d : order) parts.push_back(counts[d] > 1 ? fmt::format("{} x{}", d, counts[d]) : d);
        fnd.status = Status::fail;
        fnd.title = fmt::format("{}: {}", named_device(f, bdf == "unnamed" ? "" : bdf), fmt::join(parts, ", "));
        std::vector<std::string> fixes;
        if (firmware)
          fixes.emplace_back("The NIC's firmware stopped answering the driver (which then resets the device, its ports down meanwhile): "
                             "drain the node, update the NIC firmware (`mlxfwmanager`) and driver, and replace the adapter when it recurs.");
        if (power)
          fixes.emplace_back("The slot gives the NIC less power than it needs: check the riser and the slot's power settings in the "
                             "BIOS/BMC, or move the card to a slot rated for it.");
        fnd.fix = fmt::format("{}", fmt::join(fixes, " "));
        fnd.impact = "A NIC whose firmware hangs or runs short of power drops its ports or slows them: NCCL's connections over its "
                     "rails time out (the job hangs or fails) or lose bandwidth.";
      });
}

}  // namespace
}  // namespace nic_health_checks

void add_network_nic_health(core::Registry& r) {
  using namespace nic_health_checks;
  static const std::string rule =
      std::string("Per ConnectX NIC (mlx5_core; subject: its PCI address, shown as its RDMA device): `fail` when the kernel log has a "
                  "failure of it: its firmware's health ('device's health compromised - reached miss count', '... unrecoverable "
                  "hardware error'), a command the firmware never answered ('... timeout. Will cause a leak of a command resource') "
                  "or 'Detected insufficient power on the PCIe slot (NW)'; each stops or slows the NIC's ports, and none of them "
                  "goes away by itself (a line without a PCI address counts for an unnamed NIC); `pass` when it has none. Command "
                  "errors the firmware answered ('mlx5_cmd_out_err ... failed', as tools querying a register cause) are no failure.") +
      kernel_log::skip_rule();
  r.add({.id = "net.nic_health",
         .layer = layer::network,
         .summary = "no mlx5 NIC failure (firmware health, command timeouts, slot power) in the kernel log",
         .rule = rule,
         .fix = "Drain; update the NIC firmware and driver, replace the adapter when it recurs; fix the slot's power.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = nic_health});
}

}  // namespace perfgap::checks
