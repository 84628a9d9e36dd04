// Kernel log text (/dev/kmsg records, dmesg output, journal lines) to plain messages, for
// the checks that look for a driver's words. facts/platform picks the source.
#pragma once

#include <string>
#include <string_view>
#include <vector>

namespace perfgap::parsers {

// Kernel log text as /dev/kmsg records ("6,1234,5678,-;message" plus " KEY=value"
// continuation lines), dmesg output ("[    1.234] message") or plain lines: the messages,
// without prefixes. Bytes outside printable ASCII become '?', so messages are safe in any
// report; lines longer than 512 bytes are cut.
std::vector<std::string> parse_kernel_log(std::string_view text);

}  // namespace perfgap::parsers
