// pcie.aer: PCIe AER errors in the kernel log, per device (checks/kernel_log).
#include <fmt/format.h>

#include <set>

#include "checks/kernel_log.hpp"

namespace perfgap::checks {
namespace pcie_aer_checks {
namespace {

using namespace kernel_log;

std::vector<Finding> aer(facts::Facts& f, const core::Thresholds& th) {
  const double corrected_warn = th.get("corrected_warn");
  return per_subject(
      f, "pcie.aer", layer::pcie, "PCIe AER error",
      [](const KernelEvent& e) { return e.kind == KernelEventKind::aer_corrected || e.kind == KernelEventKind::aer_uncorrected; },
      bdf_subject,
      [&](Finding& fnd, const std::string& bdf, const Group& g) {
        std::size_t corrected = 0, uncorrected = 0, fatal = 0;
        std::set<std::string> types;
        for (const auto* e : g.events) {
          (e->kind == KernelEventKind::aer_corrected ? corrected : uncorrected) += 1;
          fatal += e->fatal ? 1 : 0;
          if (!e->detail.empty()) types.insert(e->detail.substr(0, e->detail.find(',')));
        }
        const auto name = named_device(f, bdf == "unnamed" ? "" : bdf);
        fnd.metric("corrected", static_cast<double>(corrected)).metric("uncorrected", static_cast<double>(uncorrected));
        fnd.add("error types", fmt::format("{}", fmt::join(types, "; ")));
        if (uncorrected) {
          fnd.status = Status::fail;
          fnd.title = fmt::format("{}: {} uncorrected PCIe error(s) ({} fatal), {} corrected", name, uncorrected, fatal, corrected);
          fnd.fix = "Drain the node: an uncorrected PCIe error may have reset or lost the device. Reseat the device and its riser/cable, "
                    "check the slot and power; replace the device when it recurs.";
        } else {
          fnd.status = static_cast<double>(corrected) >= corrected_warn ? Status::warn : Status::pass;
          fnd.title = fmt::format("{}: {} corrected PCIe error(s)", name, corrected);
          fnd.fix = "Corrected errors are retried on the link: reseat the device and its riser/cable and watch the count; a link that "
                    "keeps erring also trains down (pcie.link).";
        }
        fnd.impact = "PCIe replays and retrains cost the device's host bandwidth (GPU copies, GPUDirect RDMA through the NIC).";
      });
}

}  // namespace
}  // namespace pcie_aer_checks

void add_pcie_aer(core::Registry& r) {
  using namespace pcie_aer_checks;
  static const std::string aer_rule =
      std::string("Per PCI device (subject: the device the 'PCIe Bus Error' lines name, shown as its GPU or NIC; severity Corrected/Correctable, Uncorrected/Uncorrectable): `fail` on any uncorrected (non-fatal or fatal) AER error, `warn` when corrected errors reach corrected_warn, `pass` below it or when the log has none.") + kernel_log::skip_rule();
  r.add({.id = "pcie.aer",
         .layer = layer::pcie,
         .summary = "no PCIe AER errors in the kernel log",
         .rule = aer_rule,
         .fix = "Reseat the device and its riser/cable, check the slot and power; drain and replace on uncorrected errors.",
         .reads = kernel_log::log_reads(),
         .params = {{"corrected_warn", 1, "corrected AER errors of one device in the log from which it warns"}},
         .run = aer});
}

}  // namespace perfgap::checks
