// What reaches the job's container (run perfgap inside the job's container, launcher and
// allocation): the container itself, /dev/shm, the locked-memory limit, device nodes, the host's
// launcher configuration, and drift from a host baseline.
#include <fmt/format.h>

#include <algorithm>
#include <cctype>
#include <cmath>
#include <set>

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

// Nothing found to differ: a pass only where something was compared. A baseline whose
// environment was never read says nothing of the host's variables (0 compared is no match).
Finding env_drift_nothing_differs(const facts::Baseline& base, const std::string& host, int compared) {
  constexpr std::string_view id = "container.env_drift";
  if (base.environment_unread) {
    auto fnd = core::finding(id, layer::runtime_topology, Status::skip,
                             fmt::format("the baseline's environment was not read: {}'s NCCL_/UCX_/CUDA_/NVIDIA_ variables are unknown, "
                                         "nothing of them compared{}",
                                         host, compared ? fmt::format(" ({} nccl.conf setting{} match)", compared, compared == 1 ? "" : "s") : ""));
    fnd.add(base.file + " node.environment", "{} (settings.nccl_topo_file unknown: the audited environment was not readable where it was taken)",
            "the host's audited environment");
    fnd.fix = "Take the baseline on the host with the job's environment readable: perfgap check --format json in the job's shell or "
              "allocation (for a captured tree, with its proc/self/environ), then check --baseline with it again.";
    return fnd;
  }
  if (compared == 0) {
    auto fnd = core::finding(id, layer::runtime_topology, Status::skip,
                             fmt::format("{} sets no NCCL_/UCX_/CUDA_/NVIDIA_ variable or nccl.conf setting: nothing to compare", host));
    fnd.add(base.file, "no NCCL_/UCX_/CUDA_/NVIDIA_ name in node.environment or node.nccl_conf");
    fnd.fix = "None if the host sets none; else take the baseline in the job's environment on the host (perfgap check --format json there).";
    return fnd;
  }
  auto fnd = core::finding(id, layer::runtime_topology, Status::pass,
                           fmt::format("NCCL_/UCX_/CUDA_/NVIDIA_ settings match {} ({} compared)", host, compared));
  fnd.add(base.file, fmt::format("{} variables and nccl.conf settings", compared));
  return fnd;
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
  if (out.empty()) out.push_back(env_drift_nothing_differs(*base, host, compared));
  return out;
}

}  // namespace

void add_runtime_topology_container(core::Registry& r) {
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
                 "Else \"not in a container\". An engine's storage path counts where it is a bind's source or the root's layers, "
                 "never for a mount that itself sits under it (the host running the engine). `skip` when nothing of /proc/1 or /proc/self/mountinfo is readable and no marker "
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
         .rule = "With --baseline HOST.json: for every NCCL_/UCX_/CUDA_/NVIDIA_ name in the baseline's node.environment or node.nccl_conf, the value NCCL sees here (environment, else NCCL's config files). One finding per name (subject: the name): `fail` for a missing or different NCCL_/UCX_ setting, `warn` for CUDA_/NVIDIA_; a `<redacted>` value is compared for presence only. `fail` too when the baseline's topology file was present and the file NCCL_TOPO_FILE names is absent here. `pass` when every name compared matches; never with nothing compared: `skip` without --baseline, when the baseline's environment was not read (node.environment empty and settings.nccl_topo_file `unknown`) and nothing differs, and when the baseline names no such setting.",
         .fix = "The launcher line that carries it: srun --container-env/--container-mounts, enroot environ.d/mounts.d, docker -e/-v.",
         .reads = reads::of({reads::container(), reads::nccl_topo_file()}),
         .params = {},
         .run = env_drift});
}

}  // namespace perfgap::checks
