// CPU and memory events in the kernel log: thermal throttling, EDAC memory errors, soft
// lockups and hung tasks (checks/kernel_log).
#include <fmt/format.h>

#include <algorithm>
#include <set>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace cpu_event_checks {
namespace {

using namespace kernel_log;

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
}  // namespace cpu_event_checks

void add_cpu_power_kernel_events(core::Registry& r) {
  using namespace cpu_event_checks;
  static const std::string thermal_rule =
      std::string("`warn` when the kernel log has CPU thermal throttling lines (Core or Package; today's 'mce: CPUn: ... temperature is above threshold, cpu clock is throttled' and the older 'temperature above threshold, cpu clock throttled'), naming the CPUs and the highest total-events count; `pass` when it has none.") + kernel_log::skip_rule();
  r.add({.id = "cpu.thermal_throttle",
         .layer = layer::cpu_power,
         .summary = "no CPU thermal throttling in the kernel log",
         .rule = thermal_rule,
         .fix = "Check cooling (fans, airflow, inlet temperature) and the BIOS/BMC power and thermal limits.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = thermal});
  static const std::string edac_rule =
      std::string("Per memory controller (subject: MC0, ...): `fail` on uncorrected (UE) EDAC memory errors, `warn` on corrected (CE) ones; `pass` when the log has none.") + kernel_log::skip_rule();
  r.add({.id = "kernel.edac",
         .layer = layer::cpu_power,
         .summary = "no EDAC memory errors in the kernel log",
         .rule = edac_rule,
         .fix = "Replace the DIMM the lines name (edac-util, ras-mc-ctl); drain on uncorrected errors.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = edac});
  static const std::string soft_rule =
      std::string("`warn` when the kernel log has 'soft lockup - CPU#N stuck' lines, naming the CPUs; `pass` when it has none.") + kernel_log::skip_rule();
  r.add({.id = "kernel.soft_lockup",
         .layer = layer::cpu_power,
         .summary = "no soft lockups in the kernel log",
         .rule = soft_rule,
         .fix = "Read the stack after the line; update the driver it names; drain when it recurs.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = soft_lockup});
  static const std::string hung_rule =
      std::string("`warn` when the kernel log has '[INFO: ]task NAME:PID blocked for more than N seconds' lines, naming the tasks; `pass` when it has none.") + kernel_log::skip_rule();
  r.add({.id = "kernel.hung_task",
         .layer = layer::cpu_power,
         .summary = "no hung tasks in the kernel log",
         .rule = hung_rule,
         .fix = "Read the stack after the line; fix the storage or driver the task waited on.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = hung_task});
}

}  // namespace perfgap::checks
