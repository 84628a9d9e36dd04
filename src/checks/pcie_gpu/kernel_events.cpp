// Hardware events in the kernel log, one check per event class: NVIDIA Xid, GPUs fallen off
// the bus, NVLink errors, NVSwitch SXid, PCIe AER, mlx5 link flaps and module events, CPU
// thermal throttling, EDAC memory errors, soft lockups and hung tasks. The log is
// facts::kernel_log (--dmesg FILE, a tree's .perfgap/dmesg.txt, or /dev/kmsg live); the events
// come from parsers/kernel_events.
#include <fmt/format.h>

#include <algorithm>
#include <functional>
#include <map>
#include <set>

#include "checks/all.hpp"
#include "checks/util.hpp"
#include "core/kb.hpp"
#include "facts/infiniband.hpp"
#include "facts/platform.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace kernel_event_checks {
namespace {

using parsers::KernelEvent;
using parsers::KernelEventKind;

// The Xids of NVLink errors (gpu.nvlink_xid rather than gpu.xid): 74, and Blackwell's per-unit
// ones (144-149) and the MSE's (150).
bool nvlink_xid(long code) { return code == 74 || (code >= 144 && code <= 150); }

// The evidence lines a finding keeps per device: the first ones and the last.
constexpr std::size_t kShownLines = 4;

// A PCI address named as the tree shows it: "GPU 0 (0000:18:00.0)", "mlx5_0 (0000:2a:00.0)".
std::string named_device(facts::Facts& f, const std::string& bdf) {
  if (bdf.empty()) return "device not named in the log";
  if (const auto& gpus = f.visible_gpus(); gpus)
    for (const auto& g : *gpus)
      if (g.bdf == bdf) return fmt::format("GPU {} ({})", g.index, bdf);
  if (const auto& ib = facts::infiniband(f); ib)
    for (const auto& d : *ib)
      if (d.bdf == bdf) return fmt::format("{} ({})", d.name, bdf);
  return bdf;
}

// The log's own evidence: where it came from, how many records, the span it covers.
void add_log_evidence(Finding& fnd, const facts::KernelLog& log) {
  std::string span;
  if (log.first_s && log.last_s) {
    parsers::KernelEvent first, last;
    first.since_boot_s = log.first_s;
    last.since_boot_s = log.last_s;
    span = fmt::format(", {} to {}", log.when(first), log.when(last));
  }
  fnd.add(log.source, fmt::format("{} records{}", log.messages.size(), span));
}

struct Group {
  std::vector<const KernelEvent*> events;
};

// Events of one class by subject (what `subject_of` names), in log order.
std::map<std::string, Group> group_by(const facts::KernelLog& log, const std::function<bool(const KernelEvent&)>& keep,
                                      const std::function<std::string(const KernelEvent&)>& subject_of) {
  std::map<std::string, Group> out;
  for (const auto& e : log.events)
    if (keep(e)) out[subject_of(e)].events.push_back(&e);
  return out;
}

// Count, first and last time, and the lines (the first few and the last) of one group.
void add_events(Finding& fnd, const facts::KernelLog& log, const Group& g) {
  const auto& first = *g.events.front();
  const auto& last = *g.events.back();
  fnd.add("events", fmt::format("{} in the kernel log, first {}, last {}", g.events.size(), log.when(first), log.when(last)));
  for (std::size_t i = 0; i < g.events.size(); ++i) {
    if (i >= kShownLines - 1 && i + 1 != g.events.size()) continue;
    fnd.add(log.source, g.events[i]->line);
  }
  if (g.events.size() > kShownLines) fnd.add(log.source, fmt::format("({} more lines like these)", g.events.size() - kShownLines));
  fnd.metric("events", static_cast<double>(g.events.size()));
}

// A finding per subject, or one `pass` naming the log when the class never occurs, or one
// `skip` when the log cannot be read. `judge` sets status, title, fix and impact.
std::vector<Finding> per_subject(facts::Facts& f, std::string_view id, std::string_view layer, std::string_view what,
                                 const std::function<bool(const KernelEvent&)>& keep,
                                 const std::function<std::string(const KernelEvent&)>& subject_of,
                                 const std::function<void(Finding&, const std::string&, const Group&)>& judge) {
  const auto& log = facts::kernel_log(f);
  if (!log) return {core::finding(id, layer, Status::skip, "kernel log not readable: " + log.error())};
  auto groups = group_by(*log, keep, subject_of);
  if (groups.empty()) {
    auto fnd = core::finding(id, layer, Status::pass, fmt::format("no {} in the kernel log", what));
    add_log_evidence(fnd, *log);
    return {std::move(fnd)};
  }
  std::vector<Finding> out;
  for (const auto& [subject, g] : groups) {
    auto fnd = core::finding(id, layer, Status::warn, "");
    fnd.subject = subject;
    judge(fnd, subject, g);
    add_events(fnd, *log, g);
    add_log_evidence(fnd, *log);
    out.push_back(std::move(fnd));
  }
  return out;
}

std::string bdf_subject(const KernelEvent& e) { return e.device.empty() ? "unnamed" : e.device; }

const core::KbXid* xid_info(long code) {
  const auto& xids = core::builtin_kb().xids;
  auto it = xids.find(code);
  return it == xids.end() ? nullptr : &it->second;
}

// One Xid line's severity: the line's own words first (Xid 154's new recovery action, an
// NVLink Xid's Fatal/Nonfatal, "RST: Yes"), else the catalogue's resolution; a number not in
// the catalogue warns.
bool xid_event_fails(const KernelEvent& e) {
  if (e.code == 154) return !e.recovery.empty() && e.recovery != "None";
  if (e.nonfatal) return false;
  if (e.fatal) return true;
  const auto* info = xid_info(e.code);
  return info && info->severity == "fail";
}

// "Xid 48 x2 (Double-bit ECC error), Xid 63 x1 (...)" and the worst severity, fixes in order.
struct XidSummary {
  std::string text;
  std::map<long, std::size_t> counts;
  bool fail = false;
  std::vector<std::string> actions;
  std::vector<std::string> meanings;
};
XidSummary summarize_xids(const Group& g) {
  std::map<long, std::size_t> counts;
  std::map<long, std::set<std::string>> said;  // what the lines say of themselves, per number
  XidSummary s;
  for (const auto* e : g.events) {
    ++counts[e->code];
    if (xid_event_fails(*e)) s.fail = true;
    if (e->code == 154 && !e->recovery.empty()) said[e->code].insert("recovery: " + e->recovery);
    if (e->nonfatal) said[e->code].insert("Nonfatal");
    if (e->fatal) said[e->code].insert(e->line.find("RST: Yes") != std::string::npos ? "RST: Yes" : "Fatal");
  }
  std::vector<std::string> parts;
  for (const auto& [code, n] : counts) {
    const auto* info = xid_info(code);
    std::string words = said.count(code) ? fmt::format("; the line says {}", fmt::join(said[code], ", ")) : std::string();
    parts.push_back(fmt::format("Xid {} x{} ({}{})", code, n, info ? info->name : "not in the Xid catalogue", words));
    if (!info) {
      s.actions.push_back(fmt::format("Xid {}: look it up in NVIDIA's Xid catalogue (docs.nvidia.com/deploy/xid-errors).", code));
      continue;
    }
    s.meanings.push_back(fmt::format("Xid {} ({}): resolution {}{}", code, info->name, info->resolution,
                                     info->meaning.empty() ? std::string() : "; " + info->meaning));
    if (code == 154 && said.count(code))
      s.actions.push_back(fmt::format("Xid 154: the driver asks for {}.", fmt::join(said[code], ", ")));
    else
      s.actions.push_back(fmt::format("Xid {}: {}", code, info->action.empty() ? core::xid_resolution_action(info->resolution) : info->action));
  }
  s.text = fmt::format("{}", fmt::join(parts, ", "));
  s.counts = std::move(counts);
  return s;
}

// Each Xid number's count as a metric (xid_48): what health's drain_on_xids reads.
void xid_metrics(Finding& fnd, const XidSummary& s) {
  for (const auto& [code, n] : s.counts) fnd.metric(fmt::format("xid_{}", code), static_cast<double>(n));
}

std::vector<Finding> xid(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.xid", "gpu", "NVIDIA Xid (other than 79 and the NVLink ones)",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::xid && e.code != 79 && !nvlink_xid(e.code); }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        auto s = summarize_xids(g);
        xid_metrics(fnd, s);
        fnd.status = s.fail ? Status::fail : Status::warn;
        fnd.title = fmt::format("{}: {}", named_device(f, bdf == "unnamed" ? "" : bdf), s.text);
        fnd.add("Xid catalogue", core::builtin_kb().xid_catalogue);
        for (const auto& m : s.meanings) fnd.add("Xid catalogue", m);
        fnd.fix = fmt::format("{}", fmt::join(s.actions, " "));
        fnd.impact = s.fail ? "The GPU needs service: jobs on it fail or stall, and a job spanning this node waits on it. Drain the node."
                            : "The application on this GPU faulted or the driver recorded a contained event: that job failed or restarted.";
      });
}

std::vector<Finding> fallen_off_bus(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.fallen_off_bus", "gpu", "GPU fallen off the bus",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::fallen_off_bus || (e.kind == KernelEventKind::xid && e.code == 79); },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        fnd.status = Status::fail;
        fnd.metric("xid_79", static_cast<double>(g.events.size()));
        fnd.title = fmt::format("{} fell off the bus ({} kernel log lines)", named_device(f, bdf == "unnamed" ? "" : bdf), g.events.size());
        const auto* info = xid_info(79);
        fnd.fix = info ? info->action : "Drain the node and reboot it; check the GPU's seating, power and cooling.";
        fnd.impact = "The GPU is gone until the node reboots: every job using it fails, and a job spanning this node cannot run. Drain the node.";
      });
}

std::vector<Finding> nvlink(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.nvlink_xid", "gpu", "NVLink error (Xid 74, 144-150)",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::xid && nvlink_xid(e.code); }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        auto s = summarize_xids(g);
        xid_metrics(fnd, s);
        fnd.status = s.fail ? Status::fail : Status::warn;
        fnd.title = fmt::format("{}: NVLink errors, {}", named_device(f, bdf == "unnamed" ? "" : bdf), s.text);
        fnd.add("Xid catalogue", core::builtin_kb().xid_catalogue);
        for (const auto& m : s.meanings) fnd.add("Xid catalogue", m);
        fnd.fix = fmt::format("{}", fmt::join(s.actions, " "));
        fnd.impact = s.fail ? "A GPU whose NVLinks report fatal errors has links down: collectives between its GPUs fall back to slower paths or the job fails."
                            : "The NVLink errors were corrected (the lines say Nonfatal): retries cost bandwidth; a rising rate comes before fatal ones.";
      });
}

std::vector<Finding> sxid(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.nvswitch_sxid", "gpu", "NVSwitch SXid",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::sxid; }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        std::map<long, std::size_t> counts;
        std::size_t fatal = 0;
        for (const auto* e : g.events) {
          ++counts[e->code];
          fatal += e->fatal ? 1 : 0;
        }
        std::vector<std::string> parts;
        parts.reserve(counts.size());
        for (const auto& [code, n] : counts) parts.push_back(fmt::format("SXid {} x{}", code, n));
        fnd.status = fatal ? Status::fail : Status::warn;
        fnd.title = fmt::format("NVSwitch {}: {} ({} fatal)", bdf, fmt::join(parts, ", "), fatal);
        fnd.fix = fatal ? "A fatal SXid leaves the NVSwitch (and the GPUs behind it) unusable until it is reset: drain the node, reset the GPUs "
                          "and switches (or reboot) and restart Fabric Manager; replace the switch tray or baseboard when it recurs."
                        : "Non-fatal SXids are corrected by the switch: watch how often they come (`nvidia-smi nvlink -e`), and check the "
                          "NVLink fabric (cables/trays) when they repeat.";
        fnd.impact = "NVLink traffic through this switch is retried or stopped: collectives between the node's GPUs slow down or fail.";
      });
}

std::vector<Finding> aer(facts::Facts& f, const core::Thresholds& th) {
  const double corrected_warn = th.get("corrected_warn");
  return per_subject(
      f, "pcie.aer", "pcie", "PCIe AER error",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::aer_corrected || e.kind == KernelEventKind::aer_uncorrected; },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        std::size_t corrected = 0, uncorrected = 0, fatal = 0;
        std::set<std::string> types;
        for (const auto* e : g.events) {
          (e->kind == KernelEventKind::aer_corrected ? corrected : uncorrected) += 1;
          fatal += e->fatal ? 1 : 0;
          if (!e->detail.empty()) types.insert(e->detail.substr(0, e->detail.find(',')));
        }
        const auto name = named_device(f, bdf == "unnamed" ? "" : bdf);
        fnd.metric("corrected", static_cast<double>(corrected)).metric("uncorrected", static_cast<double>(uncorrected));
        fnd.add("error types", fmt::format("{}", fmt::join(types, "; ")));
        if (uncorrected) {
          fnd.status = Status::fail;
          fnd.title = fmt::format("{}: {} uncorrected PCIe error(s) ({} fatal), {} corrected", name, uncorrected, fatal, corrected);
          fnd.fix = "Drain the node: an uncorrected PCIe error may have reset or lost the device. Reseat the device and its riser/cable, "
                    "check the slot and power; replace the device when it recurs.";
        } else {
          fnd.status = static_cast<double>(corrected) >= corrected_warn ? Status::warn : Status::pass;
          fnd.title = fmt::format("{}: {} corrected PCIe error(s)", name, corrected);
          fnd.fix = "Corrected errors are retried on the link: reseat the device and its riser/cable and watch the count; a link that "
                    "keeps erring also trains down (pcie.link).";
        }
        fnd.impact = "PCIe replays and retrains cost the device's host bandwidth (GPU copies, GPUDirect RDMA through the NIC).";
      });
}

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

std::vector<Finding> thermal(facts::Facts& f, const core::Thresholds&) {
  const auto& log = facts::kernel_log(f);
  constexpr std::string_view id = "cpu.thermal_throttle";
  if (!log) return {core::finding(id, layer::cpu_power, Status::skip, "kernel log not readable: " + log.error())};
  Group g;
  std::set<std::string> cpus, kinds;
  long most = 0;
  for (const auto& e : log->events)
    if (e.kind == KernelEventKind::thermal_throttle) {
      g.events.push_back(&e);
      cpus.insert(e.device);
      kinds.insert(e.detail);
      most = std::max(most, e.code);
    }
  if (g.events.empty()) {
    auto fnd = core::finding(id, layer::cpu_power, Status::pass, "no CPU thermal throttling in the kernel log");
    add_log_evidence(fnd, *log);
    return {std::move(fnd)};
  }
  auto fnd = core::finding(id, layer::cpu_power, Status::warn,
                           fmt::format("{} CPU(s) throttled by temperature ({}); highest total events {}", cpus.size(), fmt::join(kinds, ", "), most));
  fnd.metric("cpus", static_cast<double>(cpus.size())).metric("total_events_max", static_cast<double>(most));
  add_events(fnd, *log, g);
  add_log_evidence(fnd, *log);
  fnd.fix = "Check the node's cooling (fans, airflow, inlet temperature, heatsink contact) and its power/thermal limits in the BIOS/BMC; "
            "`turbostat` shows the throttled cores' clocks.";
  fnd.impact = "Throttled cores run below their clock: the CPU side of the job (data loading, kernel launches, NCCL's proxy threads) slows down.";
  return {std::move(fnd)};
}

std::vector<Finding> edac(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "kernel.edac", layer::cpu_power, "EDAC memory error",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::edac_corrected || e.kind == KernelEventKind::edac_uncorrected; },
      [](const KernelEvent& e) { return e.device; },
      [&](Finding& fnd, const std::string& mc, const Group& g) {
        long ce = 0, ue = 0;
        for (const auto* e : g.events) (e->kind == KernelEventKind::edac_corrected ? ce : ue) += std::max(1L, e->code);
        fnd.metric("corrected", static_cast<double>(ce)).metric("uncorrected", static_cast<double>(ue));
        fnd.status = ue ? Status::fail : Status::warn;
        fnd.title = fmt::format("memory controller {}: {} uncorrected, {} corrected memory error(s)", mc, ue, ce);
        fnd.fix = ue ? "Drain the node: an uncorrected memory error corrupted data or killed a process. Replace the DIMM the lines name "
                       "(`edac-util -v`, `ras-mc-ctl --errors`)."
                     : "Corrected errors are a DIMM wearing out: watch the count (`edac-util -v`) and replace the DIMM the lines name "
                       "when it keeps growing.";
        fnd.impact = "Memory errors stall the CPU on corrections, and an uncorrected one kills the process or the node.";
      });
}

std::vector<Finding> lockups(facts::Facts& f, std::string_view id, KernelEventKind kind, std::string_view what) {
  const auto& log = facts::kernel_log(f);
  if (!log) return {core::finding(id, layer::cpu_power, Status::skip, "kernel log not readable: " + log.error())};
  Group g;
  std::set<std::string> who;
  for (const auto& e : log->events)
    if (e.kind == kind) {
      g.events.push_back(&e);
      who.insert(e.device);
    }
  if (g.events.empty()) {
    auto fnd = core::finding(id, layer::cpu_power, Status::pass, fmt::format("no {} in the kernel log", what));
    add_log_evidence(fnd, *log);
    return {std::move(fnd)};
  }
  std::vector<std::string> names(who.begin(), who.end());
  if (names.size() > 6) names.resize(6);
  auto fnd = core::finding(id, layer::cpu_power, Status::warn,
                           fmt::format("{} {} report(s) ({}{})", g.events.size(), what, fmt::join(names, ", "), who.size() > 6 ? ", ..." : ""));
  add_events(fnd, *log, g);
  add_log_evidence(fnd, *log);
  return {std::move(fnd)};
}

std::vector<Finding> soft_lockup(facts::Facts& f, const core::Thresholds&) {
  auto out = lockups(f, "kernel.soft_lockup", KernelEventKind::soft_lockup, "soft lockup");
  for (auto& fnd : out)
    if (fnd.status == Status::warn) {
      fnd.fix = "Read the stack the kernel printed after the line (which driver or task held the CPU); update the driver it names, "
                "and drain the node when it recurs.";
      fnd.impact = "A CPU stuck in the kernel for tens of seconds stalls whatever runs there (a rank's thread, an interrupt handler).";
    }
  return out;
}

std::vector<Finding> hung_task(facts::Facts& f, const core::Thresholds&) {
  auto out = lockups(f, "kernel.hung_task", KernelEventKind::hung_task, "hung task");
  for (auto& fnd : out)
    if (fnd.status == Status::warn) {
      fnd.fix = "Read the stack the kernel printed after the line (which lock or I/O the task waited on: a file system, the GPU "
                "driver); fix the storage or driver it names.";
      fnd.impact = "A task blocked in the kernel for minutes: a rank stuck on I/O or a driver call stalls the whole job.";
    }
  return out;
}

}  // namespace
}  // namespace kernel_event_checks

void register_kernel_events(core::Registry& r) {
  using namespace kernel_event_checks;
  const auto log_reads = reads::of({reads::kernel_log(), reads::visible_gpus(), reads::infiniband()});
  static const std::string skip_rule =
      " `skip` when the kernel log cannot be read (kernel.dmesg_restrict without root, a tree without .perfgap/dmesg.txt and no --dmesg FILE). "
      "The log may be /dev/kmsg records, dmesg output (plain, -r/pstore '<N>' priorities, -x/--decode 'kern  :warn  : ', -T, "
      "--time-format iso), journalctl -k (short, short-precise, short-monotonic, short-iso) or syslog kern.log lines (with or "
      "without the printk time); one line reader removes each line's prefixes once and keeps the time each form carries.";
  static const std::string xid_rule =
      std::string("Per GPU (subject: the PCI address in the NVRM line), the NVIDIA Xids in the kernel log other than 79 (gpu.fallen_off_bus) and the NVLink ones (gpu.nvlink_xid), each named with the resolution NVIDIA's Xid catalogue gives it (data/kb/xid.yaml: ") +
      core::builtin_kb().xid_catalogue +
      "; the evidence names this version): `fail` when one needs service (RESET_GPU, RESTART_BM, RESTART_VM, the Xid 48 workflow: 46, 48, 62, 64, 95, 109, 110, 119, 136, 155, 156, 158, ...), or its line says so itself (an Xid 154 whose new recovery action is not None, 'RST: Yes'); `warn` for RESTART_APP, IGNORE, CONTACT_SUPPORT and the other buckets, for Xid 154 changed to None, and for numbers not in the catalogue; `pass` when the log has none." +
      skip_rule;
  r.add({.id = "gpu.xid",
         .layer = "gpu",
         .summary = "no NVIDIA Xid in the kernel log (each named with NVIDIA's meaning and action)",
         .rule = xid_rule,
         .fix = "What NVIDIA's catalogue recommends for the Xid: restart the application, reset the GPU, or drain the node and service the GPU.",
         .reads = log_reads,
         .params = {},
         .run = xid});
  static const std::string fob_rule =
      std::string("Per GPU: `fail` when the kernel log says it fell off the bus (Xid 79, or the driver's 'GPU has fallen off the bus' lines, its three-line 'The NVIDIA GPU <address> / ... / fallen off the bus' report counted on the GPU its first line names); `pass` when it never does.") + skip_rule;
  r.add({.id = "gpu.fallen_off_bus",
         .layer = "gpu",
         .summary = "no GPU fell off the bus (Xid 79)",
         .rule = fob_rule,
         .fix = "Drain and reboot the node; check the GPU's seating, power and cooling; replace it when it recurs.",
         .reads = log_reads,
         .params = {},
         .run = fallen_off_bus});
  static const std::string nvl_rule =
      std::string("Per GPU: the NVLink error Xids (74, and 144-150 on Blackwell): `fail` when one is fatal (the line says Fatal, or says nothing and the catalogue's NVLink workflow applies), `warn` when every line says Nonfatal (corrected); `pass` when the log has none.") + skip_rule;
  r.add({.id = "gpu.nvlink_xid",
         .layer = "gpu",
         .summary = "no NVLink error Xid in the kernel log",
         .rule = nvl_rule,
         .fix = "Drain the node and reset the GPUs of the link; check the NVLink connections and NVSwitches when it recurs.",
         .reads = log_reads,
         .params = {},
         .run = nvlink});
  static const std::string sxid_rule =
      std::string("Per NVSwitch (subject: its PCI address): `fail` when the kernel log has a Fatal SXid, `warn` for non-fatal SXids; one report (its head line and the Severity and Data lines after it) is one event; `pass` when it has none.") + skip_rule;
  r.add({.id = "gpu.nvswitch_sxid",
         .layer = "gpu",
         .summary = "no NVSwitch SXid in the kernel log",
         .rule = sxid_rule,
         .fix = "Fatal: drain, reset the switches and GPUs (or reboot), restart Fabric Manager; non-fatal: watch the rate, check the fabric.",
         .reads = log_reads,
         .params = {},
         .run = sxid});
  static const std::string aer_rule =
      std::string("Per PCI device (subject: the device the 'PCIe Bus Error' lines name, shown as its GPU or NIC; severity Corrected/Correctable, Uncorrected/Uncorrectable): `fail` on any uncorrected (non-fatal or fatal) AER error, `warn` when corrected errors reach corrected_warn, `pass` below it or when the log has none.") + skip_rule;
  r.add({.id = "pcie.aer",
         .layer = "pcie",
         .summary = "no PCIe AER errors in the kernel log",
         .rule = aer_rule,
         .fix = "Reseat the device and its riser/cable, check the slot and power; drain and replace on uncorrected errors.",
         .reads = log_reads,
         .params = {{"corrected_warn", 1, "corrected AER errors of one device in the log from which it warns"}},
         .run = aer});
  static const std::string flap_rule =
      std::string("Per ConnectX NIC (mlx5_core; subject: its PCI address, shown as its RDMA device and interface): a flap is a 'Link down' after the port first came up in the log (a down before that, within 600 s of boot, is the port's bring-up; the 'Link up' every port logs at boot is none). `fail` when the NIC flapped flaps_fail times or more in the window read, or on a module error event ('Port module event[error]', such as a high temperature; a line without a PCI address counts for an unnamed NIC); `warn` for fewer flaps or other module events (cable unplugged/plugged); `pass` when the log has only bring-up lines or none. The title and evidence give the window read (the log's span) and the flaps per hour.") +
      std::string(skip_rule);
  r.add({.id = "net.link_flaps",
         .layer = layer::network,
         .summary = "no mlx5 link flaps or module errors in the kernel log",
         .rule = flap_rule,
         .fix = "Reseat or replace the cable/transceiver, check the switch port (mlxlink); drain while it flaps.",
         .reads = log_reads,
         .params = {{"flaps_fail", 2, "flaps (link downs after the port first came up) of one NIC in the log from which it fails"}},
         .run = link_flaps});
  static const std::string thermal_rule =
      std::string("`warn` when the kernel log has CPU thermal throttling lines (Core or Package; today's 'mce: CPUn: ... temperature is above threshold, cpu clock is throttled' and the older 'temperature above threshold, cpu clock throttled'), naming the CPUs and the highest total-events count; `pass` when it has none.") + skip_rule;
  r.add({.id = "cpu.thermal_throttle",
         .layer = layer::cpu_power,
         .summary = "no CPU thermal throttling in the kernel log",
         .rule = thermal_rule,
         .fix = "Check cooling (fans, airflow, inlet temperature) and the BIOS/BMC power and thermal limits.",
         .reads = log_reads,
         .params = {},
         .run = thermal});
  static const std::string edac_rule =
      std::string("Per memory controller (subject: MC0, ...): `fail` on uncorrected (UE) EDAC memory errors, `warn` on corrected (CE) ones; `pass` when the log has none.") + skip_rule;
  r.add({.id = "kernel.edac",
         .layer = layer::cpu_power,
         .summary = "no EDAC memory errors in the kernel log",
         .rule = edac_rule,
         .fix = "Replace the DIMM the lines name (edac-util, ras-mc-ctl); drain on uncorrected errors.",
         .reads = log_reads,
         .params = {},
         .run = edac});
  static const std::string soft_rule =
      std::string("`warn` when the kernel log has 'soft lockup - CPU#N stuck' lines, naming the CPUs; `pass` when it has none.") + skip_rule;
  r.add({.id = "kernel.soft_lockup",
         .layer = layer::cpu_power,
         .summary = "no soft lockups in the kernel log",
         .rule = soft_rule,
         .fix = "Read the stack after the line; update the driver it names; drain when it recurs.",
         .reads = log_reads,
         .params = {},
         .run = soft_lockup});
  static const std::string hung_rule =
      std::string("`warn` when the kernel log has '[INFO: ]task NAME:PID blocked for more than N seconds' lines, naming the tasks; `pass` when it has none.") + skip_rule;
  r.add({.id = "kernel.hung_task",
         .layer = layer::cpu_power,
         .summary = "no hung tasks in the kernel log",
         .rule = hung_rule,
         .fix = "Read the stack after the line; fix the storage or driver the task waited on.",
         .reads = log_reads,
         .params = {},
         .run = hung_task});
}

}  // namespace perfgap::checks
