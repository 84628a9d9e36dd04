#include "analyzers/nvidia_smi_topo_file.hpp"

#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <optional>
#include <vector>

#include "parsers/cpuset.hpp"

namespace perfgap::analyzers {
namespace {

using report::Finding;
using report::Status;

std::string topo_file_join(const std::vector<std::string>& v, const char* sep = ", ") {
  std::string s;
  for (const auto& x : v) s += (s.empty() ? "" : sep) + x;
  return s;
}

std::string topo_file_list(const std::set<std::string>& s) {
  std::string out;
  for (const auto& x : s) out += (out.empty() ? "" : ",") + x;
  return out.empty() ? std::string("-") : out;
}

// A GPU row of the matrix: the NICs on its own PCIe switch (PIX, PXB), its NUMA and CPU affinity.
struct TopoFileMatrixGpu {
  std::string name;
  std::set<std::string> switch_nics;
  std::optional<std::string> numa, cpus;
};

// What was compared, on how many GPUs, and what differed.
struct TopoFileTally {
  std::vector<std::string> wrong, warn;
  std::vector<std::string> cpus_wrong;  // GPUs whose CPU affinity differs
  std::string cpus_example;             // the first one's two sides
  int nics_named = 0, nics_counted = 0, numa = 0, cpus = 0;
  bool bus_checked = false;
};

// The file's view of one GPU: the NICs below any <pci> that is also above the GPU (the same
// switch hierarchy, what topo -m prints as PIX or PXB; an NCCL file's outermost <pci> under a
// <cpu> is the switch, not the root port).
struct TopoFileNear {
  std::set<std::string> named;
  std::size_t nics = 0, unnamed = 0;
  std::string text() const {
    std::string t = named.empty() ? "" : topo_file_list(named);
    if (unnamed) t = (named.empty() ? "" : t + " + ") + fmt::format("{} unnamed", unnamed);
    return t.empty() ? "-" : t;
  }
};

std::vector<int> topo_file_ancestors(const parsers::TopoFile& file, std::size_t i) {
  std::vector<int> chain;
  for (int p = file.pci[i].parent; p >= 0 && chain.size() < file.pci.size(); p = file.pci[static_cast<std::size_t>(p)].parent) chain.push_back(p);
  return chain;
}

TopoFileNear topo_file_near(const parsers::TopoFile& file, std::size_t gpu, const std::vector<std::size_t>& file_nics) {
  TopoFileNear near;
  const auto chain = topo_file_ancestors(file, gpu);
  for (auto ni : file_nics) {
    auto nc = topo_file_ancestors(file, ni);
    bool shares = std::any_of(chain.begin(), chain.end(), [&](int a) { return std::find(nc.begin(), nc.end(), a) != nc.end(); });
    if (!shares) continue;
    ++near.nics;
    if (file.pci[ni].nets.empty()) ++near.unnamed;
    for (const auto& name : file.pci[ni].nets) near.named.insert(name);
  }
  return near;
}

// The GPU's CPUs: topo -m's CPU Affinity (a cpulist; N/A or none says nothing) against the
// enclosing <cpu affinity> mask. NCCL binds its threads to the file's CPUs, so a file whose
// sockets hold other CPUs than the node's was made on another machine. topo -m showing a part of
// the file's CPUs (a cpuset-limited view, or a file of a larger machine) is a warning.
void topo_file_cpus(const TopoFileMatrixGpu& g, const parsers::TopoPci& p, const std::string& where, Finding& f, TopoFileTally& v) {
  if (!g.cpus || p.affinity.empty()) return;
  auto node = parsers::parse_cpulist(*g.cpus);
  auto in_file = parsers::parse_cpumask(p.affinity);
  if (!node || !in_file || node->empty()) return;
  ++v.cpus;
  if (*node == *in_file) return;
  const std::string said = fmt::format("{} ({}): CPUs {} in the file (<cpu affinity=\"{}\">), CPUs {} on the node (topo -m CPU Affinity)", g.name,
                                       p.busid, in_file->empty() ? "none" : in_file->to_list(), p.affinity, node->to_list());
  if (node->subset_of(*in_file)) {
    v.warn.push_back(fmt::format("{}'s CPU affinity on the node ({}) is a part of the file's ({})", g.name, node->to_list(), in_file->to_list()));
    f.add(where, said + ": a part of them (a cpuset-limited view, or a file of a larger machine)", node->to_list());
    return;
  }
  v.cpus_wrong.push_back(g.name);
  if (v.cpus_example.empty())
    v.cpus_example = fmt::format("{}: CPUs {} in the file, {} on the node", g.name, in_file->empty() ? "none" : in_file->to_list(), node->to_list());
  f.add(where, said, node->to_list());
}

// One GPU of the matrix against the file's GPU taken for it: its switch's NICs, NUMA node and CPUs.
void topo_file_compare_gpu(const TopoFileMatrixGpu& g, const parsers::TopoFile& file, std::size_t gi, const std::vector<std::size_t>& file_nics,
                           const std::string& file_source, Finding& f, TopoFileTally& v) {
  const auto& p = file.pci[gi];
  const TopoFileNear near = topo_file_near(file, gi, file_nics);
  std::string file_numa = p.numaid ? std::to_string(*p.numaid) : "-";
  std::string file_cpus = "-";
  if (auto m = parsers::parse_cpumask(p.affinity); !p.affinity.empty() && m) file_cpus = m->to_list();
  f.table.push_back({g.name, topo_file_list(g.switch_nics), near.text(), g.numa.value_or("-"), file_numa, g.cpus.value_or("-"), file_cpus});
  const std::string where = fmt::format("{}:{}", file_source, p.line);
  if (!g.switch_nics.empty()) {
    // Named NICs must meet; unnamed ones (names left to runtime) can only be counted.
    bool shared = near.unnamed > 0 || std::any_of(g.switch_nics.begin(), g.switch_nics.end(), [&](const std::string& x) { return near.named.count(x) > 0; });
    ++(near.named.empty() ? v.nics_counted : v.nics_named);
    if (near.nics == 0 || !shared) {
      v.wrong.push_back(g.name);
      f.add(where,
            fmt::format("{} ({}): the file puts {} on its switch, the node has {} there (topo -m PIX/PXB)", g.name, p.busid,
                        near.nics == 0 ? "no NIC" : near.text(), topo_file_list(g.switch_nics)),
            topo_file_list(g.switch_nics));
    }
  }
  // NUMA: only a single node in the matrix is compared (N/A or a range says nothing exact).
  if (g.numa && p.numaid && !g.numa->empty() && g.numa->find_first_not_of("0123456789") == std::string::npos && g.numa->size() < 6) {
    ++v.numa;
    if (std::stoi(*g.numa) != *p.numaid) {
      v.wrong.push_back(g.name + " NUMA");
      f.add(where, fmt::format("{} ({}): NUMA node {} in the file, {} on the node (topo -m NUMA Affinity)", g.name, p.busid, *p.numaid, *g.numa),
            *g.numa);
    }
  }
  topo_file_cpus(g, p, where, f, v);
}

// The file's GPUs' bus ids against the node's (its -q captures): a GPU at an address the node
// has no GPU at is a file of another machine.
void topo_file_bus_ids(const parsers::TopoFile& file, const std::vector<std::size_t>& file_gpus, const std::set<std::string>& node_gpus,
                       const std::string& file_source, Finding& f, TopoFileTally& v) {
  if (node_gpus.empty()) {
    f.add("bus ids", "not compared: topo -m prints none (give the node's nvidia-smi -q -x with the matrix to compare them)");
    return;
  }
  v.bus_checked = true;
  std::vector<std::string> foreign;
  for (auto gi : file_gpus) {
    std::string b = file.pci[gi].busid;
    std::transform(b.begin(), b.end(), b.begin(), [](unsigned char c) { return static_cast<char>(std::tolower(c)); });
    if (node_gpus.count(b)) continue;
    foreign.push_back(b);
    if (foreign.size() <= 3)
      f.add(fmt::format("{}:{}", file_source, file.pci[gi].line), fmt::format("<gpu> at {}: no GPU of the node is at that address (nvidia-smi -q)", b),
            topo_file_list(node_gpus));
  }
  if (!foreign.empty()) v.wrong.push_back(fmt::format("{} GPU bus id{} ({})", foreign.size(), foreign.size() == 1 ? "" : "s", topo_file_join(foreign)));
  else f.add("bus ids", fmt::format("the file's {} GPU bus ids are the node's (nvidia-smi -q)", file_gpus.size()));
}

// What agreed, for the title: only what was compared.
std::string topo_file_agreed(const TopoFileTally& v) {
  std::vector<std::string> what;
  if (v.nics_named) what.push_back("the same NICs on their switches");
  else if (v.nics_counted) what.push_back("a NIC on each GPU's switch (counted: the file names none)");
  if (v.numa) what.push_back("NUMA nodes");
  if (v.cpus) what.push_back("CPU affinity");
  if (v.bus_checked) what.push_back("GPU bus ids (nvidia-smi -q)");
  return topo_file_join(what);
}

void topo_file_verdict(Finding& f, const TopoFileTally& v, std::size_t n) {
  const std::string basis = v.bus_checked ? "this node (topo -m, nvidia-smi -q)" : "this node's topo -m";
  if (!v.wrong.empty() || !v.cpus_wrong.empty()) {
    std::vector<std::string> what = v.wrong;
    if (!v.cpus_wrong.empty())
      what.push_back(fmt::format("the CPU affinity of {} ({})", v.cpus_wrong.size() == n ? fmt::format("all {} GPUs", n) : topo_file_join(v.cpus_wrong),
                                 v.cpus_example));
    f.status = Status::fail;
    f.title = fmt::format("the NCCL topology file disagrees with {} for {}", basis, topo_file_join(what));
    f.fix = "generate the topology file on this node type (NCCL_TOPO_DUMP_FILE from a run without NCCL_TOPO_FILE, or the vendor's "
            "file for this exact SKU) and check that the job loads that one (perfgap analyze nccl-log --expect-topo-file)";
    f.impact = "NCCL builds rings and trees from the file: a GPU paired with a NIC on another switch or socket, or its threads "
               "bound to another socket's CPUs, sends its inter-node traffic across the CPU interconnect (a few to tens of percent of busbw)";
  } else if (!v.warn.empty()) {
    f.status = Status::warn;
    f.title = "the NCCL topology file and this node's topo -m differ: " + topo_file_join(v.warn, "; ");
    f.fix = "use a topology file made for this node type; NCCL ignores or misplaces devices the file does not match";
  } else if (v.nics_named + v.nics_counted + v.numa + v.cpus == 0 && !v.bus_checked) {
    f.status = Status::skip;
    f.title = fmt::format("the NCCL topology file and this node's topo -m share nothing to compare beyond the count of {} GPUs "
                          "(no NIC on a GPU's switch, no single NUMA node or CPU affinity, no bus ids)",
                          n);
  } else {
    f.status = Status::pass;
    f.title = fmt::format("the NCCL topology file agrees with {} on {} GPUs: {}", basis, n, topo_file_agreed(v));
    if (!v.bus_checked) f.title += "; its PCI bus ids are not compared (topo -m prints none: give nvidia-smi -q -x with it)";
  }
}

}  // namespace

// The GPUs of the matrix (GPU0..) are taken as the file's <gpu dev=N> (both count the GPUs in
// PCI order on a node of identical GPUs; a file without dev attributes in document order).
Finding judge_topology_file(const parsers::GpuTopology& t, const std::string& matrix_source, const parsers::TopoFile& file,
                            const std::string& file_source, const std::set<std::string>& node_gpu_bus_ids) {
  Finding f;
  f.id = "gpu.topology_file";
  f.layer = "pcie";
  f.subject = file_source;
  std::vector<std::size_t> nic_cols;
  for (std::size_t i = 0; i < t.columns.size(); ++i)
    if (!t.is_gpu(t.columns[i])) nic_cols.push_back(i);
  auto nic_name = [&](const std::string& c) {
    auto it = t.nic_names.find(c);
    return it == t.nic_names.end() ? c : it->second;
  };
  std::set<std::string> matrix_nics;
  for (auto c : nic_cols) matrix_nics.insert(nic_name(t.columns[c]));
  std::vector<TopoFileMatrixGpu> mg;
  for (const auto& r : t.rows) {
    if (!t.is_gpu(r.name)) continue;
    TopoFileMatrixGpu g{r.name, {}, r.numa_affinity, r.cpu_affinity};
    for (auto c : nic_cols) {
      int rank = c < r.links.size() ? parsers::topo_link_rank(r.links[c]) : -1;
      if (rank >= 2 && rank <= 3) g.switch_nics.insert(nic_name(t.columns[c]));  // PIX, PXB
    }
    mg.push_back(std::move(g));
  }
  std::vector<std::size_t> file_gpus, file_nics;
  for (std::size_t i = 0; i < file.pci.size(); ++i) {
    if (file.pci[i].kind == parsers::TopoPci::gpu) file_gpus.push_back(i);
    // A NIC by its <net> names or by class (vendor files often leave the names to runtime).
    if (!file.pci[i].nets.empty() || file.pci[i].kind == parsers::TopoPci::nic) file_nics.push_back(i);
  }
  std::stable_sort(file_gpus.begin(), file_gpus.end(), [&](std::size_t a, std::size_t b) {
    return file.pci[a].gpu_dev.value_or(1 << 30) < file.pci[b].gpu_dev.value_or(1 << 30);
  });
  std::set<std::string> file_net_names;
  for (const auto& n : file.nets) file_net_names.insert(n.name);

  f.add(matrix_source, fmt::format("{} GPUs, {} NICs in the matrix", mg.size(), matrix_nics.size()));
  f.add(file_source, fmt::format("{} GPUs, {} NICs ({} named by <net>) in the topology file", file_gpus.size(), file_nics.size(), file_net_names.size()));
  if (mg.empty() || file_gpus.empty()) {
    f.status = Status::skip;
    f.title = mg.empty() ? "the matrix has no GPU row to compare with the topology file" : "the topology file describes no GPU";
    return f;
  }
  TopoFileTally v;
  f.table.push_back({"GPU", "switch NICs (topo -m)", "switch NICs (file)", "NUMA (topo -m)", "NUMA (file)", "CPUs (topo -m)", "CPUs (file)"});
  const std::size_t n = std::min(mg.size(), file_gpus.size());
  for (std::size_t k = 0; k < n; ++k) topo_file_compare_gpu(mg[k], file, file_gpus[k], file_nics, file_source, f, v);
  if (mg.size() != file_gpus.size()) {
    v.warn.push_back(fmt::format("{} GPUs in the matrix, {} in the file", mg.size(), file_gpus.size()));
    f.add(file_source, v.warn.back() + ": only the first " + std::to_string(n) + " are compared");
  }
  std::vector<std::string> unknown;
  for (const auto& name : file_net_names)
    if (!matrix_nics.empty() && !matrix_nics.count(name)) unknown.push_back(name);
  if (!unknown.empty()) {
    v.warn.push_back(fmt::format("the file names {} the matrix does not show ({})", unknown.size() == 1 ? "a NIC" : "NICs", topo_file_join(unknown)));
    f.add(file_source, v.warn.back());
  }
  f.metric("gpus_compared", static_cast<double>(n));
  f.metric("gpus_misplaced", static_cast<double>(v.wrong.size() + v.cpus_wrong.size()));
  f.metric("gpus_cpu_affinity_differs", static_cast<double>(v.cpus_wrong.size()));
  topo_file_bus_ids(file, file_gpus, node_gpu_bus_ids, file_source, f, v);
  f.add("mapping", "GPUn of the matrix is taken as <gpu dev=\"n\"> of the file (both in PCI order on a node of identical GPUs)");
  topo_file_verdict(f, v, n);
  return f;
}

}  // namespace perfgap::analyzers
