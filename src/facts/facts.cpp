#include "facts/facts.hpp"

#include <nlohmann/json.hpp>
#include "facts/runtime.hpp"

#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>

#include "sys/bounded.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

std::string describe(const sys::ReadError& e) { return e.path + ": " + e.reason(); }

CpuSet Topology::nodes_with_cpus() const {
  CpuSet s;
  for (const auto& [node, cpus] : node_cpus)
    if (!cpus.empty()) s.insert(node);
  return s;
}

int Topology::node_of_cpu(int cpu) const {
  for (const auto& [node, cpus] : node_cpus)
    if (cpus.contains(cpu)) return node;
  return -1;
}

std::optional<std::string> Process::env_value(std::string_view key) const {
  for (const auto& [k, v] : env)
    if (k == key) return v;
  return std::nullopt;
}

std::optional<int> Process::local_rank() const {
  for (auto key : {"LOCAL_RANK", "SLURM_LOCALID", "OMPI_COMM_WORLD_LOCAL_RANK"})
    if (auto v = env_value(key))
      if (auto n = sys::to_int<int>(*v); n && *n >= 0) return n;
  return std::nullopt;
}

Facts::Facts(sys::Sysroot root, Options opts) : root_(std::move(root)), opts_(std::move(opts)) {}

const Identity& Facts::identity() {
  return once(identity_once_, identity_, [&] { return read_identity(*this); });
}

const Avail<parsers::CpuInfo>& Facts::cpuinfo() {
  return once(cpuinfo_once_, cpuinfo_, [&]() -> Avail<parsers::CpuInfo> {
    std::string error;
    auto info = read_parsed(root_, "/proc/cpuinfo", parsers::parse_cpuinfo, error);
    if (!info) return missing(error);
    return *info;
  });
}

const Avail<Hypervisor>& Facts::hypervisor() {
  return once(hypervisor_once_, hypervisor_, [&] { return read_hypervisor(*this); });
}

const Avail<parsers::KernelCmdline>& Facts::cmdline() {
  return once(cmdline_once_, cmdline_, [&]() -> Avail<parsers::KernelCmdline> {
    auto text = root_.read("/proc/cmdline");
    if (!text) return missing(describe(text.error()));
    return parsers::parse_cmdline(*text);
  });
}

const Avail<Topology>& Facts::topology() {
  return once(topology_once_, topology_, [&] { return read_topology(root_); });
}

const CpuIdle& Facts::cpuidle() {
  return once(cpuidle_once_, cpuidle_, [&] {
    const auto& topo = topology();
    return read_cpuidle(root_, topo ? topo->online : CpuSet{});
  });
}

const CpuFreq& Facts::cpufreq() {
  return once(cpufreq_once_, cpufreq_, [&] {
    const auto& topo = topology();
    return read_cpufreq(root_, topo ? topo->online : CpuSet{});
  });
}

const Avail<std::vector<PciDevice>>& Facts::pci() {
  return once(pci_once_, pci_, [&] { return read_pci(root_); });
}

const Avail<std::vector<Gpu>>& Facts::visible_gpus() {
  return once(gpus_once_, gpus_, [&]() -> Avail<std::vector<Gpu>> {
    const auto& devices = pci();
    if (!devices) return missing(devices.error());
    return read_visible_gpus(root_, *devices);
  });
}

const parsers::EnvList& Facts::audited_env() {
  return once(env_once_, env_, [&] {
    auto text = root_.read("/proc/self/environ");
    if (!text) env_error_ = describe(text.error());
    return text ? parsers::parse_environ(*text) : parsers::EnvList{};
  });
}

int Facts::own_pid() const { return root_.is_live() ? static_cast<int>(::getpid()) : -1; }

bool Facts::absence_is_real() const {
  if (root_.is_live()) return true;
  // A snapshot taken live keeps every declared path that existed; one taken from another
  // tree inherits that tree's gaps.
  auto manifest = root_.read("/.perfgap/snapshot.json", 16u << 20);
  if (!manifest) return false;
  auto j = nlohmann::json::parse(*manifest, nullptr, false);
  if (j.is_discarded() || !j.is_object()) return false;
  auto src = j.find("source");
  if (src == j.end() || !src->is_object()) return false;
  auto kind = src->find("kind");
  return kind != src->end() && kind->is_string() && kind->get<std::string>() == "live";
}

const std::string& Facts::audited_env_error() {
  audited_env();
  return env_error_;
}

std::string Facts::audited_env_source() const { return "/proc/self/environ"; }

const Training& Facts::training() {
  return once(training_once_, training_, [&] { return detect_training(*this); });
}

const Window& Facts::window() {
  return once(window_once_, window_, [&] { return sample_window(*this, window_reader_); });
}

const Window& Facts::window_extended(std::chrono::milliseconds length) {
  const Window& base = window();
  if (!base.live || !base.extendable) return base;
  length = std::min(length, base.limit);
  if (length <= base.length) return base;
  std::lock_guard lock(window_mutex_);
  for (const auto& w : extended_windows_)
    if (w.length >= length) return w;
  extended_windows_.push_back(extend_window(*this, window_reader_, base, length));
  return extended_windows_.back();
}

const NumaMapsRead& Facts::numa_maps(int pid, std::chrono::milliseconds budget) {
  std::lock_guard lock(numa_mutex_);
  auto& slot = numa_maps_[pid];
  if (!slot) slot = std::make_shared<NumaMapsRead>(read_numa_maps(*this, proc_reader_, pid, budget));
  return *slot;
}

sys::ReadResult<std::string> Facts::read_proc(const std::string& path, std::size_t max) {
  if (!root_.is_live()) return root_.read(path, max);
  auto root = root_;
  auto r = proc_reader_.run<sys::ReadResult<std::string>>(
      [root, path, max] { return root.read(path, max); }, opts_.proc_read_timeout);
  if (!r) return tl::unexpected(sys::ReadError{sys::ReadError::timed_out, 0, path});
  return std::move(*r);
}

std::string Facts::container() {
  // facts/runtime.cpp: every signal of container.detect (marker files, /proc/1/environ,
  // /proc/1/cgroup, enroot/pyxis variables).
  return container_info(*this).runtime;
}

std::string sysctl_path(std::string_view name) {
  std::string path = "/proc/sys/" + std::string(name);
  std::replace(path.begin() + 10, path.end(), '.', '/');
  return path;
}

const Avail<std::string>& sysctl(Facts& f, std::string_view name) {
  return f.memo<Avail<std::string>>("sysctl." + std::string(name), [&]() -> Avail<std::string> {
    auto v = f.root().read_value(sysctl_path(name));
    if (!v) return missing(describe(v.error()));
    return std::move(*v);
  });
}

Identity read_identity(Facts& f) {
  Identity id;
  const auto& root = f.root();
  auto value_or = [&](std::string_view name) {
    const auto& v = sysctl(f, name);
    return v ? *v : std::string();
  };
  id.hostname = value_or("kernel.hostname");
  id.kernel = value_or("kernel.osrelease");
  const auto& info = f.cpuinfo();
  if (info) id.cpu_model = info->model_name;
  if (root.is_live()) {
    struct utsname u {};
    if (::uname(&u) == 0) {
      if (id.hostname.empty()) id.hostname = u.nodename;
      if (id.kernel.empty()) id.kernel = u.release;
      id.arch = u.machine;
      return id;
    }
  }
  // A tree: the kernel's own answer where it was captured (kernel.arch sysctl, newer kernels;
  // the `uname -m` that perfgap snapshot records), else what cpuinfo's fields say, else unknown.
  auto known = [](const std::string& v) { return !v.empty() && v.size() < 32 && parsers::known_arch(v); };
  if (const auto& v = sysctl(f, "kernel.arch"); v && known(*v)) {
    id.arch = *v;
    id.arch_source = sysctl_path("kernel.arch");
    return id;
  }
  if (auto v = root.read_value("/.perfgap/uname-machine"); v && known(*v)) {
    id.arch = *v;
    id.arch_source = "/.perfgap/uname-machine";
    return id;
  }
  if (info && !info->arch_hint.empty()) {
    id.arch = info->arch_hint;
    id.arch_source = "/proc/cpuinfo";
  } else {
    id.arch = "unknown";
    id.arch_source = info ? "/proc/cpuinfo names no architecture" : info.error();
  }
  return id;
}

}  // namespace perfgap::facts
