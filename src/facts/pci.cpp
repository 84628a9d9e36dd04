// PCI devices and the GPUs visible here (shared/spec/checks.md "Shared definitions").
#include <algorithm>

#include "facts/facts.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {
namespace {

std::optional<std::uint32_t> read_hex(const sys::Sysroot& root, const std::string& path) {
  auto v = root.read_value(path);
  if (!v) return std::nullopt;
  std::string_view s = *v;
  if (sys::starts_with(s, "0x")) s.remove_prefix(2);
  std::uint32_t out = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), out, 16);
  if (ec != std::errc() || p != s.data() + s.size() || s.empty()) return std::nullopt;
  return out;
}

// "../../../devices/pci0000:ad/0000:ad:01.0/0000:ae:00.0" -> {"pci0000:ad", "0000:ad:01.0",
// "0000:ae:00.0"}; empty unless the link ends at `bdf` under a host bridge.
std::vector<std::string> pci_path_of(std::string_view link, const std::string& bdf) {
  std::vector<std::string> path;
  for (auto part : sys::split(link, '/')) {
    if (sys::starts_with(part, "pci")) path.clear();
    if (sys::starts_with(part, "pci") || (part.size() == 12 && part[4] == ':' && part[7] == ':' && part[10] == '.'))
      path.push_back(sys::lower(std::string(part)));
    else if (!path.empty()) path.clear();  // anything else after the host bridge: not a device path
  }
  if (path.size() < 2 || !sys::starts_with(path.front(), "pci") || path.back() != bdf) return {};
  return path;
}

}  // namespace

Avail<std::vector<PciDevice>> read_pci(const sys::Sysroot& root) {
  const std::string dir = "/sys/bus/pci/devices";
  auto names = root.list(dir);
  if (!names) return missing(describe(names.error()));
  std::vector<PciDevice> out;
  for (const auto& bdf : *names) {
    auto base = dir + "/" + bdf;
    PciDevice d;
    d.bdf = sys::lower(bdf);
    auto vendor = read_hex(root, base + "/vendor");
    if (!vendor) continue;
    d.vendor = *vendor;
    d.class_code = read_hex(root, base + "/class").value_or(0);
    d.device = read_hex(root, base + "/device").value_or(0);
    // Locality is read for the devices the checks place: NVIDIA GPUs/switches and NICs.
    if (d.vendor == 0x10de || d.vendor == 0x15b3 || (d.class_code >> 16) == 0x02) {
      if (auto n = root.read_value(base + "/numa_node"))
        if (auto v = sys::to_int<int>(*n)) d.numa_node = *v;
      if (auto l = root.read(base + "/local_cpulist")) {
        d.local_cpus_text = std::string(sys::trim_ws(*l));
        if (auto set = parsers::parse_cpulist(*l)) d.local_cpus = *set;
      }
      if (auto link = root.readlink(base)) d.pci_path = pci_path_of(*link, d.bdf);
    }
    out.push_back(std::move(d));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return out;
}

Avail<std::vector<Gpu>> read_visible_gpus(const sys::Sysroot& root, const std::vector<PciDevice>& pci) {
  const std::string proc_dir = "/proc/driver/nvidia/gpus";
  auto driver_listed = root.list(proc_dir);
  std::vector<Gpu> out;
  if (driver_listed) {
    // The driver's list is authoritative (inside a container only the allocated GPUs appear);
    // a GPU whose PCI entry cannot be read keeps its place so later indices do not shift.
    std::vector<std::string> bdfs;
    for (const auto& name : *driver_listed) bdfs.push_back(sys::lower(name));
    std::sort(bdfs.begin(), bdfs.end());
    for (const auto& bdf : bdfs) {
      Gpu g;
      for (const auto& d : pci)
        if (d.bdf == bdf) g.pci = &d;
      if (g.pci && !g.pci->is_gpu()) continue;
      g.bdf = bdf;
      if (auto info = root.read(proc_dir + "/" + bdf + "/information")) {
        auto kv = parsers::parse_key_values(*info);
        if (auto it = kv.find("GPU UUID"); it != kv.end()) g.uuid = it->second;
        if (auto it = kv.find("Device Minor"); it != kv.end()) g.minor = sys::to_int<int>(it->second);
      }
      g.index = static_cast<int>(out.size());
      out.push_back(std::move(g));
    }
    return out;
  }
  for (const auto& d : pci) {
    if (!d.is_gpu()) continue;
    Gpu g;
    g.pci = &d;
    g.bdf = d.bdf;
    g.index = static_cast<int>(out.size());
    out.push_back(std::move(g));
  }
  return out;
}

Avail<std::vector<const Gpu*>> resolve_cuda_visible(std::string_view value, const std::vector<Gpu>& gpus) {
  std::vector<const Gpu*> out;
  auto v = sys::trim_ws(value);
  if (v.empty() || v == "NoDevFiles" || v == "none") return out;
  for (auto entry : sys::split(v, ',')) {
    entry = sys::trim_ws(entry);
    if (auto idx = sys::to_int<int>(entry)) {
      // CUDA stops at the first invalid index and ignores the rest.
      if (*idx < 0 || *idx >= static_cast<int>(gpus.size())) break;
      out.push_back(&gpus[static_cast<std::size_t>(*idx)]);
      continue;
    }
    if (sys::starts_with(entry, "MIG-")) return missing("CUDA_VISIBLE_DEVICES names a MIG instance (" + std::string(entry) + ")");
    if (!sys::starts_with(entry, "GPU-")) return missing("CUDA_VISIBLE_DEVICES entry '" + std::string(entry) + "' is neither an index nor a GPU UUID");
    const Gpu* match = nullptr;
    for (const auto& g : gpus) {
      if (!g.uuid || !sys::starts_with(*g.uuid, entry)) continue;
      if (match) return missing("CUDA_VISIBLE_DEVICES entry '" + std::string(entry) + "' matches several GPUs");
      match = &g;
    }
    if (!match) return missing("CUDA_VISIBLE_DEVICES entry '" + std::string(entry) + "' matches no GPU UUID in /proc/driver/nvidia/gpus/*/information");
    out.push_back(match);
  }
  return out;
}

}  // namespace perfgap::facts
