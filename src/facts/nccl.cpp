#include "facts/nccl.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>

#include "facts/reads.hpp"
#include "parsers/host_files.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {

// ---- config files ------------------------------------------------------------------------

std::optional<NcclSetting> NcclConfig::get(std::string_view name) const {
  if (auto it = env.find(std::string(name)); it != env.end()) return it->second;
  if (auto it = conf.find(std::string(name)); it != conf.end()) return it->second;
  return std::nullopt;
}

std::optional<NcclSetting> NcclConfig::active(std::string_view name) const {
  auto s = get(name);
  if (!s || s->value.empty()) return std::nullopt;
  return s;
}

std::map<std::string, NcclSetting> NcclConfig::effective() const {
  std::map<std::string, NcclSetting> out;
  for (const auto& [k, v] : conf)
    if (sys::starts_with(k, "NCCL_")) out[k] = v;
  for (const auto& [k, v] : env)
    if (sys::starts_with(k, "NCCL_")) out[k] = v;
  return out;
}

namespace {

// The home directory NCCL uses: getpwuid(getuid())->pw_dir. perfgap never asks NSS (the
// static binary has no NSS modules, and inside a container the host's would be wrong): the
// uid (live: getuid(); under --root: the real uid of /proc/self/status) is looked up in the
// sysroot's /etc/passwd, which is what the container or tree itself holds; else $HOME of the
// audited environment (an LDAP/SSSD user has no /etc/passwd line).
std::pair<std::string, std::string> home_dir(Facts& f) {
  std::string uid;
  if (f.root().is_live()) {
    uid = std::to_string(::getuid());
  } else if (auto status = f.root().read("/proc/self/status")) {
    auto kv = parsers::parse_key_values(*status);
    if (auto it = kv.find("Uid"); it != kv.end()) {
      auto fields = sys::split_ws(it->second);
      if (!fields.empty()) uid = std::string(fields[0]);
    }
  }
  if (!uid.empty())
    if (auto passwd = f.root().read("/etc/passwd"))
      if (auto home = parsers::passwd_home(*passwd, uid)) return {*home, "/etc/passwd (uid " + uid + ")"};
  for (const auto& [k, v] : f.audited_env())
    if (k == "HOME" && !v.empty()) return {v, "HOME in /proc/self/environ"};
  return {"", "no /etc/passwd entry for the audited uid and no HOME"};
}

NcclConfig read_nccl_config(Facts& f) {
  NcclConfig c;
  for (const auto& [k, v] : f.audited_env())
    if (!c.env.count(k)) c.env[k] = {v, f.audited_env_source(), true};
  auto [home, how] = home_dir(f);
  c.home = home;
  c.home_how = how;
  std::vector<std::pair<std::string, std::string>> order;  // (path, role)
  if (auto it = c.env.find("NCCL_CONF_FILE"); it != c.env.end() && !it->second.value.empty())
    order.emplace_back(it->second.value, "NCCL_CONF_FILE");
  else if (!home.empty())
    order.emplace_back(sys::join(home, ".nccl.conf"), "~/.nccl.conf");
  order.emplace_back("/etc/nccl.conf", "/etc/nccl.conf");
  for (auto& [path, role] : order) {
    NcclConfFile file;
    file.path = path;
    file.role = role;
    auto text = f.root().read(path, 1u << 20);
    if (text) {
      file.present = true;
      file.entries = parsers::parse_nccl_conf(*text);
      for (const auto& e : file.entries)
        if (!c.conf.count(e.name)) c.conf[e.name] = {e.value, path + ":" + std::to_string(e.line), false};
    } else if (text.error().err != ENOENT) {
      file.error = describe(text.error());
    }
    c.files.push_back(std::move(file));
  }
  return c;
}

}  // namespace

const NcclConfig& nccl_config(Facts& f) {
  return f.memo<NcclConfig>("nccl.config", [&] { return read_nccl_config(f); });
}

std::string nccl_topo_file_state(Facts& f) {
  auto s = nccl_config(f).get("NCCL_TOPO_FILE");
  if (!s) return "unset";
  if (s->value.empty()) return "missing";
  auto st = f.root().stat(s->value);
  return st && S_ISREG(st->st_mode) ? "present" : "missing";
}

const std::vector<std::string>& known_topology_files(Facts& f) {
  return f.memo<std::vector<std::string>>("nccl.known_topology_files", [&] {
    std::vector<std::string> out;
    for (auto p : reads::known_topology_files())
      if (f.root().exists(p)) out.emplace_back(p);
    return out;
  });
}

const sys::ReadResult<std::string>& topology_file_text(Facts& f, const std::string& path) {
  return f.memo<sys::ReadResult<std::string>>("nccl.topology_file." + path, [&] { return f.root().read(path, kMaxTopoBytes); });
}

namespace {
bool iequals_ascii(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); });
}
}  // namespace

bool NcclFastPathSwitch::switches_off(std::string_view value) const {
  if (value.empty()) return false;  // NCCL ignores empty values
  switch (off) {
    case Off::nonzero: return parsers::nccl_int(value) != 0;
    case Off::zero: return parsers::nccl_int(value) == 0;
    case Off::loc_or_zero: return iequals_ascii(value, "LOC") || value == "0";
    case Off::socket: return iequals_ascii(value, "Socket");
  }
  return false;
}

const std::vector<NcclFastPathSwitch>& nccl_fast_path_switches() {
  using S = NcclFastPathSwitch;
  static const std::vector<S> table = {
      {"NCCL_P2P_DISABLE", S::Off::nonzero, S::Costs::always, "no NVLink/PCIe peer-to-peer: GPU-to-GPU traffic is staged through host memory", "unset or 0", ""},
      {"NCCL_P2P_LEVEL", S::Off::loc_or_zero, S::Costs::always, "P2P never used between GPUs", "unset", ""},
      {"NCCL_SHM_DISABLE", S::Off::nonzero, S::Costs::always, "no shared-memory transport: intra-node traffic without P2P goes over the network", "unset or 0", ""},
      {"NCCL_IB_DISABLE", S::Off::nonzero, S::Costs::with_rdma, "no InfiniBand/RoCE: inter-node traffic over TCP sockets, a fraction of the bandwidth", "unset or 0",
       "no RDMA devices here, so nothing is lost"},
      {"NCCL_NET", S::Off::socket, S::Costs::with_rdma, "TCP sockets although RDMA devices exist", "unset, IB or the RDMA plugin",
       "no RDMA devices here, so sockets are the only network"},
      {"NCCL_NVLS_ENABLE", S::Off::zero, S::Costs::with_nvswitch, "no NVLink SHARP on an NVLink-switch system: AllReduce/AllGather lose in-switch reductions", "unset or 1",
       "no NVSwitch PCI function seen here (class 0x0680, vendor 0x10de), so NVLS may not apply"},
      {"NCCL_NET_GDR_LEVEL", S::Off::loc_or_zero, S::Costs::always, "GPUDirect RDMA never used: every network transfer is staged through host memory", "unset", ""},
      {"NCCL_IB_GDR_LEVEL", S::Off::loc_or_zero, S::Costs::always, "GPUDirect RDMA never used: every network transfer is staged through host memory", "unset", ""},
  };
  return table;
}

// ---- topology XML: PCI links as NCCL writes them -----------------------------------------

namespace {

// "/sys/bus/pci/devices" + "../../../devices/pci0000:17/0000:17:01.0/0000:18:00.0"
std::string resolve_link(std::string_view dir, std::string_view target) {
  std::vector<std::string_view> parts;
  if (target.empty() || target[0] != '/')
    for (auto p : sys::split(dir, '/'))
      if (!p.empty()) parts.push_back(p);
  for (auto p : sys::split(target, '/')) {
    if (p.empty() || p == ".") continue;
    if (p == "..") {
      if (!parts.empty()) parts.pop_back();
      continue;
    }
    parts.push_back(p);
  }
  std::string out;
  for (auto p : parts) out += "/" + std::string(p);
  return out.empty() ? "/" : out;
}

bool bdf_like(std::string_view s) {
  return s.size() == 12 && s[4] == ':' && s[7] == ':' && s[10] == '.';
}

}  // namespace

PciLink read_pci_link(const sys::Sysroot& root, const std::string& bdf) {
  PciLink link;
  std::string dev = "/sys/bus/pci/devices/" + bdf;
  // Each directory as read, and as evidence names it: the upstream port is read as DEVICE/..
  // (the parent of the link's target, as facts/reads.hpp declares it) and named by its real path.
  std::vector<std::pair<std::string, std::string>> dirs{{dev, dev}};
  if (auto target = root.readlink(dev)) {
    auto real = resolve_link("/sys/bus/pci/devices", *target);
    auto slash = real.rfind('/');
    if (slash != std::string::npos && slash > 0) {
      auto parent = real.substr(0, slash);
      if (bdf_like(parent.substr(parent.rfind('/') + 1))) dirs.emplace_back(dev + "/..", parent);
    }
  }
  for (const auto& [r, d] : dirs) {
    if (auto v = root.read_value(r + "/max_link_speed")) {
      auto s = parsers::parse_topo_link_speed(*v);
      if (s && (!link.speed_gts || *s < *link.speed_gts)) {
        link.speed_gts = s;
        link.speed_text = *v;
        link.speed_source = d + "/max_link_speed";
      }
    }
    if (auto v = root.read_value(r + "/max_link_width")) {
      auto w = sys::to_int<int>(*v);
      if (w && *w > 0 && (!link.width || *w < *link.width)) {
        link.width = w;
        link.width_source = d + "/max_link_width";
      }
    }
  }
  return link;
}

const PciLink& pci_link(Facts& f, const std::string& bdf) {
  return f.memo<PciLink>("nccl.pci_link." + bdf, [&] { return read_pci_link(f.root(), bdf); });
}

}  // namespace perfgap::facts
