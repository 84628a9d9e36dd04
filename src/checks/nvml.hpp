// What the checks of NVML facts share (gpu/nvml.cpp, pcie/nvml.cpp): gpu.persistence,
// gpu.clocks, gpu.ecc, gpu.pcie, gpu.nvlink, gpu.fabric and gpu.mig on the node are NVML facts from
// perfgap-gpu (facts/gpu.hpp: two runs live, the snapshot's documents under --root), judged by
// the very rules `analyze nvidia-smi` applies to captures (analyzers::judge_gpu_snapshots). The
// helper asks a GPU out of persistence mode nothing but its identity and mode unless --nvml:
// gpu.persistence warns and the others skip saying so.
#pragma once

#include <string_view>

#include "core/check.hpp"

namespace perfgap::checks::nvml {

// The check of rule `id` (analyzers::judge_gpu_snapshots): its findings over the helper's
// samples, one per GPU, with the id and layer its own; a `skip` when NVML could not be read or
// lists no GPU.
core::CheckFn rule(std::string_view id, std::string_view layer);

}  // namespace perfgap::checks::nvml

// Said by every rule: where the facts come from and when they skip.
#define PERFGAP_NVML_SOURCE                                                                                                   \
  " From perfgap-gpu (the copy embedded in perfgap, started from memory; else the one installed next to perfgap; or $PERFGAP_GPU_HELPER), run twice 1 s apart with a deadline (at most 5 s " \
  "each) cut from the check's budget; under --root the documents perfgap snapshot stored (.perfgap/nvml-1.json, "         \
  "nvml-2.json). `skip` when the helper is not installed, there is no NVIDIA driver library (libnvidia-ml.so.1), NVML did "  \
  "not initialise or answer in time, or the tree did not capture it (gpu.nvml then warns where NVIDIA GPUs are on PCI)."
#define PERFGAP_NVML_LEFT_ALONE " A GPU whose persistence mode is off is not queried: `skip` saying so, unless --nvml."
