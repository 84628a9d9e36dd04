#include "parsers/kernel_events.hpp"

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

bool classify(std::string_view m, KernelEvent& e) {
  // NVIDIA driver and NVSwitch.
  if (auto x = m.find("Xid ("); x != std::string_view::npos) {
    const bool sxid = x > 0 && m[x - 1] == 'S';
    if (!xid_like(m, x, e)) return false;
    e.kind = sxid ? KernelEventKind::sxid : KernelEventKind::xid;
    if (sxid) e.fatal = sys::starts_with(e.detail, "Fatal");
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
    if (sys::starts_with(sev, "Corrected")) {
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
  // mlx5 (ConnectX): "mlx5_core 0000:2a:00.0 ibp42s0: Link down" and the module events.
  if (sys::starts_with(m, "mlx5_core ")) {
    auto rest = m.substr(10);
    auto [bdf, used] = bdf_at(rest);
    if (bdf.empty()) return false;
    e.device = bdf;
    if (auto pm = rest.find("Port module event"); pm != std::string_view::npos) {
      e.kind = KernelEventKind::module_event;
      auto colon = rest.find(": ", pm);
      e.detail = colon == std::string_view::npos ? std::string() : std::string(sys::trim_ws(rest.substr(colon + 2)));
      e.fatal = rest.compare(pm + 17, 7, "[error]") == 0;
      return true;
    }
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
  // "CPU12: Core temperature above threshold, cpu clock throttled (total events = 1234)".
  if (sys::starts_with(m, "CPU") && m.find(" temperature above threshold") != std::string_view::npos) {
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
  // "INFO: task python:4242 blocked for more than 120 seconds."
  if (auto t = m.find("INFO: task "); t != std::string_view::npos) {
    auto b = m.find(" blocked for more than ", t);
    if (b == std::string_view::npos) return false;
    e.kind = KernelEventKind::hung_task;
    e.device = std::string(m.substr(t + 11, b - (t + 11)));
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

std::vector<KernelEvent> kernel_events(const std::vector<KernelRecord>& records) {
  std::vector<KernelEvent> out;
  for (const auto& r : records) {
    std::string_view m = r.message;
    // Cheap first look: every event line holds one of these bytes sequences.
    if (m.find("Xid") == std::string_view::npos && m.find("fallen off") == std::string_view::npos &&
        m.find("PCIe Bus Error") == std::string_view::npos && !sys::starts_with(m, "mlx5_core ") &&
        m.find("temperature above") == std::string_view::npos && m.find("EDAC ") == std::string_view::npos &&
        m.find("soft lockup") == std::string_view::npos && m.find("INFO: task ") == std::string_view::npos)
      continue;
    KernelEvent e;
    if (!kernel_events_text::classify(m, e)) continue;
    e.since_boot_s = r.since_boot_s;
    e.wall = r.wall;
    e.line = r.message;
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
