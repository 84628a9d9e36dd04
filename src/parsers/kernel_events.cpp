#include "parsers/kernel_events.hpp"

#include <fmt/format.h>

#include <cctype>

#include "sys/text.hpp"

namespace perfgap::parsers {

namespace kernel_events_text {
namespace {

bool is_hex(char c) { return std::isxdigit(static_cast<unsigned char>(c)) != 0; }
bool is_digit(char c) { return c >= '0' && c <= '9'; }

// The PCI address at `s` (after an optional "PCI:"), and how many bytes it took; "" when none.
std::pair<std::string, std::size_t> bdf_at(std::string_view s) {
  std::size_t skip = sys::starts_with(s, "PCI:") ? 4 : 0;
  auto rest = s.substr(skip);
  std::size_t n = 0;
  while (n < rest.size() && n < 16 && (is_hex(rest[n]) || rest[n] == ':' || rest[n] == '.')) ++n;
  while (n > 0 && (rest[n - 1] == ':' || rest[n - 1] == '.')) --n;  // "0000:18:00.0: message"
  auto bdf = normalize_bdf(rest.substr(0, n));
  return {bdf, bdf.empty() ? 0 : skip + n};
}

// The first PCI address anywhere in `s` ("" when none).
std::string find_bdf(std::string_view s) {
  for (std::size_t i = 0; i + 7 <= s.size(); ++i) {
    if (!is_hex(s[i]) || (i > 0 && (is_hex(s[i - 1]) || s[i - 1] == ':'))) continue;
    auto [bdf, used] = bdf_at(s.substr(i));
    if (!bdf.empty()) return bdf;
  }
  return {};
}

// Digits at the start of `s` (after blanks): the number and the rest.
std::optional<std::pair<long, std::string_view>> leading_number(std::string_view s) {
  s = sys::trim_ws(s);
  std::size_t n = 0;
  while (n < s.size() && n < 9 && is_digit(s[n])) ++n;
  if (n == 0) return std::nullopt;
  auto v = sys::to_int<long>(s.substr(0, n));
  if (!v) return std::nullopt;
  return std::make_pair(*v, s.substr(n));
}

std::string after_comma(std::string_view rest) {
  rest = sys::trim_ws(rest);
  if (!rest.empty() && rest.front() == ',') rest.remove_prefix(1);
  return std::string(sys::trim_ws(rest));
}

// "Xid (PCI:0000:18:00): 79, pid=1234, name=python, GPU has fallen off the bus." and the
// SXid form; `at` is where "Xid (" starts.
bool xid_like(std::string_view m, std::size_t at, KernelEvent& e) {
  auto open = at + 5;  // after "Xid ("
  auto close = m.find(')', open);
  if (close == std::string_view::npos || close - open > 24) return false;
  auto [bdf, used] = bdf_at(m.substr(open, close - open));
  if (m.compare(close, 2, "):") != 0) return false;
  auto num = leading_number(m.substr(close + 2));
  if (!num) return false;
  e.device = bdf;
  e.code = num->first;
  e.detail = after_comma(num->second);
  return true;
}

// What an Xid line says of itself: the NVLink Xids' severity word among the first ones ("145,
// RLW_REMAP Nonfatal XC0 ...", "149, NETIR_LINK_DOWN Fatal XC0 ...", "74, ... NVLink: fatal
// error detected ..."), Xid 94/95's "RST: Yes" (a reset is needed), Xid 154's new recovery
// action ("GPU recovery action changed from 0x0 (None) to 0x1 (GPU Reset Required)").
void xid_line_words(KernelEvent& e) {
  std::string_view d = e.detail;
  if (e.code == 154) {
    if (auto to = d.find(" to 0x"); to != std::string_view::npos) {
      auto open = d.find('(', to);
      auto close = open == std::string_view::npos ? open : d.find(')', open);
      if (close != std::string_view::npos && close - open < 64) e.recovery = std::string(sys::trim_ws(d.substr(open + 1, close - open - 1)));
    }
    return;
  }
  std::size_t words = 0;
  for (auto w : sys::split(d.substr(0, 64), ' ')) {
    if (++words > 4) break;
    while (!w.empty() && (w.back() == ',' || w.back() == ':')) w.remove_suffix(1);
    auto lw = sys::lower(w);
    if (lw == "fatal") e.fatal = true;
    if (lw == "nonfatal" || lw == "non-fatal") e.nonfatal = true;
  }
  if (d.find("RST: Yes") != std::string_view::npos) e.fatal = true;
}

// The message after a driver's "<function>:<line>:(pid N): " ("wait_func:1151:(pid 12345):
// ACCESS_REG(0x805) timeout. ..." -> "ACCESS_REG(0x805) timeout. ..."); `m` itself without one.
std::string_view after_function(std::string_view m) {
  auto pid = m.find(":(pid ");
  if (pid == std::string_view::npos) return m;
  auto close = m.find("): ", pid);
  return close == std::string_view::npos ? m : sys::trim_ws(m.substr(close + 3));
}

// mlx5 failures (KernelEventKind::nic_failure): "mlx5_core 0000:5c:00.0: poll_health:835:(pid
// 0): device's health compromised - reached miss count" and the like; a line without a PCI
// address ("mlx5_core: Detected insufficient power ...") names no NIC.
bool nic_failure(std::string_view m, KernelEvent& e) {
  const bool failure = m.find("Detected insufficient power on the PCIe slot") != std::string_view::npos ||
                       m.find("Will cause a leak of a command resource") != std::string_view::npos ||
                       m.find("health compromised - reached miss count") != std::string_view::npos ||
                       m.find("unrecoverable hardware error") != std::string_view::npos;
  if (!failure) return false;
  e.kind = KernelEventKind::nic_failure;
  e.fatal = true;
  auto sp = m.find(' ');
  if (sp != std::string_view::npos) e.device = bdf_at(m.substr(sp + 1)).first;
  auto text = after_function(m);
  if (text == m) {  // "mlx5_core 0000:5c:00.0: text" / "mlx5_core: text"
    auto colon = m.find(": ");
    if (colon != std::string_view::npos) text = sys::trim_ws(m.substr(colon + 2));
  }
  e.detail = std::string(text);
  return true;
}

// NVIDIA driver failures that are no Xid (KernelEventKind::gpu_driver_failure) and the GSP RPC
// print rate limit (KernelEventKind::gsp_rate_limit).
bool nvrm_failure(std::string_view m, KernelEvent& e) {
  if (!sys::starts_with(m, "NVRM: ")) return false;
  if (auto r = m.find("Rate limiting GSP RPC error prints for GPU at "); r != std::string_view::npos) {
    e.kind = KernelEventKind::gsp_rate_limit;
    e.device = bdf_at(m.substr(r + 46)).first;
    if (auto every = m.find("printing 1 of every "); every != std::string_view::npos)
      if (auto num = leading_number(m.substr(every + 20))) e.code = num->first;
    e.detail = std::string(sys::trim_ws(m.substr(6)));
    return true;
  }
  const bool nvlink = sys::starts_with(m, "NVRM: knvlink") && m.find(" failed") != std::string_view::npos;
  const bool init = m.find("RmInitAdapter failed") != std::string_view::npos;
  if (!nvlink && !init) return false;
  e.kind = KernelEventKind::gpu_driver_failure;
  e.fatal = true;
  e.device = find_bdf(m);
  e.code = nvlink ? 1 : 0;
  e.detail = std::string(sys::trim_ws(m.substr(6)));
  return true;
}

// "CPU 3" -> "CPU3" (digits after `at`); "" when none.
std::string cpu_at(std::string_view s) {
  auto num = leading_number(s);
  return num ? "CPU" + std::to_string(num->first) : std::string();
}

// A machine check (arch/x86/kernel/cpu/mce): `m` after "mce: [Hardware Error]: ". The MCi_STATUS
// word's bit 61 (UC) marks an uncorrected error; "Exception" a machine check in progress.
bool machine_check(std::string_view m, KernelEvent& e) {
  e.kind = KernelEventKind::machine_check;
  if (sys::starts_with(m, "Machine check events logged")) {
    e.detail = "machine check events logged (rasdaemon/mcelog hold them)";
    return true;
  }
  if (sys::starts_with(m, "Machine check: ")) {  // mce_panic's reason, right before the panic
    e.fatal = true;
    e.detail = std::string(sys::trim_ws(m.substr(15)));
    return true;
  }
  if (!sys::starts_with(m, "CPU ")) return false;
  auto mc = m.find(": Machine Check");
  if (mc == std::string_view::npos || mc > 12) return false;
  e.device = cpu_at(m.substr(4));
  e.detail = std::string(sys::trim_ws(m.substr(mc + 2)));
  e.fatal = m.compare(mc + 15, 10, " Exception") == 0;
  if (auto bank = m.find(" Bank ", mc); bank != std::string_view::npos) {
    if (auto num = leading_number(m.substr(bank + 6))) {
      e.code = num->first;
      auto rest = sys::trim_ws(num->second);
      if (!rest.empty() && rest.front() == ':') rest = sys::trim_ws(rest.substr(1));
      auto hex = rest.substr(0, rest.find(' '));
      if (sys::starts_with(hex, "0x")) hex.remove_prefix(2);
      unsigned long long status = 0;
      bool ok = !hex.empty() && hex.size() <= 16;
      for (char c : hex) {
        if (!is_hex(c)) ok = false;
        else status = status * 16 + static_cast<unsigned>(std::isdigit(static_cast<unsigned char>(c)) ? c - '0' : (std::tolower(static_cast<unsigned char>(c)) - 'a' + 10));
      }
      if (ok && (status >> 61 & 1ULL) != 0) e.fatal = true;
    }
  }
  return true;
}

// Kernel crashes: panics, Oopses, machine checks. The closing "---[ end Kernel panic - not
// syncing: ... ]---" repeats the panic line: no second event.
bool crash(std::string_view m, KernelEvent& e) {
  if (sys::starts_with(m, "Kernel panic - not syncing: ")) {
    e.kind = KernelEventKind::kernel_panic;
    e.fatal = true;
    e.detail = std::string(sys::trim_ws(m.substr(28)));
    return true;
  }
  const bool oops = sys::starts_with(m, "BUG: unable to handle ") || sys::starts_with(m, "BUG: kernel NULL pointer dereference") ||
                    sys::starts_with(m, "kernel BUG at ") || sys::starts_with(m, "Oops: ") ||
                    (sys::starts_with(m, "general protection fault") && m.find("[#") != std::string_view::npos);
  if (oops) {
    e.kind = KernelEventKind::kernel_oops;
    e.fatal = true;
    e.detail = std::string(m);
    return true;
  }
  if (sys::starts_with(m, "mce: [Hardware Error]: ")) return machine_check(m.substr(23), e);
  if (sys::starts_with(m, "[Hardware Error]: ")) return machine_check(m.substr(18), e);
  return false;
}

// The "CPU: 3 PID: 4242 Comm: python3 Tainted: ..." line (also "CPU: 3 UID: 0 PID: ...") the
// kernel prints with a crash's stack: the CPU and the task into `e`.
bool crash_context(std::string_view m, KernelEvent& e) {
  if (!sys::starts_with(m, "CPU: ")) return false;
  auto pid = m.find(" PID: ");
  auto comm = m.find(" Comm: ");
  if (pid == std::string_view::npos || comm == std::string_view::npos || pid > 24) return false;
  e.device = cpu_at(m.substr(5));
  auto who = sys::trim_ws(m.substr(comm + 7));
  who = who.substr(0, who.find(' '));
  auto num = leading_number(m.substr(pid + 6));
  e.task = num ? fmt::format("{} (pid {})", who, num->first) : std::string(who);
  return true;
}

bool classify(std::string_view m, KernelEvent& e) {
  if (crash(m, e) || nvrm_failure(m, e)) return true;
  // NVIDIA driver and NVSwitch.
  if (auto x = m.find("Xid ("); x != std::string_view::npos) {
    const bool sxid = x > 0 && m[x - 1] == 'S';
    if (!xid_like(m, x, e)) return false;
    e.kind = sxid ? KernelEventKind::sxid : KernelEventKind::xid;
    if (sxid) {
      e.fatal = sys::starts_with(e.detail, "Fatal");
      for (std::string_view w : {"Non-fatal", "Nonfatal", "non-fatal", "Non-Fatal"}) e.nonfatal = e.nonfatal || sys::starts_with(e.detail, w);
    } else {
      xid_line_words(e);
    }
    return true;
  }
  if (m.find("fallen off the bus") != std::string_view::npos) {
    e.kind = KernelEventKind::fallen_off_bus;
    e.device = find_bdf(m);
    return true;
  }
  // PCIe AER: "<driver> <bdf>: PCIe Bus Error: severity=Corrected, type=Physical Layer, (Receiver ID)".
  if (auto b = m.find("PCIe Bus Error: severity="); b != std::string_view::npos) {
    auto head = m.substr(0, b);
    auto sp = head.rfind(' ', head.size() >= 2 ? head.size() - 2 : 0);
    auto dev = sys::trim_ws(head.substr(sp == std::string_view::npos ? 0 : sp + 1));
    if (!dev.empty() && dev.back() == ':') dev.remove_suffix(1);
    e.device = normalize_bdf(dev);
    auto sev = m.substr(b + 25);
    if (sys::starts_with(sev, "Correct")) {  // "Corrected"; drivers/pci/pcie/aer.c today prints "Correctable"
      e.kind = KernelEventKind::aer_corrected;
    } else if (sys::starts_with(sev, "Uncorrect")) {  // "Uncorrected (Non-Fatal)", "Uncorrected (Fatal)", old "Uncorrectable"
      e.kind = KernelEventKind::aer_uncorrected;
      e.fatal = sev.find("(Fatal)") != std::string_view::npos;
    } else {
      return false;
    }
    auto comma = sev.find(", ");
    e.detail = comma == std::string_view::npos ? std::string() : std::string(sys::trim_ws(sev.substr(comma + 2)));
    return true;
  }
  // mlx5 (ConnectX) module events: "mlx5_core 0000:2a:00.0: mlx5_port_module_event:1157:(pid 0):
  // Port module event[error]: module 0, ..." (older kernels name the function, newer ones do
  // not; a line may carry no PCI address: then the NIC is not named).
  if (sys::starts_with(m, "mlx5")) {
    if (nic_failure(m, e)) return true;
    if (auto pm = m.find("Port module event"); pm != std::string_view::npos) {
      e.kind = KernelEventKind::module_event;
      auto sp = m.find(' ');
      if (sp != std::string_view::npos && sp < pm) e.device = bdf_at(m.substr(sp + 1)).first;
      auto colon = m.find(": ", pm);
      e.detail = colon == std::string_view::npos ? std::string() : std::string(sys::trim_ws(m.substr(colon + 2)));
      e.fatal = m.compare(pm + 17, 7, "[error]") == 0;
      return true;
    }
  }
  // mlx5 links: "mlx5_core 0000:2a:00.0 ibp42s0: Link down".
  if (sys::starts_with(m, "mlx5_core ")) {
    auto rest = m.substr(10);
    auto [bdf, used] = bdf_at(rest);
    if (bdf.empty()) return false;
    e.device = bdf;
    const bool down = m.size() >= 11 && m.substr(m.size() - 11) == ": Link down";
    const bool up = m.size() >= 9 && m.substr(m.size() - 9) == ": Link up";
    if (!down && !up) return false;
    e.kind = down ? KernelEventKind::link_down : KernelEventKind::link_up;
    auto ifname = sys::trim_ws(rest.substr(used));
    auto colon = ifname.find(':');
    ifname = ifname.substr(0, colon);
    if (ifname.find(' ') == std::string_view::npos) e.netdev = std::string(ifname);
    return true;
  }
  // arch/x86/kernel/cpu/mce/therm_throt.c: "mce: CPU4: Core temperature is above threshold, cpu
  // clock is throttled (total events = 12)" (also "... throttled from last 8000 milli seconds
  // (total events = N)"); kernels before 5.6 wrote "temperature above threshold, cpu clock throttled".
  if (sys::starts_with(m, "mce: ")) m.remove_prefix(5);
  if (sys::starts_with(m, "CPU") && (m.find(" temperature above threshold") != std::string_view::npos ||
                                     m.find(" temperature is above threshold") != std::string_view::npos)) {
    e.kind = KernelEventKind::thermal_throttle;
    auto colon = m.find(':');
    if (colon == std::string_view::npos || colon > 8) return false;
    e.device = std::string(m.substr(0, colon));
    auto rest = sys::trim_ws(m.substr(colon + 1));
    e.detail = std::string(rest.substr(0, rest.find(' ')));  // Core, Package
    if (auto t = m.find("total events = "); t != std::string_view::npos)
      if (auto num = leading_number(m.substr(t + 15))) e.code = num->first;
    return true;
  }
  // "EDAC MC0: 1 CE memory read error on ..." (also "EDAC skx MC0: ...").
  if (auto ed = m.find("EDAC "); ed != std::string_view::npos && ed < 16) {
    auto mc = m.find("MC", ed);
    if (mc == std::string_view::npos || mc > ed + 24) return false;
    auto colon = m.find(": ", mc);
    if (colon == std::string_view::npos || colon > mc + 6) return false;
    auto num = leading_number(m.substr(colon + 2));
    if (!num) return false;
    auto rest = sys::trim_ws(num->second);
    if (sys::starts_with(rest, "CE ")) e.kind = KernelEventKind::edac_corrected;
    else if (sys::starts_with(rest, "UE ")) e.kind = KernelEventKind::edac_uncorrected;
    else return false;
    e.device = std::string(m.substr(mc, colon - mc));
    e.code = num->first;
    e.detail = std::string(sys::trim_ws(rest.substr(3)));
    return true;
  }
  // "watchdog: BUG: soft lockup - CPU#12 stuck for 22s! [python:4242]".
  if (auto sl = m.find("soft lockup - CPU#"); sl != std::string_view::npos) {
    e.kind = KernelEventKind::soft_lockup;
    auto num = leading_number(m.substr(sl + 18));
    if (!num) return false;
    e.device = "CPU" + std::to_string(num->first);
    e.detail = std::string(sys::trim_ws(num->second));
    return true;
  }
  // kernel/hung_task.c: "INFO: task python:4242 blocked for more than 120 seconds." (and the
  // same words without "INFO: ").
  if (auto t = m.find("task "); t != std::string_view::npos && (t == 0 || (t >= 6 && m.compare(t - 6, 6, "INFO: ") == 0))) {
    auto b = m.find(" blocked for more than ", t);
    if (b == std::string_view::npos) return false;
    auto who = m.substr(t + 5, b - (t + 5));
    if (who.empty() || who.find(' ') != std::string_view::npos) return false;
    e.kind = KernelEventKind::hung_task;
    e.device = std::string(who);
    e.detail = std::string(sys::trim_ws(m.substr(b + 1)));
    return true;
  }
  return false;
}

}  // namespace
}  // namespace kernel_events_text

std::string_view to_string(KernelEventKind k) {
  switch (k) {
    case KernelEventKind::xid: return "xid";
    case KernelEventKind::sxid: return "sxid";
    case KernelEventKind::fallen_off_bus: return "fallen_off_bus";
    case KernelEventKind::aer_corrected: return "aer_corrected";
    case KernelEventKind::aer_uncorrected: return "aer_uncorrected";
    case KernelEventKind::link_down: return "link_down";
    case KernelEventKind::link_up: return "link_up";
    case KernelEventKind::module_event: return "module_event";
    case KernelEventKind::thermal_throttle: return "thermal_throttle";
    case KernelEventKind::edac_corrected: return "edac_corrected";
    case KernelEventKind::edac_uncorrected: return "edac_uncorrected";
    case KernelEventKind::soft_lockup: return "soft_lockup";
    case KernelEventKind::hung_task: return "hung_task";
    case KernelEventKind::nic_failure: return "nic_failure";
    case KernelEventKind::gpu_driver_failure: return "gpu_driver_failure";
    case KernelEventKind::gsp_rate_limit: return "gsp_rate_limit";
    case KernelEventKind::kernel_panic: return "kernel_panic";
    case KernelEventKind::kernel_oops: return "kernel_oops";
    case KernelEventKind::machine_check: return "machine_check";
  }
  return "unknown";
}

std::string normalize_bdf(std::string_view s) {
  // [dddd:]bb:dd[.f]
  auto parts = sys::split(s.substr(0, s.find('.')), ':');
  auto dot = s.find('.');
  std::string_view fn = dot == std::string_view::npos ? "0" : s.substr(dot + 1);
  if (parts.size() == 2) parts.insert(parts.begin(), "0000");
  if (parts.size() != 3 || parts[0].size() != 4 || parts[1].size() != 2 || parts[2].size() != 2 || fn.size() != 1) return {};
  for (auto p : {parts[0], parts[1], parts[2], fn})
    for (char c : p)
      if (!kernel_events_text::is_hex(c)) return {};
  if (fn[0] > '7') return {};
  return sys::lower(std::string(parts[0]) + ":" + std::string(parts[1]) + ":" + std::string(parts[2]) + "." + std::string(fn));
}

namespace kernel_events_text {
namespace {

// Every event line holds one of these byte sequences: a cheap first look.
bool may_be_event(std::string_view m) {
  constexpr std::string_view kWords[] = {"Xid", "fallen off", "PCIe Bus Error", " above threshold", "EDAC ", "soft lockup",
                                         " blocked for more than ", "Kernel panic", "BUG", "Oops: ", "general protection",
                                         "Hardware Error]: ", "NVRM: knvlink", "RmInitAdapter failed", "Rate limiting GSP"};
  if (sys::starts_with(m, "mlx5")) return true;
  for (auto w : kWords)
    if (m.find(w) != std::string_view::npos) return true;
  return false;
}

// How many records after a crash line its "CPU: N PID: ..." line and a BUG's "Oops:" line may come.
constexpr std::size_t kCrashContext = 8;

// A panic's or an Oops' CPU and task, from the first "CPU: N PID: P Comm: ..." line after it.
void find_crash_context(const std::vector<KernelRecord>& records, std::size_t at, KernelEvent& e) {
  for (std::size_t j = at + 1; j < records.size() && j <= at + kCrashContext; ++j)
    if (crash_context(records[j].message, e)) return;
}

}  // namespace
}  // namespace kernel_events_text

std::vector<KernelEvent> kernel_events(const std::vector<KernelRecord>& records) {
  std::vector<KernelEvent> out;
  // The driver's three-line report ("NVRM: The NVIDIA GPU 0000:b3:00.0" / "NVRM: (PCI ID:
  // 10de:2330) installed in this system has" / "NVRM: fallen off the bus and is not responding
  // to commands."): the GPU its first line names, for the third.
  std::string named_gpu;
  std::size_t named_at = 0;
  // The last BUG/general protection fault line (its index in `out`, none: npos; its record):
  // the "Oops:" line the kernel prints after it is the same report.
  constexpr std::size_t kNone = static_cast<std::size_t>(-1);
  std::size_t bug_event = kNone, bug_record = 0;
  for (std::size_t i = 0; i < records.size(); ++i) {
    std::string_view m = records[i].message;
    if (auto g = m.find("NVRM: The NVIDIA GPU "); g != std::string_view::npos) {
      named_gpu = kernel_events_text::find_bdf(m.substr(g + 21));
      named_at = i;
    }
    if (!kernel_events_text::may_be_event(m)) continue;
    KernelEvent e;
    if (!kernel_events_text::classify(m, e)) continue;
    if (e.kind == KernelEventKind::fallen_off_bus && e.device.empty() && !named_gpu.empty() && i - named_at <= 2) e.device = named_gpu;
    // An SXid report is a head line ("Fatal, Link 44 ..." / "Non-fatal, ...") and its
    // "Severity ..." and "Data {...}" lines: one event.
    if (e.kind == KernelEventKind::sxid && (sys::starts_with(e.detail, "Severity ") || sys::starts_with(e.detail, "Data "))) continue;
    if (e.kind == KernelEventKind::kernel_oops) {
      if (sys::starts_with(m, "Oops: ") && bug_event != kNone && i - bug_record <= kernel_events_text::kCrashContext) {
        out[bug_event].detail += " (" + std::string(m) + ")";
        bug_event = kNone;
        continue;
      }
      bug_event = out.size();
      bug_record = i;
    }
    if (e.kind == KernelEventKind::kernel_oops || e.kind == KernelEventKind::kernel_panic) kernel_events_text::find_crash_context(records, i, e);
    e.since_boot_s = records[i].since_boot_s;
    e.wall = records[i].wall;
    e.line = records[i].message;
    out.push_back(std::move(e));
  }
  return out;
}

std::optional<long long> parse_boot_time(std::string_view proc_stat) {
  for (auto line : sys::split_lines(proc_stat)) {
    if (!sys::starts_with(line, "btime ")) continue;
    auto v = sys::to_int<long long>(line.substr(6));
    if (v && *v > 0) return v;
    return std::nullopt;
  }
  return std::nullopt;
}

std::vector<KernelEvent> parse_kernel_events(std::string_view text) { return kernel_events(parse_kernel_records(text)); }

}  // namespace perfgap::parsers
