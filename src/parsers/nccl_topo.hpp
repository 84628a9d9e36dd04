// NCCL topology XML (NCCL_TOPO_FILE: <system version="1"><cpu ...><pci busid=...>),
// parsed and summarised for matching against the devices present
// (checks/runtime_topology). Text in; the check reads the named file.
#pragma once

#include <cstddef>
#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::parsers {

struct TopoPci {
  std::string busid;  // lower case, as NCCL compares them
  enum Kind { gpu, nic, bridge, other } kind = other;
  std::optional<std::uint32_t> class_code, vendor, device;
  std::string link_speed;              // "" when not stated
  std::optional<int> link_width;       // nullopt when not stated (or "0", NCCL's "unknown")
  std::optional<int> numaid;           // of the enclosing <cpu>
  std::string affinity;                // the enclosing <cpu>'s affinity mask, "" when not stated
  std::vector<std::string> nets;       // <nic><net name=...> below it
  int parent = -1;                     // the enclosing <pci> (index in TopoFile::pci); -1: under a <cpu>
  int cpu = -1;                        // the enclosing <cpu>, counted from 0 in file order
  std::optional<int> gpu_dev;          // <gpu dev=N> below it
  int line = 0;
  bool is_virtual() const { return busid.rfind("ffff:", 0) == 0; }
};

struct TopoNet {
  std::string name;
  std::string pci_busid;  // the enclosing <pci>, "" for a <nic> directly under <cpu>
  std::optional<int> numaid;
  int line = 0;
};

struct TopoFile {
  int cpus = 0;
  std::vector<TopoPci> pci;
  std::vector<TopoNet> nets;
  // Reasons NCCL's own (much simpler) XML reader would reject text that is valid XML:
  // an XML declaration, text or tabs between elements, attributes split over lines.
  std::vector<std::string> nccl_rejects;
  int gpus() const;
  int nics() const;
};

// The largest topology file read (real ones are a few KiB to ~100 KiB; NCCL's reader stops
// at a few thousand nodes). A larger file is reported, never read whole.
inline constexpr std::size_t kMaxTopoBytes = 4u << 20;

// Parses NCCL topology XML (<system version="1"><cpu ...><pci busid=...>...). Errors say why
// in one line, with the line number where there is one.
tl::expected<TopoFile, std::string> parse_nccl_topo(std::string_view text);

// "16 GT/s", "32.0 GT/s PCIe" -> 16, 32.
std::optional<double> parse_topo_link_speed(std::string_view text);

}  // namespace perfgap::parsers
