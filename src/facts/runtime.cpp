#include "facts/runtime.hpp"

#include <sys/resource.h>
#include <sys/statvfs.h>

#include <algorithm>
#include <cctype>
#include <stdexcept>

#include "parsers/host_files.hpp"
#include "parsers/mounts.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

// ---- container ---------------------------------------------------------------------------

namespace {

std::string runtime_of_container_var(std::string_view v) {
  if (v == "docker") return "docker";
  if (v == "podman") return "podman";
  if (v == "enroot") return "enroot";
  return "unknown";
}

ContainerInfo detect_container(Facts& f) {
  ContainerInfo c;
  const auto& root = f.root();
  auto mark = [&](std::string runtime, std::string name) {
    if (!c.inside) {
      c.runtime = std::move(runtime);
      c.name = std::move(name);
    }
    c.inside = true;
  };
  if (root.exists("/.dockerenv")) {
    c.evidence.emplace_back("/.dockerenv", "present");
    mark("docker", "Docker");
  }
  if (root.exists("/run/.containerenv")) {
    std::string engine;
    if (auto text = root.read("/run/.containerenv", 1u << 16)) engine = parsers::containerenv_engine(*text);
    c.evidence.emplace_back("/run/.containerenv", engine.empty() ? "present" : "present, " + engine);
    mark("podman", "Podman");
  }
  // enroot/pyxis: enroot hands the job its environ.d variables and pyxis its own; both leave
  // ENROOT_*/PYXIS_* names in the container's environment.
  std::vector<std::string> marks;
  bool pyxis = false;
  for (const auto& [k, v] : f.audited_env()) {
    if (sys::starts_with(k, "ENROOT_") || sys::starts_with(k, "PYXIS_")) {
      if (marks.size() < 4) marks.push_back(k);
      pyxis = pyxis || sys::starts_with(k, "PYXIS_");
    }
  }
  if (!marks.empty()) {
    std::string list;
    for (const auto& m : marks) list += (list.empty() ? "" : ", ") + m;
    c.evidence.emplace_back(f.audited_env_source(), list);
    mark("enroot", pyxis ? "enroot (pyxis)" : "enroot");
  }
  bool readable = false;
  auto container_var = [&](const parsers::EnvList& env, const std::string& source) {
    for (const auto& [k, v] : env) {
      if (k != "container") continue;
      c.evidence.emplace_back(source, "container=" + v);
      mark(runtime_of_container_var(v), v.empty() ? "a container" : v);
      return;
    }
  };
  if (auto env1 = root.read("/proc/1/environ")) {
    readable = true;
    container_var(parsers::parse_environ(*env1), "/proc/1/environ");
  }
  container_var(f.audited_env(), f.audited_env_source());
  for (const auto& [k, v] : f.audited_env())
    if (k == "KUBERNETES_SERVICE_HOST") {
      c.evidence.emplace_back(f.audited_env_source(), "KUBERNETES_SERVICE_HOST set");
      mark("unknown", "a Kubernetes pod");
      break;
    }
  if (auto cg = root.read("/proc/1/cgroup", 1u << 16)) {
    readable = true;
    std::string first(sys::trim_ws(cg->substr(0, cg->find('\n'))));
    struct Hint { const char* needle; const char* runtime; const char* name; };
    for (auto h : {Hint{"docker", "docker", "Docker"}, Hint{"libpod", "podman", "Podman"},
                   Hint{"kubepods", "unknown", "a Kubernetes pod"}, Hint{"containerd", "unknown", "a containerd container"},
                   Hint{"lxc", "unknown", "an LXC container"}}) {
      if (cg->find(h.needle) == std::string::npos) continue;
      c.evidence.emplace_back("/proc/1/cgroup", first);
      mark(h.runtime, h.name);
      break;
    }
    if (!c.inside) c.evidence.emplace_back("/proc/1/cgroup", first.empty() ? "empty" : first);
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
    struct statvfs st {};
    s.source = "statvfs(/dev/shm)";
    if (::statvfs("/dev/shm", &st) != 0) {
      s.error = "statvfs(/dev/shm) failed";
      return s;
    }
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
