// pcie.link: the PCIe link width and speed of GPUs and NICs, from /sys only (never an NVML or
// CUDA call, never open() of a GPU device node).
#include <fmt/format.h>

#include <algorithm>

#include "checks/util.hpp"
#include "facts/platform.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

std::string gts(double v) { return fmt::format("{:g} GT/s", v); }

// ---- pcie.link ---------------------------------------------------------------------------
std::vector<Finding> pcie_link(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "pcie.link", layer = layer::pcie;
  const auto& pci = f.pci();
  if (!pci) return {core::finding(id, layer, Status::skip, "PCI devices not readable: " + pci.error())};
  std::vector<Finding> out;
  std::size_t unreadable = 0;
  std::string first_error;
  // The GPUs and NICs on PCI, and the GPUs the NVIDIA driver lists whose PCI identity files
  // were not captured (hwloc's trees keep only some attributes): gpu.inventory counts those.
  struct Dev {
    std::string bdf;
    bool gpu;
  };
  std::vector<Dev> devs;
  for (const auto& d : *pci)
    if (d.is_gpu() || facts::is_nvidia_nic(d)) devs.push_back({d.bdf, d.is_gpu()});
  for (const auto& g : facts::driver_gpus(f).gpus)
    if (std::none_of(pci->begin(), pci->end(), [&](const facts::PciDevice& d) { return d.bdf == g.bdf; })) devs.push_back({g.bdf, true});
  for (const auto& d : devs) {
    const bool gpu = d.gpu;
    const std::string kind = gpu ? "GPU" : "NIC";
    const std::string base = "/sys/bus/pci/devices/" + d.bdf + "/";
    auto l = facts::read_pcie_link(f, d.bdf);
    auto fnd = core::finding(id, layer, Status::pass, "");
    fnd.subject = d.bdf;
    if (!l.error.empty()) {
      if (unreadable++ == 0) first_error = l.error;
      fnd.status = Status::skip;
      fnd.title = kind + " link attributes not readable (not a PCIe function, or not captured): " + l.error;
      out.push_back(std::move(fnd));
      continue;
    }
    // Present but not a width/speed: an unusable input, said with the value.
    auto garbage = [&](const char* attr, const std::string& text) {
      fnd.status = Status::error;
      fnd.title = fmt::format("{} {} unreadable: '{}'", kind, attr, text.substr(0, 40));
      fnd.add(base + attr, text.substr(0, 80), "a link width (1-32) or speed (N GT/s)");
    };
    if (!l.cur_width) { garbage("current_link_width", l.cur_width_text); out.push_back(std::move(fnd)); continue; }
    if (!l.max_width) { garbage("max_link_width", l.max_width_text); out.push_back(std::move(fnd)); continue; }
    auto unknown_speed = [](const std::string& t) { return sys::lower(t).rfind("unknown", 0) == 0; };
    if (*l.cur_width == 0 || *l.max_width == 0 || unknown_speed(l.cur_speed_text) || unknown_speed(l.max_speed_text)) {
      fnd.status = Status::skip;
      fnd.title = fmt::format("{} link state unknown (width {}, speed '{}'): a virtual function, or a link that is down", kind,
                              l.cur_width_text, l.cur_speed_text);
      fnd.add(base + "current_link_width", l.cur_width_text);
      fnd.add(base + "current_link_speed", l.cur_speed_text);
      out.push_back(std::move(fnd));
      continue;
    }
    if (!l.cur_speed) { garbage("current_link_speed", l.cur_speed_text); out.push_back(std::move(fnd)); continue; }
    if (!l.max_speed) { garbage("max_link_speed", l.max_speed_text); out.push_back(std::move(fnd)); continue; }

    const bool narrow = *l.cur_width < *l.max_width;
    const bool slow = *l.cur_speed + 1e-9 < *l.max_speed;
    fnd.add(base + "current_link_width", l.cur_width_text, l.max_width_text);
    fnd.add(base + "current_link_speed", l.cur_speed_text, l.max_speed_text);
    fnd.metric("link_width", *l.cur_width).metric("max_link_width", *l.max_width);
    fnd.metric("link_speed_gts", *l.cur_speed).metric("max_link_speed_gts", *l.max_speed);
    if (narrow) {
      fnd.status = Status::fail;
      fnd.title = fmt::format("{} link trained at x{} of x{}{}", kind, *l.cur_width, *l.max_width,
                              slow ? fmt::format(" and {} of {}", gts(*l.cur_speed), gts(*l.max_speed)) : "");
      fnd.fix = "Reseat the card and its riser/cable (a damaged lane or a half-inserted card trains narrow), check the "
                "slot's bifurcation and link-width settings in the BIOS, and compare `lspci -vv -s " + d.bdf +
                "` LnkCap/LnkSta (\"downgraded\"); move the card to another slot to tell card from slot.";
      fnd.impact = fmt::format("Host-device bandwidth cut to {}/{} of the link: slower host-to-device copies, checkpointing, "
                               "data loading{}", *l.cur_width, *l.max_width,
                               gpu ? " and GPUDirect traffic through this GPU" : " and every RDMA transfer through this NIC");
    } else if (slow) {
      fnd.status = Status::warn;
      fnd.title = fmt::format("{} link at {} of {} (width x{} is full){}", kind, gts(*l.cur_speed), gts(*l.max_speed),
                              *l.cur_width, gpu ? ": GPUs lower the link speed when idle; recheck under load" : "");
      fnd.fix = gpu ? "Re-read current_link_speed while the GPU is busy (or `nvidia-smi -q -d PCIE`): at idle a lower "
                      "generation is normal power saving; if it stays low under load, reseat the card and check the slot's "
                      "PCIe generation setting in the BIOS."
                    : "Check the slot's PCIe generation setting in the BIOS and the riser/cable; reseat the NIC.";
      fnd.impact = "Under load, a link below its maximum speed cuts host-device bandwidth in proportion.";
    } else {
      fnd.title = fmt::format("{} link x{} at {} (its maximum)", kind, *l.cur_width, gts(*l.cur_speed));
    }
    out.push_back(std::move(fnd));
  }
  if (out.empty()) return {core::finding(id, layer, Status::skip, "no NVIDIA GPU or NVIDIA/Mellanox NIC on PCI")};
  // No device has link attributes (a tree captured without them, a platform without PCIe
  // capabilities): one skip says it, rather than one per device.
  if (out.size() > 1 && unreadable == out.size()) {
    auto fnd = core::finding(id, layer, Status::skip,
                             fmt::format("link attributes not readable for any of the {} {}: {}", out.size(),
                                         std::all_of(devs.begin(), devs.end(), [](const Dev& d) { return d.gpu; }) ? "NVIDIA GPUs"
                                                                                                                : "GPUs/NICs",
                                         first_error));
    return {fnd};
  }
  return out;
}

}  // namespace

void add_pcie_link(core::Registry& r) {
  r.add({.id = "pcie.link",
         .layer = layer::pcie,
         .summary = "GPU and NIC PCIe links run at their maximum width (and speed)",
         .rule = "Per NVIDIA GPU (on PCI, or listed by the driver in /proc/driver/nvidia/gpus) and NVIDIA/Mellanox NIC (vendor 0x15b3, network class), one finding with the BDF as subject: `fail` when current_link_width is below max_link_width; `warn` when only current_link_speed is below max_link_speed (GPUs lower the link speed when idle); `pass` otherwise. `skip` when the link attributes are absent or Unknown (virtual functions); `error` for values that are not a width or speed.",
         .fix = "Reseat the card/riser, check the slot's bifurcation and PCIe generation in the BIOS, compare lspci LnkCap/LnkSta.",
         .reads = reads::of({reads::pci(), reads::pcie_link(), reads::driver_gpus()}),
         .params = {},
         .run = pcie_link});
}

}  // namespace perfgap::checks
