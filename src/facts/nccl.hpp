// NCCL's configuration as NCCL itself would see it: its config files (merged the way
// src/misc/param.cc does; parsers/nccl_conf reads their text), the audited environment on
// top, the NCCL_TOPO_FILE state and PCI links as NCCL writes them into topology files.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "facts/facts.hpp"
#include "parsers/nccl_conf.hpp"
#include "parsers/nccl_topo.hpp"

namespace perfgap::facts {

// ---- config files (parsed by parsers/nccl_conf) ------------------------------------------

using parsers::NcclConfEntry;

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
  // A setting NCCL acts on: get(), set and non-empty (NCCL ignores empty values).
  std::optional<NcclSetting> active(std::string_view name) const;
  // Every NCCL_* name NCCL would see, with its effective setting.
  std::map<std::string, NcclSetting> effective() const;
};

const NcclConfig& nccl_config(Facts& f);

// What report.node.settings.nccl_topo_file says: "present", "missing" or "unset".
std::string nccl_topo_file_state(Facts& f);

// The topology file NCCL loads by itself when NCCL_TOPO_FILE is unset.
inline constexpr std::string_view kNcclDefaultTopoFile = "/var/run/nvidia-topologyd/virtualTopology.xml";
// The topology files known without NCCL_TOPO_FILE that exist here (stat), read once, in the
// order of reads::known_topology_files(): /etc/nccl/topo.xml (where sites keep one), then
// kNcclDefaultTopoFile.
const std::vector<std::string>& known_topology_files(Facts& f);

// ---- topology XML (parsed by parsers/nccl_topo) ------------------------------------------

// The topology file size limit, for the readers of that file (the check, snapshot capture).
using parsers::kMaxTopoBytes;

// A PCI device's link as NCCL would write it into a topology file: the smaller of the
// device's and its upstream port's max_link_speed / max_link_width.
struct PciLink {
  std::optional<double> speed_gts;
  std::string speed_text, speed_source;
  std::optional<int> width;
  std::string width_source;
};
PciLink read_pci_link(const sys::Sysroot& root, const std::string& bdf);
// read_pci_link of `bdf`, read once per device (reads::pci_link()).
const PciLink& pci_link(Facts& f, const std::string& bdf);

// A topology file's text (NCCL_TOPO_FILE's value, or one of known_topology_files()) read
// whole up to kMaxTopoBytes, once per path; the read error (its kind and errno) when not.
const sys::ReadResult<std::string>& topology_file_text(Facts& f, const std::string& path);

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

}  // namespace perfgap::facts
