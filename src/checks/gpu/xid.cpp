// GPU events in the kernel log, one check per class: NVIDIA Xid (named with NVIDIA's Xid
// catalogue), GPUs fallen off the bus, NVLink error Xids and NVSwitch SXids (checks/kernel_log).
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <optional>
#include <set>

#include "checks/kernel_log.hpp"
#include "core/kb.hpp"

namespace perfgap::checks {
namespace gpu_xid_checks {
namespace {

using namespace kernel_log;

// The Xids of NVLink errors (gpu.nvlink_xid rather than gpu.xid): 74, and Blackwell's per-unit
// ones (144-149) and the MSE's (150).
bool nvlink_xid(long code) { return code == 74 || (code >= 144 && code <= 150); }

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

// The driver's "Rate limiting GSP RPC error prints for GPU at PCI:... (printing 1 of every N)":
// from that line on it prints one GSP RPC timeout (Xid 119) in N, so the count read is a floor.
void rate_limit_said(Finding& fnd, const facts::KernelLog& log, const std::vector<const KernelEvent*>& limits, std::string& title) {
  const auto& first = *limits.front();
  const std::string every = first.code > 0 ? fmt::format("1 of every {}", first.code) : std::string("some");
  title += fmt::format("{}more not printed: the driver rate-limited its GSP RPC error prints to {} from {}", title.empty() ? "" : ", ", every, log.when(first));
  fnd.add(log.source, first.line, "no rate limit: each GSP RPC timeout printed as an Xid 119");
  if (first.code > 0) fnd.metric("gsp_rpc_print_1_of", static_cast<double>(first.code));
}

std::vector<Finding> xid(facts::Facts& f, const core::Thresholds&) {
  const auto& log = facts::kernel_log(f);
  return per_subject(
      f, "gpu.xid", layer::gpu, "NVIDIA Xid (other than 79 and the NVLink ones)",
      [](const KernelEvent& e) {
        return (e.kind == KernelEventKind::xid && e.code != 79 && !nvlink_xid(e.code)) || e.kind == KernelEventKind::gsp_rate_limit;
      },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, Group& g) {
        Group xids;
        std::vector<const KernelEvent*> limits;
        for (const auto* e : g.events) (e->kind == KernelEventKind::gsp_rate_limit ? limits : xids.events).push_back(e);
        auto s = summarize_xids(xids);
        xid_metrics(fnd, s);
        if (!limits.empty()) {
          g.counted = std::max<std::size_t>(xids.events.size(), 1);
          s.fail = true;  // the driver's line: "The GPU likely needs to be reset."
          if (xids.events.empty()) s.actions.push_back("Drain the node and reset the GPU (or reboot): the driver says it likely needs a reset.");
          rate_limit_said(fnd, *log, limits, s.text);
        }
        fnd.status = s.fail ? Status::fail : Status::warn;
        fnd.title = fmt::format("{}: {}", named_device(f, bdf == "unnamed" ? "" : bdf), s.text);
        fnd.add("Xid catalogue", core::builtin_kb().xid_catalogue);
        for (const auto& m : s.meanings) fnd.add("Xid catalogue", m);
        fnd.fix = fmt::format("{}", fmt::join(s.actions, " "));
        fnd.impact = s.fail ? "The GPU needs service: jobs on it fail or stall, and a job spanning this node waits on it. Drain the node."
                            : "The application on this GPU faulted or the driver recorded a contained event: that job failed or restarted.";
      });
}

// How many times one GPU fell off the bus, from its lines in log order. A lost GPU stays lost
// until the node reboots (or the GPU is reset), and the driver says so again on every access
// (the three-line report on each open), so its lines are one loss: a new one starts where the
// seconds since boot go back (a log spanning a reboot), or with a second Xid 79 (the driver
// prints one per loss) a minute or more after the loss's last line.
std::size_t gpu_losses(const Group& g) {
  constexpr double kSameReportS = 60;
  std::size_t losses = 0;
  bool has_xid79 = false;
  std::optional<double> last_s;
  for (const auto* e : g.events) {
    const bool xid79 = e->kind == KernelEventKind::xid;
    const bool rebooted = e->since_boot_s && last_s && *e->since_boot_s < *last_s;
    const bool again = xid79 && has_xid79 && e->since_boot_s && last_s && *e->since_boot_s - *last_s >= kSameReportS;
    if (losses == 0 || rebooted || again) {
      ++losses;
      has_xid79 = false;
    }
    has_xid79 = has_xid79 || xid79;
    if (e->since_boot_s) last_s = e->since_boot_s;
  }
  return losses;
}

std::vector<Finding> fallen_off_bus(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.fallen_off_bus", layer::gpu, "GPU fallen off the bus",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::fallen_off_bus || (e.kind == KernelEventKind::xid && e.code == 79); },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, Group& g) {
        g.counted = gpu_losses(g);
        fnd.status = Status::fail;
        // Times the GPU fell off the bus (what health's drain_on_xids: [79] reads), whether or
        // not the driver's lines include the Xid 79 one.
        fnd.metric("xid_79", static_cast<double>(g.counted));
        fnd.title = fmt::format("{} fell off the bus{} ({} kernel log line{})", named_device(f, bdf == "unnamed" ? "" : bdf),
                                g.counted > 1 ? fmt::format(" {} times", g.counted) : std::string(), g.events.size(), g.events.size() == 1 ? "" : "s");
        const auto* info = xid_info(79);
        fnd.fix = info ? info->action : "Drain the node and reboot it; check the GPU's seating, power and cooling.";
        fnd.impact = "The GPU is gone until the node reboots: every job using it fails, and a job spanning this node cannot run. Drain the node.";
      });
}

std::vector<Finding> nvlink(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.nvlink_xid", layer::gpu, "NVLink error (Xid 74, 144-150)",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::xid && nvlink_xid(e.code); }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        auto s = summarize_xids(g);
        xid_metrics(fnd, s);
        fnd.status = s.fail ? Status::fail : Status::warn;
        fnd.title = fmt::format("{}: NVLink errors, {}", named_device(f, bdf == "unnamed" ? "" : bdf), s.text);
        fnd.add("Xid catalogue", core::builtin_kb().xid_catalogue);
        for (const auto& m : s.meanings) fnd.add("Xid catalogue", m);
        // Blackwell's NVLink Xids carry the unit's interrupt info and error status, which NVIDIA's
        // catalogue decodes (per driver version) into a recovery that can differ from the word.
        const bool by_word = std::any_of(g.events.begin(), g.events.end(), [](const KernelEvent* e) {
          return (e->fatal || e->nonfatal) && e->code >= 144 && e->code <= 150;
        });
        if (by_word)
          fnd.add("severity", "taken from the line's own word (Fatal/Nonfatal): NVIDIA's catalogue decodes these Xids' interrupt info and error "
                              "status per driver version into a recovery that can differ from it, which perfgap does not decode");
        fnd.fix = fmt::format("{}", fmt::join(s.actions, " "));
        fnd.impact = s.fail ? "A GPU whose NVLinks report fatal errors has links down: collectives between its GPUs fall back to slower paths or the job fails."
                            : "The NVLink errors were corrected (the lines say Nonfatal): retries cost bandwidth; a rising rate comes before fatal ones.";
      });
}

const core::KbSxid* sxid_info(long code) {
  const auto& sxids = core::builtin_kb().sxids;
  auto it = sxids.find(code);
  return it == sxids.end() ? nullptr : &it->second;
}

// What an SXid line says of its severity (the parser's reading of its head): "Fatal",
// "Non-fatal", or "" (the SOE's lines say neither).
std::string sxid_word(const KernelEvent& e) { return e.fatal ? "Fatal" : e.nonfatal ? "Non-fatal" : ""; }

// One NVSwitch's SXids: per number its count, what its lines say, and the guide's entry; an
// event fails when its line says Fatal or the guide's recovery resets (whatever the line says).
struct SxidSummary {
  std::vector<std::string> parts, actions, meanings;
  std::size_t failing = 0, ignorable = 0, unsaid = 0, events = 0;
};
SxidSummary summarize_sxids(const Group& g) {
  std::map<long, std::size_t> counts;
  std::map<long, std::set<std::string>> words;
  SxidSummary s;
  for (const auto* e : g.events) {
    ++counts[e->code];
    ++s.events;
    const auto* info = sxid_info(e->code);
    const std::string word = sxid_word(*e);
    words[e->code].insert(word);
    if (e->fatal || (info && info->severity == "fail")) ++s.failing;
    else if (info && info->severity == "ignore") ++s.ignorable;
    else if (word.empty()) ++s.unsaid;
  }
  std::vector<std::string> unsaid_codes;
  for (const auto& [code, n] : counts) {
    const auto* info = sxid_info(code);
    std::vector<std::string> said;
    for (const auto& w : words[code])
      if (!w.empty()) said.push_back(w);
    const std::string severity = said.empty()                ? "the line gives no severity"
                                 : words[code].count("") != 0 ? fmt::format("lines say {} or nothing", fmt::join(said, ", "))
                                                              : fmt::format("the line says {}", fmt::join(said, ", "));
    std::string what = info ? info->name + "; " : std::string();
    const bool overruled = info && info->severity == "fail" && !words[code].count("Fatal");
    s.parts.push_back(fmt::format("SXid {} x{} ({}{}{})", code, n, what, severity,
                                  overruled ? ": NVIDIA's guide resets" : info && info->severity == "ignore" ? ": ignorable by NVIDIA's guide" : ""));
    if (info) {
      s.meanings.push_back(fmt::format("SXid {} ({}): {}{}", code, info->name, info->severity == "fail" ? "needs a reset" : info->severity,
                                       info->meaning.empty() ? std::string() : "; " + info->meaning));
      if (info->severity != "ignore") s.actions.push_back(fmt::format("SXid {}: {}.", code, info->action));
    } else if (words[code].count("") != 0) {
      unsaid_codes.push_back(std::to_string(code));
    }
  }
  if (!unsaid_codes.empty())
    s.actions.push_back(fmt::format("SXid {}: {} fatal; look {} up in NVIDIA's Fabric Manager guide (its NVSwitch "
                                    "SXid appendix) and check the switch (the Fabric Manager log, nvidia-smi -q's fabric state).",
                                    fmt::join(unsaid_codes, ", "), unsaid_codes.size() == 1 ? "its line does not say whether it is" : "their lines do not say whether they are",
                                    unsaid_codes.size() == 1 ? "it" : "them"));
  return s;
}

std::vector<Finding> sxid(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.nvswitch_sxid", layer::gpu, "NVSwitch SXid",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::sxid; }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        const auto s = summarize_sxids(g);
        const bool all_ignorable = s.ignorable == s.events;
        fnd.status = s.failing ? Status::fail : all_ignorable ? Status::pass : Status::warn;
        fnd.title = fmt::format("NVSwitch {}: {} ({} fatal or needing a reset)", bdf, fmt::join(s.parts, ", "), s.failing);
        if (!s.meanings.empty()) fnd.add("SXid guide", core::builtin_kb().sxid_guide);
        for (const auto& m : s.meanings) fnd.add("SXid guide", m);
        fnd.metric("fatal_events", static_cast<double>(s.failing));
        std::string fix;
        if (s.failing)
          fix = "A fatal SXid leaves the NVSwitch (and the GPUs behind it) unusable until it is reset: drain the node, reset the GPUs and switches "
                "(or reboot) and restart Fabric Manager; replace the switch tray or baseboard when it recurs.";
        else if (!all_ignorable && s.unsaid == 0 && s.actions.empty())
          fix = "Non-fatal SXids are corrected by the switch: watch how often they come (`nvidia-smi nvlink -e`), and check the NVLink fabric "
                "(cables/trays) when they repeat.";
        for (const auto& a : s.actions) fix += (fix.empty() ? "" : " ") + a;
        fnd.fix = all_ignorable ? "Nothing to do: NVIDIA's Fabric Manager guide says these SXids can be ignored." : fix;
        fnd.impact = all_ignorable ? std::string()
                     : s.failing ? "NVLink traffic through this switch stops: the GPUs behind it hang or their jobs abort (Xid 45) until the switch and GPUs are reset."
                     : s.unsaid ? "Unknown until the switch is checked: an SXid whose line gives no severity may have stopped the switch's NVLink traffic or only been recorded."
                                : "NVLink traffic through this switch is retried: collectives between the node's GPUs slow down; a rising rate comes before fatal errors.";
      });
}

}  // namespace
}  // namespace gpu_xid_checks

void add_gpu_xid(core::Registry& r) {
  using namespace gpu_xid_checks;
  static const std::string xid_rule =
      std::string("Per GPU (subject: the PCI address in the NVRM line), the NVIDIA Xids in the kernel log other than 79 (gpu.fallen_off_bus) and the NVLink ones (gpu.nvlink_xid), each named with the resolution NVIDIA's Xid catalogue gives it (data/kb/xid.yaml: ") +
      core::builtin_kb().xid_catalogue +
      "; the evidence names this version): `fail` when one needs service (RESET_GPU, RESTART_BM, RESTART_VM, the Xid 48 workflow: 46, 48, 62, 64, 95, 109, 110, 119, 136, 155, 156, 158, ...), or its line says so itself (an Xid 154 whose new recovery action is not None, 'RST: Yes'); `warn` for RESTART_APP, IGNORE, CONTACT_SUPPORT and the other buckets, for Xid 154 changed to None, and for numbers not in the catalogue; `pass` when the log has none. The driver's 'Rate limiting GSP RPC error prints for GPU at PCI:... (printing 1 of every N)' line fails the GPU it names (the driver adds 'The GPU likely needs to be reset') and makes its Xid 119 count a floor: the title says more were not printed, and the evidence quotes the line." +
      kernel_log::skip_rule();
  r.add({.id = "gpu.xid",
         .layer = layer::gpu,
         .summary = "no NVIDIA Xid in the kernel log (each named with NVIDIA's meaning and action)",
         .rule = xid_rule,
         .fix = "What NVIDIA's catalogue recommends for the Xid: restart the application, reset the GPU, or drain the node and service the GPU.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = xid});
  static const std::string fob_rule =
      std::string("Per GPU: `fail` when the kernel log says it fell off the bus (Xid 79, or the driver's 'GPU has fallen off the bus' lines, its three-line 'The NVIDIA GPU <address> / ... / fallen off the bus' report counted on the GPU its first line names); `pass` when it never does. A lost GPU stays lost until the node reboots and the driver says so again on each access, so all of a GPU's lines are one event: the events and the xid_79 metric (what health's drain_on_xids reads) count the times it fell off, a new one where the seconds since boot go back (the log spans a reboot) or with a second Xid 79 a minute or more after the last line; the title gives the lines too.") + kernel_log::skip_rule();
  r.add({.id = "gpu.fallen_off_bus",
         .layer = layer::gpu,
         .summary = "no GPU fell off the bus (Xid 79)",
         .rule = fob_rule,
         .fix = "Drain and reboot the node; check the GPU's seating, power and cooling; replace it when it recurs.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = fallen_off_bus});
  static const std::string nvl_rule =
      std::string("Per GPU: the NVLink error Xids (74, and 144-150 on Blackwell): `fail` when one is fatal (the line says Fatal, or says nothing and the catalogue's NVLink workflow applies), `warn` when every line says Nonfatal (corrected); `pass` when the log has none.") + kernel_log::skip_rule();
  r.add({.id = "gpu.nvlink_xid",
         .layer = layer::gpu,
         .summary = "no NVLink error Xid in the kernel log",
         .rule = nvl_rule,
         .fix = "Drain the node and reset the GPUs of the link; check the NVLink connections and NVSwitches when it recurs.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = nvlink});
  static const std::string sxid_rule =
      std::string("Per NVSwitch (subject: its PCI address): `fail` when the kernel log has an SXid whose line says Fatal, or one that NVIDIA's Fabric Manager guide resets whatever its line says (data/kb/sxid.yaml: ") +
      core::builtin_kb().sxid_guide +
      ": 11004, 12028 and 19084, which the line calls Non-fatal); `warn` for the other SXids (Non-fatal, or a line that gives no severity: the SOE's, said as such and never called corrected); `pass` when the log has none, or only SXids the guide says can be ignored (22013). One report (its head line and the Severity and Data lines after it) is one event." +
      kernel_log::skip_rule();
  r.add({.id = "gpu.nvswitch_sxid",
         .layer = layer::gpu,
         .summary = "no NVSwitch SXid in the kernel log",
         .rule = sxid_rule,
         .fix = "Fatal or needing a reset by NVIDIA's guide: drain, reset the switches and GPUs (or reboot), restart Fabric Manager; non-fatal: watch the rate, check the fabric.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = sxid});
}

}  // namespace perfgap::checks
