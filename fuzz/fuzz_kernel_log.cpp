// parse_kernel_log: never crashes on any bytes (kmsg records, dmesg text in every prefix form,
// journal and syslog lines, binary); every message is non-empty, trimmed, printable ASCII and
// at most 512 bytes, and every record's seconds since boot are not negative.
#include "fuzz_common.hpp"
#include "parsers/kernel_log.hpp"
#include "sys/text.hpp"

PERFGAP_FUZZ_TARGET(kernel_log) {
  for (const auto& r : perfgap::parsers::parse_kernel_records(perfgap::fuzz::as_text(data, size)))
    FUZZ_CHECK(!r.since_boot_s || *r.since_boot_s >= 0);
  auto messages = perfgap::parsers::parse_kernel_log(perfgap::fuzz::as_text(data, size));
  FUZZ_CHECK(messages.size() <= size);
  for (const auto& m : messages) {
    FUZZ_CHECK(!m.empty());
    FUZZ_CHECK(m.size() <= 512);
    FUZZ_CHECK(perfgap::sys::trim_ws(m) == m);
    for (char ch : m) FUZZ_CHECK(ch >= 0x20 && ch < 0x7f);
  }
  return 0;
}
