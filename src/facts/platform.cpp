#include "facts/platform.hpp"

#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <cerrno>
#include <climits>
#include <set>

#include <fmt/format.h>

#include "parsers/gunzip.hpp"
#include "parsers/kernel_log.hpp"
#include "parsers/sysfs_values.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

// ---- facts -------------------------------------------------------------------------------

namespace {

Avail<KernelConfig> read_kernel_config(Facts& f) {
  const auto& root = f.root();
  std::vector<std::string> tried;
  const auto& release = f.identity().kernel;
  if (release.empty() || release.find('/') != std::string::npos) {
    tried.push_back("/boot/config-<release>: kernel release unknown");
  } else {
    std::string path = "/boot/config-" + release;
    auto text = root.read(path, 16u << 20);
    if (!text) {
      tried.push_back(describe(text.error()));
    } else if (auto c = parsers::parse_kernel_config(*text)) {
      c->source = path;
      return std::move(*c);
    } else {
      tried.push_back(path + ": " + c.error());
    }
  }
  const std::string gz = "/proc/config.gz";
  auto bytes = root.read(gz, 8u << 20);
  if (!bytes) {
    tried.push_back(describe(bytes.error()));
  } else if (auto text = parsers::gunzip(*bytes)) {
    if (auto c = parsers::parse_kernel_config(*text)) {
      c->source = gz;
      return std::move(*c);
    } else {
      tried.push_back(gz + ": " + c.error());
    }
  } else {
    tried.push_back(gz + ": " + text.error());
  }
  std::string why;
  for (const auto& t : tried) why += (why.empty() ? "" : "; ") + t;
  return missing(why);
}

bool has_nvidia_gpu(Facts& f, std::string* error) {
  const auto& pci = f.pci();
  if (pci) {
    for (const auto& d : *pci)
      if (d.is_gpu()) return true;
  }
  const auto& drv = driver_gpus(f);
  if (drv.listed && !drv.gpus.empty()) return true;
  if (!pci && error) *error = pci.error();
  return false;
}

Avail<Grace> read_grace(Facts& f) {
  const auto& root = f.root();
  Grace g;
  auto soc_id = root.read_value("/sys/devices/soc0/soc_id");
  if (soc_id && !soc_id->empty()) {
    for (auto attr : {"family", "machine", "revision"})
      if (auto v = root.read_value(std::string("/sys/devices/soc0/") + attr)) g.evidence.emplace_back(std::string("/sys/devices/soc0/") + attr, *v);
    g.evidence.insert(g.evidence.begin(), {"/sys/devices/soc0/soc_id", *soc_id});
    g.grace = sys::lower(*soc_id) == "jep106:036b:0241";
    g.how = g.grace ? "SoC id jep106:036b:0241 (NVIDIA Grace)" : "SoC id " + *soc_id + " is not NVIDIA Grace (jep106:036b:0241)";
    return g;
  }
  std::string soc_why = soc_id ? "/sys/devices/soc0/soc_id: empty" : describe(soc_id.error());
  const auto& info = f.cpuinfo();
  if (!info) return missing(soc_why + "; " + info.error());
  if (!info->arch_hint.empty() && info->arch_hint != "aarch64") {
    g.evidence.emplace_back("/proc/cpuinfo", info->arch_hint);
    g.how = "CPU architecture " + info->arch_hint;
    return g;
  }
  if (!info->implementer || !info->part) {
    if (info->arch_hint.empty()) return missing(soc_why + "; /proc/cpuinfo: names no CPU architecture (no CPU implementer/part or x86 vendor)");
    g.evidence.emplace_back("/proc/cpuinfo", "no CPU implementer/part");
    return missing(soc_why + "; /proc/cpuinfo: no CPU implementer/part lines");
  }
  char buf[80];
  std::snprintf(buf, sizeof buf, "CPU implementer 0x%02x, CPU part 0x%03x", *info->implementer, *info->part);
  g.evidence.emplace_back("/proc/cpuinfo", buf);
  if (*info->implementer != 0x41 || *info->part != 0xd4f) {
    g.how = std::string("CPU is not a Neoverse V2 (") + buf + ")";
    return g;
  }
  std::string pci_error;
  bool gpu = has_nvidia_gpu(f, &pci_error);
  if (!gpu && !pci_error.empty())
    return missing("Neoverse V2 CPU without a SoC id; whether NVIDIA GPUs are present is unknown: " + pci_error);
  g.evidence.emplace_back("/sys/bus/pci/devices", gpu ? "NVIDIA GPU present" : "no NVIDIA GPU");
  g.grace = gpu;
  g.how = gpu ? "Neoverse V2 CPU with NVIDIA GPUs (no SoC id: a guest)" : "Neoverse V2 CPU without NVIDIA GPUs: another vendor's chip";
  return g;
}

Smmu read_smmu(const sys::Sysroot& root) {
  Smmu s;
  if (auto names = root.list("/sys/class/iommu")) {
    for (const auto& n : *names) {
      bool v3 = sys::starts_with(n, "smmu3.");
      if (!v3) {
        if (auto drv = root.readlink("/sys/class/iommu/" + n + "/device/driver")) {
          auto slash = drv->rfind('/');
          v3 = (slash == std::string::npos ? *drv : drv->substr(slash + 1)) == "arm-smmu-v3";
        }
      }
      (v3 ? s.instances : s.other_iommus).push_back(n);
    }
  } else if (names.error().err != ENOENT) {
    s.iommu_class_error = describe(names.error());
  }
  if (auto acpi = root.list("/sys/bus/acpi/devices")) {
    for (const auto& n : *acpi) {
      if (!sys::starts_with(n, "NVDA200C:")) continue;
      auto status = root.read_value("/sys/bus/acpi/devices/" + n + "/status");
      bool off = status && sys::to_int<long>(*status) == 0L;
      (off ? s.cmdqv_disabled : s.cmdqv_devices).push_back(n);
    }
  }
  for (auto p : {"disable_cmdqv", "bypass_vcmdq"})
    if (auto v = root.read_value(std::string("/sys/module/arm_smmu_v3/parameters/") + p)) s.params[p] = *v;
  return s;
}

// Records to messages and events; the boot time from the same node's /proc/stat when the
// log is that boot's.
KernelLog kernel_log_of(std::string source, std::vector<parsers::KernelRecord> records, const sys::Sysroot* same_boot) {
  KernelLog log;
  log.source = std::move(source);
  log.events = parsers::kernel_events(records);
  for (const auto& r : records)
    if (r.since_boot_s) {
      if (!log.first_s) log.first_s = r.since_boot_s;
      log.last_s = r.since_boot_s;
    }
  log.messages.reserve(records.size());
  for (auto& r : records) log.messages.push_back(std::move(r.message));
  if (same_boot)
    if (auto stat = same_boot->read("/proc/stat", 16u << 20)) log.boot_time = parsers::parse_boot_time(*stat);
  return log;
}

constexpr std::string_view kNotALog = ": not a kernel log: ";

// A file stands for the kernel log only when some line has a kernel log's layout or starts
// with a kernel driver's prefix (dmesg -t, journalctl -k -o cat); else every check of the log
// would pass on a file that holds none (a perf.data, an NCCL log, lspci -vvv, a daemon's
// syslog lines). Why not ("PATH: not a kernel log: ..."), or "".
std::string not_a_kernel_log(const std::string& path, const std::vector<parsers::KernelRecord>& records,
                             const parsers::KernelLogDropped& dropped) {
  if (std::any_of(records.begin(), records.end(), [](const parsers::KernelRecord& r) { return r.layout || r.driver; })) return "";
  if (dropped.user_space > 0)
    return fmt::format("{}{}its {} syslog/journal line{} {} user-space programs' (the first tagged '{}'), none the kernel's "
                       "(tagged 'kernel:')",
                       path, kNotALog, dropped.user_space, dropped.user_space == 1 ? "" : "s", dropped.user_space == 1 ? "is a" : "are",
                       dropped.first_tag);
  return path + std::string(kNotALog) +
         "no line in a kernel-log layout (dmesg \"[ 12.345678] ...\", dmesg -T, journalctl -k or syslog \"Mon DD HH:MM:SS host "
         "kernel: ...\", /dev/kmsg records, ISO stamps), none starting with a kernel driver's prefix (dmesg -t: \"NVRM: ...\", "
         "\"mlx5_core 0000:5c:00.0: ...\")";
}

Avail<KernelLog> read_kernel_log(Facts& f) {
  constexpr std::size_t kMax = 64u << 20;
  if (const auto& path = f.options().dmesg_path) {
    auto text = sys::Sysroot::live().read(*path, kMax);
    if (!text) return missing("--dmesg " + describe(text.error()));
    // Nothing logged: the checks skip (an empty log says nothing, not "no events").
    if (sys::trim_ws(*text).empty()) return missing(*path + ": empty");
    parsers::KernelLogDropped dropped;
    auto records = parsers::parse_kernel_records(*text, &dropped);
    if (auto why = not_a_kernel_log(*path, records, dropped); !why.empty()) return missing(why);
    return kernel_log_of(*path, std::move(records), nullptr);
  }
  const auto& root = f.root();
  if (!root.is_live()) {
    const std::string path = "/.perfgap/dmesg.txt";
    auto text = root.read(path, kMax);
    if (!text) return missing("no kernel log captured with the tree (" + describe(text.error()) + ") and no --dmesg FILE");
    parsers::KernelLogDropped dropped;
    auto records = parsers::parse_kernel_records(*text, &dropped);
    // The tree's file is no argument of the user's: one that is no log is a skip, not exit 2.
    if (!sys::trim_ws(*text).empty())
      if (auto why = not_a_kernel_log(path, records, dropped); !why.empty()) return missing(why);
    return kernel_log_of(path, std::move(records), &root);
  }
  // Live: /dev/kmsg opened non-blocking, one record per read, until EAGAIN. EPIPE means the
  // ring overwrote a record while we read: start again (a few times).
  sys::ReadResult<std::string> text = tl::unexpected(sys::ReadError{});
  for (int attempt = 0; attempt < 3; ++attempt) {
    text = root.read("/dev/kmsg", kMax);
    if (text || text.error().err != EPIPE) break;
  }
  if (!text) {
    std::string why = describe(text.error());
    if (text.error().err == EPERM || text.error().err == EACCES)
      why += " (kernel.dmesg_restrict: run as root, or pass a saved log with --dmesg FILE)";
    return missing(why);
  }
  return kernel_log_of("/dev/kmsg", parsers::parse_kernel_records(*text), &root);
}

Avail<PageSize> read_page_size(Facts& f) {
  if (f.root().is_live()) {
    long bytes = ::sysconf(_SC_PAGESIZE);
    if (bytes <= 0) return missing("sysconf(_SC_PAGESIZE) failed");
    return PageSize{bytes / 1024, "sysconf(_SC_PAGESIZE)"};
  }
  const std::string path = "/proc/self/smaps";
  auto text = f.root().read(path, 1u << 20);
  if (!text) return missing(describe(text.error()));
  auto kb = parsers::parse_smaps_page_size_kb(*text);
  if (!kb) return missing(path + ": " + kb.error());
  return PageSize{*kb, path};
}

Avail<std::vector<IommuGroup>> read_iommu_groups(const sys::Sysroot& root) {
  const std::string base = "/sys/kernel/iommu_groups";
  auto ids = root.list(base);
  if (!ids) return missing(describe(ids.error()));
  std::vector<IommuGroup> out;
  for (const auto& id : *ids) {
    IommuGroup g;
    g.id = id;
    if (auto t = root.read_value(base + "/" + id + "/type")) g.type = *t;
    else g.type_error = describe(t.error());
    if (auto devs = root.list(base + "/" + id + "/devices"))
      for (const auto& d : *devs) g.devices.push_back(sys::lower(d));
    out.push_back(std::move(g));
  }
  std::sort(out.begin(), out.end(), [](const auto& a, const auto& b) {
    auto na = sys::to_int<long>(a.id), nb = sys::to_int<long>(b.id);
    if (na && nb) return *na < *nb;
    return a.id < b.id;
  });
  return out;
}

DriverGpus read_driver_gpus(const sys::Sysroot& root) {
  DriverGpus d;
  const std::string dir = "/proc/driver/nvidia/gpus";
  auto names = root.list(dir);
  if (!names) {
    d.error = describe(names.error());
    return d;
  }
  d.listed = true;
  for (const auto& n : *names) {
    DriverGpu g;
    g.bdf = sys::lower(n);
    if (auto info = root.read(dir + "/" + n + "/information", 1u << 16)) {
      auto kv = parsers::parse_key_values(*info);
      if (auto it = kv.find("Model"); it != kv.end()) g.model = std::string(sys::trim_ws(it->second));
      if (auto it = kv.find("GPU UUID"); it != kv.end()) g.uuid = std::string(sys::trim_ws(it->second));
    }
    d.gpus.push_back(std::move(g));
  }
  std::sort(d.gpus.begin(), d.gpus.end(), [](const auto& a, const auto& b) { return a.bdf < b.bdf; });
  return d;
}

}  // namespace

const Avail<KernelConfig>& kernel_config(Facts& f) {
  return f.memo<Avail<KernelConfig>>("platform.kernel_config", [&] { return read_kernel_config(f); });
}

const Avail<parsers::NvidiaDriverVersion>& nvidia_driver(Facts& f) {
  return f.memo<Avail<parsers::NvidiaDriverVersion>>("platform.nvidia_driver", [&]() -> Avail<parsers::NvidiaDriverVersion> {
    auto text = f.root().read("/proc/driver/nvidia/version");
    if (!text) return missing(describe(text.error()));
    return parsers::parse_nvidia_driver_version(*text);
  });
}

bool kernel_module_loaded(Facts& f, std::string_view name) {
  const std::string dir = "/sys/module/" + std::string(name);
  return f.memo<bool>("platform.module." + std::string(name), [&] { return f.root().exists(dir); });
}

const Avail<Grace>& grace(Facts& f) {
  return f.memo<Avail<Grace>>("platform.grace", [&] { return read_grace(f); });
}

const Smmu& smmu(Facts& f) {
  return f.memo<Smmu>("platform.smmu", [&] { return read_smmu(f.root()); });
}

const Avail<KernelLog>& kernel_log(Facts& f) {
  return f.memo<Avail<KernelLog>>("platform.kernel_log", [&] { return read_kernel_log(f); });
}

std::optional<std::string> dmesg_not_a_log(Facts& f) {
  const auto& path = f.options().dmesg_path;
  if (!path) return std::nullopt;
  const auto& log = kernel_log(f);
  if (log || !sys::starts_with(log.error(), *path + std::string(kNotALog))) return std::nullopt;
  return log.error();
}

std::string KernelLog::when(const parsers::KernelEvent& e) const {
  if (!e.wall.empty()) return e.wall;
  if (e.since_boot_s && boot_time) return sys::rfc3339_utc(static_cast<std::time_t>(*boot_time + static_cast<long long>(*e.since_boot_s)));
  if (e.since_boot_s) return fmt::format("{:.0f} s after boot", *e.since_boot_s);
  return "time not in the log";
}

const Avail<PageSize>& page_size(Facts& f) {
  return f.memo<Avail<PageSize>>("platform.page_size", [&] { return read_page_size(f); });
}

const Avail<std::vector<IommuGroup>>& iommu_groups(Facts& f) {
  return f.memo<Avail<std::vector<IommuGroup>>>("platform.iommu_groups", [&] { return read_iommu_groups(f.root()); });
}

const DriverGpus& driver_gpus(Facts& f) {
  return f.memo<DriverGpus>("platform.driver_gpus", [&] { return read_driver_gpus(f.root()); });
}

bool is_nvidia_nic(const PciDevice& d) { return d.vendor == 0x15b3 && (d.class_code >> 16) == 0x02; }

std::string pci_driver(Facts& f, const std::string& bdf) {
  auto link = f.root().readlink("/sys/bus/pci/devices/" + bdf + "/driver");
  if (!link) return "";
  auto slash = link->rfind('/');
  return slash == std::string::npos ? *link : link->substr(slash + 1);
}

std::optional<std::string> iommu_mode_summary(Facts& f) {
  const auto& pci = f.pci();
  const auto& groups = iommu_groups(f);
  if (!pci || !groups) return std::nullopt;
  std::set<std::string> wanted;
  for (const auto& d : *pci)
    if (d.is_gpu() || is_nvidia_nic(d)) wanted.insert(d.bdf);
  if (wanted.empty()) return std::nullopt;
  std::set<std::string> types;
  bool any = false;
  for (const auto& g : *groups)
    for (const auto& dev : g.devices)
      if (wanted.count(dev)) {
        any = true;
        if (!g.type.empty()) types.insert(g.type);
      }
  if (!any) return std::string("none");
  if (types.empty()) return std::nullopt;
  if (types.size() > 1) return std::string("mixed");
  return *types.begin();
}

PcieLink read_pcie_link(Facts& f, const std::string& bdf) {
  const auto& root = f.root();
  PcieLink l;
  l.bdf = bdf;
  const std::string base = "/sys/bus/pci/devices/" + bdf + "/";
  auto get = [&](const char* attr, std::string& text) {
    auto v = root.read_value(base + attr);
    if (!v) {
      if (l.error.empty()) l.error = describe(v.error());
      return false;
    }
    text = *v;
    return true;
  };
  if (get("current_link_speed", l.cur_speed_text)) l.cur_speed = parsers::parse_link_speed(l.cur_speed_text);
  if (get("current_link_width", l.cur_width_text)) l.cur_width = parsers::parse_link_width(l.cur_width_text);
  if (get("max_link_speed", l.max_speed_text)) l.max_speed = parsers::parse_link_speed(l.max_speed_text);
  if (get("max_link_width", l.max_width_text)) l.max_width = parsers::parse_link_width(l.max_width_text);
  return l;
}

}  // namespace perfgap::facts
