// Saved nvidia-smi outputs, told apart once by their content:
// - `nvidia-smi -q -x` (XML, DTD v11-v13: clocks_throttle_reasons before v12,
//   clocks_event_reasons after; power_readings or gpu_power_readings) read into the GPU facts
//   model (parsers/gpu_facts.hpp);
// - `nvidia-smi -q` as printed ("==============NVSMI LOG=============="), whole or cut to some
//   sections (-d PAGE_RETIREMENT, ...): its indented "Key : value" tree is turned into the
//   elements of -q -x that the facts are read from, so both are read by one reader; what the
//   text leaves out stays "not in this capture";
// - `nvidia-smi nvlink -s`: "GPU N: NAME (UUID: ...)" and its "Link L: 25 GB/s" or
//   "Link L: <inactive>" lines, or NVML's "all links are inactive": the NVLink state alone;
// - `nvidia-smi topo -m` (the link matrix, tab or space aligned, with or without NIC rows, the
//   affinity columns and the legends; cells glued together as in some published captures,
//   "SYSSYS", are split again).
#pragma once

#include <cstddef>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/gpu_facts.hpp"
#include "parsers/nccl_topo.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// One row of the matrix: a GPU or a NIC, its cells in the header's device-column order.
struct TopoRow {
  std::string name;                                                     // "GPU0", "NIC3", "mlx5_0"
  std::vector<std::string> links;                                       // "X", "NV18", "PIX", "PXB", "PHB", "NODE", "SYS", ...
  std::optional<std::string> cpu_affinity, numa_affinity, gpu_numa_id;  // as printed; N/A kept
  int line = 0;
};

struct GpuTopology {
  std::vector<std::string> columns;           // device columns of the header
  std::vector<std::string> affinity_columns;  // "CPU Affinity", "NUMA Affinity", "GPU NUMA ID" as present
  std::vector<TopoRow> rows;
  std::map<std::string, std::string> nic_names;  // the NIC Legend: NIC0 -> mlx5_0
  bool legend = false;                           // the link-type legend was printed
  std::vector<ParseError> damaged;
  bool is_gpu(const std::string& column) const { return column.rfind("GPU", 0) == 0; }
};

// Given with the matrix, the NCCL topology file of the same node (<system version="1">), so
// that what NCCL is told about GPU<->NIC placement can be compared with what nvidia-smi saw.
struct NvidiaSmi {
  // query: -q -x or -q text; nvlink: nvlink -s (only the GPUs' NVLink state, in `query`).
  enum class Kind { query, nvlink, topo, nccl_topo } kind = Kind::query;
  std::string form;  // "nvidia-smi -q -x", "nvidia-smi -q", "nvidia-smi nvlink -s", "nvidia-smi topo -m", "NCCL topology file"
  GpuSnapshot query;
  GpuTopology topo;
  TopoFile nccl_topo;
};

// The lower, the closer (X first, then NV#, PIX, PXB, PHB, NODE, SYS); -1 for no known type.
int topo_link_rank(std::string_view link);
// The NVLink count of an "NV18" cell; 0 for others.
int topo_nvlinks(std::string_view link);

Parsed<GpuSnapshot> parse_nvidia_smi_xml(std::string_view text);
Parsed<GpuTopology> parse_nvidia_smi_topo(std::string_view text);
// -q as printed, and nvlink -s (the forms above).
Parsed<GpuSnapshot> parse_nvidia_smi_query_text(std::string_view text);
Parsed<GpuSnapshot> parse_nvidia_smi_nvlink(std::string_view text);
// One of them, by content: XML whose root is nvidia_smi_log, an NCCL topology file (root
// <system>), -q text (its NVSMI LOG banner first), nvlink -s (a "GPU N: ... (UUID: ...)" line
// first), or a topo -m matrix.
Parsed<NvidiaSmi> parse_nvidia_smi(std::string_view text);

// An XML document has to be whole to be read: the text is kept, within a limit, and parsed at
// the end (the feed interface of parsers/line_feed.hpp). -q -x is ~100 KiB per GPU.
inline constexpr std::size_t kMaxNvidiaSmiBytes = 64u << 20;
class NvidiaSmiParser {
 public:
  void feed(std::string_view lines) { text_.append(lines); }
  Parsed<NvidiaSmi> finish() { return parse_nvidia_smi(text_); }

 private:
  std::string text_;
};

}  // namespace perfgap::parsers
