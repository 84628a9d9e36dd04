#include "facts/infiniband.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "parsers/sysfs_values.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

namespace {

Avail<std::vector<IbDevice>> read_infiniband(const sys::Sysroot& root) {
  const std::string base = "/sys/class/infiniband";
  auto names = root.list(base);
  if (!names) {
    if (names.error().err == ENOENT) return std::vector<IbDevice>{};
    return missing(describe(names.error()));
  }
  // uverbsN -> device name, for the device nodes under /dev/infiniband.
  std::map<std::string, std::string> uverbs_of;
  if (auto verbs = root.list("/sys/class/infiniband_verbs")) {
    for (const auto& v : *verbs)
      if (auto dev = root.read_value("/sys/class/infiniband_verbs/" + v + "/ibdev")) uverbs_of[*dev] = v;
  }
  std::vector<IbDevice> out;
  for (const auto& name : *names) {
    IbDevice d;
    d.name = name;
    if (auto link = root.readlink(base + "/" + name + "/device")) {
      auto slash = link->rfind('/');
      d.bdf = sys::lower(slash == std::string::npos ? *link : link->substr(slash + 1));
    }
    if (auto it = uverbs_of.find(name); it != uverbs_of.end()) d.uverbs = it->second;
    if (auto v = root.read_value(base + "/" + name + "/hca_type")) d.hca_type = *v;
    if (auto v = root.read_value(base + "/" + name + "/board_id")) d.board_id = *v;
    if (auto v = root.read_value(base + "/" + name + "/fw_ver")) d.fw_ver = *v;
    auto ports = root.list(base + "/" + name + "/ports");
    if (ports) {
      for (const auto& p : *ports) {
        auto n = sys::to_int<int>(p);
        if (!n) continue;
        IbPort port;
        port.port = *n;
        port.dir = base + "/" + name + "/ports/" + p;
        if (auto v = root.read_value(port.dir + "/state")) port.state = parsers::strip_state_number(*v);
        if (auto v = root.read_value(port.dir + "/phys_state")) port.phys_state = parsers::strip_state_number(*v);
        if (auto v = root.read_value(port.dir + "/link_layer")) port.link_layer = *v;
        if (auto v = root.read_value(port.dir + "/rate")) {
          port.rate_text = *v;
          port.rate_gbps = parsers::parse_ib_rate(*v);
        }
        d.ports.push_back(std::move(port));
      }
      std::sort(d.ports.begin(), d.ports.end(), [](auto& a, auto& b) { return a.port < b.port; });
    }
    out.push_back(std::move(d));
  }
  return out;
}

}  // namespace

std::string IbDevice::driver_name() const {
  std::string n = name;
  while (!n.empty() && n.back() >= '0' && n.back() <= '9') n.pop_back();
  while (!n.empty() && n.back() == '_') n.pop_back();
  return n.empty() ? name : n;
}

const Avail<std::vector<IbDevice>>& infiniband(Facts& f) {
  return f.memo<Avail<std::vector<IbDevice>>>("infiniband", [&] { return read_infiniband(f.root()); });
}

namespace {
// A NIC whose RDMA device appears under /sys/class/infiniband once its RDMA driver runs.
const char* rdma_nic_kind(const PciDevice& d) {
  const auto cls = d.class_code >> 8;
  if (d.vendor == 0x15b3 && (d.class_code >> 16) == 0x02) return cls == 0x0207 ? "NVIDIA/Mellanox InfiniBand" : "NVIDIA/Mellanox";
  if (cls == 0x0207) return "InfiniBand";
  if (d.vendor == 0x1d0f && d.device >= 0xefa0 && d.device <= 0xefa3) return "Amazon EFA";
  return nullptr;
}
}  // namespace

std::string rdma_not_captured(Facts& f) {
  const auto& ib = infiniband(f);
  if (!ib || !ib->empty() || f.absence_is_real()) return {};
  const auto& pci = f.pci();
  if (!pci)
    return "RDMA devices not captured: /sys/class/infiniband is not in this tree, and PCI devices, which would show an "
           "RDMA-capable NIC, are not readable (" + pci.error() + ")";
  std::vector<std::string> nics;
  for (const auto& d : *pci)
    if (const char* kind = rdma_nic_kind(d))
      nics.push_back(fmt::format("{} ({} NIC, {:04x}:{:04x})", d.bdf, kind, d.vendor, d.device));
  if (nics.empty()) return {};
  return fmt::format("RDMA devices not captured: /sys/class/infiniband is not in this tree, yet PCI shows {} RDMA-capable NIC{}: {}{}",
                     nics.size(), nics.size() == 1 ? "" : "s", nics.front(),
                     nics.size() == 1 ? std::string() : fmt::format(" and {} more", nics.size() - 1));
}

const Avail<std::vector<std::string>>& net_interfaces(Facts& f) {
  return f.memo<Avail<std::vector<std::string>>>("net.interfaces", [&]() -> Avail<std::vector<std::string>> {
    auto names = f.root().list("/sys/class/net");
    if (!names) return missing(describe(names.error()));
    return std::move(*names);
  });
}

}  // namespace perfgap::facts
