#include "facts/runtime.hpp"

#include <sys/resource.h>
#include <sys/stat.h>
#include <sys/sysmacros.h>

#include <algorithm>
#include <cctype>
#include <set>
#include <stdexcept>

#include <fmt/format.h>

#include "parsers/host_files.hpp"
#include "parsers/mounts.hpp"
#include "sys/paths.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

// ---- container ---------------------------------------------------------------------------

namespace {

// The runtimes container.detect names, most specific first: a pod's containers also carry
// their engine's marks (a Kubernetes pod under containerd, enroot started by pyxis), and the
// OCI runtime (runc) sits under Docker, Podman and containerd alike.
enum class Runtime { kubernetes, enroot, apptainer, podman, docker, containerd, lxc, nspawn, bubblewrap, runc, other };
struct RuntimeName {
  const char* id;    // report.node.container
  const char* name;  // for titles
};
RuntimeName runtime_name(Runtime r, bool pyxis) {
  switch (r) {
    case Runtime::kubernetes: return {"kubernetes", "a Kubernetes pod"};
    case Runtime::enroot: return {"enroot", pyxis ? "enroot (pyxis)" : "enroot"};
    case Runtime::apptainer: return {"apptainer", "Apptainer/Singularity"};
    case Runtime::podman: return {"podman", "Podman"};
    case Runtime::docker: return {"docker", "Docker"};
    case Runtime::containerd: return {"containerd", "a containerd container"};
    case Runtime::lxc: return {"lxc", "an LXC container"};
    case Runtime::nspawn: return {"systemd-nspawn", "a systemd-nspawn container"};
    case Runtime::bubblewrap: return {"bubblewrap", "a bubblewrap (bwrap) sandbox"};
    case Runtime::runc: return {"runc", "an OCI runtime container (runc or crun, no engine marker)"};
    case Runtime::other: break;
  }
  return {"other", "a container (no runtime marker; decided from runtime-independent signals)"};
}

// container=VALUE, as systemd-nspawn, LXC, Podman, Flatpak and others set it for PID 1 (and
// systemd copies into /run/systemd/container).
std::optional<Runtime> runtime_of_container_var(std::string_view v) {
  v = sys::trim_ws(v);
  if (v == "docker") return Runtime::docker;
  if (v == "podman") return Runtime::podman;
  if (v == "enroot") return Runtime::enroot;
  if (v == "lxc" || v == "lxc-libvirt") return Runtime::lxc;
  if (v == "systemd-nspawn") return Runtime::nspawn;
  if (v == "flatpak" || v == "bubblewrap") return Runtime::bubblewrap;
  if (v == "oci") return Runtime::runc;
  if (v == "apptainer" || v == "singularity") return Runtime::apptainer;
  if (v.empty()) return std::nullopt;
  return Runtime::other;
}

// The names PID 1 has on a host: an init system. Anything else (bash, python, sleep, tini,
// catatonit, pause, the job itself) is a process a container runtime started as its PID 1.
bool host_init(std::string_view comm) {
  for (std::string_view n : {"systemd", "init", "openrc-init", "runit", "runit-init", "s6-svscan", "upstart", "busybox", "sinit",
                             "dinit", "shepherd", "launchd"})
    if (comm == n) return true;
  return false;
}

// Paths in /proc/self/mountinfo (a bind mount's source path, overlayfs' layer directories)
// that only a given engine uses.
struct PathMark {
  const char* needle;
  Runtime runtime;
};
constexpr PathMark kPathMarks[] = {
    {"/var/lib/kubelet/pods/", Runtime::kubernetes},  // etc-hosts, termination-log, service account
    {"/var/lib/docker/", Runtime::docker},            // containers/<id>/resolv.conf, overlay2 layers
    {"/containers/storage/", Runtime::podman},  // Podman (/var/lib, rootless ~/.local/share) and CRI-O storage
    {"/var/lib/containerd/", Runtime::containerd},  // snapshotter layers
    {"/run/containerd/", Runtime::containerd},      // task rootfs
    {"/var/lib/lxc/", Runtime::lxc},
    {"/var/lib/machines/", Runtime::nspawn},
    {"/enroot/", Runtime::enroot},  // $ENROOT_DATA_PATH (default $XDG_DATA_HOME/enroot)
    {"enroot-data", Runtime::enroot},
};

// /proc paths an OCI runtime masks by default (runtime-spec's defaults, used by runc, crun,
// Docker, Podman, containerd): /dev/null bound over them, or an empty read-only tmpfs.
constexpr std::string_view kOciMasked[] = {"/proc/kcore", "/proc/keys", "/proc/timer_list", "/proc/sched_debug",
                                           "/proc/acpi", "/proc/scsi", "/sys/firmware"};

struct Detector {
  ContainerInfo c;
  std::optional<Runtime> best;
  bool pyxis = false;
  int weak = 0;           // runtime-independent hints that alone could be an unusual host
  bool decisive = false;  // a runtime-independent signal no host shows
  void named(Runtime r, std::string source, std::string observed) {
    c.evidence.emplace_back(std::move(source), std::move(observed));
    if (!best || static_cast<int>(r) < static_cast<int>(*best)) best = r;
  }
};

void env_markers(Detector& d, const parsers::EnvList& env, const std::string& source) {
  std::vector<std::string> enroot_marks;
  for (const auto& [k, v] : env) {
    // enroot hands the job its environ.d variables and pyxis its own: ENROOT_*/PYXIS_* names.
    if (sys::starts_with(k, "ENROOT_") || sys::starts_with(k, "PYXIS_")) {
      if (enroot_marks.size() < 4) enroot_marks.push_back(k);
      d.pyxis = d.pyxis || sys::starts_with(k, "PYXIS_");
    }
    if (k == "KUBERNETES_SERVICE_HOST") d.named(Runtime::kubernetes, source, "KUBERNETES_SERVICE_HOST set");
    if (k == "APPTAINER_CONTAINER" || k == "SINGULARITY_CONTAINER") d.named(Runtime::apptainer, source, k + "=" + v);
    if (k == "container")
      if (auto r = runtime_of_container_var(v)) d.named(*r, source, "container=" + v);
  }
  if (!enroot_marks.empty()) {
    std::string list;
    for (const auto& m : enroot_marks) list += (list.empty() ? "" : ", ") + m;
    d.named(Runtime::enroot, source, list);
  }
}

void cgroup_markers(Detector& d, const std::string& text) {
  const std::string first(sys::trim_ws(std::string_view(text).substr(0, text.find('\n'))));
  struct Hint {
    const char* needle;
    Runtime runtime;
  };
  bool any = false;
  for (auto h : {Hint{"kubepods", Runtime::kubernetes}, Hint{"libpod", Runtime::podman}, Hint{"docker", Runtime::docker},
                 Hint{"crio-", Runtime::podman}, Hint{"containerd", Runtime::containerd}, Hint{"lxc", Runtime::lxc},
                 Hint{"machine.slice/machine-", Runtime::nspawn}, Hint{"systemd-nspawn@", Runtime::nspawn}}) {
    if (text.find(h.needle) == std::string::npos) continue;
    d.named(h.runtime, "/proc/1/cgroup", first);
    any = true;
    break;
  }
  if (any) return;
  // Every hierarchy at its root: a cgroup namespace (what runc, Docker and Podman give with
  // cgroup v2), or a host whose init does not use cgroups (systemd puts PID 1 in /init.scope).
  bool all_root = false;
  for (auto line : sys::split_lines(text)) {
    auto l = sys::trim_ws(line);
    if (l.empty()) continue;
    auto colon = l.rfind(':');
    all_root = colon != std::string_view::npos && l.substr(colon + 1) == "/";
    if (!all_root) break;
  }
  if (all_root) {
    d.c.evidence.emplace_back("/proc/1/cgroup", first + " (PID 1 at the root of every cgroup hierarchy: a cgroup namespace, or an init without cgroups)");
    ++d.weak;
  } else {
    d.c.evidence.emplace_back("/proc/1/cgroup", first.empty() ? "empty" : first);
  }
}

void mountinfo_markers(Detector& d, const std::string& text, const std::string& source) {
  auto mounts = parsers::parse_mountinfo(text);
  std::optional<parsers::MountInfoEntry> root_mount;
  std::vector<std::string> masked;
  std::set<Runtime> path_named;  // one piece of evidence per runtime
  for (const auto& m : mounts) {
    if (m.target == "/") root_mount = m;  // the last mount on / is the one seen
    if (std::find(std::begin(kOciMasked), std::end(kOciMasked), m.target) != std::end(kOciMasked)) masked.push_back(m.target);
    for (const auto& pm : kPathMarks) {
      if (path_named.count(pm.runtime)) continue;
      // Mounted at a path inside the engine's storage (/var/lib/containers/storage/overlay
      // bound over itself, a container's .../merged, the kubelet's volumes): the engine's
      // storage as the host sees it, not this process's files coming from there.
      if (m.target.find(pm.needle) != std::string::npos) continue;
      const bool in_root = m.root.find(pm.needle) != std::string::npos;
      const bool in_layers = m.fstype == "overlay" && m.super_options.find(pm.needle) != std::string::npos;
      if (!in_root && !in_layers) continue;
      d.named(pm.runtime, source, in_root ? m.root + " mounted at " + m.target : m.target + ": overlay layers under " + pm.needle);
      path_named.insert(pm.runtime);
    }
  }
  if (!masked.empty()) {
    std::string list;
    for (const auto& m : masked) list += (list.empty() ? "" : ", ") + m;
    d.named(Runtime::runc, source, list + " masked (an OCI runtime's default masked paths)");
  }
  if (!root_mount && !mounts.empty()) {
    // Mounts are listed relative to this process's root: none at / means the root is a
    // directory inside some mount (chroot), not a mount of its own as on every host.
    d.c.evidence.emplace_back(source, "no mount at / (the root is a directory inside another mount: a chroot)");
    d.decisive = true;
  }
  if (root_mount && root_mount->root != "/") {
    // A directory of a file system bound as / (runc bundles, enroot, bwrap, nspawn and
    // Apptainer sandboxes pivot into one). Hosts mount whole file systems at /, except a
    // btrfs subvolume (/@, /root), which shows the same way: a hint only there.
    const std::string what = "/ is " + root_mount->root + " of " + root_mount->source + " (" + root_mount->fstype + ")";
    if (root_mount->fstype == "btrfs") {
      d.c.evidence.emplace_back(source, what + ": a btrfs subvolume or a directory bound as the root");
      ++d.weak;
    } else {
      d.c.evidence.emplace_back(source, what + ": a directory bound as the root");
      d.decisive = true;
    }
  } else if (root_mount) {
    const auto& t = root_mount->fstype;
    const std::string what = "/ is " + t + " (" + root_mount->source + ")";
    if (t == "overlay" || t == "squashfs" || t == "fuse.squashfuse" || t == "fuse.squashfuse_ll" || t == "fuse-overlayfs" ||
        t == "fuse.fuse-overlayfs" || t == "tmpfs") {
      // An image's root: layers, a squashfs image, or a sandbox's tmpfs; a live or diskless
      // host can boot the same way, so alone it does not decide.
      d.c.evidence.emplace_back(source, what + ": an image or sandbox root");
      ++d.weak;
    } else {
      d.c.evidence.emplace_back(source, what);
    }
  }
}

ContainerInfo detect_container(Facts& f) {
  Detector d;
  const auto& root = f.root();
  bool readable = false;
  if (root.exists("/.dockerenv")) d.named(Runtime::docker, "/.dockerenv", "present");
  if (root.exists("/run/.containerenv")) {
    std::string engine;
    if (auto text = root.read("/run/.containerenv", 1u << 16)) engine = parsers::containerenv_engine(*text);
    d.named(Runtime::podman, "/run/.containerenv", engine.empty() ? "present" : "present, " + engine);
  }
  if (auto st = root.stat("/.singularity.d"); st && S_ISDIR(st->st_mode)) d.named(Runtime::apptainer, "/.singularity.d", "present");
  if (root.exists("/.flatpak-info")) d.named(Runtime::bubblewrap, "/.flatpak-info", "present (Flatpak's bubblewrap sandbox)");
  if (auto text = root.read("/run/systemd/container", 4096)) {
    const std::string v(sys::trim_ws(*text));
    if (auto r = runtime_of_container_var(v)) d.named(*r, "/run/systemd/container", v);
  }
  env_markers(d, f.audited_env(), f.audited_env_source());
  if (auto env1 = root.read("/proc/1/environ")) {
    readable = true;
    env_markers(d, parsers::parse_environ(*env1), "/proc/1/environ");
  }
  if (auto cg = root.read("/proc/1/cgroup", 1u << 16)) {
    readable = true;
    cgroup_markers(d, *cg);
  }
  if (auto comm = root.read("/proc/1/comm", 4096)) {
    readable = true;
    const std::string name(sys::trim_ws(*comm));
    if (name == "bwrap") d.named(Runtime::bubblewrap, "/proc/1/comm", "bwrap (bubblewrap is PID 1 of its PID namespace)");
    else if (!name.empty() && !host_init(name)) {
      d.c.evidence.emplace_back("/proc/1/comm", name + ": PID 1 is not an init system");
      ++d.weak;
    } else if (!name.empty()) {
      d.c.evidence.emplace_back("/proc/1/comm", name);
    }
  }
  const std::string mountinfo = "/proc/self/mountinfo";
  if (auto mi = root.read(mountinfo, 4u << 20)) {
    readable = true;
    mountinfo_markers(d, *mi, mountinfo);
  }
  // A mount namespace other than PID 1's: this process was put in its own (a container whose
  // runtime shares the host's PID namespace: enroot, bwrap without --unshare-pid, unshare).
  auto self_ns = root.readlink("/proc/self/ns/mnt");
  auto init_ns = root.readlink("/proc/1/ns/mnt");
  if (self_ns && init_ns) {
    readable = true;
    if (*self_ns != *init_ns) {
      // Alone a hint: Slurm's job_container plugins and systemd's PrivateTmp= also give a
      // host process a mount namespace of its own.
      d.c.evidence.emplace_back("/proc/self/ns/mnt, /proc/1/ns/mnt", *self_ns + " here, " + *init_ns + " for PID 1: another mount namespace");
      ++d.weak;
    }
  }
  // A root other than PID 1's (chroot, pivot_root without a PID namespace): live only, the
  // two directories compared by device and inode.
  if (root.is_live()) {
    auto mine_st = sys::stat_path("/");
    auto init_st = sys::stat_path("/proc/1/root/");
    if (mine_st && init_st) {
      const struct stat& mine = *mine_st;
      const struct stat& init = *init_st;
      readable = true;
      if (mine.st_dev != init.st_dev || mine.st_ino != init.st_ino) {
        d.c.evidence.emplace_back("stat(/), stat(/proc/1/root)",
                                  fmt::format("device {}:{} inode {} here, {}:{} inode {} for PID 1: another root", major(mine.st_dev),
                                              minor(mine.st_dev), mine.st_ino, major(init.st_dev), minor(init.st_dev), init.st_ino));
        d.decisive = true;
      }
    }
  }
  auto& c = d.c;
  if (d.best || d.decisive || d.weak >= 2) {
    const auto n = runtime_name(d.best.value_or(Runtime::other), d.pyxis);
    c.runtime = n.id;
    c.name = n.name;
    c.inside = true;
  }
  c.decided = c.inside || readable;
  if (!c.inside && c.decided) {
    c.runtime = "none";
    c.name = "not in a container";
  }
  return c;
}

}  // namespace

const ContainerInfo& container_info(Facts& f) {
  return f.memo<ContainerInfo>("runtime.container", [&] { return detect_container(f); });
}

// ---- mounts / shm ------------------------------------------------------------------------

namespace {

std::optional<std::uint64_t> mem_total_bytes(const sys::Sysroot& root, std::string* text) {
  auto m = root.read("/proc/meminfo");
  if (!m) return std::nullopt;
  auto kv = parsers::parse_key_values(*m);
  auto it = kv.find("MemTotal");
  if (it == kv.end()) return std::nullopt;
  auto fields = sys::split_ws(it->second);
  if (fields.empty()) return std::nullopt;
  auto kb = sys::to_int<std::uint64_t>(fields[0]);
  if (!kb || *kb > UINT64_MAX / 1024) return std::nullopt;
  if (text) *text = it->second;
  return *kb * 1024;
}

ShmSize read_shm(Facts& f) {
  ShmSize s;
  const auto& root = f.root();
  if (root.is_live()) {
    s.source = "statvfs(/dev/shm)";
    auto vfs = sys::stat_file_system("/dev/shm");
    if (!vfs) {
      s.error = "statvfs(/dev/shm) failed";
      return s;
    }
    const struct statvfs& st = *vfs;
    s.bytes = static_cast<std::uint64_t>(st.f_blocks) * st.f_frsize;
    s.how = std::to_string(st.f_blocks) + " blocks of " + std::to_string(st.f_frsize) + " bytes";
    return s;
  }
  // The audited process's mount namespace (what a snapshot keeps as a real file), else the
  // tree's /proc/mounts (the same thing on a live system, where it links to self/mounts).
  std::string mounts = "/proc/self/mounts";
  auto text = root.read(mounts);
  if (!text) {
    auto fallback = root.read("/proc/mounts");
    if (!fallback) {
      s.error = describe(text.error()) + "; " + describe(fallback.error());
      return s;
    }
    mounts = "/proc/mounts";
    text = std::move(fallback);
  }
  std::optional<parsers::MountEntry> shm;
  for (auto& m : parsers::parse_mounts(*text))
    if (m.target == "/dev/shm") shm = m;  // the last mount on a path is the one seen
  s.source = mounts;
  if (!shm) {
    s.error = mounts + " has no /dev/shm mount (a plain directory on the root file system)";
    return s;
  }
  s.how = shm->source + " /dev/shm " + shm->fstype + " " + shm->options;
  std::string mem_text;
  auto mem = mem_total_bytes(root, &mem_text);
  if (auto size = parsers::mount_option(shm->options, "size")) {
    s.bytes = parsers::parse_tmpfs_size(*size, mem);
    if (!s.bytes) s.error = mounts + ": /dev/shm size=" + *size + " not understood";
    return s;
  }
  if (shm->fstype != "tmpfs") {
    s.error = "/dev/shm is " + shm->fstype + " with no size= option: size unknown";
    return s;
  }
  if (!mem) {
    s.error = "/dev/shm is tmpfs without size= (half of MemTotal) and /proc/meminfo MemTotal is not readable";
    return s;
  }
  s.bytes = *mem / 2;
  s.source = mounts + ", /proc/meminfo";
  s.how += " (no size=: tmpfs default, half of MemTotal " + mem_text + ")";
  return s;
}

}  // namespace

const ShmSize& shm_size(Facts& f) {
  return f.memo<ShmSize>("runtime.shm", [&] { return read_shm(f); });
}

// ---- memlock -----------------------------------------------------------------------------

namespace {

Avail<Memlock> read_memlock(Facts& f) {
  Memlock m;
  if (f.root().is_live()) {
    struct rlimit rl {};
    if (::getrlimit(RLIMIT_MEMLOCK, &rl) != 0) return missing("getrlimit(RLIMIT_MEMLOCK) failed");
    auto v = [](rlim_t x) { return x == RLIM_INFINITY ? std::optional<std::uint64_t>() : std::optional<std::uint64_t>(x); };
    m.limit.soft = v(rl.rlim_cur);
    m.limit.hard = v(rl.rlim_max);
    auto t = [](const std::optional<std::uint64_t>& x) { return x ? std::to_string(*x) : std::string("unlimited"); };
    m.limit.text = t(m.limit.soft) + " " + t(m.limit.hard) + " bytes";
    m.source = "getrlimit(RLIMIT_MEMLOCK)";
    return m;
  }
  const std::string path = "/proc/self/limits";
  auto text = f.root().read(path);
  if (!text) return missing(describe(text.error()));
  auto l = parsers::parse_memlock_limit(*text);
  if (!l) return missing(path + ": " + l.error());
  m.limit = *l;
  m.source = path;
  return m;
}

}  // namespace

const Avail<Memlock>& memlock(Facts& f) {
  return f.memo<Avail<Memlock>>("runtime.memlock", [&] { return read_memlock(f); });
}

// ---- launcher configuration --------------------------------------------------------------

namespace {

LauncherFile read_launcher_file(const sys::Sysroot& root, const std::string& path, std::vector<std::string>& errors) {
  LauncherFile lf;
  lf.path = path;
  auto text = root.read(path, 1u << 20);
  if (!text) {
    errors.push_back(describe(text.error()));
    return lf;
  }
  lf.lines = parsers::config_lines(*text);
  return lf;
}

LauncherConfig read_launcher(Facts& f) {
  LauncherConfig c;
  const auto& root = f.root();
  auto st = root.stat("/etc/enroot");
  c.enroot_dir = st && S_ISDIR(st->st_mode);
  auto dir_files = [&](const std::string& dir, std::string_view ext, std::vector<LauncherFile>& out) {
    auto names = root.list(dir);
    if (!names) {
      if (names.error().err != ENOENT) c.errors.push_back(describe(names.error()));
      return;
    }
    for (const auto& n : *names)
      if (n.size() > ext.size() && n.compare(n.size() - ext.size(), ext.size(), ext) == 0)
        out.push_back(read_launcher_file(root, dir + "/" + n, c.errors));
  };
  dir_files("/etc/enroot/environ.d", ".env", c.environ);
  dir_files("/etc/enroot/mounts.d", ".fstab", c.mounts);
  std::vector<std::string> plugstack;
  for (const char* base : {"/etc/slurm", "/etc/slurm-llnl"}) {
    std::string conf = std::string(base) + "/plugstack.conf";
    if (root.exists(conf)) plugstack.push_back(conf);
    if (auto names = root.list(conf + ".d"))
      for (const auto& n : *names) plugstack.push_back(conf + ".d/" + n);
  }
  for (const auto& p : plugstack) {
    std::vector<std::string> ignored;
    auto lf = read_launcher_file(root, p, ignored);
    for (const auto& [n, line] : lf.lines)
      if (line.find("pyxis") != std::string::npos) {
        c.pyxis.push_back(p + ":" + std::to_string(n) + " " + line);
        break;
      }
  }
  return c;
}

}  // namespace

bool device_node_present(Facts& f, const std::string& path) {
  // Only /dev: anything else is another fact's, with its own declared reads.
  if (path != "/dev" && !sys::starts_with(path, "/dev/")) throw std::invalid_argument("device_node_present: " + path + " is not under /dev");
  return f.memo<bool>("runtime.dev." + path, [&] { return f.root().exists(path); });
}

const LauncherConfig& launcher_config(Facts& f) {
  return f.memo<LauncherConfig>("runtime.launcher", [&] { return read_launcher(f); });
}

}  // namespace perfgap::facts
