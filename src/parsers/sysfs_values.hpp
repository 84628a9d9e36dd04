// One-value sysfs attributes whose text needs reading: PCIe link speed and width
// (/sys/bus/pci/devices/*/current_link_*), RDMA port rate and state
// (/sys/class/infiniband/*/ports/*/{rate,state,phys_state}).
#pragma once

#include <optional>
#include <string>
#include <string_view>

namespace perfgap::parsers {

// A PCIe link speed as sysfs prints it ("16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe"), in
// GT/s; nullopt for "Unknown" or anything else.
std::optional<double> parse_link_speed(std::string_view text);
// A link width ("16", "x16"); nullopt for garbage. 0 is returned as 0 (link down / unknown).
std::optional<int> parse_link_width(std::string_view text);

// Parses a sysfs port "rate" ("400 Gb/sec (4X NDR)", "25 Gb/sec (1X EDR)", "2.5 Gb/sec").
std::optional<double> parse_ib_rate(std::string_view text);
// "4: ACTIVE" -> "ACTIVE"; text without a number prefix is returned trimmed.
std::string strip_state_number(std::string_view text);

}  // namespace perfgap::parsers
