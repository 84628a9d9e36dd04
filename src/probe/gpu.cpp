// probe --gpu: perfgap-gpu --probe does the CUDA work (a separate, dynamically linked process:
// the static perfgap never loads the driver's libraries); here it is run with a deadline on
// the NUMA nodes that have memory, and its document joined with the node's PCI facts.
#include <fmt/format.h>

#include "facts/gpu.hpp"
#include "probe/probe.hpp"
#include "sys/process.hpp"
#include "sys/executable.hpp"
#include "sys/text.hpp"

namespace perfgap::probe {
namespace {

std::string gpu_probe_first_line(const std::string& text) {
  auto line = sys::trim_ws(std::string_view(text).substr(0, text.find('\n')));
  return std::string(line.substr(0, 200));
}

}  // namespace

GpuMeasurement measure_gpu(facts::Facts& f, const GpuOptions& o) {
  GpuMeasurement m;
  bool overridden = false;
  const std::string helper = o.helper.empty() ? facts::gpu_helper_path(&overridden) : o.helper;
  if (helper.empty()) {
    m.no_run_why = facts::gpu_helpers().why;
    return m;
  }
  if (auto why = sys::executable_problem(helper); !why.empty()) {
    m.no_run_why = overridden ? "PERFGAP_GPU_HELPER=" + helper + ": " + why : "perfgap-gpu not installed next to perfgap (" + helper + ": " + why + ")";
    return m;
  }
  // Host buffers on every node with memory (each GPU is measured from each of them).
  std::string nodes;
  if (auto hm = f.root().read_value("/sys/devices/system/node/has_memory")) nodes = std::string(sys::trim_ws(*hm));
  if (nodes.empty()) {
    if (const auto& topo = f.topology(); topo && !topo->node_cpus.empty()) {
      parsers::CpuSet s;
      for (const auto& [node, cpus] : topo->node_cpus) s.insert(node);
      nodes = s.to_list();
    }
  }
  if (nodes.empty()) nodes = "0";
  const auto deadline_s = std::max<long long>(1, std::chrono::duration_cast<std::chrono::seconds>(o.budget).count());
  std::vector<std::string> argv = {helper, "--probe", "--nodes", nodes, "--deadline", std::to_string(deadline_s)};
  sys::CommandOptions co;
  co.timeout = std::chrono::seconds(deadline_s + 2);
  auto r = sys::run_command(argv, co);
  if (!r.started) {
    m.no_run_why = "perfgap-gpu could not be started: " + r.error;
    return m;
  }
  if (r.timed_out) {
    m.no_run_why = fmt::format("perfgap-gpu --probe did not finish within {} s and was stopped", deadline_s + 2);
    return m;
  }
  const std::string said = gpu_probe_first_line(r.err);
  auto with = [&](const std::string& what) { return said.empty() ? what : what + " (" + said + ")"; };
  switch (r.status) {
    case 0: break;
    case 3: m.no_run_why = with("no CUDA driver library (libcuda.so.1)"); return m;
    case 4: m.no_run_why = with("the CUDA driver did not initialise"); return m;
    case 5: m.no_run_why = fmt::format("the GPU probes did not finish within {} s (perfgap-gpu --deadline)", deadline_s); return m;
    default: m.no_run_why = with(fmt::format("perfgap-gpu --probe exited with status {}", r.status)); return m;
  }
  auto doc = parsers::parse_gpu_probe_json(r.out);
  if (!doc) {
    m.no_run_why = "perfgap-gpu --probe printed a document perfgap cannot read: " + doc.error().describe();
    return m;
  }
  static const std::vector<facts::PciDevice> kNoPci;
  const auto& pci = f.pci();
  return join_gpu_probe(*doc, pci ? *pci : kNoPci, [&](const std::string& bdf) { return facts::pci_link(f, bdf); });
}

}  // namespace perfgap::probe
