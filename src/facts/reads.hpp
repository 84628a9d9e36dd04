// The paths each fact reads, as the glob patterns `perfgap snapshot` follows (CheckInfo::reads:
// '*', '?', '[0-9]' per path component, ".." the parent of what the link before it names).
// Each list includes the lists of the facts its reader uses (hypervisor: identity, cpuinfo,
// pci), so a check's `reads` is the union of the lists of the facts it looks at (a check reads
// no file itself): facts::reads::of({reads::topology(), reads::cpuidle()}).
// tests/checks/test_declared_reads.cpp runs every check over every fixture case with the
// sysroot's read log on and fails on any path read that its `reads` does not declare.
//
// Files named by a setting rather than a path are declared by a placeholder that
// `named_read_paths` resolves on the node being read (snapshot capture and the test do so):
//   $NCCL_CONF_FILE   NCCL_CONF_FILE of the audited environment
//   ~/.nccl.conf      .nccl.conf in the home NCCL uses (and in $HOME of the audited environment)
//   $NCCL_TOPO_FILE   NCCL_TOPO_FILE as NCCL reads it (environment, else its config files)
#pragma once

#include <initializer_list>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::facts {

class Facts;

namespace reads {

using List = std::vector<std::string_view>;

// The lists joined in order, each pattern once.
List of(std::initializer_list<List> lists);

inline constexpr std::string_view kNcclConfFile = "$NCCL_CONF_FILE";
inline constexpr std::string_view kHomeNcclConf = "~/.nccl.conf";
inline constexpr std::string_view kNcclTopoFile = "$NCCL_TOPO_FILE";

// Facts::...
const List& identity();
const List& cpuinfo();
const List& hypervisor();
const List& cmdline();
const List& topology();
const List& cpuidle();
const List& cpufreq();
const List& pci();
const List& visible_gpus();
const List& audited_env();
const List& training();
const List& window();
const List& numa_maps();
const List& irq_affinity();  // facts::irq_affinity
const List& container();  // also facts::container_info
const List& nvidia_driver_version();
const List& nvml_samples();  // facts/gpu.hpp
const List& numa_balancing();
// facts/infiniband.hpp
const List& infiniband();
const List& net_interfaces();
// facts/nccl.hpp
const List& nccl_config();
const List& nccl_topo_file();  // nccl_topo_file_state, or reading the file NCCL_TOPO_FILE names
const List& pci_link();        // pci_link, read_pci_link: the device and its upstream port
const List& known_topology_files();  // known_topology_files (stat), and topology_file_text of them
// facts/runtime.hpp
const List& shm_size();
const List& memlock();
const List& launcher_config();
const List& device_nodes();  // device_node_present
// facts/platform.hpp
const List& kernel_config();
const List& grace();
const List& smmu();
const List& kernel_log();  // besides --dmesg FILE, which is read as given
const List& page_size();
const List& iommu_groups();
const List& driver_gpus();
const List& pci_driver();
const List& pcie_link();
const List& kernel_modules();  // kernel_module_loaded: the modules asked about

}  // namespace reads

// Whether a declared read is a placeholder (starts with '$' or '~') rather than a path.
bool is_named_read(std::string_view pattern);
// The absolute or relative paths a placeholder stands for on the node `f` reads (none when
// the setting is unset or empty); a pattern that is no placeholder stands for itself.
std::vector<std::string> named_read_paths(Facts& f, std::string_view pattern);

}  // namespace perfgap::facts
