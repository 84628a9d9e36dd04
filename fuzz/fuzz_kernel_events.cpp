// parse_kernel_events: never crashes on any bytes; every event carries its record's message
// (non-empty, printable, at most 512 bytes), a PCI address device is normalized (what
// normalize_bdf gives back unchanged), and there are never more events than records.
#include "fuzz_common.hpp"
#include "parsers/kernel_events.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
    if (k == K::link_down || k == K::link_up || k == K::module_event) FUZZ_CHECK(!e.device.empty());
    FUZZ_CHECK(perfgap::parsers::to_string(k) != "unknown");
  }
  return 0;
}
