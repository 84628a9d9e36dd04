// net.link_flaps: mlx5 link flaps and module events in the kernel log, per NIC (checks/kernel_log).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace link_flap_checks {
namespace {

using namespace kernel_log;

// A down before a port's first "Link up" in the log is its bring-up when it is this early
// after boot (the driver reports the link down while the port trains); later, the port was up
// before the log began and the down is a flap.
constexpr double kBringUpS = 600;

std::vector<Finding> link_flaps(facts::Facts& f, const core::Thresholds& th) {
  const double flaps_fail = th.get("flaps_fail");
  const auto& log = facts::kernel_log(f);
  return per_subject(
      f, "net.link_flaps", layer::network, "mlx5 link down/up or module event",
      [](const KernelEvent& e) {
        return e.kind == KernelEventKind::link_down || e.kind == KernelEventKind::link_up || e.kind == KernelEventKind::module_event;
      },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, Group& g) {
        std::size_t downs = 0, ups = 0, modules = 0, module_errors = 0, boot_modules = 0, flaps = 0, still_down = 0;
        std::set<std::string> netdevs;
        // Per port (interface): has it come up in the log yet, is it down now.
        std::map<std::string, std::pair<bool, bool>> ports;
        bool nic_came_up = false;  // module events name no interface: any port of the NIC up
        for (const auto* e : g.events) {
          if (e->kind == KernelEventKind::module_event) {
            // A cable plugged/unplugged event before the NIC's first "Link up", this early after
            // boot, is its bring-up (an unused port reports its empty cage), as a Link down is.
            const bool plug = e->detail.find("Cable plugged") != std::string::npos || e->detail.find("Cable unplugged") != std::string::npos;
            if (!e->fatal && plug && !nic_came_up && e->since_boot_s && *e->since_boot_s < kBringUpS) {
              ++boot_modules;
              continue;
            }
            ++modules;
            module_errors += e->fatal ? 1 : 0;
            continue;
          }
          if (!e->netdev.empty()) netdevs.insert(e->netdev);
          auto& [came_up, down] = ports[e->netdev];
          if (e->kind == KernelEventKind::link_up) {
            ++ups;
            came_up = true;
            nic_came_up = true;
            down = false;
          } else if (e->kind == KernelEventKind::link_down) {
            ++downs;
            const bool bring_up = !came_up && e->since_boot_s && *e->since_boot_s < kBringUpS;
            if (!bring_up) ++flaps;
            down = !bring_up;
          }
        }
        for (const auto& [port, st] : ports) still_down += st.second ? 1 : 0;
        auto name = named_device(f, bdf == "unnamed" ? "" : bdf);
        if (!netdevs.empty()) name += fmt::format(" {}", fmt::join(netdevs, ","));
        // The window read: the log's span in seconds since boot, when its records carry them.
        std::optional<double> hours;
        if (log && log->first_s && log->last_s && *log->last_s > *log->first_s) hours = (*log->last_s - *log->first_s) / 3600.0;
        const std::string window = !hours        ? std::string("a log without times since boot")
                                   : *hours < 1.0 ? fmt::format("{:.0f} min of log", *hours * 60)
                                                  : fmt::format("{:.1f} h of log", *hours);
        fnd.metric("link_down", static_cast<double>(downs)).metric("link_up", static_cast<double>(ups)).metric("module_events", static_cast<double>(modules));
        fnd.metric("flaps", static_cast<double>(flaps));
        if (hours && *hours > 0) {
          fnd.metric("window_h", *hours).metric("flaps_per_hour", static_cast<double>(flaps) / *hours);
        }
        fnd.add("window", hours ? fmt::format("{} ({:.2g} flap(s) per hour)", window, static_cast<double>(flaps) / std::max(*hours, 1e-9)) : window);
        const std::string boot_text = boot_modules ? fmt::format("{} module event(s) at bring-up", boot_modules) : std::string();
        if (flaps == 0 && modules == 0) {
          fnd.status = Status::pass;
          fnd.title = ups || !boot_modules ? fmt::format("{}: no flap in {} (the link came up {} time(s) at bring-up{}{})", name, window, ups,
                                                         boot_modules ? "; " : "", boot_text)
                                           : fmt::format("{}: no flap in {} ({}, no link up: a port not in use)", name, window, boot_text);
          fnd.fix.clear();
          return;
        }
        fnd.status = (static_cast<double>(flaps) >= flaps_fail || module_errors) ? Status::fail : Status::warn;
        const std::string modules_text = modules ? fmt::format(", {} module event(s) ({} errors)", modules, module_errors) : std::string();
        fnd.title = fmt::format("{}: {} flap(s) (down after the port first came up) in {}; went down {} time(s), up {} time(s){}{}", name,
                                flaps, window, downs, ups, modules_text, still_down ? fmt::format(", {} port(s) still down at the log's end", still_down) : std::string());
        if (flaps == 0) {
          // Module events only: the transceiver, not a flapping link.
          fnd.fix = module_errors ? "Check the transceiver the line names (`mlxlink -d <dev> -m`: its temperature, power and errors) and the "
                                    "airflow past it; replace it when the error recurs."
                                  : "Check that the cable was unplugged/plugged on purpose (`mlxlink -d <dev> -m` shows the module now); "
                                    "reseat it if the port should be in use.";
          fnd.impact = module_errors ? "A module error (a transceiver too hot, a bad cable) takes the port down or makes it drop packets: the "
                                       "rail it carries stops or retries."
                                     : "While the module is out the port carries nothing: a rail on it is missing for the job.";
          return;
        }
        fnd.fix = "Reseat or replace the cable/transceiver (`mlxlink -d <dev> -m` shows the module and its errors) and check the switch "
                  "port; drain the node while the link flaps.";
        fnd.impact = "Each flap stops the rail: NCCL's connections over it time out or retry (the job hangs or fails), and until it "
                     "is back collectives lose that rail's bandwidth.";
      });
}

}  // namespace
}  // namespace link_flap_checks

void add_network_link_flaps(core::Registry& r) {
  using namespace link_flap_checks;
  static const std::string flap_rule =
      std::string("Per ConnectX NIC (mlx5_core; subject: its PCI address, shown as its RDMA device and interface): a flap is a 'Link down' after the port first came up in the log (a down before that, within 600 s of boot, is the port's bring-up; the 'Link up' every port logs at boot is none). `fail` when the NIC flapped flaps_fail times or more in the window read, or on a module error event ('Port module event[error]', such as a high temperature; a line without a PCI address counts for an unnamed NIC); `warn` for fewer flaps or other module events (cable unplugged/plugged after bring-up: a cable plugged/unplugged event before the NIC's first 'Link up' within 600 s of boot is its bring-up, as an unused port reports its empty cage, and counts for nothing); `pass` when the log has only bring-up lines or none. A finding without flaps (module events only) gives the module's fix and impact, not the flap ones. The title and evidence give the window read (the log's span) and the flaps per hour.") +
      std::string(kernel_log::skip_rule());
  r.add({.id = "net.link_flaps",
         .layer = layer::network,
         .summary = "no mlx5 link flaps or module errors in the kernel log",
         .rule = flap_rule,
         .fix = "Reseat or replace the cable/transceiver, check the switch port (mlxlink); drain while it flaps.",
         .reads = kernel_log::log_reads(),
         .params = {{"flaps_fail", 2, "flaps (link downs after the port first came up) of one NIC in the log from which it fails"}},
         .run = link_flaps});
}

}  // namespace perfgap::checks
