// runtime-topology layer: what reaches the job's container (run perfgap inside the job's
// container, launcher and allocation): the container itself, /dev/shm, the locked-memory
// limit, device nodes, the host's launcher configuration, drift from a host baseline, and
// the NCCL topology file checked against the devices present.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

#include "checks/all.hpp"
#include "checks/util.hpp"
#include "facts/infiniband.hpp"
#include "facts/nccl.hpp"
#include "facts/runtime.hpp"
#include "parsers/host_files.hpp"
#include "report/redact.hpp"
#include "sys/text.hpp"

namespace perfgap::checks {
namespace {


std::string bytes_text(std::uint64_t b) {
  const double gib = static_cast<double>(b) / (1ull << 30);
  if (gib >= 1) return fmt::format("{:.1f} GiB", gib);
  if (b >= (1ull << 20)) return fmt::format("{:.0f} MiB", static_cast<double>(b) / (1ull << 20));
  return fmt::format("{:.0f} KiB", static_cast<double>(b) / 1024);
}

// ---- container.detect --------------------------------------------------------------------
std::vector<Finding> detect(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "container.detect";
  const auto& c = facts::container_info(f);
  Finding out = core::finding(id, layer::runtime_topology, Status::pass, "");
  for (const auto& [src, obs] : c.evidence) out.add(src, obs);
  if (!c.decided) {
    out.status = Status::skip;
    out.title = "cannot tell whether this runs in a container: /proc/1 (cgroup, environ, comm, ns) and /proc/self/mountinfo are not readable and no marker file or variable is present";
    return {out};
  }
  out.title = c.inside ? "in a container: " + c.name : "not in a container";
  if (!c.inside)
    out.add("marker files (/.dockerenv, /run/.containerenv, /.singularity.d, /.flatpak-info, /run/systemd/container)", "absent");
  return {out};
}

// ---- container.shm -----------------------------------------------------------------------
std::vector<Finding> shm(facts::Facts& f, const core::Thresholds& th) {
  constexpr std::string_view id = "container.shm";
  const double min_gib = th.get("min_gib");
  const auto& s = facts::shm_size(f);
  if (!s.bytes) return {core::finding(id, layer::runtime_topology, Status::skip, "size of /dev/shm unknown: " + s.error)};
  const double gib = static_cast<double>(*s.bytes) / (1ull << 30);
  auto out = core::finding(id, layer::runtime_topology, Status::pass, "");
  out.metric("shm_gib", gib);
  out.add(s.source, s.how.empty() ? bytes_text(*s.bytes) : s.how, fmt::format(">= {} GiB", min_gib));
  if (gib >= min_gib) {
    out.title = "/dev/shm holds " + bytes_text(*s.bytes);
    return {out};
  }
  if (s.source.find("/proc/meminfo") != std::string::npos) {
    // tmpfs's default size, half of the node's memory: the node is small, nothing capped it.
    out.status = Status::warn;
    out.title = fmt::format("/dev/shm holds {}, below {} GiB, because it has tmpfs's default size (half of this node's memory): too small for NCCL and data loaders", bytes_text(*s.bytes), min_gib);
    out.fix = "Run training on nodes with more memory, or mount /dev/shm with an explicit size= (within what the node can spare).";
    out.impact = "NCCL's SHM transport and data-loader workers share memory through /dev/shm: too small and they fail (bus errors) or fall back to slower paths";
    return {out};
  }
  out.status = Status::fail;
  out.title = fmt::format("/dev/shm holds only {}, below {} GiB", bytes_text(*s.bytes), min_gib);
  out.fix = "Give the job's container a larger /dev/shm: docker run --shm-size=16g (or --ipc=host); Kubernetes: an emptyDir with medium: Memory mounted at /dev/shm; enroot/pyxis: a tmpfs line for /dev/shm with size= in /etc/enroot/mounts.d/*.fstab.";
  out.impact = "NCCL's SHM transport and data-loader workers share memory through /dev/shm: too small and they fail (bus errors) or fall back to slower paths";
  return {out};
}

// ---- container.memlock -------------------------------------------------------------------
std::vector<Finding> memlock(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "container.memlock";
  const auto& m = facts::memlock(f);
  if (!m) return {core::finding(id, layer::runtime_topology, Status::skip, "locked-memory limit unknown: " + m.error())};
  auto out = core::finding(id, layer::runtime_topology, Status::pass, "");
  out.add(m->source + (m->source == "/proc/self/limits" ? " Max locked memory" : ""), m->limit.text, "unlimited");
  if (!m->limit.soft) {
    out.title = "RLIMIT_MEMLOCK is unlimited";
    return {out};
  }
  const std::string lim = bytes_text(*m->limit.soft);
  const auto& ib = facts::infiniband(f);
  if (!ib) {
    out.status = Status::skip;
    out.title = "RLIMIT_MEMLOCK is " + lim + " but whether RDMA devices exist is unknown: " + ib.error();
    return {out};
  }
  if (ib->empty()) {
    out.status = Status::skip;
    out.title = "RLIMIT_MEMLOCK is " + lim + "; no RDMA devices here (/sys/class/infiniband), so it does not limit memory registration";
    return {out};
  }
  out.status = Status::fail;
  out.title = fmt::format("RLIMIT_MEMLOCK is {} (soft) with {} RDMA device{}: memory registration fails or falls back", lim, ib->size(), ib->size() == 1 ? "" : "s");
  out.add("/sys/class/infiniband", fmt::format("{} devices ({}{})", ib->size(), ib->front().name, ib->size() > 1 ? ", ..." : ""));
  out.fix = "Run the job with an unlimited locked-memory limit: docker run --ulimit memlock=-1:-1; Slurm: LimitMEMLOCK=infinity in slurmd's systemd unit and memlock unlimited for the submitting shell (srun propagates its limits, PropagateResourceLimits); /etc/security/limits.d: '* - memlock unlimited'.";
  out.impact = "NCCL's IB transport pins its buffers; with a small limit ibv_reg_mr fails and NCCL errors out or runs over sockets";
  return {out};
}

// ---- container.devices -------------------------------------------------------------------
std::vector<Finding> container_devices(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "container.devices";
  auto out = core::finding(id, layer::runtime_topology, Status::pass, "");
  if (!f.absence_is_real() && !facts::device_node_present(f, "/dev")) {
    // A tree without dev/ says nothing about device nodes: not captured is not missing.
    out.status = Status::skip;
    out.title = "device nodes not captured: the tree has no dev/ directory";
    out.add("/dev", "not present in the tree");
    return {out};
  }
  std::vector<std::string> missing, unknown, present;
  std::string skipped;
  const auto& ib = facts::infiniband(f);
  int rdma = 0, gpus_n = 0;
  if (!ib) skipped += "RDMA devices unknown (" + ib.error() + "); ";
  else
    for (const auto& d : *ib) {
      ++rdma;
      if (!d.uverbs) {
        unknown.push_back(d.name + " (no uverbs entry in /sys/class/infiniband_verbs)");
        continue;
      }
      const std::string node = "/dev/infiniband/" + *d.uverbs;
      if (facts::device_node_present(f, node)) {
        present.push_back(node);
      } else {
        missing.push_back(d.name + ": " + node);
        out.add(node, "absent", "device node of " + d.name);
      }
    }
  const auto& gpus = f.visible_gpus();
  if (!gpus) skipped += "GPUs unknown (" + gpus.error() + "); ";
  else {
    for (const auto& g : *gpus) {
      ++gpus_n;
      if (!g.minor) {
        unknown.push_back("GPU " + g.bdf + " (no Device Minor in /proc/driver/nvidia/gpus/" + g.bdf + "/information)");
        continue;
      }
      const std::string node = "/dev/nvidia" + std::to_string(*g.minor);
      if (facts::device_node_present(f, node)) {
        present.push_back(node);
      } else {
        missing.push_back("GPU " + g.bdf + ": " + node);
        out.add(node, "absent", "device node of GPU " + g.bdf + " (Device Minor " + std::to_string(*g.minor) + ")");
      }
    }
    if (!gpus->empty()) {
      if (facts::device_node_present(f, "/dev/nvidiactl")) present.push_back("/dev/nvidiactl");
      else {
        missing.push_back("/dev/nvidiactl");
        out.add("/dev/nvidiactl", "absent", "present with any GPU");
      }
    }
  }
  if (rdma == 0 && gpus_n == 0) {
    out.status = Status::skip;
    out.title = skipped.empty() ? "no RDMA devices and no visible GPUs: no device node to check"
                                : "no device to check: " + skipped.substr(0, skipped.size() - 2);
    return {out};
  }
  if (!present.empty()) {
    std::string list;
    for (std::size_t i = 0; i < present.size() && i < 8; ++i) list += (i ? " " : "") + present[i];
    if (present.size() > 8) list += fmt::format(" and {} more", present.size() - 8);
    out.add("stat", list + " present");
  }
  for (const auto& u : unknown) out.add("unknown", u);
  if (!missing.empty()) {
    out.status = Status::fail;
    std::string list;
    for (std::size_t i = 0; i < missing.size() && i < 4; ++i) list += (i ? ", " : "") + missing[i];
    if (missing.size() > 4) list += fmt::format(" and {} more", missing.size() - 4);
    out.title = fmt::format("{} device node{} not reachable here: {}", missing.size(), missing.size() == 1 ? "" : "s", list);
    out.fix = "Pass the device nodes into the container: docker run --gpus all --device=/dev/infiniband (or each /dev/infiniband/uverbsN); enroot/pyxis: NVIDIA_VISIBLE_DEVICES / MELLANOX_VISIBLE_DEVICES=all for enroot's nvidia and mellanox hooks (and ENROOT_RESTRICT_DEV); Kubernetes: the NVIDIA and RDMA device plugins.";
    out.impact = "without /dev/infiniband/uverbsN NCCL cannot open the HCA and runs over TCP sockets; a GPU without its /dev/nvidiaN is unusable";
    return {out};
  }
  if (!unknown.empty()) {
    out.status = Status::skip;
    out.title = fmt::format("{} device{} without a known device node to look for", unknown.size(), unknown.size() == 1 ? "" : "s");
    return {out};
  }
  out.title = fmt::format("every device node is reachable ({} RDMA device{}, {} GPU{})", rdma, rdma == 1 ? "" : "s", gpus_n, gpus_n == 1 ? "" : "s");
  return {out};
}

// ---- container.launcher_config -----------------------------------------------------------
std::vector<Finding> launcher(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "container.launcher_config";
  const auto& c = facts::container_info(f);
  if (c.inside)
    return {core::finding(id, layer::runtime_topology, Status::skip, "a host-side check: this runs inside " + c.name + "; run it on the host")};
  const auto& nc = facts::nccl_config(f);
  auto topo = nc.get("NCCL_TOPO_FILE");
  auto out = core::finding(id, layer::runtime_topology, Status::pass, "");
  if (!topo || topo->value.empty()) {
    out.title = "the host sets no NCCL_TOPO_FILE: nothing to carry into containers";
    out.add(f.audited_env_source() + ", /etc/nccl.conf", unset_text(f, "NCCL_TOPO_FILE"));
    return {out};
  }
  const std::string path = topo->value;
  out.add(topo->source, "NCCL_TOPO_FILE=" + path);
  const auto& lc = facts::launcher_config(f);
  for (const auto& e : lc.errors) out.add("unreadable", e);
  if (!lc.enroot_dir && lc.pyxis.empty()) {
    out.status = Status::skip;
    out.title = "no enroot configuration (/etc/enroot) and no pyxis in the Slurm plugstack on this host: containers are not started through enroot here";
    return {out};
  }
  for (const auto& p : lc.pyxis) out.add("plugstack", p);
  // The variable reaches containers through an environ.d line, or (when it comes from a
  // config file) through that file mounted at the same place.
  std::string var_by, file_by;
  for (const auto& file : lc.environ)
    for (const auto& [n, line] : file.lines)
      if (var_by.empty() && parsers::enroot_environ_name(line) == "NCCL_TOPO_FILE") var_by = file.path + ":" + std::to_string(n);
  std::string conf_path;
  if (!topo->from_env) conf_path = topo->source.substr(0, topo->source.rfind(':'));
  for (const auto& file : lc.mounts)
    for (const auto& [n, line] : file.lines) {
      if (file_by.empty() && parsers::enroot_mount_carries(line, path)) file_by = file.path + ":" + std::to_string(n);
      if (var_by.empty() && !conf_path.empty() && parsers::enroot_mount_carries(line, conf_path))
        var_by = file.path + ":" + std::to_string(n) + " (mounts " + conf_path + ")";
    }
  out.add("/etc/enroot/environ.d/*.env", var_by.empty() ? "no entry for NCCL_TOPO_FILE" : "NCCL_TOPO_FILE at " + var_by);
  out.add("/etc/enroot/mounts.d/*.fstab", file_by.empty() ? "no entry mounting " + path : path + " mounted at " + file_by);
  if (!var_by.empty() && !file_by.empty()) {
    out.title = "enroot's configuration carries NCCL_TOPO_FILE and " + path + " into containers";
    return {out};
  }
  out.status = Status::warn;
  std::vector<std::string> lack;
  if (var_by.empty()) lack.push_back("the variable");
  if (file_by.empty()) lack.push_back("the file " + path);
  out.title = "the host sets NCCL_TOPO_FILE=" + path + " but no enroot entry carries " + (lack.size() == 2 ? lack[0] + " or " + lack[1] : lack[0]) + " into containers";
  out.fix = fmt::format(
      "Carry both into every container: /etc/enroot/environ.d/50-nccl-topo.env with the line NCCL_TOPO_FILE={0}, and "
      "/etc/enroot/mounts.d/50-nccl-topo.fstab with the line '{0} {0} none x-create=file,bind,ro,nosuid,nodev'; per job: "
      "srun --container-mounts={0}:{0}:ro with NCCL_TOPO_FILE exported (--container-env=NCCL_TOPO_FILE to override the image).",
      path);
  out.impact = "NCCL in the container silently falls back to topology auto-detection: AllGather/ReduceScatter 2-4x slower in the public case";
  return {out};
}

// ---- container.env_drift -----------------------------------------------------------------
bool fail_class(std::string_view name) { return sys::starts_with(name, "NCCL_") || sys::starts_with(name, "UCX_"); }
bool warn_class(std::string_view name) { return sys::starts_with(name, "CUDA_") || sys::starts_with(name, "NVIDIA_"); }

// How this runtime passes a variable at container start.
std::string env_pass(const facts::ContainerInfo& c, const std::string& name, const std::string& nv) {
  if (c.runtime == "docker") return "docker run -e " + nv + " (or --env-file); check the image's ENV does not override it";
  if (c.runtime == "podman") return "podman run -e " + nv + "; check the image's ENV does not override it";
  if (c.runtime == "enroot")
    return "export " + nv + " in the job (pyxis passes the job's environment) with srun --container-env=" + name +
           " so the host value wins over the image's, or add " + nv + " to /etc/enroot/environ.d/*.env on the host";
  if (c.runtime == "kubernetes") return "set it in the pod spec (env: - name: " + name + ")";
  if (c.runtime == "apptainer") return "apptainer exec --env " + nv + " (or APPTAINERENV_" + name + " on the host)";
  if (c.runtime == "bubblewrap") return "bwrap --setenv " + name + " " + nv.substr(name.size() + 1);
  if (c.runtime == "runc") return "add \"" + nv + "\" to process.env in the bundle's config.json (or the engine's -e)";
  return "pass it at container start: pyxis srun --container-env=" + name + " (exported in the job), an enroot environ.d line " +
         nv + ", docker/podman run -e " + nv + ", bwrap --setenv, or the pod spec's env";
}

// And how it makes a host file visible at the same path.
std::string file_mount(const facts::ContainerInfo& c, const std::string& path) {
  if (c.runtime == "docker" || c.runtime == "podman") return fmt::format("{0} run -v {1}:{1}:ro", c.runtime, path);
  if (c.runtime == "enroot") return fmt::format("srun --container-mounts={0}:{0}:ro, or '{0} {0} none x-create=file,bind,ro' in /etc/enroot/mounts.d/*.fstab", path);
  if (c.runtime == "bubblewrap") return fmt::format("bwrap --ro-bind {0} {0}", path);
  if (c.runtime == "runc") return fmt::format("a bind mount of {0} at {0} in config.json's mounts", path);
  if (c.runtime == "apptainer") return fmt::format("apptainer exec --bind {0}:{0}:ro", path);
  return fmt::format("srun --container-mounts={0}:{0}:ro (pyxis); '{0} {0} none x-create=file,bind,ro' in /etc/enroot/mounts.d/*.fstab; "
                     "docker/podman run -v {0}:{0}:ro; bwrap --ro-bind {0} {0}; a bind mount of {0} in the runc bundle's config.json",
                     path);
}

std::string env_fix(const facts::ContainerInfo& c, const std::string& name, const std::string& value, bool from_conf,
                    const std::string& host_file) {
  const std::string nv = name + "=" + value;
  if (from_conf) {
    return "The host sets it in /etc/nccl.conf: mount that file into the container (" + file_mount(c, "/etc/nccl.conf") +
           "), or set " + nv + " in the job's environment.";
  }
  std::string fix = env_pass(c, name, nv);
  fix[0] = static_cast<char>(std::toupper(static_cast<unsigned char>(fix[0])));
  // The variable names a file the host has: the variable alone makes NCCL fail to open it.
  if (!host_file.empty()) fix += "; and make the file itself visible at the same path: " + file_mount(c, host_file);
  return fix + ".";
}

std::vector<Finding> env_drift(facts::Facts& f, const core::Thresholds&) {
  constexpr std::string_view id = "container.env_drift";
  const auto& base = f.options().baseline;
  if (!base) return {core::finding(id, layer::runtime_topology, Status::skip, "no host baseline given (--baseline HOST.json from perfgap check --format json on the host)")};
  const auto& nc = facts::nccl_config(f);
  const auto& c = facts::container_info(f);
  const std::string host = base->node_name.empty() ? "the host" : "the host " + base->node_name;
  std::set<std::string> names;
  for (const auto& [k, v] : base->environment)
    if (fail_class(k) || warn_class(k)) names.insert(k);
  for (const auto& [k, v] : base->nccl_conf)
    if (fail_class(k) || warn_class(k)) names.insert(k);
  std::vector<Finding> out;
  int compared = 0;
  for (const auto& name : names) {
    ++compared;
    bool host_from_conf = !base->environment.count(name);
    const std::string host_value = host_from_conf ? base->nccl_conf.at(name) : base->environment.at(name);
    const std::string host_src = base->file + " node." + (host_from_conf ? "nccl_conf." : "environment.") + name;
    auto here = nc.get(name);
    const Status bad = fail_class(name) ? Status::fail : Status::warn;
    auto fnd = core::finding(id, layer::runtime_topology, bad, "");
    fnd.subject = name;
    if (!here) {
      fnd.title = fmt::format("{} is set on {} ({}) but missing here", name, host, host_from_conf ? "nccl.conf" : "environment");
      fnd.add(host_src, shown(name, host_value));
      fnd.add(f.audited_env_source() + ", NCCL config files", "unset", shown(name, host_value));
    } else {
      bool redacted = host_value == report::kRedacted || report::secret_name(name);
      if (redacted || here->value == host_value) continue;
      fnd.title = fmt::format("{} differs from {}: '{}' here, '{}' there", name, host, here->value, host_value);
      fnd.add(host_src, host_value);
      fnd.add(here->source, here->value, host_value);
    }
    const bool host_has_file = name == "NCCL_TOPO_FILE" && base->settings.count("nccl_topo_file") &&
                               base->settings.at("nccl_topo_file") == "present" && !host_value.empty() && host_value[0] == '/';
    fnd.fix = env_fix(c, name, shown(name, host_value), host_from_conf, host_has_file && !here ? host_value : std::string());
    if (bad == Status::warn) fnd.impact = "images set their own CUDA_/NVIDIA_ values; check this one is intended";
    else if (name == "NCCL_TOPO_FILE") fnd.impact = "NCCL silently falls back to topology auto-detection: AllGather/ReduceScatter 2-4x slower in the public case";
    else fnd.impact = "NCCL runs with different settings than were validated on the host";
    out.push_back(std::move(fnd));
  }
  // The topology file itself: the host had it, here it is missing.
  if (auto it = base->settings.find("nccl_topo_file"); it != base->settings.end() && it->second == "present") {
    auto state = facts::nccl_topo_file_state(f);
    auto topo = nc.get("NCCL_TOPO_FILE");
    if (state == "missing" && topo) {
      auto fnd = core::finding(id, layer::runtime_topology, Status::fail, "");
      fnd.subject = topo->value;
      fnd.title = "the topology file " + topo->value + " (NCCL_TOPO_FILE) exists on " + host + " but not here";
      fnd.add(base->file + " node.settings.nccl_topo_file", "present");
      fnd.add(topo->value, "absent", "present");
      fnd.fix = "Mount it: " + file_mount(c, topo->value) + ".";
      fnd.impact = "NCCL silently falls back to topology auto-detection: AllGather/ReduceScatter 2-4x slower in the public case";
      out.push_back(std::move(fnd));
    }
  }
  if (out.empty()) {
    auto fnd = core::finding(id, layer::runtime_topology, Status::pass,
                             fmt::format("NCCL_/UCX_/CUDA_/NVIDIA_ settings match {} ({} compared)", host, compared));
    fnd.add(base->file, fmt::format("{} variables and nccl.conf settings", compared));
    out.push_back(std::move(fnd));
  }
  return out;
}

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

void register_runtime_topology(core::Registry& r) {
  r.add({.id = "container.detect",
         .layer = layer::runtime_topology,
         .summary = "names the container runtime perfgap runs in (or none)",
         .rule = "`pass` naming the runtime (docs/CONTAINERS.md lists every signal): Kubernetes (KUBERNETES_SERVICE_HOST, kubepods "
                 "in /proc/1/cgroup, /var/lib/kubelet/pods bind mounts), enroot/pyxis (ENROOT_*, PYXIS_* variables, enroot data "
                 "paths), Apptainer/Singularity (/.singularity.d, APPTAINER_CONTAINER), Podman (/run/.containerenv, libpod), Docker "
                 "(/.dockerenv, /var/lib/docker paths), containerd, LXC, systemd-nspawn (`container=` in /proc/1/environ or "
                 "/run/systemd/container, their cgroup and storage paths), bubblewrap (PID 1 is bwrap, /.flatpak-info), runc or "
                 "another OCI runtime (/proc/kcore and the other default masked paths in /proc/self/mountinfo); without a marker, "
                 "a container all the same when the root differs from PID 1's (live), or two of: a mount namespace other than PID "
                 "1's, PID 1 not an init system, PID 1 at the root of every cgroup hierarchy, an overlay/squashfs/tmpfs root. "
                 "Else \"not in a container\". `skip` when nothing of /proc/1 or /proc/self/mountinfo is readable and no marker "
                 "is present. Host-only checks skip wherever this says a container.",
         .fix = "None: information for the other runtime checks.",
         .reads = reads::container(),
         .params = {},
         .run = detect});
  r.add({.id = "container.shm",
         .layer = layer::runtime_topology,
         .summary = "/dev/shm is large enough for NCCL's SHM transport and data loaders",
         .rule = "Size of /dev/shm: live, statvfs; captured tree, the size= option of the last /dev/shm line in /proc/self/mounts (else /proc/mounts), without one tmpfs's default of half of MemTotal (/proc/meminfo). `fail` below min_gib (1 GiB) when something set the size (size=, a container runtime's default); `warn` when it is tmpfs's default (half of MemTotal) on a node too small for more; `skip` when the size cannot be read.",
         .fix = "docker --shm-size / --ipc=host; a Memory emptyDir; a sized tmpfs in enroot's mounts.d.",
         .reads = reads::shm_size(),
         .params = {{"min_gib", 1, "smallest /dev/shm (GiB) that passes"}},
         .run = shm});
  r.add({.id = "container.memlock",
         .layer = layer::runtime_topology,
         .summary = "the locked-memory limit does not cap RDMA memory registration",
         .rule = "RLIMIT_MEMLOCK (live: getrlimit; captured tree: the 'Max locked memory' row of /proc/self/limits). `pass` when the soft limit is unlimited; `fail` when it is not and RDMA devices exist (/sys/class/infiniband); `skip` when it is limited but there is no RDMA device, or the limit is unreadable.",
         .fix = "docker --ulimit memlock=-1:-1; LimitMEMLOCK=infinity for slurmd; memlock unlimited in limits.d.",
         .reads = reads::of({reads::memlock(), reads::infiniband()}),
         .params = {},
         .run = memlock});
  r.add({.id = "container.devices",
         .layer = layer::runtime_topology,
         .summary = "RDMA devices and visible GPUs have reachable device nodes",
         .rule = "For every RDMA device, /dev/infiniband/<uverbsN> (from /sys/class/infiniband_verbs/*/ibdev); for every visible GPU, /dev/nvidia<Device Minor> (from /proc/driver/nvidia/gpus/*/information), and /dev/nvidiactl: stat only, never opened. `fail` when any is missing; `skip` when there is no such device, a device's node cannot be determined, or a captured tree has no dev/ directory at all (not captured is not missing).",
         .fix = "docker --gpus/--device=/dev/infiniband; enroot's nvidia/mellanox hooks; device plugins.",
         .reads = reads::of({reads::infiniband(), reads::visible_gpus(), reads::device_nodes()}),
         .params = {},
         .run = container_devices});
  r.add({.id = "container.launcher_config",
         .layer = layer::runtime_topology,
         .summary = "the host's enroot configuration carries NCCL_TOPO_FILE and its file into containers",
         .rule = "On the host (`skip` inside a container): when NCCL_TOPO_FILE is set (environment or NCCL's config files), `warn` unless an /etc/enroot/environ.d/*.env line names NCCL_TOPO_FILE (or a mounts.d line mounts the config file that sets it) and an /etc/enroot/mounts.d/*.fstab line bind-mounts the file (or a directory above it) at the same path. `pass` when the host sets no NCCL_TOPO_FILE; `skip` when neither /etc/enroot nor a pyxis line in /etc/slurm/plugstack.conf(.d) exists. Without a readable audited environment (/proc/self/environ) a `pass` becomes `skip` (a variable may be set there); a bad value in a config file still counts.",
         .fix = "NCCL_TOPO_FILE=FILE in /etc/enroot/environ.d/*.env and 'FILE FILE none x-create=file,bind,ro' in /etc/enroot/mounts.d/*.fstab.",
         .reads = reads::of({reads::container(), reads::launcher_config(), reads::nccl_config()}),
         .params = {},
         .run = [](facts::Facts& f, const core::Thresholds& th) { return unless_env_unread(f, launcher(f, th)); }});
  r.add({.id = "container.env_drift",
         .layer = layer::runtime_topology,
         .summary = "NCCL/UCX/CUDA/NVIDIA settings here match the host baseline",
         .rule = "With --baseline HOST.json: for every NCCL_/UCX_/CUDA_/NVIDIA_ name in the baseline's node.environment or node.nccl_conf, the value NCCL sees here (environment, else NCCL's config files). One finding per name (subject: the name): `fail` for a missing or different NCCL_/UCX_ setting, `warn` for CUDA_/NVIDIA_; a `<redacted>` value is compared for presence only. `fail` too when the baseline's topology file was present and the file NCCL_TOPO_FILE names is absent here. `skip` without --baseline.",
         .fix = "The launcher line that carries it: srun --container-env/--container-mounts, enroot environ.d/mounts.d, docker -e/-v.",
         .reads = reads::of({reads::container(), reads::nccl_topo_file()}),
         .params = {},
         .run = env_drift});
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
