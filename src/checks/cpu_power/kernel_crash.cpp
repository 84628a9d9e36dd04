// kernel.panic: kernel panics, Oopses and machine checks in the kernel log (checks/kernel_log);
// a pstore/ERST capture, a netconsole or an earlier boot's journal holds the last crash.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <string>
#include <vector>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace kernel_crash_checks {
namespace {

using namespace kernel_log;

// How many different crash lines the title names before "...".
constexpr std::size_t kTitleItems = 4;
// An Oops line is cut to this many characters in the title (the evidence has it whole).
constexpr std::size_t kOopsText = 120;

bool crash_kind(const KernelEvent& e) {
  return e.kind == KernelEventKind::kernel_panic || e.kind == KernelEventKind::kernel_oops || e.kind == KernelEventKind::machine_check;
}

// One event as the title names it: what crashed, where (the CPU, the task) the lines say.
std::string describe(const KernelEvent& e) {
  std::string where = e.device.empty() ? std::string() : " on " + e.device;
  if (!e.task.empty()) where += " in " + e.task;
  switch (e.kind) {
    case KernelEventKind::kernel_panic: return fmt::format("kernel panic '{}'{}", e.detail, where);
    case KernelEventKind::kernel_oops: {
      std::string text = e.detail.size() > kOopsText ? e.detail.substr(0, kOopsText) + "..." : e.detail;
      return fmt::format("Oops '{}'{}", text, where);
    }
    default: break;
  }
  if (e.device.empty()) return e.fatal ? fmt::format("machine check '{}'", e.detail) : e.detail;
  return fmt::format("{} machine check{}{}", e.fatal ? "uncorrected" : "corrected", where, e.detail.find(" Bank ") != std::string::npos ? fmt::format(" (bank {})", e.code) : std::string());
}

std::vector<Finding> kernel_panic(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "kernel.panic";
  const auto& log = facts::kernel_log(f);
  if (!log) return {core::finding(id, layer::cpu_power, Status::skip, "kernel log not readable: " + log.error())};
  Group g;
  std::size_t panics = 0, oopses = 0, fatal_mce = 0, other_mce = 0;
  std::vector<std::pair<int, std::string>> order;  // the descriptions, panics first, then in log order, each once
  std::map<std::string, std::size_t> counts;
  for (const auto& e : log->events) {
    if (!crash_kind(e)) continue;
    g.events.push_back(&e);
    panics += e.kind == KernelEventKind::kernel_panic ? 1 : 0;
    oopses += e.kind == KernelEventKind::kernel_oops ? 1 : 0;
    fatal_mce += e.kind == KernelEventKind::machine_check && e.fatal ? 1 : 0;
    other_mce += e.kind == KernelEventKind::machine_check && !e.fatal ? 1 : 0;
    auto d = describe(e);
    if (counts[d]++ == 0) order.emplace_back(e.kind == KernelEventKind::kernel_panic ? 0 : 1, d);
  }
  std::stable_sort(order.begin(), order.end(), [](const auto& a, const auto& b) { return a.first < b.first; });
  if (g.events.empty()) {
    auto fnd = core::finding(id, layer::cpu_power, Status::pass, "no kernel panic, Oops or machine check in the kernel log");
    add_log_evidence(fnd, *log);
    return {std::move(fnd)};
  }
  std::vector<std::string> parts;
  for (const auto& [rank, d] : order) {
    if (parts.size() == kTitleItems) {
      parts.emplace_back("...");
      break;
    }
    parts.push_back(counts[d] > 1 ? fmt::format("{} x{}", d, counts[d]) : d);
  }
  const bool fail = panics || oopses || fatal_mce;
  auto fnd = core::finding(id, layer::cpu_power, fail ? Status::fail : Status::warn, fmt::format("{}", fmt::join(parts, "; ")));
  fnd.metric("panics", static_cast<double>(panics)).metric("oopses", static_cast<double>(oopses));
  fnd.metric("machine_checks_uncorrected", static_cast<double>(fatal_mce)).metric("machine_checks_other", static_cast<double>(other_mce));
  add_events(fnd, *log, g);
  add_log_evidence(fnd, *log);
  if (fatal_mce) {
    fnd.fix = "A machine check is the CPU or memory reporting a hardware error: decode its bank and status (`ras-mc-ctl --errors` with "
              "rasdaemon, or `mcelog --ascii` on the lines), run the vendor's hardware diagnostics and replace the CPU or DIMM they "
              "point to; keep the node drained until then.";
    fnd.impact = "The node crashed on a hardware error: every job on it died, and the error comes back until the part is replaced.";
  } else if (fail) {
    fnd.fix = "Read the stack after the line (the module it names: a GPU or NIC driver, a file system) and update or roll back that "
              "driver or the kernel; keep the crash's record (pstore, kdump) for the vendor, and drain the node when it recurs.";
    fnd.impact = panics ? "The node crashed: every job on it died, and a job spanning it failed; the same driver path crashes it again."
                        : "The kernel killed a task inside a kernel call, maybe holding locks: later calls into that driver hang "
                          "until the node reboots.";
  } else {
    fnd.fix = "Machine checks that are not uncorrected: read them (`ras-mc-ctl --errors`, `mcelog`), watch their rate (`ras-mc-ctl --summary` with rasdaemon) and replace the part they name when "
              "they keep coming.";
    fnd.impact = "Corrected errors cost nothing by themselves; a rising rate comes before an uncorrected one that crashes the node.";
  }
  return {std::move(fnd)};
}

}  // namespace
}  // namespace kernel_crash_checks

void add_cpu_power_kernel_crash(core::Registry& r) {
  using namespace kernel_crash_checks;
  static const std::string rule =
      std::string("Kernel crashes in the kernel log: 'Kernel panic - not syncing: ...', Oopses ('BUG: unable to handle ...', 'BUG: "
                  "kernel NULL pointer dereference', 'kernel BUG at ...', 'general protection fault ... [#N]', 'Oops: ...'; a BUG "
                  "line and the Oops line after it are one), and machine checks ('mce: [Hardware Error]: CPU N: Machine Check ...', "
                  "mce_panic's 'Machine check: ...'), each named with its line and the CPU (and task) the lines give. `fail` on a "
                  "panic, an Oops or an uncorrected machine check (the line says Exception, or its MCi_STATUS has bit 61, UC), also "
                  "in the log of a node back in service: a panic is never in the live log of the boot it ended (it comes from a "
                  "pstore/ERST capture, an earlier boot's journal or a --dmesg file), but the reboot did not remove its cause (a "
                  "failing CPU or DIMM, a driver bug on the same path), so the node is held until someone reads it; `warn` for "
                  "machine checks that are not uncorrected only (a Machine Check line whose status is corrected, 'Machine check "
                  "events logged' alone: rasdaemon/mcelog hold those); the title names panics first; `pass` when the log has none.") +
      kernel_log::skip_rule();
  r.add({.id = "kernel.panic",
         .layer = layer::cpu_power,
         .summary = "no kernel panic, Oops or machine check in the kernel log",
         .rule = rule,
         .fix = "Machine check: hardware diagnostics, replace the CPU/DIMM; panic/Oops: the driver the stack names; drain until fixed.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = kernel_panic});
}

}  // namespace perfgap::checks
