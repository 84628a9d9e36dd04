// gpu.topology_file: an NCCL topology file (<system version="1">) against the same node's
// nvidia-smi topo -m, and against the GPUs' PCI bus ids where an nvidia-smi -q / -q -x capture of
// the node is given with them (topo -m prints no bus id). Says what it compared and what it could
// not: a file that agrees on what the matrix shows is not said to match the node beyond that.
#pragma once

#include <set>
#include <string>

#include "parsers/nccl_topo.hpp"
#include "parsers/nvidia_smi.hpp"
#include "report/model.hpp"

namespace perfgap::analyzers {

// node_gpu_bus_ids: the node's GPUs' bus ids from its -q captures, lower case with a 4-digit
// domain ("0000:18:00.0", as NCCL writes them); empty when no such capture was given.
report::Finding judge_topology_file(const parsers::GpuTopology& t, const std::string& matrix_source, const parsers::TopoFile& file,
                                    const std::string& file_source, const std::set<std::string>& node_gpu_bus_ids);

}  // namespace perfgap::analyzers
