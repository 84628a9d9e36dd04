// gpu.driver_errors: NVIDIA driver failures in the kernel log that are no Xid, per GPU: a GPU
// the driver could not initialise, NVLinks it could not bring up (checks/kernel_log).
#include <fmt/format.h>

#include <string>
#include <vector>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace gpu_driver_checks {
namespace {

using namespace kernel_log;

// The driver line's words, cut for a title.
constexpr std::size_t kLineText = 100;

std::vector<Finding> driver_errors(facts::Facts& f, const core::Thresholds&) {
  return per_subject(
      f, "gpu.driver_errors", layer::gpu, "NVIDIA driver failure (GPU initialisation, NVLink discovery)",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::gpu_driver_failure; }, bdf_subject,
      [&](Finding& fnd, const std::string& bdf, Group& g) {
        std::size_t nvlink = 0, init = 0;
        for (const auto* e : g.events) (e->code == 1 ? nvlink : init) += 1;
        const auto& first = *g.events.front();
        std::string said = first.detail.size() > kLineText ? first.detail.substr(0, kLineText) + "..." : first.detail;
        std::vector<std::string> parts;
        if (nvlink) parts.push_back(fmt::format("the driver could not bring up its NVLinks ({} line(s))", nvlink));
        if (init) parts.push_back(fmt::format("the driver could not initialise the GPU ({} line(s))", init));
        fnd.status = Status::fail;
        fnd.title = fmt::format("{}: {}: '{}'", named_device(f, bdf == "unnamed" ? "" : bdf), fmt::join(parts, "; "), said);
        std::vector<std::string> fixes;
        if (nvlink)
          fixes.emplace_back("NVLink discovery failed (the GPU's links did not train with their peer): stop Fabric Manager, reset the "
                             "GPUs and NVSwitches (or reboot), check that the driver and Fabric Manager versions match, and check the "
                             "NVLink trays and cables when it recurs.");
        if (init)
          fixes.emplace_back("RmInitAdapter failed: reboot the node; check the driver supports this GPU; reseat or replace the GPU "
                             "when it recurs (the code in parentheses is for NVIDIA support).");
        fnd.fix = fmt::format("{}", fmt::join(fixes, " "));
        fnd.impact = nvlink ? "Without its NVLinks the GPU cannot join the NVLink fabric: CUDA jobs on the node fail to start ('system "
                              "not yet initialized') or run over PCIe."
                            : "The GPU is not usable: jobs asking for it fail, and the node runs short of a GPU.";
      });
}

}  // namespace
}  // namespace gpu_driver_checks

void add_gpu_driver_errors(core::Registry& r) {
  using namespace gpu_driver_checks;
  static const std::string rule =
      std::string("Per GPU (subject: the PCI address the line names; the NVLink discovery line names none, so it counts for an unnamed "
                  "GPU): `fail` when the kernel log has an NVIDIA driver failure that is no Xid: NVLink discovery ('NVRM: knvlink...: "
                  "... failed', such as 'knvlinkDiscoverPostRxDetLinks_GH100: Getting peer0's postRxDetLinkMask failed!') or GPU "
                  "initialisation ('NVRM: GPU <address>: RmInitAdapter failed! (...)'); `pass` when it has none.") +
      kernel_log::skip_rule();
  r.add({.id = "gpu.driver_errors",
         .layer = layer::gpu,
         .summary = "no NVIDIA driver failure (GPU initialisation, NVLink discovery) in the kernel log",
         .rule = rule,
         .fix = "Reset the GPUs and NVSwitches or reboot; check driver/Fabric Manager versions; reseat or replace the GPU when it recurs.",
         .reads = kernel_log::log_reads(),
         .params = {},
         .run = driver_errors});
}

}  // namespace perfgap::checks
