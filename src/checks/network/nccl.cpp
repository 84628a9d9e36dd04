// network layer, NCCL settings: what the environment and NCCL's config files switch off,
// force or select, GPUDirect RDMA availability, and QPs per connection on fast ports.
// Settings are read as NCCL reads them (facts/nccl.hpp): environment first, then the files.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cstdlib>

#include "analyzers/nccl_env.hpp"
#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "facts/nccl.hpp"
#include "facts/platform.hpp"
#include "report/redact.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {

namespace {

// ---- nccl.env.disabled_paths -------------------------------------------------------------
std::vector<Finding> disabled_paths(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "nccl.env.disabled_paths";
  const auto& c = facts::nccl_config(f);
  const auto& ib = facts::infiniband(f);
  const bool rdma = !ib || !ib->empty();  // unknown counts as present: the setting is suspect either way
  bool nvswitch = false;
  if (const auto& pci = f.pci())
    for (const auto& d : *pci)
      if (d.vendor == 0x10de && (d.class_code >> 8) == 0x0680) nvswitch = true;
  auto out = core::finding(id, layer::network, Status::pass, "");
  std::vector<std::string> off;
  auto flag = [&](const facts::NcclSetting& s, const std::string& name, const std::string& cost, const std::string& expected) {
    off.push_back(name + "=" + shown(name, s.value) + " (" + cost + ")");
    out.add(s.source, name + "=" + shown(name, s.value), expected);
  };
  auto note = [&](const facts::NcclSetting& s, const std::string& name, const std::string& why) {
    out.add(s.source, name + "=" + shown(name, s.value) + ": " + why);
  };
  for (const auto& sw : facts::nccl_fast_path_switches()) {
    auto s = c.active(sw.name);
    if (!s || !sw.switches_off(s->value)) continue;
    const std::string name(sw.name);
    const bool costs = sw.costs == facts::NcclFastPathSwitch::Costs::always ||
                       (sw.costs == facts::NcclFastPathSwitch::Costs::with_rdma ? rdma : nvswitch);
    if (costs) flag(*s, name, std::string(sw.cost), std::string(sw.expected));
    else note(*s, name, std::string(sw.free_why));
  }
  if (off.empty()) {
    out.title = "no NCCL setting switches off a fast path";
    if (out.evidence.empty())
      out.add(f.audited_env_source() + ", NCCL config files", std::string(f.audited_env_error().empty() ? "" : "environment not readable; config files: ") + "none of NCCL_P2P_DISABLE, NCCL_P2P_LEVEL=LOC, NCCL_SHM_DISABLE, NCCL_IB_DISABLE, NCCL_NET=Socket, NCCL_NVLS_ENABLE=0, NCCL_NET_GDR_LEVEL=LOC");
    return {out};
  }
  out.status = Status::fail;
  std::string list;
  for (const auto& o : off) list += (list.empty() ? "" : "; ") + o;
  out.title = fmt::format("{} NCCL setting{} switch{} off fast paths: {}", off.size(), off.size() == 1 ? "" : "s", off.size() == 1 ? "es" : "", list);
  out.fix = "Remove these settings from the job environment, the image (ENV), /etc/nccl.conf, ~/.nccl.conf or NCCL_CONF_FILE; they are debugging switches, not tuning.";
  out.impact = "each one moves traffic off NVLink, shared memory or RDMA onto slower paths";
  return {out};
}

// ---- nccl.env.forced ---------------------------------------------------------------------
std::vector<Finding> forced(facts::Facts& f, const core::Thresholds&) {
  return {analyzers::judge_nccl_forced(facts::nccl_config(f), f.audited_env_source() + ", NCCL config files",
                                       f.audited_env_error().empty() ? "" : "environment not readable; config files: ")};
}

// ---- nccl.env.devices --------------------------------------------------------------------
std::string list_text(const std::vector<std::string>& v, std::size_t max = 6) {
  std::string s;
  for (std::size_t i = 0; i < v.size() && i < max; ++i) s += (i ? ", " : "") + v[i];
  if (v.size() > max) s += fmt::format(" and {} more", v.size() - max);
  return s;
}

Finding ib_hca(facts::Facts& f, const facts::NcclSetting& s) {
  constexpr std::string_view id = "nccl.env.devices";
  auto out = core::finding(id, layer::network, Status::pass, "");
  out.subject = "NCCL_IB_HCA";
  out.add(s.source, "NCCL_IB_HCA=" + s.value);
  const auto& ib = facts::infiniband(f);
  if (!ib) {
    out.status = Status::skip;
    out.title = "NCCL_IB_HCA=" + s.value + " but the RDMA devices here are unknown: " + ib.error();
    return out;
  }
  auto list = parsers::parse_nccl_if_list(s.value);
  std::vector<std::string> here, selected;
  for (const auto& d : *ib)
    for (const auto& p : d.ports) {
      here.push_back(d.name + ":" + std::to_string(p.port));
      if (parsers::nccl_if_match(list, d.name, p.port) != list.exclude) selected.push_back(d.name + ":" + std::to_string(p.port));
    }
  out.add("/sys/class/infiniband", here.empty() ? "no RDMA port" : list_text(here, 12));
  std::vector<std::string> dead;
  if (!list.exclude) {
    for (const auto& e : list.entries) {
      parsers::NcclIfList one{false, list.exact, {e}};
      bool hit = false;
      for (const auto& d : *ib)
        for (const auto& p : d.ports) hit = hit || parsers::nccl_if_match(one, d.name, p.port);
      if (!hit) dead.push_back(e.prefix + (e.port >= 0 ? ":" + std::to_string(e.port) : ""));
    }
  }
  out.add("NCCL's selection", selected.empty() ? "no port" : list_text(selected, 12));
  const std::string how = std::string(list.exclude ? "excludes" : "selects") + (list.exact ? " by exact name" : " by name prefix");
  if (!dead.empty()) {
    out.status = Status::fail;
    out.title = fmt::format("NCCL_IB_HCA={} {}; no RDMA device or port here matches {}", s.value, how, list_text(dead));
  } else if (selected.empty()) {
    out.status = Status::fail;
    if (list.exclude && list.entries.empty())
      out.title = "NCCL_IB_HCA=" + s.value + " is an exclusion list with no usable entry: it excludes every RDMA device";
    else if (here.empty())
      out.title = "NCCL_IB_HCA=" + s.value + " selects RDMA devices, but there are none here";
    else
      out.title = "NCCL_IB_HCA=" + s.value + " leaves no RDMA port selected";
  } else {
    out.title = list.entries.empty() && !list.exclude
                    ? "NCCL_IB_HCA=" + s.value + " has no usable entry, so NCCL uses every RDMA device (" + list_text(selected) + ")"
                    : "NCCL_IB_HCA=" + s.value + " " + how + ": " + list_text(selected);
    return out;
  }
  out.fix = "Name devices that exist on this node (see /sys/class/infiniband, ibv_devices): NCCL_IB_HCA=mlx5_0,mlx5_1 (prefixes), =mlx5_0:1 (exact, port 1), ^mlx5_4 (exclude); keep the value the same across node types only when their device names match.";
  out.impact = "with no usable HCA NCCL finds no IB device and falls back to TCP sockets, or uses fewer NICs than the node has";
  return out;
}

Finding socket_ifname(facts::Facts& f, const facts::NcclSetting& s) {
  constexpr std::string_view id = "nccl.env.devices";
  auto out = core::finding(id, layer::network, Status::pass, "");
  out.subject = "NCCL_SOCKET_IFNAME";
  out.add(s.source, "NCCL_SOCKET_IFNAME=" + s.value);
  const auto& names = facts::net_interfaces(f);
  if (!names) {
    out.status = Status::skip;
    out.title = "NCCL_SOCKET_IFNAME=" + s.value + " but the interfaces here are unknown: " + names.error();
    return out;
  }
  auto list = parsers::parse_nccl_if_list(s.value);
  std::vector<std::string> selected, dead;
  for (const auto& n : *names)
    if (parsers::nccl_if_match(list, n, -1) != list.exclude) selected.push_back(n);
  out.add("/sys/class/net", names->empty() ? "no interface" : list_text(*names, 12));
  if (!list.exclude)
    for (const auto& e : list.entries) {
      parsers::NcclIfList one{false, list.exact, {e}};
      if (std::none_of(names->begin(), names->end(), [&](const auto& n) { return parsers::nccl_if_match(one, n, -1); })) dead.push_back(e.prefix);
    }
  const std::string how = std::string(list.exclude ? "excludes" : "selects") + (list.exact ? " by exact name" : " by name prefix");
  if (!dead.empty()) {
    out.status = Status::fail;
    out.title = fmt::format("NCCL_SOCKET_IFNAME={} {}; no interface here matches {}", s.value, how, list_text(dead));
  } else if (selected.empty()) {
    out.status = Status::fail;
    out.title = "NCCL_SOCKET_IFNAME=" + s.value + " leaves no network interface selected";
  } else {
    out.title = "NCCL_SOCKET_IFNAME=" + s.value + " " + how + ": " + list_text(selected);
    return out;
  }
  out.fix = "Name interfaces that exist here (ip -br link): NCCL_SOCKET_IFNAME=eth0 (prefix), =eth0 (exact), ^docker,lo (exclude); container interface names often differ from the host's.";
  out.impact = "NCCL's bootstrap and socket transport find no interface: initialisation fails or picks an unintended network";
  return out;
}

std::vector<Finding> nccl_devices(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "nccl.env.devices";
  const auto& c = facts::nccl_config(f);
  std::vector<Finding> out;
  if (auto s = c.active("NCCL_IB_HCA")) out.push_back(ib_hca(f, *s));
  if (auto s = c.active("NCCL_SOCKET_IFNAME")) out.push_back(socket_ifname(f, *s));
  if (out.empty()) {
    auto fnd = core::finding(id, layer::network, Status::pass, "NCCL_IB_HCA and NCCL_SOCKET_IFNAME are unset: NCCL picks devices itself");
    fnd.add(f.audited_env_source() + ", NCCL config files", unset_text(f, "NCCL_IB_HCA, NCCL_SOCKET_IFNAME"));
    out.push_back(std::move(fnd));
  }
  return out;
}

// ---- nccl.gdr ----------------------------------------------------------------------------
std::vector<Finding> gdr(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "nccl.gdr";
  const auto& ib = facts::infiniband(f);
  if (!ib) return {core::finding(id, layer::network, Status::skip, "RDMA devices unknown: " + ib.error())};
  if (auto why = facts::rdma_not_captured(f); !why.empty()) return {core::finding(id, layer::network, Status::skip, why)};
  if (ib->empty()) return {core::finding(id, layer::network, Status::skip, "no RDMA devices (/sys/class/infiniband): GPUDirect RDMA does not apply")};
  const auto& pci = f.pci();
  if (!pci) return {core::finding(id, layer::network, Status::skip, "GPUs unknown: " + pci.error())};
  int gpus = static_cast<int>(std::count_if(pci->begin(), pci->end(), [](const auto& d) { return d.is_gpu(); }));
  if (gpus == 0) return {core::finding(id, layer::network, Status::skip, "no NVIDIA GPU on PCI: GPUDirect RDMA does not apply")};
  auto out = core::finding(id, layer::network, Status::pass, "");
  out.add("/sys/class/infiniband", fmt::format("{} RDMA device{}; {} GPU{} on PCI", ib->size(), ib->size() == 1 ? "" : "s", gpus, gpus == 1 ? "" : "s"));
  std::vector<std::string> paths;
  for (const char* mod : {"nvidia_peermem", "nv_peer_mem"}) {
    const std::string dir = std::string("/sys/module/") + mod;
    if (facts::kernel_module_loaded(f, mod)) {
      paths.push_back(std::string(mod) + " loaded");
      out.add(dir, "present");
    }
  }
  const auto& version = facts::nvidia_driver(f);
  if (version) {
    out.add("/proc/driver/nvidia/version", version->first_line);
    if (version->open_module) paths.push_back("the open kernel module's dma-buf path");
  }
  const auto& g = facts::grace(f);
  const bool grace = g && g->grace;
  const auto& c = facts::nccl_config(f);
  if (grace) {
    auto s = c.active("NCCL_NET_GDR_C2C");
    out.add(s ? s->source : f.audited_env_source() + ", NCCL config files", s ? "NCCL_NET_GDR_C2C=" + s->value : unset_text(f, "NCCL_NET_GDR_C2C"));
    if (s && parsers::nccl_int(s->value) != 0) paths.push_back("NCCL_NET_GDR_C2C=" + s->value + " on Grace");
  }
  if (!paths.empty()) {
    out.title = "GPUDirect RDMA is available: " + list_text(paths);
    return {out};
  }
  if (grace && !f.audited_env_error().empty() && !c.active("NCCL_NET_GDR_C2C")) {
    out.status = Status::skip;
    out.title = "no nvidia_peermem or dma-buf path, and whether NCCL_NET_GDR_C2C is set on this Grace node is unknown: " + f.audited_env_error();
    return {out};
  }
  if (!version) {
    out.add("/sys/module/nvidia_peermem", "absent");
    out.status = Status::skip;
    out.title = "nvidia_peermem is not loaded and the driver flavour (dma-buf support) is unknown: " + version.error();
    return {out};
  }
  out.add("/sys/module/nvidia_peermem", "absent", "loaded (or the open kernel module's dma-buf)");
  out.status = Status::warn;
  out.title = "GPUs and RDMA NICs share the node but no GPUDirect RDMA path is available (no nvidia_peermem, proprietary kernel module without dma-buf)";
  out.fix = std::string("Load nvidia_peermem (modprobe nvidia_peermem; persist it in /etc/modules-load.d/), or install the open GPU kernel modules so NCCL can use dma-buf (Linux >= 5.12, NCCL >= 2.19)") +
            (grace ? "; on Grace, NCCL_NET_GDR_C2C=1 lets NCCL use GPUDirect over C2C." : ".");
  out.impact = "NCCL stages every inter-node transfer through host memory: lower bandwidth and more CPU/PCIe load";
  return {out};
}

// ---- nccl.ib.qps -------------------------------------------------------------------------
std::vector<Finding> ib_qps(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "nccl.ib.qps";
  const double min_rate = th.get("min_rate_gbps");
  const auto& ib = facts::infiniband(f);
  if (!ib) return {core::finding(id, layer::network, Status::skip, "RDMA ports unknown: " + ib.error())};
  if (auto why = facts::rdma_not_captured(f); !why.empty()) return {core::finding(id, layer::network, Status::skip, why)};
  if (ib->empty()) return {core::finding(id, layer::network, Status::skip, "no RDMA devices (/sys/class/infiniband)")};
  auto out = core::finding(id, layer::network, Status::pass, "");
  std::vector<std::string> fast, unknown;
  double top = 0;
  for (const auto& d : *ib)
    for (const auto& p : d.ports) {
      if (p.state != "ACTIVE") continue;
      if (!p.rate_gbps) {
        unknown.push_back(d.name + ":" + std::to_string(p.port));
        continue;
      }
      top = std::max(top, *p.rate_gbps);
      if (*p.rate_gbps >= min_rate) {
        fast.push_back(d.name + ":" + std::to_string(p.port));
        if (fast.size() <= 4) out.add(p.dir + "/rate", p.rate_text, fmt::format(">= {} Gb/s", min_rate));
      }
    }
  out.metric("max_port_gbps", top);
  const auto& c = facts::nccl_config(f);
  auto s = c.active("NCCL_IB_QPS_PER_CONNECTION");
  const std::int64_t qps = s ? parsers::nccl_int(s->value) : 1;
  out.add(s ? s->source : f.audited_env_source() + ", NCCL config files",
          s ? "NCCL_IB_QPS_PER_CONNECTION=" + s->value : unset_text(f, "NCCL_IB_QPS_PER_CONNECTION", " (NCCL's default: 1)"));
  if (fast.empty()) {
    if (!unknown.empty()) {
      out.status = Status::skip;
      out.title = "active RDMA ports with an unreadable rate: " + list_text(unknown);
      return {out};
    }
    out.title = fmt::format("no active RDMA port runs at {} Gb/s or more (fastest {:.0f} Gb/s): one QP per connection is NCCL's usual choice", min_rate, top);
    return {out};
  }
  if (qps > 1) {
    out.title = fmt::format("NCCL_IB_QPS_PER_CONNECTION={} on {} port{} of {} Gb/s or more", s->value, fast.size(), fast.size() == 1 ? "" : "s", min_rate);
    return {out};
  }
  if (!s && !f.audited_env_error().empty()) {
    out.status = Status::skip;
    out.title = fmt::format("{} active port{} at {} Gb/s or more, but NCCL_IB_QPS_PER_CONNECTION is unknown: the audited environment is not readable ({})",
                            fast.size(), fast.size() == 1 ? "" : "s", min_rate, f.audited_env_error());
    return {out};
  }
  out.status = Status::warn;
  out.title = fmt::format("{} active port{} at {} Gb/s or more ({}) with NCCL_IB_QPS_PER_CONNECTION {}: sweep it", fast.size(),
                          fast.size() == 1 ? "" : "s", min_rate, list_text(fast, 4), s ? "=" + s->value : "unset (1)");
  out.fix = "Measure, do not guess: perfgap sweep --env NCCL_IB_QPS_PER_CONNECTION=" + std::string(s ? s->value : "unset") +
            ",2,4,8 --sizes 1M,64M,1G -- all_gather_perf -b 1M -e 1G -f 2 -g 8 (at the workload's message sizes and scale), and keep the value only where it beats the baseline.";
  out.impact = "on 1.6 Tb/s ConnectX-8 nodes, 1 QP per connection left iterations at 1.09 s instead of 0.83 s (AllGather 375 -> 262 ms at 512 GPUs) in the public case";
  return {out};
}

}  // namespace

void add_network_nccl(core::Registry& r) {
  r.add({.id = "nccl.env.disabled_paths",
         .layer = layer::network,
         .summary = "no NCCL setting switches off NVLink P2P, shared memory, RDMA, NVLS or GPUDirect",
         .rule = "Settings as NCCL reads them (audited environment, else NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf; empty values ignored, integers as strtoll reads them). `fail` for NCCL_P2P_DISABLE!=0, NCCL_P2P_LEVEL=LOC, NCCL_SHM_DISABLE!=0, NCCL_IB_DISABLE!=0 or NCCL_NET=Socket on a node with RDMA devices, NCCL_NVLS_ENABLE=0 with an NVSwitch PCI function (vendor 0x10de, class 0x0680), NCCL_NET_GDR_LEVEL/NCCL_IB_GDR_LEVEL=LOC; each named with its cost. Without a readable audited environment (/proc/self/environ) a `pass` becomes `skip` (a variable may be set there); a bad value in a config file still counts.",
         .fix = "Remove the setting from the job, the image, or NCCL's config files.",
         .reads = reads::of({reads::nccl_config(), reads::infiniband(), reads::pci()}),
         .params = {},
         .run = [](facts::Facts& f, const core::Thresholds& th) { return unless_env_unread(f, disabled_paths(f, th)); }});
  r.add({.id = "nccl.env.forced",
         .layer = layer::network,
         .summary = "NCCL's algorithm, protocol, channel and buffer tuning is not forced",
         .rule = "`warn` when NCCL_ALGO, NCCL_PROTO, NCCL_MIN_NCHANNELS, NCCL_MAX_NCHANNELS or NCCL_BUFFSIZE is set (non-empty), or NCCL_DEBUG is INFO/TRACE with NCCL_DEBUG_SUBSYS including ALL: forced settings override NCCL's tuning; verify with a sweep. Without a readable audited environment (/proc/self/environ) a `pass` becomes `skip` (a variable may be set there); a bad value in a config file still counts.",
         .fix = "perfgap sweep the setting against unset; drop what does not win.",
         .reads = reads::nccl_config(),
         .params = {},
         .run = [](facts::Facts& f, const core::Thresholds& th) { return unless_env_unread(f, forced(f, th)); }});
  r.add({.id = "nccl.env.devices",
         .layer = layer::network,
         .summary = "NCCL_IB_HCA and NCCL_SOCKET_IFNAME name devices that exist here",
         .rule = "NCCL's list syntax: comma list, names match as prefixes unless the list starts with '=' (exact; after an optional leading '^', which makes it an exclusion list), ':port' selects an RDMA port, an empty list means every device. Per variable (subject: its name): `fail` when a selecting entry matches no RDMA device/port (/sys/class/infiniband) or interface (/sys/class/net), or when nothing is left selected (e.g. '^=:,,' excludes everything). `pass` when both are unset. Without a readable audited environment (/proc/self/environ) a `pass` becomes `skip` (a variable may be set there); a bad value in a config file still counts.",
         .fix = "Name devices present on this node (ibv_devices, ip -br link).",
         .reads = reads::of({reads::nccl_config(), reads::infiniband(), reads::net_interfaces()}),
         .params = {},
         .run = [](facts::Facts& f, const core::Thresholds& th) { return unless_env_unread(f, nccl_devices(f, th)); }});
  r.add({.id = "nccl.gdr",
         .layer = layer::network,
         .summary = "GPUDirect RDMA is available where GPUs and RDMA NICs share the node",
         .rule = "With RDMA devices and NVIDIA GPUs on PCI: `pass` when /sys/module/nvidia_peermem (or nv_peer_mem) is loaded, the driver is the open kernel module (dma-buf; /proc/driver/nvidia/version says \"Open Kernel Module\"), or on Grace NCCL_NET_GDR_C2C is set non-zero; `warn` when none is; `skip` without RDMA devices or GPUs, or when the driver version is unreadable and nvidia_peermem is absent."
                 " In a tree from elsewhere without /sys/class/infiniband, `skip` says RDMA devices were not captured where PCI shows an RDMA-capable NIC (NVIDIA/Mellanox network class, InfiniBand class, Amazon EFA; named) or is unreadable, instead of \"no RDMA devices\".",
         .fix = "modprobe nvidia_peermem (persisted), or the open GPU kernel modules for dma-buf.",
         .reads = reads::of({reads::infiniband(), reads::pci(), reads::nccl_config(), reads::grace(),
                             reads::nvidia_driver_version(), reads::kernel_modules()}),
         .params = {},
         .run = gdr});
  r.add({.id = "nccl.ib.qps",
         .layer = layer::network,
         .summary = "QPs per connection are measured, not left at 1, on ports of 400 Gb/s and more",
         .rule = "`warn` when an ACTIVE RDMA port's rate is at least min_rate_gbps (400) and NCCL_IB_QPS_PER_CONNECTION is unset or 1: sweep it (1, 2, 4, 8) at the workload's message sizes with perfgap sweep; never a blind fix. `pass` when it is above 1 or no port is that fast; `skip` without RDMA devices."
                 " In a tree from elsewhere without /sys/class/infiniband, `skip` says RDMA devices were not captured where PCI shows an RDMA-capable NIC (NVIDIA/Mellanox network class, InfiniBand class, Amazon EFA; named) or is unreadable, instead of \"no RDMA devices\".",
         .fix = "perfgap sweep --env NCCL_IB_QPS_PER_CONNECTION=1,2,4,8 -- <benchmark>.",
         .reads = reads::of({reads::infiniband(), reads::nccl_config(), reads::pci(), reads::net_interfaces()}),
         .params = {{"min_rate_gbps", 400, "port rate (Gb/s) from which one QP per connection is worth a sweep"}},
         .run = ib_qps});
}

}  // namespace perfgap::checks
