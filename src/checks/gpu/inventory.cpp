// gpu.inventory: the NVIDIA driver sees every GPU on PCI (count, models, driver version), and a
// container sees the GPUs its job names. Reads /sys and /proc/driver/nvidia only: never an
// NVML/CUDA call, never open() of a GPU device node.
#include <fmt/format.h>

#include <algorithm>
#include <map>
#include <set>

#include "checks/util.hpp"
#include "facts/platform.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

std::string join_listed(const std::vector<std::string>& items, std::size_t max = 8) {
  std::string out;
  for (std::size_t i = 0; i < items.size() && i < max; ++i) out += (i ? ", " : "") + items[i];
  if (items.size() > max) out += fmt::format(" and {} more", items.size() - max);
  return out;
}

// ---- gpu.inventory -----------------------------------------------------------------------
// Comma-separated entries of a *_VISIBLE_DEVICES value; nullopt for "all"/"none"/"void"/"".
std::optional<std::vector<std::string>> visible_entries(std::string_view value) {
  auto v = sys::trim_ws(value);
  auto lv = sys::lower(v);
  if (lv.empty() || lv == "all" || lv == "none" || lv == "void" || lv == "nodevfiles") return std::nullopt;
  std::vector<std::string> out;
  for (auto e : sys::split(v, ','))
    if (auto t = sys::trim_ws(e); !t.empty()) out.emplace_back(t);
  return out;
}

// GPUs the driver lists that PCI did not identify. The PCI facts keep devices whose vendor file
// was read: which of the two files is missing is not known here (hwloc's trees keep class and
// drop vendor).
std::string identity_unread_text(const std::vector<std::string>& bdfs) {
  return "not identified as NVIDIA GPUs there (a vendor or class file missing or unreadable) for " + join_listed(bdfs) +
         ": counted because the driver lists them";
}

// Of `bdfs`, those whose driver link names nvidia: without the driver's GPU list, each GPU's
// driver link still says whether nvidia took it.
std::vector<std::string> bound_to_nvidia(facts::Facts& f, const std::vector<std::string>& bdfs) {
  std::vector<std::string> bound;
  for (const auto& b : bdfs)
    if (facts::pci_driver(f, b) == "nvidia") bound.push_back(b);
  return bound;
}

std::vector<Finding> gpu_inventory(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "gpu.inventory", layer = layer::gpu;
  const auto& pci = f.pci();
  if (!pci) return {core::finding(id, layer, Status::skip, "PCI devices not readable: " + pci.error())};
  std::vector<std::string> pci_gpus;
  std::map<std::string, std::uint32_t> device_id;
  std::map<std::string, int> numa_of;  // the NUMA node each GPU sits on, where the kernel says one
  for (const auto& d : *pci)
    if (d.is_gpu()) {
      pci_gpus.push_back(d.bdf);
      device_id[d.bdf] = d.device;
      if (d.numa_node && *d.numa_node >= 0) numa_of[d.bdf] = *d.numa_node;
    }
  const auto& drv = facts::driver_gpus(f);
  // A GPU the driver lists is a GPU on PCI even when its PCI identity files were not
  // captured (hwloc's trees keep only some attributes).
  std::vector<std::string> identity_unread;
  for (const auto& g : drv.gpus)
    if (std::find(pci_gpus.begin(), pci_gpus.end(), g.bdf) == pci_gpus.end()) {
      pci_gpus.push_back(g.bdf);
      identity_unread.push_back(g.bdf);
    }
  std::sort(pci_gpus.begin(), pci_gpus.end());
  if (pci_gpus.empty() && (!drv.listed || drv.gpus.empty()))
    return {core::finding(id, layer, Status::skip, "no NVIDIA GPU on PCI (vendor 0x10de, class 0x0300/0x0302)")};
  const auto& driver = facts::nvidia_driver(f);
  const auto version = driver ? driver->version : std::nullopt;
  const auto container = f.container();
  const bool in_container = container != "none" && container != "unknown";

  // The visible GPUs (shared definition): the driver's list where it exists, else PCI.
  std::vector<std::string> visible;
  std::map<std::string, int> models;
  std::set<std::string> visible_uuids;
  if (drv.listed) {
    for (const auto& g : drv.gpus) {
      visible.push_back(g.bdf);
      ++models[g.model.empty() ? std::string("NVIDIA GPU (model not read)") : g.model];
      if (g.uuid) visible_uuids.insert(*g.uuid);
    }
  } else {
    visible = pci_gpus;
    for (const auto& b : pci_gpus) ++models[fmt::format("NVIDIA 10de:{:04x}", device_id[b])];
  }
  std::string model_text;
  for (const auto& [m, n] : models) model_text += fmt::format("{}{} x {}", model_text.empty() ? "" : ", ", n, m);

  auto out = core::finding(id, layer, Status::pass, "");
  out.add("/sys/bus/pci/devices", fmt::format("{} GPU(s) on PCI: {}", pci_gpus.size(), join_listed(pci_gpus)));
  if (!identity_unread.empty()) out.add("/sys/bus/pci/devices/*/{vendor,class}", identity_unread_text(identity_unread));
  out.add("/proc/driver/nvidia/gpus", drv.listed ? fmt::format("{} listed: {}", drv.gpus.size(), join_listed(visible)) : "not readable: " + drv.error);
  out.add("/proc/driver/nvidia/version", version ? *version : std::string("not readable"));
  out.add("container", container);
  out.metric("gpus_pci", static_cast<double>(pci_gpus.size()));
  out.metric("gpus_visible", static_cast<double>(visible.size()));
  // Per GPU, so that expect learns which socket each GPU of a kind sits on.
  for (const auto& [bdf, node] : numa_of) out.metric("numa_node." + bdf, node);
  const std::string driver_text = version ? ", driver " + *version : ", driver version unknown";

  if (in_container) {
    std::vector<std::string> problems;
    for (const auto& [k, v] : f.audited_env()) {
      if (k != "NVIDIA_VISIBLE_DEVICES" && k != "CUDA_VISIBLE_DEVICES") continue;
      auto entries = visible_entries(v);
      if (!entries) continue;
      out.add(f.audited_env_source() + " " + k, v, fmt::format("at most {} GPU(s)", visible.size()));
      if (entries->size() > visible.size()) {
        problems.push_back(fmt::format("{} names {} GPUs but {} visible", k, entries->size(), visible.size()));
        continue;
      }
      if (k != "CUDA_VISIBLE_DEVICES") continue;  // NVIDIA_VISIBLE_DEVICES uses the host's numbering
      for (const auto& e : *entries) {
        if (auto idx = sys::to_int<int>(e)) {
          if (*idx < 0 || *idx >= static_cast<int>(visible.size()))
            problems.push_back(fmt::format("CUDA_VISIBLE_DEVICES names GPU {} but only {} visible", e, visible.size()));
        } else if (sys::starts_with(e, "GPU-") && !visible_uuids.empty()) {
          bool found = false;
          for (const auto& u : visible_uuids) found = found || sys::starts_with(u, e);
          if (!found) problems.push_back("CUDA_VISIBLE_DEVICES names " + e + ", which is not among the visible GPUs");
        }
      }
    }
    if (!problems.empty()) {
      out.status = Status::fail;
      out.title = "the job asks for more GPUs than the container sees: " + problems.front();
      for (std::size_t i = 1; i < problems.size() && i < 4; ++i) out.title += "; " + problems[i];
      out.fix = "Launch the container with the GPUs the job expects (--gpus / NVIDIA_VISIBLE_DEVICES, the Slurm/pyxis "
                "allocation), or set CUDA_VISIBLE_DEVICES to indices of the GPUs visible inside (0..N-1).";
      out.impact = "CUDA stops at the first GPU it cannot find: ranks fail to start or share GPUs.";
      return {out};
    }
    out.title = fmt::format("{} GPU(s) visible in this {} container ({} on PCI): {}{}", visible.size(), container,
                            pci_gpus.size(), model_text, driver_text);
    return {out};
  }

  // Outside a container: every GPU on PCI should be the driver's, except those given to VMs.
  std::vector<std::string> assigned, expected;
  for (const auto& b : pci_gpus) (facts::pci_driver(f, b) == "vfio-pci" ? assigned : expected).push_back(b);
  if (!assigned.empty()) out.add("/sys/bus/pci/devices/*/driver", "vfio-pci (assigned to VMs): " + join_listed(assigned));
  std::set<std::string> listed;
  for (const auto& g : drv.gpus) listed.insert(g.bdf);
  std::vector<std::string> unseen;
  for (const auto& b : expected)
    if (!listed.count(b)) unseen.push_back(b);
  if (!unseen.empty() && !drv.listed && !f.absence_is_real()) {
    const auto bound = bound_to_nvidia(f, unseen);
    if (!bound.empty()) out.add("/sys/bus/pci/devices/*/driver", "nvidia: " + join_listed(bound));
    if (bound.size() == unseen.size()) {
      out.title = fmt::format("{} GPU(s): {}{} (each bound to the nvidia driver; its GPU list not captured)", expected.size(), model_text,
                              driver_text);
      return {out};
    }
    out.status = Status::skip;
    out.title = fmt::format("{} GPU(s) on PCI, but the NVIDIA driver's GPU list was not captured ({}): whether the driver sees them is unknown",
                            expected.size(), drv.error);
    return {out};
  }
  if (!unseen.empty()) {
    const std::size_t seen = expected.size() - unseen.size();
    if (container != "none") {
      out.status = Status::skip;
      out.title = fmt::format("the NVIDIA driver lists {} of {} GPUs on PCI, and whether this runs in a container (where "
                              "that is expected) is unknown", seen, expected.size());
      return {out};
    }
    out.status = Status::fail;
    out.title = drv.listed ? fmt::format("the NVIDIA driver sees {} of {} GPUs on PCI (missing: {})", seen, expected.size(), join_listed(unseen))
                           : fmt::format("the NVIDIA driver sees none of the {} GPUs on PCI ({})", expected.size(), drv.error);
    for (const auto& b : unseen) {
      auto d = facts::pci_driver(f, b);
      out.add("/sys/bus/pci/devices/" + b + "/driver", d.empty() ? "none bound" : d, "nvidia");
    }
    out.fix = "Find why the driver did not take the GPU: the kernel log (NVRM: 'GPU has fallen off the bus', "
              "'RmInitAdapter failed', Xid 79), `nvidia-smi -L`; reset or reseat the GPU, update its firmware, or load the "
              "driver (nvidia-persistenced, modprobe nvidia). A GPU excluded on purpose belongs in the allocation config.";
    out.impact = fmt::format("{} of {} GPUs unusable: jobs sized for the node fail or run with fewer ranks.", unseen.size(), expected.size());
    return {out};
  }
  if (expected.empty() && !assigned.empty()) {
    out.title = fmt::format("{} GPU(s) on PCI, all assigned to VMs (vfio-pci)", pci_gpus.size());
    return {out};
  }
  out.title = fmt::format("{} GPU(s): {}{}", expected.size(), model_text, driver_text);
  return {out};
}

}  // namespace

void add_gpu_inventory(core::Registry& r) {
  r.add({.id = "gpu.inventory",
         .layer = layer::gpu,
         .summary = "the NVIDIA driver sees every GPU on PCI (count, models, driver version)",
         .rule = "`pass` with the count, models and driver version. Outside a container: `fail` when the driver (/proc/driver/nvidia/gpus) lists fewer GPUs than PCI has (GPUs bound to vfio-pci excepted). Inside one: `fail` when NVIDIA_VISIBLE_DEVICES or CUDA_VISIBLE_DEVICES name more GPUs than are visible (or a CUDA index/UUID that is not). `skip` without GPUs, or when fewer are listed and whether this is a container is unknown. Reads /sys and /proc/driver/nvidia only; never initialises a GPU.",
         .fix = "Find why the driver lost the GPU (kernel log NVRM/Xid 79, nvidia-smi -L), reset/reseat it; in containers, match the allocation and CUDA_VISIBLE_DEVICES.",
         .reads = reads::of({reads::pci(), reads::pci_driver(), reads::driver_gpus(), reads::nvidia_driver_version(),
                             reads::audited_env(), reads::container()}),
         .params = {},
         .run = gpu_inventory});
}

}  // namespace perfgap::checks
