#include "facts/nccl.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cctype>
#include <climits>

#include <pugixml.hpp>

#include "sys/text.hpp"

namespace perfgap::facts {

// ---- config files ------------------------------------------------------------------------

std::vector<NcclConfEntry> parse_nccl_conf(std::string_view text) {
  std::vector<NcclConfEntry> out;
  int line_no = 0;
  std::size_t pos = 0;
  while (pos < text.size()) {
    auto nl = text.find('\n', pos);
    // getline() keeps the '\n'; NCCL then drops that one character only ('\r' stays).
    std::string_view line = text.substr(pos, nl == std::string_view::npos ? std::string_view::npos : nl - pos);
    pos = nl == std::string_view::npos ? text.size() : nl + 1;
    ++line_no;
    if (!line.empty() && line[0] == '#') continue;
    // C string semantics: the line ends at an embedded NUL.
    if (auto z = line.find('\0'); z != std::string_view::npos) line = line.substr(0, z);
    auto eq = line.find('=');
    if (eq == std::string_view::npos) continue;
    std::string name(line.substr(0, std::min<std::size_t>(eq, 1023)));
    std::string value(line.substr(eq + 1, 1023));
    if (name.empty()) continue;  // setenv("") fails: NCCL sets nothing
    if (std::any_of(out.begin(), out.end(), [&](const auto& e) { return e.name == name; })) continue;
    out.push_back({std::move(name), std::move(value), line_no});
  }
  return out;
}

std::optional<NcclSetting> NcclConfig::get(std::string_view name) const {
  if (auto it = env.find(std::string(name)); it != env.end()) return it->second;
  if (auto it = conf.find(std::string(name)); it != conf.end()) return it->second;
  return std::nullopt;
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
    if (auto passwd = f.root().read("/etc/passwd")) {
      for (auto line : sys::split_lines(*passwd)) {
        auto cols = sys::split(line, ':');
        if (cols.size() >= 6 && cols[2] == uid) return {std::string(cols[5]), "/etc/passwd (uid " + uid + ")"};
      }
    }
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
      file.entries = parse_nccl_conf(*text);
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

namespace {
bool iequals_ascii(std::string_view a, std::string_view b) {
  return a.size() == b.size() &&
         std::equal(a.begin(), a.end(), b.begin(), [](char x, char y) { return std::tolower(static_cast<unsigned char>(x)) == std::tolower(static_cast<unsigned char>(y)); });
}
}  // namespace

bool NcclFastPathSwitch::switches_off(std::string_view value) const {
  if (value.empty()) return false;  // NCCL ignores empty values
  switch (off) {
    case Off::nonzero: return nccl_int(value) != 0;
    case Off::zero: return nccl_int(value) == 0;
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

std::int64_t nccl_int(std::string_view v) {
  std::size_t i = 0;
  while (i < v.size() && std::isspace(static_cast<unsigned char>(v[i]))) ++i;
  bool neg = false;
  if (i < v.size() && (v[i] == '+' || v[i] == '-')) neg = v[i++] == '-';
  int base = 10;
  if (i + 1 < v.size() && v[i] == '0' && (v[i + 1] == 'x' || v[i + 1] == 'X') && i + 2 < v.size() &&
      std::isxdigit(static_cast<unsigned char>(v[i + 2]))) {
    base = 16;
    i += 2;
  } else if (i < v.size() && v[i] == '0') {
    base = 8;
  }
  std::int64_t out = 0;
  for (; i < v.size(); ++i) {
    int d;
    char ch = static_cast<char>(std::tolower(static_cast<unsigned char>(v[i])));
    if (ch >= '0' && ch <= '9') d = ch - '0';
    else if (ch >= 'a' && ch <= 'f') d = 10 + ch - 'a';
    else break;
    if (d >= base) break;
    if (out > (INT64_MAX - d) / base) return neg ? INT64_MIN : INT64_MAX;  // strtoll saturates
    out = out * base + d;
  }
  return neg ? -out : out;
}

// ---- topology XML ------------------------------------------------------------------------

int TopoFile::gpus() const {
  return static_cast<int>(std::count_if(pci.begin(), pci.end(), [](const auto& p) { return p.kind == TopoPci::gpu; }));
}
int TopoFile::nics() const {
  return static_cast<int>(std::count_if(pci.begin(), pci.end(), [](const auto& p) { return p.kind == TopoPci::nic; }));
}

namespace {

std::optional<std::uint32_t> hex_attr(const pugi::xml_node& n, const char* name) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  std::string_view s = sys::trim_ws(a.value());
  if (sys::starts_with(s, "0x") || sys::starts_with(s, "0X")) s.remove_prefix(2);
  if (s.empty() || s.size() > 8) return std::nullopt;
  std::uint32_t v = 0;
  auto [p, ec] = std::from_chars(s.data(), s.data() + s.size(), v, 16);
  if (ec != std::errc() || p != s.data() + s.size()) return std::nullopt;
  return v;
}

std::optional<int> int_attr(const pugi::xml_node& n, const char* name) {
  auto a = n.attribute(name);
  if (!a) return std::nullopt;
  return sys::to_int<int>(a.value());
}

class LineIndex {
 public:
  explicit LineIndex(std::string_view text) {
    for (std::size_t i = 0; i < text.size(); ++i)
      if (text[i] == '\n') nl_.push_back(i);
  }
  int line(std::ptrdiff_t offset) const {
    if (offset < 0) return 0;
    return 1 + static_cast<int>(std::lower_bound(nl_.begin(), nl_.end(), static_cast<std::size_t>(offset)) - nl_.begin());
  }

 private:
  std::vector<std::size_t> nl_;
};

// What NCCL's hand-written reader (src/graph/xml.cc) refuses although it is well-formed XML.
std::vector<std::string> nccl_reader_rejects(std::string_view t, const LineIndex& lines) {
  std::vector<std::string> out;
  auto reject = [&](std::size_t at, std::string what) {
    if (out.size() < 5) out.push_back("line " + std::to_string(lines.line(static_cast<std::ptrdiff_t>(at))) + ": " + what);
  };
  std::size_t i = 0, n = t.size();
  while (i < n && out.size() < 5) {
    while (i < n && (t[i] == ' ' || t[i] == '\n' || t[i] == '\r')) ++i;
    if (i >= n) break;
    if (t[i] != '<') {
      reject(i, t[i] == '\t' ? std::string("a tab between elements (NCCL's reader only skips spaces and line breaks)")
                             : std::string("text between elements (NCCL's reader expects '<')"));
      auto next = t.find('<', i);
      if (next == std::string_view::npos) break;
      i = next;
      continue;
    }
    if (t.compare(i, 4, "<!--") == 0) {
      auto end = t.find("-->", i + 4);
      if (end == std::string_view::npos) break;
      i = end + 3;
      continue;
    }
    if (i + 1 < n && (t[i + 1] == '?' || t[i + 1] == '!')) {
      reject(i, t[i + 1] == '?' ? "an XML declaration or processing instruction (<?...?>): NCCL's reader stops at it"
                                : "a <!...> declaration other than a comment: NCCL's reader stops at it");
      auto end = t.find('>', i);
      if (end == std::string_view::npos) break;
      i = end + 1;
      continue;
    }
    std::size_t j = i + 1;
    char quote = 0;
    bool flagged = false;
    for (; j < n; ++j) {
      char c = t[j];
      if (quote) {
        if (c == quote) quote = 0;
        continue;
      }
      if (c == '"' || c == '\'') { quote = c; continue; }
      if (c == '>') break;
      if (!flagged && (c == '\t' || c == '\n' || c == '\r')) {
        reject(j, "attributes separated by a tab or line break (NCCL's reader expects single spaces within a tag)");
        flagged = true;
      }
      if (!flagged && c == '=' && ((j > 0 && t[j - 1] == ' ') || (j + 1 < n && t[j + 1] == ' '))) {
        reject(j, "a space around '=' in an attribute (NCCL's reader expects name=\"value\")");
        flagged = true;
      }
    }
    i = j + 1;
  }
  return out;
}

}  // namespace

tl::expected<TopoFile, std::string> parse_nccl_topo(std::string_view text) {
  if (text.size() > kMaxTopoBytes) return tl::unexpected("larger than " + std::to_string(kMaxTopoBytes >> 20) + " MiB: not read");
  pugi::xml_document doc;
  auto res = doc.load_buffer(text.data(), text.size(), pugi::parse_default, pugi::encoding_utf8);
  LineIndex lines(text);
  if (!res) return tl::unexpected("not well-formed XML (line " + std::to_string(lines.line(res.offset)) + ": " + res.description() + ")");
  auto root = doc.document_element();
  if (!root) return tl::unexpected(std::string("no root element"));
  std::string root_name = root.name();
  if (root_name != "system") {
    std::string why = "root element is <" + root_name + ">, not NCCL's <system>";
    if (root_name == "graphs") why += ": an NCCL graph file (NCCL_GRAPH_FILE), not a topology";
    return tl::unexpected(why);
  }
  auto version = root.attribute("version");
  if (!version) return tl::unexpected(std::string("<system> has no version attribute (NCCL requires version=\"1\")"));
  if (sys::to_int<int>(version.value()) != 1)
    return tl::unexpected(std::string("<system version=\"") + version.value() + "\">: NCCL reads version 1 only");

  TopoFile out;
  out.nccl_rejects = nccl_reader_rejects(text, lines);
  struct Ctx {
    pugi::xml_node node;
    std::optional<int> numaid;
    std::string affinity;
    int pci = -1;  // index of the enclosing <pci> in out.pci
  };
  // Iterative walk: a deeply nested file must not exhaust the stack.
  std::vector<Ctx> stack;
  for (auto c = root.last_child(); c; c = c.previous_sibling()) stack.push_back({c, std::nullopt, "", -1});
  while (!stack.empty()) {
    Ctx ctx = stack.back();
    stack.pop_back();
    if (ctx.node.type() != pugi::node_element) continue;
    std::string_view name = ctx.node.name();
    Ctx child = ctx;
    int line = lines.line(ctx.node.offset_debug());
    if (name == "cpu") {
      ++out.cpus;
      child.numaid = int_attr(ctx.node, "numaid");
      child.affinity = ctx.node.attribute("affinity").value();
      child.pci = -1;
    } else if (name == "pci") {
      TopoPci p;
      p.busid = sys::lower(sys::trim_ws(ctx.node.attribute("busid").value()));
      p.class_code = hex_attr(ctx.node, "class");
      p.vendor = hex_attr(ctx.node, "vendor");
      p.device = hex_attr(ctx.node, "device");
      p.link_speed = std::string(sys::trim_ws(ctx.node.attribute("link_speed").value()));
      if (auto w = int_attr(ctx.node, "link_width"); w && *w > 0) p.link_width = w;
      p.numaid = ctx.numaid;
      p.affinity = ctx.affinity;
      p.line = line;
      bool has_gpu = false, has_nic = false, has_pci = false;
      for (auto c : ctx.node.children()) {
        std::string_view cn = c.name();
        has_gpu = has_gpu || cn == "gpu";
        has_nic = has_nic || cn == "nic";
        has_pci = has_pci || cn == "pci";
      }
      auto base = p.class_code ? (*p.class_code >> 16) : 0xffffu;
      bool nvidia_or_unstated = !p.vendor || *p.vendor == 0x10de;
      if (has_gpu || (base == 0x03 && nvidia_or_unstated)) p.kind = TopoPci::gpu;
      else if (has_nic || base == 0x02) p.kind = TopoPci::nic;
      else if (has_pci || p.is_virtual() || (p.class_code && (*p.class_code >> 8) == 0x0604)) p.kind = TopoPci::bridge;
      else p.kind = TopoPci::other;
      child.pci = static_cast<int>(out.pci.size());
      out.pci.push_back(std::move(p));
    } else if (name == "net") {
      TopoNet net;
      net.name = ctx.node.attribute("name").value();
      net.numaid = ctx.numaid;
      net.line = line;
      if (ctx.pci >= 0) {
        net.pci_busid = out.pci[static_cast<std::size_t>(ctx.pci)].busid;
        out.pci[static_cast<std::size_t>(ctx.pci)].nets.push_back(net.name);
      }
      out.nets.push_back(std::move(net));
    }
    for (auto c = ctx.node.last_child(); c; c = c.previous_sibling()) {
      Ctx next = child;
      next.node = c;
      stack.push_back(next);
    }
  }
  return out;
}

std::optional<double> parse_topo_link_speed(std::string_view text) {
  auto t = sys::trim_ws(text);
  std::size_t end = 0;
  while (end < t.size() && (std::isdigit(static_cast<unsigned char>(t[end])) || t[end] == '.')) ++end;
  if (end == 0) return std::nullopt;
  auto rest = sys::trim_ws(t.substr(end));
  if (!sys::starts_with(rest, "GT/s")) return std::nullopt;
  return sys::to_double(t.substr(0, end));
}

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
      auto s = parse_topo_link_speed(*v);
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

// ---- device lists ------------------------------------------------------------------------

namespace {

int c_atoi(std::string_view s) {
  std::size_t i = 0;
  while (i < s.size() && std::isspace(static_cast<unsigned char>(s[i]))) ++i;
  bool neg = false;
  if (i < s.size() && (s[i] == '+' || s[i] == '-')) neg = s[i++] == '-';
  long long v = 0;
  for (; i < s.size() && std::isdigit(static_cast<unsigned char>(s[i])); ++i) {
    v = v * 10 + (s[i] - '0');
    if (v > INT_MAX) v = INT_MAX;
  }
  return static_cast<int>(neg ? -v : v);
}

}  // namespace

NcclIfList parse_nccl_if_list(std::string_view value, std::size_t max_entries) {
  NcclIfList out;
  if (auto z = value.find('\0'); z != std::string_view::npos) value = value.substr(0, z);
  std::size_t i = 0;
  if (i < value.size() && value[i] == '^') {
    out.exclude = true;
    ++i;
  }
  if (i < value.size() && value[i] == '=') {
    out.exact = true;
    ++i;
  }
  std::string cur;
  while (out.entries.size() < max_entries) {
    char c = i < value.size() ? value[i] : '\0';
    if (c == ':') {
      if (!cur.empty()) {
        out.entries.push_back({cur, c_atoi(value.substr(i + 1))});
        cur.clear();
      }
      while (c != ',' && c != '\0') {
        ++i;
        c = i < value.size() ? value[i] : '\0';
      }
    } else if (c == ',' || c == '\0') {
      if (!cur.empty()) out.entries.push_back({cur, -1});
      cur.clear();
    } else {
      cur.push_back(c);
    }
    if (c == '\0') break;
    ++i;
  }
  return out;
}

bool nccl_if_match(const NcclIfList& list, std::string_view name, int port) {
  if (list.entries.empty()) return true;  // NCCL: no list means every device
  for (const auto& e : list.entries) {
    bool name_ok = list.exact ? name == e.prefix : sys::starts_with(name, e.prefix);
    bool port_ok = port == -1 || e.port == -1 || e.port == port;
    if (name_ok && port_ok) return true;
  }
  return false;
}

}  // namespace perfgap::facts
