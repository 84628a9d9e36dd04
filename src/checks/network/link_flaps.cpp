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
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        std::size_t downs = 0, ups = 0, modules = 0, module_errors = 0, flaps = 0, still_down = 0;
        std::set<std::string> netdevs;
        // Per port (interface): has it come up in the log yet, is it down now.
        std::map<std::string, std::pair<bool, bool>> ports;
        for (const auto* e : g.events) {
          modules += e->kind == KernelEventKind::module_event ? 1 : 0;
          module_errors += e->kind == KernelEventKind::module_event && e->fatal ? 1 : 0;
          if (!e->netdev.empty()) netdevs.insert(e->netdev);
          auto& [came_up, down] = ports[e->netdev];
          if (e->kind == KernelEventKind::link_up) {
            ++ups;
            came_up = true;
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
        const std::string modules_text = modules ? fmt::format(", {} module event(s) ({} errors)", modules, module_errors) : std::string();
        if (flaps == 0 && modules == 0) {
          fnd.status = Status::pass;
          fnd.title = fmt::format("{}: no flap in {} (the link came up {} time(s) at bring-up)", name, window, ups);
          fnd.fix.clear();
          return;
        }
        fnd.status = (static_cast<double>(flaps) >= flaps_fail || module_errors) ? Status::fail : Status::warn;
        fnd.title = fmt::format("{}: {} flap(s) (down after the port first came up) in {}; went down {} time(s), up {} time(s){}{}", name,
                                flaps, window, downs, ups, modules_text, still_down ? fmt::format(", {} port(s) still down at the log's end", still_down) : std::string());
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
      std::string("Per ConnectX NIC (mlx5_core; subject: its PCI address, shown as its RDMA device and interface): a flap is a 'Link down' after the port first came up in the log (a down before that, within 600 s of boot, is the port's bring-up; the 'Link up' every port logs at boot is none). `fail` when the NIC flapped flaps_fail times or more in the window read, or on a module error event ('Port module event[error]', such as a high temperature; a line without a PCI address counts for an unnamed NIC); `warn` for fewer flaps or other module events (cable unplugged/plugged); `pass` when the log has only bring-up lines or none. The title and evidence give the window read (the log's span) and the flaps per hour.") +
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
