// gpu.nvml (whether the GPUs' health was read at all) and the NVML rules of the gpu layer:
// gpu.persistence, gpu.clocks, gpu.ecc, gpu.nvlink, gpu.fabric, gpu.mig (checks/nvml: perfgap-gpu's
// facts judged by analyze nvidia-smi's rules).
#include <fmt/format.h>
#include <fmt/ranges.h>

#include <algorithm>

#include "checks/nvml.hpp"
#include "checks/util.hpp"
#include "facts/gpu.hpp"
#include "facts/platform.hpp"

namespace perfgap::checks {
namespace {

constexpr std::string_view kPersistence = "gpu.persistence", kClocks = "gpu.clocks", kEcc = "gpu.ecc", kNvlink = "gpu.nvlink",
                           kFabric = "gpu.fabric", kMig = "gpu.mig";

// gpu.nvml: whether the GPU health checks had anything to judge. A node with NVIDIA GPUs on
// PCI whose NVML facts could not be read is not a healthy node, only an unexamined one: warn,
// so the report's summary is not a bare OK.
constexpr const char* kNvmlReadFix =
    "Make libnvidia-ml.so.1 visible where perfgap runs (containers: the NVIDIA container toolkit with "
    "NVIDIA_DRIVER_CAPABILITIES including utility; enroot/pyxis do so by default), or let the exec policy run "
    "perfgap-gpu (docs/GPU.md); a captured tree: take it with perfgap snapshot on the node.";
constexpr const char* kNvmlReadImpact =
    "the gpu.* health checks judged nothing: a throttled, ECC-failing or link-degraded GPU would go unseen";

std::vector<Finding> nvml_read(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "gpu.nvml";
  const auto& s = facts::nvml_samples(f);
  const auto& pci = f.pci();
  std::vector<std::string> on_pci;
  if (pci)
    for (const auto& d : *pci)
      if (d.is_gpu()) on_pci.push_back(d.bdf);
  // The GPUs the NVIDIA driver lists whose PCI identity files were not captured: GPUs all the
  // same (gpu.inventory counts them).
  bool driver_only = false;
  for (const auto& g : facts::driver_gpus(f).gpus)
    if (!pci || std::none_of(pci->begin(), pci->end(), [&](const facts::PciDevice& d) { return d.bdf == g.bdf; })) {
      on_pci.push_back(g.bdf);
      driver_only = true;
    }
  const std::string pci_text = fmt::format("{} NVIDIA GPU{}{}{}", on_pci.size(), on_pci.size() == 1 ? "" : "s",
                                           on_pci.empty() ? "" : ": ", fmt::join(on_pci, ", "));
  if (s) {
    const auto& doc = s->first.doc;
    const auto listed = doc.snapshot.gpus.size();
    const auto queried = listed - std::min(listed, doc.skipped.size());
    const std::string driver = doc.snapshot.driver_version.empty() ? "version unknown" : doc.snapshot.driver_version;
    if (listed == 0 && !on_pci.empty()) {
      auto fnd = core::finding(id, layer::gpu, Status::warn,
                               fmt::format("GPU health not checked: NVML lists no GPU (driver {}) while PCI shows {}", driver, pci_text));
      fnd.add(s->first.source, "gpus: []");
      fnd.add("/sys/bus/pci/devices", pci_text);
      fnd.fix = kNvmlReadFix;
      fnd.impact = kNvmlReadImpact;
      return {fnd};
    }
    auto fnd = core::finding(id, layer::gpu, Status::pass,
                             fmt::format("NVML facts read for {} of {} GPU{} (driver {})", queried, listed, listed == 1 ? "" : "s", driver));
    fnd.add(s->first.source, fmt::format("{} GPUs listed, {} queried", listed, queried));
    if (pci) fnd.add("/sys/bus/pci/devices", pci_text);
    return {fnd};
  }
  if (!pci && on_pci.empty())
    return {core::finding(id, layer::gpu, Status::skip, fmt::format("PCI devices not readable ({}); NVML: {}", pci.error(), s.error()))};
  if (on_pci.empty()) {
    auto fnd = core::finding(id, layer::gpu, Status::skip, "no NVIDIA GPU on PCI");
    fnd.add("NVML", s.error());
    return {fnd};
  }
  auto fnd = core::finding(id, layer::gpu, Status::warn, fmt::format("GPU health not checked on {}: {}", pci_text, s.error()));
  fnd.add(!driver_only ? "/sys/bus/pci/devices" : pci ? "/sys/bus/pci/devices, /proc/driver/nvidia/gpus" : "/proc/driver/nvidia/gpus", pci_text);
  fnd.add("NVML (perfgap-gpu)", s.error());
  fnd.fix = kNvmlReadFix;
  fnd.impact = kNvmlReadImpact;
  return {fnd};
}

}  // namespace

void add_gpu_nvml(core::Registry& r) {
  const auto reads = reads::of({reads::nvml_samples()});
  r.add({.id = "gpu.nvml",
         .layer = layer::gpu,
         .summary = "the NVIDIA GPUs on PCI had their health read (NVML, through perfgap-gpu)",
         .rule = "`pass` when perfgap-gpu's NVML document was read (GPUs listed and queried, driver version); `warn` when "
                 "NVIDIA GPUs are on PCI (or listed by the driver in /proc/driver/nvidia/gpus) but their NVML facts could not be read for any reason (the helper could not "
                 "start, no libnvidia-ml.so.1 in this container, NVML did not initialise or answer, a tree that did not "
                 "capture them) or NVML lists none of them: the gpu.* health checks then judged nothing, and the report "
                 "must not read as healthy; `skip` without NVIDIA GPUs on PCI, or when PCI is not readable." PERFGAP_NVML_SOURCE,
         .fix = kNvmlReadFix,
         .reads = reads::of({reads::nvml_samples(), reads::pci(), reads::driver_gpus()}),
         .params = {},
         .run = nvml_read});
  r.add({.id = kPersistence,
         .layer = layer::gpu,
         .summary = "every GPU is in persistence mode (NVML, through perfgap-gpu)",
         .rule = "Per GPU (subject: its PCI bus id): `pass` when persistence mode is on, `warn` when it is off (every NVML/CUDA "
                 "initialisation then pays the GPU's setup again, and the other gpu checks skip that GPU unless --nvml), `skip` "
                 "when NVML could not say." PERFGAP_NVML_SOURCE,
         .fix = "systemctl enable --now nvidia-persistenced (or nvidia-smi -pm 1 until the next boot).",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kPersistence, layer::gpu)});
  r.add({.id = kClocks,
         .layer = layer::gpu,
         .summary = "no GPU is held below its clocks (slowdown reasons, power limit, application clocks)",
         .rule = "Per GPU: `fail` while HW slowdown, HW or SW thermal slowdown or the power brake is an active clock event "
                 "reason; `warn` for an enforced power limit below the default, or application clocks below the default (or "
                 "held below the max by the application clocks setting); `pass` otherwise; `skip` without clock event "
                 "reasons." PERFGAP_NVML_LEFT_ALONE PERFGAP_NVML_SOURCE,
         .fix = "Check power supply, cabling and cooling for slowdowns; restore the default power limit (nvidia-smi -pl) and "
                "application clocks (nvidia-smi -rac).",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kClocks, layer::gpu)});
  r.add({.id = kEcc,
         .layer = layer::gpu,
         .summary = "no GPU has volatile uncorrectable ECC errors or a pending/failed row remap",
         .rule = "Per GPU: `fail` for volatile uncorrectable ECC errors, a row-remapping failure, a pending row remap or "
                 "page retirement; `pass` otherwise (lifetime counts noted); `skip` when ECC is off or not "
                 "counted." PERFGAP_NVML_LEFT_ALONE PERFGAP_NVML_SOURCE,
         .fix = "Drain the node and reset the GPU so pending remaps take effect; a remap failure or repeated uncorrectable "
                "errors mean an RMA.",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kEcc, layer::gpu)});
  r.add({.id = kNvlink,
         .layer = layer::gpu,
         .summary = "every GPU has as many NVLinks up as its same-model peers, error counters not growing",
         .rule = "Per GPU: `fail` with fewer NVLinks up than the best GPU of the same model; `warn` when CRC, replay or "
                 "recovery counters grew between the two runs; `pass` otherwise (one run: growth not judged, said in the "
                 "title); `skip` when the GPU has no NVLink. Metrics `links_up`, `errors` and, where the driver says it "
                 "(NVML's common speed of the active links) or nvidia-smi nvlink -s shows it (the slowest link up), "
                 "`link_gbps` per link and direction: what expect learn holds a kind's GPUs to." PERFGAP_NVML_LEFT_ALONE PERFGAP_NVML_SOURCE,
         .fix = "Reset the GPU; links that stay down mean reseating the baseboard or NVLink bridge, or an RMA.",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kNvlink, layer::gpu)});
  r.add({.id = kFabric,
         .layer = layer::gpu,
         .summary = "NVLink-switch fabric registration completed and healthy (NVL systems)",
         .rule = "Per GPU on an NVLink-switch fabric: `fail` when the fabric state is not Completed, the status is not "
                 "Success, the health summary is not Healthy, or the health mask shows degraded bandwidth, a route or access "
                 "timeout recovery, an unhealthy route or an incorrect configuration; `pass` otherwise; `skip` off a fabric "
                 "or with a driver that does not report it." PERFGAP_NVML_LEFT_ALONE PERFGAP_NVML_SOURCE,
         .fix = "Check the fabric manager and NVLink switch trays (nvidia-smi -q -d FABRIC on every GPU of the domain, IMEX "
                "and NMX logs).",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kFabric, layer::gpu)});
  r.add({.id = kMig,
         .layer = layer::gpu,
         .summary = "no GPU is left in MIG mode (split into instances) on a training node",
         .rule = "Per GPU: `warn` when its current MIG mode is Enabled (a training job then gets one instance, a fraction of "
                 "the SMs and memory, and NCCL has no NVLink or P2P between instances); `pass` when Disabled; `skip` on GPUs "
                 "without MIG or where the capture does not say." PERFGAP_NVML_LEFT_ALONE PERFGAP_NVML_SOURCE,
         .fix = "Stop the GPU's clients and run nvidia-smi -i <gpu> -mig 0 (a reset or reboot where it says pending); where a "
                "MIG manager owns the setting (the GPU operator's nvidia.com/mig.config label, nvidia-mig-parted), set the "
                "training nodes' profile to all-disabled.",
         .reads = reads,
         .params = {},
         .run = nvml::rule(kMig, layer::gpu)});
}
}  // namespace perfgap::checks
