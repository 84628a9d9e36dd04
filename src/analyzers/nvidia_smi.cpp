#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <map>
#include <set>

#include "analyzers/analyzers.hpp"
#include "analyzers/nvidia_smi_topo_file.hpp"

namespace perfgap::analyzers {

namespace {

using parsers::GpuFacts;
using report::Status;

struct Obs {
  const std::string* source;
  const GpuFacts* g;
};

Finding make(const char* id, const char* layer, std::string subject) {
  Finding f;
  f.id = id;
  f.layer = layer;
  f.subject = std::move(subject);
  return f;
}

// nvidia-smi prints an 8-digit PCI domain ("00000000:01:00.0"); sysfs and the node checks use 4.
std::string bus_id(const std::string& s) {
  std::string b = s;
  auto colon = b.find(':');
  if (colon == 8 && b.starts_with("0000")) b = b.substr(4);
  std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
  return b;
}

// A GPU's bus id, or its UUID where the capture has no bus id (nvlink -s).
std::string where_is(const GpuFacts& g) { return g.pci_bus_id.empty() ? g.uuid : bus_id(g.pci_bus_id); }

std::string who(const GpuFacts& g) { return g.name.empty() ? where_is(g) : g.name + " " + where_is(g); }

std::string mhz(const std::optional<double>& v) { return v ? fmt::format("{:.0f} MHz", *v) : "not captured"; }

std::string join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

// ---- gpu.persistence -----------------------------------------------------------------
Finding persistence(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  Finding f = make("gpu.persistence", "gpu", subject);
  if (!g.persistence) {
    f.status = Status::skip;
    f.title = who(g) + ": persistence mode not in this capture";
    return f;
  }
  f.add(*o.back().source, *g.persistence ? "persistence_mode Enabled" : "persistence_mode Disabled", "Enabled");
  if (*g.persistence) {
    f.status = Status::pass;
    f.title = who(g) + ": persistence mode on";
  } else {
    f.status = Status::warn;
    f.title = who(g) + ": persistence mode off";
    f.fix = "run nvidia-persistenced (systemctl enable --now nvidia-persistenced), or nvidia-smi -pm 1 until the next boot";
    f.impact =
        "without a persistent client the driver tears the GPU state down when the last process exits: every job start, nvidia-smi call and monitoring poll pays the initialisation again (~1.5 s per GPU)";
  }
  return f;
}

// ---- gpu.clocks ----------------------------------------------------------------------
const std::vector<std::pair<const char*, const char*>>& slowdown_reasons() {
  static const std::vector<std::pair<const char*, const char*>> r = {
      {"hw_slowdown", "HW slowdown"},
      {"hw_thermal_slowdown", "HW thermal slowdown"},
      {"sw_thermal_slowdown", "SW thermal slowdown"},
      {"hw_power_brake_slowdown", "HW power brake"},
  };
  return r;
}

Finding clocks(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  const auto& src = *o.back().source;
  Finding f = make("gpu.clocks", "gpu", subject);
  std::vector<std::string> fails, warns;
  for (const auto& [key, label] : slowdown_reasons()) {
    auto it = g.clock_events.find(key);
    if (it != g.clock_events.end() && it->second) fails.push_back(std::string(label) + " active");
  }
  // Time in a slowdown reason between the first and the last capture of this GPU.
  if (o.size() > 1)
    for (const auto& [key, label] : slowdown_reasons()) {
      auto a = o.front().g->clock_event_us.find(key), b = g.clock_event_us.find(key);
      if (a != o.front().g->clock_event_us.end() && b != g.clock_event_us.end() && b->second > a->second)
        fails.push_back(fmt::format("{:.1f} s of {} between {} and {}", (b->second - a->second) / 1e6, label, *o.front().source, src));
    }
  const auto& p = g.power;
  if (p.enforced_limit_w && p.default_limit_w && *p.enforced_limit_w + 0.5 < *p.default_limit_w)
    warns.push_back(fmt::format("enforced power limit {:.0f} W below the default {:.0f} W", *p.enforced_limit_w, *p.default_limit_w));
  const auto& c = g.clocks;
  if (c.app_sm_mhz && c.default_app_sm_mhz && *c.app_sm_mhz + 0.5 < *c.default_app_sm_mhz)
    warns.push_back(fmt::format("application clocks lowered: {:.0f} MHz, default {:.0f} MHz", *c.app_sm_mhz, *c.default_app_sm_mhz));
  else if (auto it = g.clock_events.find("applications_clocks_setting");
           it != g.clock_events.end() && it->second && c.app_sm_mhz && c.max_sm_mhz && *c.app_sm_mhz + 0.5 < *c.max_sm_mhz)
    warns.push_back(fmt::format("clocks held at the application clock {:.0f} MHz, below the max {:.0f} MHz", *c.app_sm_mhz, *c.max_sm_mhz));

  std::vector<std::string> active;
  for (const auto& [k, on] : g.clock_events)
    if (on) active.push_back(k);
  f.add(src,
        g.clock_events.empty() ? "clock event reasons not in this capture"
                               : "active reasons: " + (active.empty() ? std::string("none") : join(active)),
        "no HW slowdown, thermal slowdown or power brake");
  f.add(src, fmt::format("SM {} (application {}, default application {}, max {})", mhz(c.sm_mhz), mhz(c.app_sm_mhz),
                         mhz(c.default_app_sm_mhz), mhz(c.max_sm_mhz)));
  if (p.enforced_limit_w || p.default_limit_w)
    f.add(src,
          fmt::format("power {} W, enforced limit {}, default {}", p.draw_w ? fmt::format("{:.1f}", *p.draw_w) : "?",
                      p.enforced_limit_w ? fmt::format("{:.0f} W", *p.enforced_limit_w) : "not captured",
                      p.default_limit_w ? fmt::format("{:.0f} W", *p.default_limit_w) : "not captured"),
          "enforced = default");
  if (g.temp_c) f.metric("temp_c", *g.temp_c);
  if (c.sm_mhz) f.metric("sm_mhz", *c.sm_mhz);
  if (c.max_sm_mhz) f.metric("max_sm_mhz", *c.max_sm_mhz);
  if (c.app_sm_mhz) f.metric("app_sm_mhz", *c.app_sm_mhz);
  if (p.draw_w) f.metric("power_w", *p.draw_w);
  if (p.enforced_limit_w) f.metric("enforced_limit_w", *p.enforced_limit_w);
  if (p.default_limit_w) f.metric("default_limit_w", *p.default_limit_w);
  for (const auto& [k, us] : g.clock_event_us) f.metric("reason_s." + k, us / 1e6);
  // NVML's per-policy violation times: the totals, and their growth between the first and
  // the last sample (time the clocks were held down during the run, per reason).
  if (!g.violation_ns.empty()) {
    std::vector<std::string> grew, totals;
    for (const auto& [k, ns] : g.violation_ns) {
      f.metric("violation_s." + k, static_cast<double>(ns) / 1e9);
      totals.push_back(fmt::format("{} {:.1f} s", k, static_cast<double>(ns) / 1e9));
      if (o.size() < 2) continue;
      auto a = o.front().g->violation_ns.find(k);
      if (a == o.front().g->violation_ns.end()) continue;
      const double d = ns >= a->second ? static_cast<double>(ns - a->second) / 1e9 : 0.0;
      f.metric("violation_growth_s." + k, d);
      if (d > 0) grew.push_back(fmt::format("{} +{:.3f} s", k, d));
    }
    f.add(src, "clocks held down since the driver loaded (NVML violation times): " + join(totals));
    if (o.size() > 1)
      f.add(fmt::format("{} -> {}", *o.front().source, src),
            grew.empty() ? std::string("no violation time grew between the samples") : "violation time grew: " + join(grew));
  }

  if (!fails.empty()) {
    f.status = Status::fail;
    f.title = who(g) + ": clocks held down: " + join(fails, "; ");
    f.fix =
        "HW slowdown / power brake: check the board's power supply and cabling (the brake is an external signal), nvidia-smi -q -d PERFORMANCE; thermal: airflow, fans, inlet temperature, dust; drain the node if it persists";
    f.impact = "the GPU runs below its clocks for as long as the reason holds; a data-parallel job waits for its slowest GPU";
  } else if (!warns.empty()) {
    f.status = Status::warn;
    f.title = who(g) + ": " + join(warns, "; ");
    f.fix =
        "restore the default power limit (nvidia-smi -pl with the default watts) and application clocks (nvidia-smi -rac); find what lowered them (an admin script, a power-capping agent)";
    f.impact = "a lower power limit or clock target caps throughput under load";
  } else if (g.clock_events.empty()) {
    f.status = Status::skip;
    f.title = who(g) + ": clock event (throttle) reasons not in this capture";
  } else {
    f.status = Status::pass;
    f.title = who(g) + ": no slowdown reason active" + (active.empty() ? "" : " (active: " + join(active) + ")");
  }
  return f;
}

// ---- gpu.ecc -------------------------------------------------------------------------
// Retired pages from which gpu.ecc warns: within 4 of the 64 a pre-Ampere GPU can retire
// (NVIDIA, GPU memory error management: "a maximum of 64 retirements").
constexpr std::uint64_t kRetiredPagesWarn = 60;

Finding ecc(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  const auto& src = *o.back().source;
  Finding f = make("gpu.ecc", "gpu", subject);
  auto n = [](const std::optional<std::uint64_t>& v) { return v ? std::to_string(*v) : std::string("not captured"); };
  if (g.ecc_enabled && !*g.ecc_enabled) {
    f.status = Status::skip;
    f.title = who(g) + ": ECC is off, errors are not counted" + (g.ecc_pending_enabled.value_or(false) ? " (on after the next reset)" : "");
    f.add(src, "ecc_mode current Disabled");
    return f;
  }
  std::vector<std::string> fails;
  if (g.ecc_volatile.uncorrected && *g.ecc_volatile.uncorrected > 0)
    fails.push_back(fmt::format("{} volatile uncorrectable ECC errors", *g.ecc_volatile.uncorrected));
  if (g.remapped_rows && g.remapped_rows->failure.value_or(false)) fails.push_back("row remapping failed");
  if (g.remapped_rows && g.remapped_rows->pending.value_or(false)) fails.push_back("a row remap is pending (needs a GPU reset)");
  if (g.retirement_pending.value_or(false)) fails.push_back("a page retirement is pending (needs a GPU reset)");
  const bool retired = g.retired_pages_sbe || g.retired_pages_dbe;
  bool counted = g.ecc_volatile.uncorrected.has_value() || g.remapped_rows.has_value() || (retired && g.retirement_pending);
  f.add(src,
        fmt::format("volatile: {} corrected, {} uncorrected; aggregate: {} corrected, {} uncorrected", n(g.ecc_volatile.corrected),
                    n(g.ecc_volatile.uncorrected), n(g.ecc_aggregate.corrected), n(g.ecc_aggregate.uncorrected)),
        "0 volatile uncorrected");
  if (g.remapped_rows)
    f.add(src,
          fmt::format("remapped rows: {} correctable, {} uncorrectable, pending {}, failure {}", n(g.remapped_rows->correctable),
                      n(g.remapped_rows->uncorrectable),
                      g.remapped_rows->pending ? (*g.remapped_rows->pending ? "yes" : "no") : "not captured",
                      g.remapped_rows->failure ? (*g.remapped_rows->failure ? "yes" : "no") : "not captured"),
          "no pending remap, no failure");
  if (retired) {
    f.add(src,
          fmt::format("retired pages: {} single-bit, {} double-bit (of the 64 a pre-Ampere GPU can retire), pending {}", n(g.retired_pages_sbe),
                      n(g.retired_pages_dbe), g.retirement_pending ? (*g.retirement_pending ? "yes" : "no") : "not captured"),
          "no pending retirement");
    f.metric("retired_pages", static_cast<double>(g.retired_pages_sbe.value_or(0) + g.retired_pages_dbe.value_or(0)));
  }
  if (g.ecc_volatile.uncorrected) f.metric("volatile_uncorrected", static_cast<double>(*g.ecc_volatile.uncorrected));
  if (g.ecc_volatile.corrected) f.metric("volatile_corrected", static_cast<double>(*g.ecc_volatile.corrected));
  if (g.ecc_aggregate.uncorrected) f.metric("aggregate_uncorrected", static_cast<double>(*g.ecc_aggregate.uncorrected));
  if (g.remapped_rows && g.remapped_rows->uncorrectable)
    f.metric("remapped_uncorrectable", static_cast<double>(*g.remapped_rows->uncorrectable));
  if (!fails.empty()) {
    f.status = Status::fail;
    f.title = who(g) + ": " + join(fails, "; ");
    f.fix =
        "drain the node, reset the GPU (nvidia-smi -r, or reboot) so pending remaps take effect; a remap failure or repeated uncorrectable errors mean an RMA (NVIDIA's GPU memory error management guide)";
    f.impact =
        "an uncorrectable error kills the processes on the GPU (Xid 48/63/64); a pending remap leaves bad rows in use until the reset";
  } else if (const auto pages = g.retired_pages_sbe.value_or(0) + g.retired_pages_dbe.value_or(0); pages >= kRetiredPagesWarn) {
    // Page retirement (pre-Ampere) has room for 64 pages over the board's life.
    f.status = Status::warn;
    f.title = fmt::format("{}: {} pages retired, {} of the 64 a GPU can retire left", who(g), pages, pages >= 64 ? 0 : 64 - pages);
    f.fix = "run the NVIDIA field diagnostic and check the GPU for an RMA: once no page can be retired, bad memory stays in use";
    f.impact = "further failing cells can no longer be retired: their errors reach the applications (Xid 48/63)";
  } else if (!counted) {
    f.status = Status::skip;
    f.title = who(g) + ": ECC counts not in this capture";
  } else {
    f.status = Status::pass;
    f.title = who(g) + (g.ecc_volatile.uncorrected ? ": no volatile uncorrectable ECC error" : ": no ECC error state that needs action") +
              (g.remapped_rows ? ", no pending or failed row remap" : "") +
              (retired ? fmt::format(", no pending page retirement ({} pages retired)", g.retired_pages_sbe.value_or(0) + g.retired_pages_dbe.value_or(0)) : "") +
              (g.ecc_aggregate.uncorrected.value_or(0) > 0
                   ? fmt::format(" ({} uncorrectable in the lifetime counts)", *g.ecc_aggregate.uncorrected)
                   : "");
  }
  return f;
}

// ---- gpu.pcie ------------------------------------------------------------------------
Finding pcie(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  const auto& src = *o.back().source;
  const auto& l = g.pcie;
  Finding f = make("gpu.pcie", "pcie", subject);
  // Under load: utilisation above 0, or (where utilisation is N/A, as under MIG) P0.
  bool loaded = g.gpu_util_pct ? *g.gpu_util_pct >= 1 : g.performance_state == "P0";
  std::string state = fmt::format("{}{}", g.performance_state.value_or("P?"),
                                  g.gpu_util_pct ? fmt::format(", {:.0f}% busy", *g.gpu_util_pct) : std::string());
  std::vector<std::string> warns, notes;
  bool judged = false;
  if (l.gen_current && l.gen_max && l.width_current && l.width_max) {
    f.add(src, fmt::format("Gen{} x{} ({})", *l.gen_current, *l.width_current, state), fmt::format("Gen{} x{}", *l.gen_max, *l.width_max));
    f.metric("gen", *l.gen_current).metric("gen_max", *l.gen_max).metric("width", *l.width_current).metric("width_max", *l.width_max);
    bool low_gen = *l.gen_current < *l.gen_max, low_width = *l.width_current < *l.width_max;
    if (low_width) warns.push_back(fmt::format("link x{} of x{}", *l.width_current, *l.width_max));
    if (low_gen && loaded) warns.push_back(fmt::format("link Gen{} of Gen{} under load ({})", *l.gen_current, *l.gen_max, state));
    if (low_gen && !loaded)
      notes.push_back(fmt::format("Gen{} of Gen{} while idle ({}): GPUs lower the link speed when idle, capture under load to judge it",
                                  *l.gen_current, *l.gen_max, state));
    judged = !(low_gen && !loaded);
  }
  if (l.replay_counter) {
    f.metric("replay_counter", static_cast<double>(*l.replay_counter));
    if (o.size() > 1 && o.front().g->pcie.replay_counter) {
      auto a = *o.front().g->pcie.replay_counter, b = *l.replay_counter;
      f.add(src, fmt::format("replay counter {} -> {} since {}", a, b, *o.front().source), "no growth");
      if (b > a) warns.push_back(fmt::format("replay counter grew by {} between the captures", b - a));
      else if (b < a) notes.push_back("replay counter lower than in the earlier capture (reset or reboot in between)");
    } else {
      f.add(src, fmt::format("replay counter {} (one capture: growth needs a second one)", *l.replay_counter));
    }
  }
  for (const auto& n : notes) f.add(src, n);
  if (!warns.empty()) {
    f.status = Status::warn;
    f.title = who(g) + ": " + join(warns, "; ");
    const bool guest = g.virtualization_mode && *g.virtualization_mode != "None" && *g.virtualization_mode != "N/A" &&
                       g.virtualization_mode->rfind("Host", 0) != 0;
    if (guest) {
      // In a VM the link is the host's slot as the hypervisor presents it: nothing inside the guest reseats it.
      f.add(src, fmt::format("GPU virtualization mode {}: this capture is from a VM", *g.virtualization_mode));
      f.fix = fmt::format(
          "the GPU is given to this VM ({}): its link is the host's slot as the hypervisor presents it, which the instance type or the host "
          "decides; ask the provider or the host's admin (compare lspci -vv LnkCap/LnkSta on the host), or move to an instance type with full-width "
          "links; growing replays point at the host's signal integrity (riser, retimer)",
          *g.virtualization_mode);
    } else {
      f.fix =
          "reseat the GPU or riser, check the slot's bifurcation and PCIe generation in the BIOS, compare lspci -vv LnkCap/LnkSta; growing replays point at signal integrity (cable, riser, retimer)";
    }
    f.impact = "a narrower or slower link caps host<->device copies and GPUDirect traffic; replays retransmit TLPs";
  } else if (judged) {
    f.status = Status::pass;
    f.title = fmt::format("{}: link Gen{} x{} at its max", who(g), *l.gen_current, *l.width_current);
  } else {
    f.status = Status::skip;
    f.title = who(g) + ": " + (notes.empty() ? std::string("PCIe link state not in this capture") : notes.front());
  }
  return f;
}

// ---- gpu.nvlink (per-GPU link state: NVML; -q -x has none) ---------------------------
Finding nvlink(const std::vector<Obs>& o, const std::string& subject, int peers_best_up) {
  const auto& g = *o.back().g;
  const auto& src = *o.back().source;
  Finding f = make("gpu.nvlink", "gpu", subject);
  if (!g.nvlinks) {
    f.status = Status::skip;
    f.title = who(g) +
              ": NVLink state not in this capture (nvidia-smi -q and -q -x have none: give the same node's `nvidia-smi nvlink -s` output with "
              "them; topo -m shows the bonded link counts)";
    return f;
  }
  int up = 0;
  std::uint64_t errors = 0;
  std::vector<std::string> grew;
  for (const auto& l : *g.nvlinks) {
    if (l.up.value_or(false)) ++up;
    errors += l.crc_errors.value_or(0) + l.replay_errors.value_or(0) + l.recovery_errors.value_or(0);
  }
  if (o.size() > 1 && o.front().g->nvlinks)
    for (const auto& l : *g.nvlinks)
      for (const auto& e : *o.front().g->nvlinks)
        if (e.link == l.link) {
          auto d = [](const std::optional<std::uint64_t>& a, const std::optional<std::uint64_t>& b) {
            return a && b && *b > *a ? *b - *a : 0;
          };
          auto grown = d(e.crc_errors, l.crc_errors) + d(e.replay_errors, l.replay_errors) + d(e.recovery_errors, l.recovery_errors);
          if (grown) grew.push_back(fmt::format("link {} +{}", l.link, grown));
        }
  f.metric("links_up", up).metric("errors", static_cast<double>(errors));
  // The active links' speed: NVML's common figure, else the slowest link up that nvlink -s shows
  // (one link trained slower is what a fleet comparison must see).
  std::optional<double> speed = g.nvlink_speed_gbps;
  if (!speed)
    for (const auto& l : *g.nvlinks)
      if (l.up.value_or(false) && l.speed_gbps && (!speed || *l.speed_gbps < *speed)) speed = l.speed_gbps;
  if (speed) f.metric("link_gbps", *speed);
  f.add(src,
        fmt::format("{} of {} links up{}; {} CRC/replay/recovery errors counted", up, g.nvlinks->size(),
                    speed ? fmt::format(" at {:g} GB/s per link and direction", *speed) : "", errors),
        fmt::format("{} up (the best same-model GPU)", peers_best_up));
  if (up == 0 && peers_best_up == 0) {
    // No link up here nor on a GPU of the same model: a GPU without NVLink, or every link down.
    f.status = Status::skip;
    f.title = who(g) + ": no NVLink up (NVML: all links inactive) and no same-model GPU in the input to compare with: a GPU without NVLink, "
                       "or every link down; give the whole node's nvlink -s";
    return f;
  }
  if (up < peers_best_up) {
    f.status = Status::fail;
    f.title = fmt::format("{}: {} NVLinks up, same-model GPUs have {}", who(g), up, peers_best_up);
    f.fix = "reset the GPU; if links stay down, reseat the baseboard/NVLink bridge or RMA";
    f.impact = "collectives over NVLink lose bandwidth or fall back to PCIe";
  } else if (!grew.empty()) {
    f.status = Status::warn;
    f.title = who(g) + ": NVLink error counters grew between the captures: " + join(grew);
    f.fix = "watch the counters (nvidia-smi nvlink -e); growing CRC/replay errors point at a marginal link";
  } else {
    f.status = Status::pass;
    f.title = fmt::format("{}: {} NVLinks up{}", who(g), up, o.size() > 1 ? "" : " (one capture: counter growth not judged)");
  }
  return f;
}

// ---- gpu.mig -------------------------------------------------------------------------
// A GPU left in MIG mode (an inference node's setting, or a MIG manager's profile not undone) is
// split into instances: a training job sees a slice, and NCCL gets no NVLink between GPUs.
constexpr const char* kMigFix =
    "stop the GPU's clients and disable MIG (nvidia-smi -i <gpu> -mig 0, then a GPU reset or reboot where it says pending); "
    "where a MIG manager owns the setting (the GPU operator's nvidia.com/mig.config label, nvidia-mig-parted), set its "
    "profile to all-disabled on training nodes";

Finding mig(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  Finding f = make("gpu.mig", "gpu", subject);
  if (!g.mig_enabled) {
    f.status = Status::skip;
    f.title = who(g) + ": MIG mode not in this capture (N/A on GPUs without MIG)";
    return f;
  }
  f.add(*o.back().source, *g.mig_enabled ? "MIG mode current: Enabled" : "MIG mode current: Disabled", "Disabled");
  if (*g.mig_enabled) {
    f.status = Status::warn;
    f.title = who(g) + ": MIG mode enabled: the GPU is split into instances";
    f.fix = kMigFix;
    f.impact =
        "a training job gets one MIG instance (a fraction of the SMs and memory), and NCCL has no NVLink or P2P between MIG "
        "instances: collectives go through host memory or fail";
  } else {
    f.status = Status::pass;
    f.title = who(g) + ": MIG mode disabled";
  }
  return f;
}

// ---- gpu.fabric ----------------------------------------------------------------------
Finding fabric(const std::vector<Obs>& o, const std::string& subject) {
  const auto& g = *o.back().g;
  const auto& src = *o.back().source;
  Finding f = make("gpu.fabric", "gpu", subject);
  if (!g.fabric) {
    f.status = Status::skip;
    f.title = who(g) + ": no fabric state in this capture (older drivers do not print it)";
    return f;
  }
  const auto& fb = *g.fabric;
  if (!fb.state) {
    f.status = Status::skip;
    f.title = who(g) + ": not on an NVLink-switch fabric (fabric state N/A)";
    return f;
  }
  std::vector<std::string> fails;
  if (*fb.state != "Completed") fails.push_back("fabric state " + *fb.state);
  if (fb.status && *fb.status != "Success") fails.push_back("fabric status " + *fb.status);
  if (fb.health_summary && *fb.health_summary != "Healthy") fails.push_back("health " + *fb.health_summary);
  for (const auto& [k, v] : fb.health) {
    bool bad = k == "bandwidth" ? v != "Full"
                                : (k == "route_recovery_in_progress" || k == "route_unhealthy" || k == "access_timeout_recovery" ||
                                   k == "incorrect_configuration") &&
                                      (v == "True" || v == "Yes");
    if (bad) fails.push_back(k + " " + v);
  }
  f.add(src,
        fmt::format("state {}, status {}, clique {}, health {}", *fb.state, fb.status.value_or("not captured"),
                    fb.clique_id.value_or("not captured"), fb.health_summary.value_or("not captured")),
        "state Completed, status Success, health Healthy");
  if (!fails.empty()) {
    f.status = Status::fail;
    f.title = who(g) + ": " + join(fails, "; ");
    f.fix =
        "check the fabric manager / NVLink switch trays (nvidia-smi -q -d FABRIC on every GPU of the domain, the IMEX and NMX logs); a GPU outside a Completed fabric cannot use multi-node NVLink";
    f.impact = "NCCL cannot use the NVLink domain for this GPU (falls back to the network or fails at init)";
  } else {
    f.status = Status::pass;
    f.title = who(g) + ": fabric Completed" + (fb.clique_id ? ", clique " + *fb.clique_id : "");
  }
  return f;
}

// ---- topo -m -------------------------------------------------------------------------
// A capture cut short (as posted) keeps the header's columns but loses rows: the GPU columns
// without a row, which the findings name, since their counts are of the rows.
std::vector<std::string> topo_gpu_columns_without_row(const parsers::GpuTopology& t, const std::vector<std::size_t>& gpu_cols,
                                                      const std::vector<const parsers::TopoRow*>& gpus) {
  std::vector<std::string> no_row;
  for (std::size_t c : gpu_cols)
    if (std::none_of(gpus.begin(), gpus.end(), [&](const parsers::TopoRow* g) { return g->name == t.columns[c]; })) no_row.push_back(t.columns[c]);
  return no_row;
}

std::vector<Finding> topology(const parsers::GpuTopology& t, const std::string& source) {
  std::vector<Finding> out;
  std::vector<std::size_t> gpu_cols, nic_cols;
  for (std::size_t i = 0; i < t.columns.size(); ++i) (t.is_gpu(t.columns[i]) ? gpu_cols : nic_cols).push_back(i);
  auto nic_label = [&](const std::string& c) {
    auto it = t.nic_names.find(c);
    return it == t.nic_names.end() ? c : c + " (" + it->second + ")";
  };
  std::vector<const parsers::TopoRow*> gpus;
  for (const auto& r : t.rows)
    if (t.is_gpu(r.name)) gpus.push_back(&r);

  const std::vector<std::string> no_row = topo_gpu_columns_without_row(t, gpu_cols, gpus);
  auto note_cut = [&](Finding& f) {
    if (!no_row.empty())
      f.add(source, fmt::format("{} of the header's {} GPU columns have no row ({}): the capture looks cut, judged on the rows present",
                                no_row.size(), gpu_cols.size(), join(no_row)));
  };
  // A cut matrix's titles say how many GPUs they judge: never "every GPU" of a part.
  const std::string cut = no_row.empty() ? "" : fmt::format("{} of {} GPUs (capture cut: {} GPU row{} missing): ", gpus.size(), gpu_cols.size(),
                                                                  no_row.size(), no_row.size() == 1 ? "" : "s");
  Finding top = make("gpu.topology", "pcie", source);
  note_cut(top);
  if (nic_cols.empty()) {
    top.status = Status::skip;
    top.title = fmt::format("{} GPUs and no NIC in the matrix: no GPU<->NIC affinity to judge", gpus.size());
  } else {
    static const char* kNames[] = {"X", "NV", "PIX", "PXB", "PHB", "NODE", "SYS"};
    int best_anywhere = 99;
    std::vector<int> best(gpus.size(), 99);
    std::vector<std::vector<std::string>> nearest(gpus.size());
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      for (auto c : nic_cols) {
        int r = parsers::topo_link_rank(gpus[k]->links[c]);
        if (r < 0) continue;
        if (r < best[k]) best[k] = r, nearest[k].clear();
        if (r == best[k]) nearest[k].push_back(nic_label(t.columns[c]));
      }
      best_anywhere = std::min(best_anywhere, best[k]);
    }
    top.table.push_back({"GPU", "nearest NIC", "link", "CPU affinity", "NUMA affinity", "GPU NUMA ID"});
    std::vector<std::string> far;
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      const auto& r = *gpus[k];
      std::string link = best[k] < 7 ? kNames[best[k]] : "?";
      top.table.push_back(
          {r.name, join(nearest[k]), link, r.cpu_affinity.value_or("-"), r.numa_affinity.value_or("-"), r.gpu_numa_id.value_or("-")});
      top.add(fmt::format("{}:{}", source, r.line),
              fmt::format("{}: nearest {} via {}{}", r.name, nearest[k].empty() ? "none" : join(nearest[k]), link,
                          r.numa_affinity ? ", NUMA " + *r.numa_affinity : ""));
      // A GPU whose best NIC crosses the host bridge's interconnect or the sockets while others sit behind a switch with one.
      if (best_anywhere <= 3 && best[k] >= 5) far.push_back(fmt::format("{} ({} to {})", r.name, link, join(nearest[k])));
    }
    top.metric("gpus", static_cast<double>(gpus.size()))
        .metric("nics", static_cast<double>(nic_cols.size()))
        .metric("gpus_far_from_nic", static_cast<double>(far.size()));
    top.table_always = true;
    if (!far.empty()) {
      top.status = Status::warn;
      top.title = cut + fmt::format("{} of {} GPUs have no NIC nearer than NODE/SYS while others have one behind their PCIe switch: {}",
                                    far.size(), gpus.size(), join(far));
      top.fix =
          "give those GPUs' ranks a NIC on their own switch or NUMA node (NCCL_IB_HCA / the NCCL topology file), or check that every NIC is cabled and up; a GPU far from every NIC sends its inter-node traffic across the CPU interconnect";
      top.impact =
          "inter-node traffic of those GPUs crosses the host bridge or the socket link: lower bandwidth and no GPUDirect RDMA at full rate";
    } else {
      top.status = Status::pass;
      // How many GPUs have which link type to their nearest NIC ("1 PHB, 7 SYS").
      std::map<int, int> by_best;
      for (int b : best) ++by_best[b];
      std::vector<std::string> spread;
      spread.reserve(by_best.size());
      for (const auto& [b, n] : by_best) spread.push_back(fmt::format("{} {}", n, b < 7 ? kNames[b] : "none"));
      top.title = cut + (best_anywhere <= 3 ? fmt::format("each of {} GPUs has a NIC behind its PCIe switch (PIX/PXB)", gpus.size())
                                            : fmt::format("{} GPUs, {} NICs, no NIC behind any GPU's PCIe switch; nearest NIC per GPU: {}",
                                                          gpus.size(), nic_cols.size(), join(spread)));
    }
  }
  std::size_t header_gpus = gpu_cols.size();
  if (gpus.size() < header_gpus)
    top.add(source, fmt::format("{} GPU rows of the {} GPU columns (a cut capture)", gpus.size(), header_gpus));
  out.push_back(std::move(top));

  // Bonded NVLinks per GPU over its GPU peers: in one node's matrix all GPUs are one model, so
  // a GPU with fewer than the others has links down.
  Finding nv = make("gpu.nvlink", "gpu", source);
  note_cut(nv);
  std::vector<int> total(gpus.size(), 0);
  int most = 0;
  for (std::size_t k = 0; k < gpus.size(); ++k) {
    for (auto c : gpu_cols) total[k] += parsers::topo_nvlinks(gpus[k]->links[c]);
    most = std::max(most, total[k]);
  }
  if (gpu_cols.size() < 2) {
    nv.status = Status::skip;
    nv.title = fmt::format("{} GPU in the matrix: no pair of GPUs to hold NVLinks between", gpu_cols.size());
  } else if (most == 0) {
    nv.status = Status::skip;
    nv.title = cut + fmt::format("no NVLink between the {} GPUs of the matrix (PCIe only)", gpus.size());
  } else if (gpus.size() < 2) {
    // One GPU's row: its sum has no peer row to be held against.
    nv.status = Status::skip;
    nv.title = fmt::format("one GPU row ({}) of the matrix's {} GPUs: no other GPU's NVLinks to compare it with", gpus.front()->name, gpu_cols.size());
  } else {
    // "NV18 x7": the bonded sets to its peers, as the matrix prints them. The sum of the cells
    // ranks the GPUs but is no link count: through NVSwitch every cell is the GPU's whole
    // count (an H100 has 18 links, not 7 x 18).
    std::vector<std::string> described(gpus.size());
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      std::map<std::string, int> cells;
      for (auto c : gpu_cols)
        if (parsers::topo_nvlinks(gpus[k]->links[c]) > 0) ++cells[gpus[k]->links[c]];
      std::vector<std::string> sets;
      sets.reserve(cells.size());
      for (const auto& [cell, n] : cells) sets.push_back(fmt::format("{} x{}", cell, n));
      described[k] = sets.empty() ? "no NVLink" : join(sets);
    }
    std::size_t best = 0;
    for (std::size_t k = 0; k < gpus.size(); ++k)
      if (total[k] == most) {
        best = k;
        break;
      }
    std::vector<std::string> low;
    for (std::size_t k = 0; k < gpus.size(); ++k) {
      nv.add(fmt::format("{}:{}", source, gpus[k]->line),
             fmt::format("{}: {} (the per-peer cells sum to {})", gpus[k]->name, described[k], total[k]), std::to_string(most));
      nv.metric("nvlinks." + gpus[k]->name, total[k]);
      if (total[k] < most) low.push_back(fmt::format("{} ({})", gpus[k]->name, described[k]));
    }
    if (!low.empty()) {
      nv.status = Status::fail;
      nv.title = cut + fmt::format("{} of {} GPUs have fewer bonded NVLinks to their peers than {}'s {}: {}", low.size(), gpus.size(),
                                   gpus[best]->name, described[best], join(low));
      nv.fix = "nvidia-smi nvlink -s on those GPUs; reset them, and if links stay down reseat the baseboard or NVLink bridge, or RMA";
      nv.impact = "collectives between those GPUs lose NVLink bandwidth or fall back to PCIe";
    } else {
      nv.status = Status::pass;
      nv.title = cut.empty() ? fmt::format("every GPU of the matrix has the same bonded NVLinks to its peers ({})", described[best])
                             : cut + fmt::format("each has the same bonded NVLinks to its peers ({}); {} not judged", described[best],
                                                 no_row.size() == 1 ? no_row.front() + " is" : fmt::format("the other {} are", no_row.size()));
    }
  }
  out.push_back(std::move(nv));
  for (auto& d : damaged_lines("gpu.topology", "pcie", source, t.damaged)) out.push_back(std::move(d));
  return out;
}

}  // namespace

std::vector<Finding> judge_gpu_snapshots(const std::vector<GpuSnapshotInput>& in) {
  // Observations of each GPU (by UUID, else bus id) in input order.
  std::vector<std::string> order;
  std::map<std::string, std::vector<Obs>> by_gpu;
  std::map<std::string, std::string> left_alone;  // GPU -> why its last source did not query it
  for (const auto& s : in) {
    // A UUID twice in one capture (anonymised captures, as telegraf's dual-2080 testdata): two
    // GPUs, told apart by their bus ids.
    std::map<std::string, int> uuids;
    for (const auto& g : s.snapshot->gpus)
      if (!g.uuid.empty()) ++uuids[g.uuid];
    for (const auto& g : s.snapshot->gpus) {
      std::string key = g.uuid.empty() ? "bus:" + bus_id(g.pci_bus_id) : g.uuid;
      if (!g.uuid.empty() && uuids[g.uuid] > 1) key += "@" + bus_id(g.pci_bus_id);
      if (!by_gpu.count(key)) order.push_back(key);
      by_gpu[key].push_back({&s.source, &g});
      left_alone.erase(key);
      if (s.not_queried) {
        auto it = s.not_queried->find(g.uuid.empty() ? g.pci_bus_id : g.uuid);
        if (it != s.not_queried->end())
          left_alone[key] = it->second + (s.not_queried_hint.empty() ? "" : ": " + s.not_queried_hint);
      }
    }
  }
  // Two different GPUs at one bus id (captures of several nodes): the subject names the input.
  std::map<std::string, int> at_bus;
  for (const auto& k : order) ++at_bus[where_is(*by_gpu[k].back().g)];
  // Same-model peers' best NVLink count.
  std::map<std::string, int> best_up;
  for (const auto& k : order) {
    const auto& g = *by_gpu[k].back().g;
    if (!g.nvlinks) continue;
    int up = static_cast<int>(
        std::count_if(g.nvlinks->begin(), g.nvlinks->end(), [](const parsers::GpuNvLink& l) { return l.up.value_or(false); }));
    best_up[g.name] = std::max(best_up[g.name], up);
  }
  std::vector<Finding> out;
  for (const auto& k : order) {
    const auto& o = by_gpu[k];
    std::string bus = where_is(*o.back().g);
    std::string subject = at_bus[bus] > 1 ? *o.back().source + ":" + bus : bus;
    out.push_back(persistence(o, subject));
    if (auto it = left_alone.find(k); it != left_alone.end()) {
      static const std::pair<const char*, const char*> kLeftAlone[] = {
          {"gpu.clocks", "gpu"}, {"gpu.ecc", "gpu"}, {"gpu.pcie", "pcie"}, {"gpu.nvlink", "gpu"}, {"gpu.fabric", "gpu"}, {"gpu.mig", "gpu"}};
      for (const auto& [id, layer] : kLeftAlone) {
        Finding f = make(id, layer, subject);
        f.status = Status::skip;
        f.title = who(*o.back().g) + ": not queried, " + it->second;
        out.push_back(std::move(f));
      }
      continue;
    }
    out.push_back(clocks(o, subject));
    out.push_back(ecc(o, subject));
    out.push_back(pcie(o, subject));
    out.push_back(nvlink(o, subject, best_up[o.back().g->name]));
    out.push_back(fabric(o, subject));
    out.push_back(mig(o, subject));
  }
  return out;
}

std::vector<Finding> analyze_nvidia_smi(const std::vector<NvidiaSmiInput>& in) {
  // nvlink -s gives the NVLink state of GPUs that -q or -q -x (which have none) describe: it is
  // added to each GPU of the same UUID in the captures taken with it; its GPUs that no capture
  // describes are judged for gpu.nvlink alone.
  std::map<std::string, const parsers::GpuFacts*> links;
  for (const auto& i : in)
    if (i.capture->kind == parsers::NvidiaSmi::Kind::nvlink)
      for (const auto& g : i.capture->query.gpus) links[g.uuid] = &g;
  std::vector<parsers::GpuSnapshot> with_links;
  with_links.reserve(in.size());
  std::set<std::string> described;
  std::vector<GpuSnapshotInput> queries;
  for (const auto& i : in) {
    if (i.capture->kind != parsers::NvidiaSmi::Kind::query) continue;
    const parsers::GpuSnapshot* snap = &i.capture->query;
    if (!links.empty()) {
      with_links.push_back(*snap);
      for (auto& g : with_links.back().gpus)
        if (auto it = links.find(g.uuid); it != links.end() && !g.nvlinks) {
          g.nvlinks = it->second->nvlinks;
          described.insert(g.uuid);
        }
      snap = &with_links.back();
    }
    queries.push_back({i.source, snap, nullptr, {}});
  }
  std::vector<Finding> out = judge_gpu_snapshots(queries);
  // A capture of fewer GPUs than it says are attached (nvidia-smi -i, or a trimmed file): the
  // others were not judged, which no per-GPU finding can say.
  for (const auto& q : queries) {
    const auto& snap = *q.snapshot;
    if (!snap.attached_gpus || static_cast<std::size_t>(*snap.attached_gpus) <= snap.gpus.size()) continue;
    Finding f = make("gpu.nvml", "gpu", q.source);
    f.status = Status::warn;
    f.title = fmt::format("the capture describes {} of its {} attached GPUs: the other {} were not judged", snap.gpus.size(),
                          *snap.attached_gpus, static_cast<std::size_t>(*snap.attached_gpus) - snap.gpus.size());
    f.add(q.source, fmt::format("attached_gpus {}, {} GPU block{}", *snap.attached_gpus, snap.gpus.size(), snap.gpus.size() == 1 ? "" : "s"),
          "one block per attached GPU");
    f.fix = "capture every GPU of the node: nvidia-smi -q -x (without -i)";
    f.impact = "a throttled, ECC-failing or MIG-split GPU among the others would go unseen";
    out.push_back(std::move(f));
  }
  std::vector<parsers::GpuSnapshot> link_only;
  link_only.reserve(in.size());
  std::vector<GpuSnapshotInput> nvlinks;
  for (const auto& i : in) {
    if (i.capture->kind != parsers::NvidiaSmi::Kind::nvlink) continue;
    link_only.push_back(i.capture->query);
    auto& gpus = link_only.back().gpus;
    gpus.erase(std::remove_if(gpus.begin(), gpus.end(), [&](const parsers::GpuFacts& g) { return described.count(g.uuid) > 0; }), gpus.end());
    nvlinks.push_back({i.source, &link_only.back(), nullptr, {}});
  }
  for (auto& f : judge_gpu_snapshots(nvlinks))
    if (f.id == "gpu.nvlink") out.push_back(std::move(f));
  for (const auto& i : in)
    if (i.capture->kind == parsers::NvidiaSmi::Kind::topo)
      for (auto& f : topology(i.capture->topo, i.source)) out.push_back(std::move(f));
  // An NCCL topology file given with the matrix is compared with it (the first matrix: one node).
  const NvidiaSmiInput* matrix = nullptr;
  for (const auto& i : in)
    if (!matrix && i.capture->kind == parsers::NvidiaSmi::Kind::topo) matrix = &i;
  // The node's GPU bus ids, where -q captures came with the matrix (topo -m prints none).
  std::set<std::string> node_gpu_bus_ids;
  for (const auto& i : in)
    if (i.capture->kind == parsers::NvidiaSmi::Kind::query)
      for (const auto& g : i.capture->query.gpus)
        if (!g.pci_bus_id.empty()) node_gpu_bus_ids.insert(bus_id(g.pci_bus_id));
  for (const auto& i : in) {
    if (i.capture->kind != parsers::NvidiaSmi::Kind::nccl_topo) continue;
    if (matrix) {
      out.push_back(judge_topology_file(matrix->capture->topo, matrix->source, i.capture->nccl_topo, i.source, node_gpu_bus_ids));
    } else {
      Finding f = make("gpu.topology_file", "pcie", i.source);
      f.status = Status::skip;
      f.title = "an NCCL topology file alone: give the same node's nvidia-smi topo -m with it to compare";
      out.push_back(std::move(f));
    }
  }
  return out;
}

}  // namespace perfgap::analyzers
