// NCCL's configuration as NCCL itself would see it: its config files (parsed and merged the
// way src/misc/param.cc does), the audited environment on top, and NCCL topology XML files
// (NCCL_TOPO_FILE) parsed and summarised for matching against the devices present.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "facts/facts.hpp"

namespace perfgap::facts {

// ---- config files ------------------------------------------------------------------------

struct NcclConfEntry {
  std::string name, value;
  int line = 0;
};

// One NCCL config file, as NCCL's setEnvFile reads it: lines starting with '#' (in column 0)
// are comments; a line is NAME=VALUE split at the first '='; nothing is trimmed (only the
// final '\n' goes; "A = 1" sets a variable named "A " that NCCL never reads); lines without
// '=' or with an empty name are ignored; name and value are cut at 1023 bytes and at a NUL.
// Within one file the first setting of a name wins (NCCL calls setenv(name, value, 0)).
std::vector<NcclConfEntry> parse_nccl_conf(std::string_view text);

struct NcclConfFile {
  std::string path;        // real path
  std::string role;        // "NCCL_CONF_FILE", "~/.nccl.conf", "/etc/nccl.conf"
  bool present = false;
  std::string error;       // why it could not be read ("" when absent or read)
  std::vector<NcclConfEntry> entries;
};

// Where a value comes from: "/proc/self/environ" or "<file>:<line>".
struct NcclSetting {
  std::string value;
  std::string source;
  bool from_env = false;
};

struct NcclConfig {
  std::vector<NcclConfFile> files;               // in NCCL's read order
  std::string home, home_how;                    // the home directory used for ~/.nccl.conf
  std::map<std::string, NcclSetting> conf;       // merged config files (first wins), env excluded
  std::map<std::string, NcclSetting> env;        // NCCL_* of the audited environment (getenv: first wins)
  // What NCCL reads for `name`: the environment, else the config files.
  std::optional<NcclSetting> get(std::string_view name) const;
  // Every NCCL_* name NCCL would see, with its effective setting.
  std::map<std::string, NcclSetting> effective() const;
};

const NcclConfig& nccl_config(Facts& f);

// What report.node.settings.nccl_topo_file says: "present", "missing" or "unset".
std::string nccl_topo_file_state(Facts& f);

// ---- topology XML ------------------------------------------------------------------------

struct TopoPci {
  std::string busid;  // lower case, as NCCL compares them
  enum Kind { gpu, nic, bridge, other } kind = other;
  std::optional<std::uint32_t> class_code, vendor, device;
  std::string link_speed;              // "" when not stated
  std::optional<int> link_width;       // nullopt when not stated (or "0", NCCL's "unknown")
  std::optional<int> numaid;           // of the enclosing <cpu>
  std::string affinity;                // the enclosing <cpu>'s affinity mask, "" when not stated
  std::vector<std::string> nets;       // <nic><net name=...> below it
  int line = 0;
  bool is_virtual() const { return busid.rfind("ffff:", 0) == 0; }
};

struct TopoNet {
  std::string name;
  std::string pci_busid;  // the enclosing <pci>, "" for a <nic> directly under <cpu>
  std::optional<int> numaid;
  int line = 0;
};

struct TopoFile {
  int cpus = 0;
  std::vector<TopoPci> pci;
  std::vector<TopoNet> nets;
  // Reasons NCCL's own (much simpler) XML reader would reject text that is valid XML:
  // an XML declaration, text or tabs between elements, attributes split over lines.
  std::vector<std::string> nccl_rejects;
  int gpus() const;
  int nics() const;
};

// The largest topology file read (real ones are a few KiB to ~100 KiB; NCCL's reader stops
// at a few thousand nodes). A larger file is reported, never read whole.
inline constexpr std::size_t kMaxTopoBytes = 4u << 20;

// Parses NCCL topology XML (<system version="1"><cpu ...><pci busid=...>...). Errors say why
// in one line, with the line number where there is one.
tl::expected<TopoFile, std::string> parse_nccl_topo(std::string_view text);

// A PCI device's link as NCCL would write it into a topology file: the smaller of the
// device's and its upstream port's max_link_speed / max_link_width.
struct PciLink {
  std::optional<double> speed_gts;
  std::string speed_text, speed_source;
  std::optional<int> width;
  std::string width_source;
};
PciLink read_pci_link(const sys::Sysroot& root, const std::string& bdf);

// "16 GT/s", "32.0 GT/s PCIe" -> 16, 32.
std::optional<double> parse_topo_link_speed(std::string_view text);

// NCCL reads integer settings with strtoll(str, nullptr, 0): leading blanks, a sign, 0x/0
// prefixes, and whatever digits come first ("1abc" is 1, "yes" is 0).
std::int64_t nccl_int(std::string_view value);

// The settings that switch one of NCCL's fast paths off, in the order they are reported:
// one table for nccl.env.disabled_paths (the node's settings) and profile.env (the profiled
// job's environment), with the values read as NCCL reads them.
struct NcclFastPathSwitch {
  enum class Off { nonzero, zero, loc_or_zero, socket };  // which values switch it off
  enum class Costs { always, with_rdma, with_nvswitch };  // where switching it off costs something
  std::string_view name;
  Off off;
  Costs costs;
  std::string_view cost;      // what is lost
  std::string_view expected;  // the value that keeps the fast path
  std::string_view free_why;  // costs != always: why nothing is lost without the hardware
  bool switches_off(std::string_view value) const;
};
const std::vector<NcclFastPathSwitch>& nccl_fast_path_switches();

// ---- device lists (NCCL_IB_HCA, NCCL_SOCKET_IFNAME) -----------------------------------

// NCCL's syntax (src/misc/utils.cc parseStringList/matchIfList, net_ib.cc): an optional
// leading '^' (exclude), then an optional '=' (exact names; otherwise prefixes), then a comma
// list of NAME[:PORT]; entries with an empty name are dropped; at most `max_entries`.
struct NcclIfEntry {
  std::string prefix;
  int port = -1;  // -1: any port (PORT is read like atoi: "x" is port 0, which never exists)
};
struct NcclIfList {
  bool exclude = false;
  bool exact = false;
  std::vector<NcclIfEntry> entries;
};
NcclIfList parse_nccl_if_list(std::string_view value, std::size_t max_entries = 32);
// NCCL's matchIfList: true when an entry matches (an empty list matches everything); the
// caller applies `exclude` (selected = match != exclude).
bool nccl_if_match(const NcclIfList& list, std::string_view name, int port);

}  // namespace perfgap::facts
