#include "fleet/expect.hpp"

#include <algorithm>
#include <cmath>
#include <set>

#include <fmt/format.h>

#include "sys/text.hpp"

namespace perfgap::fleet {

namespace {

using report::Finding;
using report::Status;

constexpr std::string_view kAspectNames[] = {"counts", "links", "placement", "versions", "settings", "measured"};
constexpr std::string_view kAspectIds[] = {"expect.counts",   "expect.links",    "expect.placement",
                                           "expect.versions", "expect.settings", "expect.measured"};

bool ran(const Finding& f) { return f.status != Status::skip && f.status != Status::error; }

// 16.0 -> "16", 2.5 -> "2.5": the way a person writes the figure in the file.
std::string expect_number(double v) {
  if (std::floor(v) == v && std::fabs(v) < 1e15) return fmt::format("{}", static_cast<long long>(v));
  return fmt::format("{}", v);
}

// "2 GPU(s): 2 x NVIDIA H100 80GB HBM3, driver 550.90.07" -> "NVIDIA H100 80GB HBM3" (models, counts dropped:
// the count is judged, so that a GPU fallen off the bus fails instead of making another kind).
std::string gpu_models(std::string_view title) {
  auto colon = title.find("): ");
  if (colon == std::string_view::npos) return {};
  auto rest = title.substr(colon + 3);
  if (auto drv = rest.rfind(", driver "); drv != std::string_view::npos) rest = rest.substr(0, drv);
  std::vector<std::string> models;
  for (auto part : sys::split(rest, ',')) {
    part = sys::trim_ws(part);
    auto x = part.find(" x ");
    models.emplace_back(x == std::string_view::npos ? part : part.substr(x + 3));
  }
  return fmt::format("{}", fmt::join(models, " + "));
}

// net.ib.counters names the port "mlx5_0:1 (0000:2a:00.0, NUMA node of GPU 0)": the GPUs
// nearest it, or "none" when it names only the NIC's PCI address.
std::optional<std::string> nearest_gpus(std::string_view title) {
  auto open = title.find(" (");
  auto close = title.find("):");
  if (open == std::string_view::npos || close == std::string_view::npos || close < open) return std::nullopt;
  auto inside = title.substr(open + 2, close - open - 2);
  auto comma = inside.find(", ");
  return comma == std::string_view::npos ? std::string("none") : std::string(inside.substr(comma + 2));
}

void gather_ports(const Finding& f, NodeFacts& out, int& ports, int& active, std::set<std::string>& models) {
  auto& counts = out.facts[Aspect::counts];
  ++ports;
  for (const auto& e : f.evidence)
    if (e.source == "NIC model" && !e.observed.empty() && !sys::starts_with(e.observed, "unknown")) {
      models.insert(e.observed);
    } else if (e.source.ends_with("/state")) {
      counts["port " + f.subject + " state"] = e.observed;
      active += e.observed == "ACTIVE" ? 1 : 0;
    } else if (e.source.ends_with("/fw_ver") && !e.observed.empty()) {
      // "mlx5_0:1" -> the device's firmware, one entry per NIC however many ports it has.
      out.facts[Aspect::versions]["nic " + f.subject.substr(0, f.subject.find(':')) + " firmware"] = e.observed;
    }
  if (auto r = metric_of(f, "rate_gbps")) out.facts[Aspect::links]["port " + f.subject + " rate_gbps"] = expect_number(*r);
}

void gather_pcie(const Finding& f, NodeFacts& out) {
  const std::string role = sys::starts_with(f.title, "GPU") ? "gpu" : sys::starts_with(f.title, "NIC") ? "nic" : "device";
  auto& links = out.facts[Aspect::links];
  if (auto w = metric_of(f, "link_width")) links[role + " " + f.subject + " pcie_width"] = expect_number(*w);
  if (auto s = metric_of(f, "link_speed_gts")) links[role + " " + f.subject + " pcie_gts"] = expect_number(*s);
}

void add_source(NodeFacts& out, const std::string& id) {
  if (std::find(out.sources_read.begin(), out.sources_read.end(), id) == out.sources_read.end()) out.sources_read.push_back(id);
}

}  // namespace

std::optional<double> metric_of(const Finding& f, std::string_view name) {
  for (const auto& [n, v] : f.metrics)
    if (n == name) return v;
  return std::nullopt;
}

std::string_view aspect_name(Aspect a) { return kAspectNames[static_cast<int>(a)]; }
std::string_view aspect_id(Aspect a) { return kAspectIds[static_cast<int>(a)]; }
std::optional<Aspect> aspect_from(std::string_view name) {
  for (auto a : kAspects)
    if (aspect_name(a) == name) return a;
  return std::nullopt;
}

std::string_view source_of(Aspect a, std::string_view key) {
  if (from_probe(key)) return "probe";
  if (from_measurement(key)) return "nccl-tests";
  if (sys::starts_with(key, "nic ")) return "net.ib.ports";
  if (sys::starts_with(key, "gpu ") && (key.ends_with(" nvlinks_up") || key.ends_with(" nvlink_gbps"))) return "gpu.nvlink";
  if (sys::starts_with(key, "gpu ") && key.ends_with(" numa_node")) return "gpu.inventory";
  if (a == Aspect::versions || a == Aspect::settings) return "node";
  if (sys::starts_with(key, "port ")) return a == Aspect::placement ? "net.ib.counters" : "net.ib.ports";
  if (key == "rdma_ports" || key == "rdma_ports_active" || key == "nic_models") return "net.ib.ports";
  if (key == "gpus") return "gpu.inventory";
  return "pcie.link";
}

NodeFacts gather_facts(std::string_view node, std::string_view kernel, const report::StringMap& settings,
                       std::span<const report::Finding> findings) {
  NodeFacts out;
  out.node = std::string(node);
  add_source(out, "node");
  // gpu.inventory says whether there is a GPU; without it (not run, PCI unreadable) the kind cannot tell.
  std::string gpus = "GPU not read";
  int ports = 0, active = 0;
  std::set<std::string> nic_models;
  for (const auto& f : findings) {
    // No GPU on PCI is a count read (0), not a count unknown: a node whose GPUs all fell off the
    // bus fails its kind's count instead of being "not read".
    if (f.id == "gpu.inventory" && f.status == report::Status::skip && sys::starts_with(f.title, "no NVIDIA GPU")) {
      gpus = "no GPU";
      out.facts[Aspect::counts]["gpus"] = "0";
      add_source(out, f.id);
    }
    if (!ran(f)) continue;
    add_source(out, f.id);
    if (f.id == "gpu.inventory") {
      if (auto n = metric_of(f, "gpus_pci")) out.facts[Aspect::counts]["gpus"] = expect_number(*n);
      if (auto m = gpu_models(f.title); !m.empty()) gpus = m;
      for (const auto& [name, v] : f.metrics)
        if (sys::starts_with(name, "numa_node.")) out.facts[Aspect::placement]["gpu " + name.substr(10) + " numa_node"] = expect_number(v);
    } else if (f.id == "gpu.nvlink" && !f.subject.empty()) {
      if (auto up = metric_of(f, "links_up")) out.facts[Aspect::counts]["gpu " + f.subject + " nvlinks_up"] = expect_number(*up);
      if (auto gbps = metric_of(f, "link_gbps")) out.facts[Aspect::links]["gpu " + f.subject + " nvlink_gbps"] = expect_number(*gbps);
    } else if (f.id == "net.ib.ports" && !f.subject.empty()) {
      gather_ports(f, out, ports, active, nic_models);
    } else if (f.id == "pcie.link" && !f.subject.empty()) {
      gather_pcie(f, out);
    } else if (f.id == "net.ib.counters" && !f.subject.empty()) {
      if (auto near = nearest_gpus(f.title)) out.facts[Aspect::placement]["port " + f.subject + " nearest_gpus"] = *near;
    }
  }
  if (std::count(out.sources_read.begin(), out.sources_read.end(), "net.ib.ports")) {
    out.facts[Aspect::counts]["rdma_ports"] = std::to_string(ports);
    out.facts[Aspect::counts]["rdma_ports_active"] = std::to_string(active);
  }
  const auto known = [](const std::string& v) { return !v.empty() && v != report::kSettingUnknown; };
  if (known(std::string(kernel))) out.facts[Aspect::versions]["kernel"] = std::string(kernel);
  std::string cpu = "unknown CPU";
  for (const auto& [k, v] : settings) {
    if (!known(v)) continue;
    if (k == "cpu_model") cpu = v;
    else if (k == "nvidia_driver") out.facts[Aspect::versions][k] = v;
    else out.facts[Aspect::settings][k] = v;
  }
  out.kind = gpus + " / " + cpu;
  // The RDMA NICs' models make part of the kind (one fleet may hold nodes of two NIC SKUs); a
  // node that lost every NIC of a model still finds its kind (find_kind) and fails on it.
  if (!nic_models.empty()) {
    const auto models = fmt::format("{}", fmt::join(nic_models, " + "));
    out.facts[Aspect::counts]["nic_models"] = models;
    out.kind += " / " + models;
  }
  return out;
}

namespace {
// A kind's parts: "GPU / CPU / NIC + NIC" (the NICs only where the node has RDMA ports).
struct KindParts {
  std::string_view gpus, cpu;
  std::vector<std::string_view> nics;
};
KindParts kind_parts(std::string_view kind) {
  KindParts p;
  auto first = kind.find(" / ");
  if (first == std::string_view::npos) {
    p.gpus = kind;
    return p;
  }
  p.gpus = kind.substr(0, first);
  auto rest = kind.substr(first + 3);
  auto second = rest.find(" / ");
  p.cpu = rest.substr(0, second);
  if (second != std::string_view::npos)
    for (auto m : sys::split(rest.substr(second + 3), '+')) p.nics.push_back(sys::trim_ws(m));
  return p;
}
}  // namespace

const KindExpectation* find_kind(const Expectations& e, const NodeFacts& n) {
  if (const auto* k = e.find(n.kind)) return k;
  // The one kind the node would be without what it lost: every NIC of a model (counts'
  // nic_models then fails), every GPU while the driver is loaded (counts' gpus fails), or a file learned before NIC models
  // made part of the kind. Never a kind that lacks a NIC model the node has: that node is
  // another SKU, not a node of the kind that lost something.
  const auto node = kind_parts(n.kind);
  auto held_to = [&](bool lost_gpus) {
    const KindExpectation* found = nullptr;
    for (const auto& k : e.kinds) {
      const auto kp = kind_parts(k.kind);
      if (kp.cpu != node.cpu) continue;
      if (lost_gpus ? kp.gpus == "no GPU" || kp.gpus == "GPU not read" : kp.gpus != node.gpus) continue;
      const bool other_nic = !kp.nics.empty() && std::any_of(node.nics.begin(), node.nics.end(), [&](std::string_view m) {
        return std::find(kp.nics.begin(), kp.nics.end(), m) == kp.nics.end();
      });
      if (other_nic) continue;
      if (found) return static_cast<const KindExpectation*>(nullptr);  // two kinds would fit: not ours to choose
      found = &k;
    }
    return found;
  };
  if (const auto* k = held_to(false)) return k;
  // No GPU on PCI with NVIDIA's driver loaded: GPUs fallen off the bus, not a CPU-only node
  // (which a file learned on the GPU nodes alone must not drain).
  const auto versions = n.facts.find(Aspect::versions);
  const bool driver = versions != n.facts.end() && versions->second.count("nvidia_driver");
  return node.gpus == "no GPU" && driver ? held_to(true) : nullptr;
}

const KindExpectation* Expectations::find(std::string_view kind) const {
  for (const auto& k : kinds)
    if (k.kind == kind) return &k;
  return nullptr;
}

}  // namespace perfgap::fleet
