// gpu.pcie: each GPU's PCIe link as NVML sees it under load, and its replay counter
// (checks/nvml: perfgap-gpu's facts judged by analyze nvidia-smi's rules).
#include "checks/nvml.hpp"
#include "checks/util.hpp"

namespace perfgap::checks {

void add_pcie_nvml(core::Registry& r) {
  const auto reads = reads::of({reads::nvml_samples()});
  r.add({.id = "gpu.pcie",
         .layer = layer::pcie,
         .summary = "GPU PCIe links at their max under load, replay counters not growing (NVML)",
         .rule = "Per GPU: `warn` when the link width is below its max, the generation is below its max under load (busy "
                 "above 0%, or P0 where utilisation is not reported), or the replay counter grew between the two runs; `pass` "
                 "at its max; `skip` for a lower generation while idle (GPUs save power so) or no link state. One run only "
                 "(a short budget, or a tree with one document): growth not judged, said in the evidence." PERFGAP_NVML_LEFT_ALONE
                     PERFGAP_NVML_SOURCE,
         .fix = "Reseat the GPU or riser, check bifurcation and PCIe generation in the BIOS; growing replays point at the "
                "cable, riser or retimer.",
         .reads = reads,
         .params = {},
         .run = nvml::rule("gpu.pcie", layer::pcie)});
}

}  // namespace perfgap::checks
