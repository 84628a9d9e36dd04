// parse_kernel_log: never crashes on any bytes (kmsg records, dmesg text, binary); every
// message is non-empty, trimmed, printable ASCII and at most 512 bytes.
#include "fuzz_common.hpp"
#include "parsers/kernel_log.hpp"
#include "sys/text.hpp"

extern "C" int LLVMFuzzerTestOneInput(const std::uint8_t* data, std::size_t size) {
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
