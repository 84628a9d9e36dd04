// parse_kernel_events: never crashes on any bytes, under every log prefix form (dmesg -r/-x/iso,
// journalctl short-monotonic/short-iso, syslog); every event carries its record's message
// (non-empty, printable, at most 512 bytes), a PCI address device is normalized (what
// normalize_bdf gives back unchanged), a link event names its NIC, an SXid report's Severity/Data
// lines are never events of their own, only Xid 154 carries a recovery action (and no
// Fatal/Nonfatal word), and there are never more events than records.
#include "fuzz_common.hpp"
#include "parsers/kernel_events.hpp"

PERFGAP_FUZZ_TARGET(kernel_events) {
  auto text = perfgap::fuzz::as_text(data, size);
  auto records = perfgap::parsers::parse_kernel_records(text);
  auto events = perfgap::parsers::kernel_events(records);
  FUZZ_CHECK(events.size() <= records.size());
  for (const auto& r : records) FUZZ_CHECK(!r.since_boot_s || *r.since_boot_s >= 0);
  for (const auto& e : events) {
    FUZZ_CHECK(!e.line.empty() && e.line.size() <= 512);
    for (char ch : e.line) FUZZ_CHECK(ch >= 0x20 && ch < 0x7f);
    auto k = e.kind;
    using K = perfgap::parsers::KernelEventKind;
    if (k == K::xid || k == K::aer_corrected || k == K::aer_uncorrected || k == K::link_down || k == K::link_up || k == K::module_event)
      FUZZ_CHECK(e.device.empty() || perfgap::parsers::normalize_bdf(e.device) == e.device);
    if (k == K::link_down || k == K::link_up) FUZZ_CHECK(!e.device.empty());  // a module event may name none
    if (k == K::sxid) FUZZ_CHECK(e.detail.rfind("Severity ", 0) != 0 && e.detail.rfind("Data ", 0) != 0);
    if (k == K::xid && e.code == 154) FUZZ_CHECK(!e.fatal && !e.nonfatal);
    if (k != K::xid || e.code != 154) FUZZ_CHECK(e.recovery.empty());
    FUZZ_CHECK(perfgap::parsers::to_string(k) != "unknown");
  }
  return 0;
}
