// nccl.topo_file: the NCCL topology file NCCL_TOPO_FILE names (environment, else NCCL's config
// files) is readable and matches the devices present here, and reaches the container. Its layer
// is runtime-topology (what reaches the job's container), not network (NCCL's settings).
#include <fmt/format.h>

#include <algorithm>
#include <cmath>
#include <set>

#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "facts/nccl.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {

// ---- nccl.topo_file ----------------------------------------------------------------------
struct Mismatch {
  bool severe;  // false: link attributes only
  std::string source, observed, expected;
};

std::string class_text(const facts::PciDevice& d) { return fmt::format("class 0x{:06x} vendor 0x{:04x}", d.class_code, d.vendor); }

std::vector<Mismatch> match_topology(facts::Facts& f, const parsers::TopoFile& t, const std::string& file,
                                     const std::vector<facts::PciDevice>& pci, std::string* checked) {
  std::vector<Mismatch> out;
  auto where = [&](int line) { return file + ":" + std::to_string(line); };
  std::set<std::string> listed;
  int numa_checked = 0, link_checked = 0;
  for (const auto& p : t.pci) {
    if (p.kind == parsers::TopoPci::bridge || p.busid.empty()) continue;
    listed.insert(p.busid);
    const char* what = p.kind == parsers::TopoPci::gpu ? "GPU" : p.kind == parsers::TopoPci::nic ? "NIC" : "PCI device";
    auto it = std::find_if(pci.begin(), pci.end(), [&](const auto& d) { return d.bdf == p.busid; });
    if (it == pci.end()) {
      out.push_back({true, where(p.line), fmt::format("{} {}", what, p.busid), "a PCI function here (/sys/bus/pci/devices/" + p.busid + ")"});
      continue;
    }
    const auto& d = *it;
    const std::string dev = "/sys/bus/pci/devices/" + d.bdf;
    if (p.kind == parsers::TopoPci::gpu && !d.is_gpu())
      out.push_back({true, dev, fmt::format("{} is {}", d.bdf, class_text(d)), "an NVIDIA GPU, as " + where(p.line) + " says"});
    if (p.kind == parsers::TopoPci::nic && (d.class_code >> 16) != 0x02)
      out.push_back({true, dev, fmt::format("{} is {}", d.bdf, class_text(d)), "a network device, as " + where(p.line) + " says"});
    if (p.vendor && *p.vendor != 0 && *p.vendor != 0xffff && *p.vendor != d.vendor)
      out.push_back({true, dev + "/vendor", fmt::format("0x{:04x}", d.vendor), fmt::format("0x{:04x} ({})", *p.vendor, where(p.line))});
    if (p.device && *p.device != 0 && *p.device != 0xffff && d.device != 0 && *p.device != d.device)
      out.push_back({true, dev + "/device", fmt::format("0x{:04x}", d.device), fmt::format("0x{:04x} ({})", *p.device, where(p.line))});
    if (p.numaid && *p.numaid >= 0 && d.numa_node && *d.numa_node >= 0) {
      ++numa_checked;
      if (*p.numaid != *d.numa_node)
        out.push_back({true, dev + "/numa_node", std::to_string(*d.numa_node), fmt::format("{} (<cpu numaid> of {})", *p.numaid, where(p.line))});
    }
    if (!p.affinity.empty() && d.local_cpus) {
      if (auto mask = parsers::parse_cpumask(p.affinity); mask && !(*mask == *d.local_cpus))
        out.push_back({true, dev + "/local_cpulist", d.local_cpus_text, fmt::format("{} (<cpu affinity=\"{}\"> of {})", mask->to_list(), p.affinity, where(p.line))});
    }
    if (p.kind != parsers::TopoPci::other && (!p.link_speed.empty() || p.link_width)) {
      const auto& link = facts::pci_link(f, d.bdf);
      auto stated = parsers::parse_topo_link_speed(p.link_speed);
      if (stated && link.speed_gts) {
        ++link_checked;
        if (std::fabs(*stated - *link.speed_gts) > 0.05)
          out.push_back({false, link.speed_source, link.speed_text, fmt::format("{} (link_speed of {})", p.link_speed, where(p.line))});
      }
      if (p.link_width && link.width) {
        ++link_checked;
        if (*p.link_width != *link.width)
          out.push_back({false, link.width_source, std::to_string(*link.width), fmt::format("{} (link_width of {})", *p.link_width, where(p.line))});
      }
    }
  }
  // Devices here that the file leaves out: NCCL adds them on its own, outside the file's layout.
  int gpus_here = 0;
  for (const auto& d : pci) {
    if (!d.is_gpu()) continue;
    ++gpus_here;
    if (!listed.count(d.bdf))
      out.push_back({true, "/sys/bus/pci/devices/" + d.bdf, "GPU " + d.bdf + " present", "listed in " + file});
  }
  std::set<std::string> net_names;
  for (const auto& n : t.nets) net_names.insert(n.name);
  const auto& ib = facts::infiniband(f);
  int nics_here = 0;
  if (ib) {
    for (const auto& dev : *ib) {
      ++nics_here;
      if (!net_names.count(dev.name) && (dev.bdf.empty() || !listed.count(dev.bdf)))
        out.push_back({true, "/sys/class/infiniband/" + dev.name, "RDMA device " + dev.name + (dev.bdf.empty() ? "" : " (" + dev.bdf + ")") + " present", "listed in " + file});
    }
  }
  // An interface that cannot be listed counts as absent, as a <net> NCCL cannot find.
  const auto& ifs = facts::net_interfaces(f);
  for (const auto& n : t.nets) {
    if (n.name.empty()) continue;
    bool is_ib = ib && std::any_of(ib->begin(), ib->end(), [&](const auto& d) { return d.name == n.name; });
    bool is_if = ifs && std::find(ifs->begin(), ifs->end(), n.name) != ifs->end();
    if (!is_ib && !is_if)
      out.push_back({true, where(n.line), "<net name=\"" + n.name + "\">", "an RDMA device (/sys/class/infiniband) or interface (/sys/class/net) of that name here"});
  }
  *checked = fmt::format("bus ids of {} GPU{} and {} RDMA device{} here", gpus_here, gpus_here == 1 ? "" : "s", nics_here, nics_here == 1 ? "" : "s");
  if (numa_checked) *checked += fmt::format(", NUMA nodes of {} device{}", numa_checked, numa_checked == 1 ? "" : "s");
  if (link_checked) *checked += fmt::format(", {} link attribute{}", link_checked, link_checked == 1 ? "" : "s");
  return out;
}

// Reads, parses and matches one topology file; fills `out` (status, title, evidence).
void judge_topology_file(facts::Facts& f, const std::string& path, Finding& out, const std::string& what) {
  const auto& text = facts::topology_file_text(f, path);
  if (!text) {
    const auto& e = text.error();
    out.status = Status::fail;
    if (e.kind == sys::ReadError::too_large) {
      out.title = fmt::format("{} {} is larger than {} MiB: not an NCCL topology file (not read whole)", what, path, parsers::kMaxTopoBytes >> 20);
      out.add(path, "larger than the read limit", "an NCCL topology XML (a few KiB)");
    } else if (e.err == ENOENT || e.err == ENOTDIR) {
      out.title = what + " " + path + " does not exist here: NCCL silently falls back to auto-detection";
      out.add(path, "absent", "present");
    } else {
      out.title = what + " " + path + " is not readable (" + e.reason() + "): NCCL silently falls back to auto-detection";
      out.add(path, e.reason(), "readable");
    }
    return;
  }
  auto topo = parsers::parse_nccl_topo(*text);
  if (!topo) {
    out.status = Status::fail;
    out.title = what + " " + path + " is not NCCL topology XML: " + topo.error();
    out.add(path, topo.error(), "<system version=\"1\"> with <cpu>/<pci> elements");
    return;
  }
  out.metric("topo_gpus", topo->gpus()).metric("topo_nics", topo->nics());
  out.add(path, fmt::format("{} CPU{}, {} GPU{}, {} NIC{}, {} net{}", topo->cpus, topo->cpus == 1 ? "" : "s", topo->gpus(),
                            topo->gpus() == 1 ? "" : "s", topo->nics(), topo->nics() == 1 ? "" : "s", topo->nets.size(),
                            topo->nets.size() == 1 ? "" : "s"));
  if (!topo->nccl_rejects.empty()) {
    out.status = Status::fail;
    out.title = what + " " + path + " is XML that NCCL's own reader rejects: " + topo->nccl_rejects.front();
    for (const auto& r : topo->nccl_rejects) out.add(path, r, "NCCL's XML subset");
    return;
  }
  const auto& pci = f.pci();
  if (!pci) {
    out.status = Status::skip;
    out.title = what + " " + path + " parses, but the PCI devices here cannot be read to match it: " + pci.error();
    return;
  }
  std::string checked;
  auto mism = match_topology(f, *topo, path, *pci, &checked);
  int severe = static_cast<int>(std::count_if(mism.begin(), mism.end(), [](const auto& m) { return m.severe; }));
  std::size_t shown_n = 0;
  for (const auto& m : mism) {
    if (++shown_n > 16) break;
    out.add(m.source, m.observed, m.expected);
  }
  if (mism.size() > 16) out.add(path, fmt::format("{} more mismatches", mism.size() - 16));
  out.metric("mismatches", static_cast<double>(mism.size()));
  if (severe > 0) {
    out.status = Status::fail;
    const auto& first = *std::find_if(mism.begin(), mism.end(), [](const auto& m) { return m.severe; });
    out.title = fmt::format("{} {} does not match the devices here ({} mismatch{}; first: {}: {} vs {})", what, path, severe,
                            severe == 1 ? "" : "es", first.source, first.observed, first.expected);
    return;
  }
  if (!mism.empty()) {
    out.status = Status::warn;
    out.title = fmt::format("{} {} matches the devices here, but {} PCIe link attribute{} differ{} from the hardware", what, path,
                            mism.size(), mism.size() == 1 ? "" : "s", mism.size() == 1 ? "s" : "");
    return;
  }
  out.status = Status::pass;
  out.title = what + " " + path + " matches the devices here (" + checked + ")";
}

std::vector<Finding> topo_file(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "nccl.topo_file";
  const auto& nc = facts::nccl_config(f);
  auto setting = nc.get("NCCL_TOPO_FILE");
  auto out = core::finding(id, layer::runtime_topology, Status::pass, "");
  const std::string stale_fix =
      "Point NCCL_TOPO_FILE at a topology file made for this node type whose bus ids match this node (or unset it and let NCCL detect the topology), and make the launcher carry it: srun --container-mounts=FILE:FILE:ro with NCCL_TOPO_FILE exported, an enroot mounts.d/environ.d entry, or docker -v FILE:FILE:ro -e NCCL_TOPO_FILE=FILE.";
  const std::string impact = "a missing or stale topology file makes NCCL build the wrong rings and trees: AllGather/ReduceScatter 2-4x slower, 13-53% below reference in the public case";
  if (!setting) {
    // NCCL itself loads /var/run/nvidia-topologyd/virtualTopology.xml when the variable is unset.
    const auto& known = facts::known_topology_files(f);
    const auto& base = f.options().baseline;
    std::string base_file;
    if (base) {
      if (auto it = base->environment.find("NCCL_TOPO_FILE"); it != base->environment.end()) base_file = it->second;
      else if (auto jt = base->nccl_conf.find("NCCL_TOPO_FILE"); jt != base->nccl_conf.end()) base_file = jt->second;
      else if (auto kt = base->settings.find("nccl_topo_file"); kt != base->settings.end() && kt->second == "present") base_file = "(a topology file)";
    }
    out.add(f.audited_env_source() + ", NCCL config files", unset_text(f, "NCCL_TOPO_FILE"));
    if (known.empty() && base_file.empty()) {
      out.title = "NCCL_TOPO_FILE is unset and no topology file is known on this node: NCCL detects the topology itself";
      return {out};
    }
    const std::string dflt(facts::kNcclDefaultTopoFile);
    if (std::find(known.begin(), known.end(), dflt) != known.end()) {
      judge_topology_file(f, dflt, out, "NCCL's default topology file");
      if (out.status == Status::fail || out.status == Status::skip) {
        out.fix = stale_fix;
        out.impact = impact;
        return {out};
      }
    }
    for (const auto& k : known) out.add(k, "present");
    if (!base_file.empty()) out.add(base->file + " (host baseline)", "NCCL_TOPO_FILE=" + base_file);
    out.status = Status::warn;
    out.title = "NCCL_TOPO_FILE is unset although a topology file is known on this node" +
                (known.empty() ? " (the host baseline sets " + base_file + ")" : " (" + known.front() + ")");
    out.fix = "Set NCCL_TOPO_FILE explicitly in the job (and carry the file into the container) so every rank loads the same, checked file; or remove the stale file.";
    out.impact = impact;
    return {out};
  }
  out.add(setting->source, "NCCL_TOPO_FILE=" + setting->value);
  const std::string& path = setting->value;
  if (path.empty()) {
    out.status = Status::fail;
    out.title = "NCCL_TOPO_FILE is set but empty: NCCL cannot open it and silently falls back to auto-detection";
    out.fix = stale_fix;
    out.impact = impact;
    return {out};
  }
  if (sys::trim_ws(path) != path) {
    out.status = Status::fail;
    out.title = "NCCL_TOPO_FILE='" + path + "' starts or ends with white space: NCCL does not trim it, so it opens a path that does not exist and silently falls back to auto-detection";
    out.fix = stale_fix + " In NCCL's config files write NAME=VALUE with no spaces around '='.";
    out.impact = impact;
    return {out};
  }
  if (path[0] != '/' && !f.live()) {
    out.status = Status::skip;
    out.title = "NCCL_TOPO_FILE=" + path + " is a relative path: it resolves against the job's working directory, unknown in a captured tree";
    return {out};
  }
  judge_topology_file(f, path, out, "NCCL_TOPO_FILE");
  if (out.status == Status::fail || out.status == Status::warn) {
    out.fix = stale_fix;
    out.impact = impact;
  }
  return {out};
}

}  // namespace

void add_runtime_topology_topo_file(core::Registry& r) {
  r.add({.id = "nccl.topo_file",
         .layer = layer::runtime_topology,
         .summary = "NCCL_TOPO_FILE names a readable NCCL topology file that matches the devices here",
         .rule = "NCCL_TOPO_FILE from the audited environment, else NCCL's config files (NCCL_CONF_FILE or ~/.nccl.conf, then /etc/nccl.conf). `fail` when set but empty, missing or unreadable (NCCL falls back silently); when the file (read up to 4 MiB) is not NCCL topology XML (pugixml; root <system version=\"1\">) or uses XML NCCL's reader rejects (declarations, tabs, split attributes); when a GPU/NIC/PCI bus id, class, vendor/device, <cpu numaid> or affinity mask in it does not match the PCI devices here, or a GPU, RDMA device or <net> here is missing from it. `warn` for link_speed/link_width differing from max_link_speed/max_link_width (NCCL takes the smaller of device and upstream port), and when unset while /etc/nccl/topo.xml, /var/run/nvidia-topologyd/virtualTopology.xml (which NCCL then loads by default, and which is checked the same way) or the baseline names one. `pass` when it matches, or when unset and none is known. Without a readable audited environment (/proc/self/environ) a `pass` becomes `skip` (a variable may be set there); a bad value in a config file still counts.",
         .fix = "A topology file made for this node type, carried into the container by the launcher; or none.",
         .reads = reads::of({reads::nccl_topo_file(), reads::known_topology_files(), reads::pci(), reads::pci_link(),
                             reads::infiniband(), reads::net_interfaces()}),
         .params = {},
         .run = [](facts::Facts& f, const core::Thresholds& th) { return unless_env_unread(f, topo_file(f, th)); }});
}

}  // namespace perfgap::checks
