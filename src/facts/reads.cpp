#include "facts/reads.hpp"

#include <algorithm>

#include "facts/facts.hpp"
#include "facts/nccl.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {
namespace reads {

List of(std::initializer_list<List> lists) {
  List out;
  for (const auto& l : lists)
    for (auto p : l)
      if (std::find(out.begin(), out.end(), p) == out.end()) out.push_back(p);
  return out;
}

// Each list is built once, on first use (the registry is built at run time, so no static
// initialisation order is involved).
#define PERFGAP_READS(name, ...)      \
  const List& name() {                \
    static const List l = __VA_ARGS__; \
    return l;                         \
  }

PERFGAP_READS(cpuinfo, {"/proc/cpuinfo"})
// Live the architecture is uname's; a tree's comes from kernel.arch, the snapshot's own
// .perfgap/uname-machine, or cpuinfo.
PERFGAP_READS(identity, of({{"/proc/sys/kernel/hostname", "/proc/sys/kernel/osrelease", "/proc/sys/kernel/arch",
                             "/.perfgap/uname-machine"},
                            cpuinfo()}))
PERFGAP_READS(cmdline, {"/proc/cmdline"})
PERFGAP_READS(topology, {"/sys/devices/system/cpu/online", "/sys/devices/system/node/node*/cpulist"})
PERFGAP_READS(cpuidle, of({topology(),
                           {"/sys/devices/system/cpu/cpuidle/current_driver",
                            "/sys/devices/system/cpu/cpu*/cpuidle/state*/name",
                            "/sys/devices/system/cpu/cpu*/cpuidle/state*/latency",
                            "/sys/devices/system/cpu/cpu*/cpuidle/state*/disable",
                            "/sys/module/intel_idle/parameters/max_cstate", "/dev/cpu_dma_latency",
                            "/etc/tuned/active_profile"}}))
PERFGAP_READS(cpufreq, of({topology(),
                           {"/sys/devices/system/cpu/intel_pstate/no_turbo",
                            "/sys/devices/system/cpu/intel_pstate/max_perf_pct",
                            "/sys/devices/system/cpu/intel_pstate/status", "/sys/devices/system/cpu/cpufreq/boost",
                            "/sys/devices/system/cpu/cpu*/cpufreq/boost",
                            "/sys/devices/system/cpu/cpu*/cpufreq/scaling_driver",
                            "/sys/devices/system/cpu/cpu*/cpufreq/scaling_governor",
                            "/sys/devices/system/cpu/cpu*/cpufreq/energy_performance_preference",
                            "/sys/devices/system/cpu/cpu*/cpufreq/scaling_max_freq",
                            "/sys/devices/system/cpu/cpu*/cpufreq/cpuinfo_max_freq",
                            "/sys/devices/system/cpu/cpu*/cpufreq/affected_cpus",
                            "/sys/devices/system/cpu/cpu*/acpi_cppc/highest_perf",
                            "/sys/devices/system/cpu/cpu*/acpi_cppc/nominal_perf"}}))
PERFGAP_READS(pci, {"/sys/bus/pci/devices/*", "/sys/bus/pci/devices/*/vendor", "/sys/bus/pci/devices/*/class", "/sys/bus/pci/devices/*/device",
                    "/sys/bus/pci/devices/*/numa_node", "/sys/bus/pci/devices/*/local_cpulist"})
// Listings are declared with the entries' names ("DIR/*") where the names themselves are
// facts (a GPU's bus id, an RDMA device, an SMMU instance): a snapshot keeps each entry then,
// whatever it holds. (The test matches a listing by the files below it; this it cannot see.)
PERFGAP_READS(driver_gpus, {"/proc/driver/nvidia/gpus/*", "/proc/driver/nvidia/gpus/*/information"})
PERFGAP_READS(visible_gpus, of({pci(), driver_gpus()}))
PERFGAP_READS(hypervisor, of({identity(), cpuinfo(),
                              {"/sys/class/dmi/id/sys_vendor", "/sys/class/dmi/id/product_name",
                               "/sys/class/dmi/id/bios_vendor", "/sys/hypervisor/type",
                               "/sys/firmware/devicetree/base/hypervisor",
                               "/sys/firmware/devicetree/base/hypervisor/compatible", "/proc/device-tree/hypervisor",
                               "/proc/device-tree/hypervisor/compatible", "/sys/bus/vmbus/devices", "/proc/sysinfo"},
                              pci(),
                              {"/proc/bus/pci/devices"}}))
PERFGAP_READS(audited_env, {"/proc/self/environ"})
// /proc/self: which pid the audited process is in a tree (a link there).
PERFGAP_READS(training, {"/proc/self", "/proc/[0-9]*/environ", "/proc/[0-9]*/maps", "/proc/[0-9]*/status"})
// The window also takes the RDMA port counters at both ends (facts/rdma_counters).
PERFGAP_READS(window, {"/proc/stat", "/proc/interrupts", "/proc/uptime", "/proc/[0-9]*/task/[0-9]*/stat", "/sys/class/infiniband",
                       "/sys/class/infiniband/*/ports", "/sys/class/infiniband/*/ports/*/counters/*",
                       "/sys/class/infiniband/*/ports/*/hw_counters/*"})
PERFGAP_READS(numa_maps, {"/proc/[0-9]*/numa_maps"})
PERFGAP_READS(irq_affinity, {"/proc/irq/*/effective_affinity_list", "/proc/irq/*/smp_affinity_list"})
// docs/CONTAINERS.md lists each signal; stat(/) against /proc/1/root is live only.
PERFGAP_READS(container, of({{"/.dockerenv", "/run/.containerenv", "/.singularity.d", "/.flatpak-info", "/run/systemd/container",
                              "/proc/1/environ", "/proc/1/cgroup", "/proc/1/comm", "/proc/self/mountinfo", "/proc/self/ns/mnt",
                              "/proc/1/ns/mnt"},
                             audited_env()}))
PERFGAP_READS(nvidia_driver_version, {"/proc/driver/nvidia/version"})
PERFGAP_READS(numa_balancing, {"/proc/sys/kernel/numa_balancing"})
PERFGAP_READS(infiniband, {"/sys/class/infiniband/*", "/sys/class/infiniband/*/device", "/sys/class/infiniband/*/hca_type",
                           "/sys/class/infiniband/*/board_id", "/sys/class/infiniband/*/fw_ver", "/sys/class/infiniband/*/ports/*/state",
                           "/sys/class/infiniband/*/ports/*/phys_state", "/sys/class/infiniband/*/ports/*/link_layer",
                           "/sys/class/infiniband/*/ports/*/rate", "/sys/class/infiniband_verbs/*/ibdev"})
// A listing whose entries' names are the fact (interfaces are matched by name).
PERFGAP_READS(net_interfaces, {"/sys/class/net/*"})
// The home NCCL uses: the audited uid (/proc/self/status in a tree) in /etc/passwd, else $HOME.
PERFGAP_READS(nccl_config, of({audited_env(),
                               {"/proc/self/status", "/etc/passwd", kNcclConfFile, kHomeNcclConf, "/etc/nccl.conf"}}))
PERFGAP_READS(nccl_topo_file, of({nccl_config(), {kNcclTopoFile}}))
// The upstream port is the directory above the device's real one: ".." after the link.
PERFGAP_READS(pci_link, {"/sys/bus/pci/devices/*/max_link_speed", "/sys/bus/pci/devices/*/max_link_width",
                         "/sys/bus/pci/devices/*/../max_link_speed", "/sys/bus/pci/devices/*/../max_link_width"})
// Its first entry is where sites keep one; the second is the file NCCL loads when
// NCCL_TOPO_FILE is unset (facts::kNcclDefaultTopoFile).
PERFGAP_READS(known_topology_files, {"/etc/nccl/topo.xml", "/var/run/nvidia-topologyd/virtualTopology.xml"})
PERFGAP_READS(shm_size, {"/proc/self/mounts", "/proc/mounts", "/proc/meminfo"})
PERFGAP_READS(memlock, {"/proc/self/limits"})
PERFGAP_READS(launcher_config, {"/etc/enroot", "/etc/enroot/environ.d/*", "/etc/enroot/mounts.d/*",
                                "/etc/slurm/plugstack.conf", "/etc/slurm/plugstack.conf.d/*",
                                "/etc/slurm-llnl/plugstack.conf", "/etc/slurm-llnl/plugstack.conf.d/*"})
// /dev itself tells a tree that did not capture device nodes from one that lacks them.
PERFGAP_READS(device_nodes, {"/dev", "/dev/infiniband/*", "/dev/nvidia*"})
PERFGAP_READS(kernel_config, of({identity(), {"/boot/config-*", "/proc/config.gz"}}))
PERFGAP_READS(grace, of({{"/sys/devices/soc0/soc_id", "/sys/devices/soc0/family", "/sys/devices/soc0/machine",
                          "/sys/devices/soc0/revision"},
                         cpuinfo(), pci(), driver_gpus()}))
PERFGAP_READS(smmu, {"/sys/class/iommu/*", "/sys/class/iommu/*/device/driver", "/sys/bus/acpi/devices/NVDA200C:*/status",
                     "/sys/module/arm_smmu_v3/parameters/disable_cmdqv", "/sys/module/arm_smmu_v3/parameters/bypass_vcmdq"})
// A snapshot keeps the kernel log as .perfgap/dmesg.txt (--dmesg FILE is read as given).
// perfgap-gpu's documents as a snapshot stores them (live, the helper is run instead).
PERFGAP_READS(nvml_samples, {"/.perfgap/nvml-1.json", "/.perfgap/nvml-2.json", "/.perfgap/nvml-why.txt"})
PERFGAP_READS(kernel_log, {"/.perfgap/dmesg.txt", "/dev/kmsg", "/proc/stat"})
PERFGAP_READS(page_size, {"/proc/self/smaps"})
PERFGAP_READS(iommu_groups, {"/sys/kernel/iommu_groups/*/type", "/sys/kernel/iommu_groups/*/devices/*"})
PERFGAP_READS(pci_driver, {"/sys/bus/pci/devices/*/driver"})
PERFGAP_READS(pcie_link, {"/sys/bus/pci/devices/*/current_link_speed", "/sys/bus/pci/devices/*/current_link_width",
                          "/sys/bus/pci/devices/*/max_link_speed", "/sys/bus/pci/devices/*/max_link_width"})

// GPUDirect RDMA's peer-memory modules (nccl.gdr).
PERFGAP_READS(kernel_modules, {"/sys/module/nvidia_peermem", "/sys/module/nv_peer_mem"})

#undef PERFGAP_READS

}  // namespace reads

bool is_named_read(std::string_view pattern) {
  return !pattern.empty() && (pattern.front() == '$' || pattern.front() == '~');
}

std::vector<std::string> named_read_paths(Facts& f, std::string_view pattern) {
  if (!is_named_read(pattern)) return {std::string(pattern)};
  std::vector<std::string> out;
  auto add = [&](std::string p) {
    if (!p.empty() && std::find(out.begin(), out.end(), p) == out.end()) out.push_back(std::move(p));
  };
  const auto& nccl = nccl_config(f);
  if (pattern == reads::kNcclConfFile) {
    if (auto it = nccl.env.find("NCCL_CONF_FILE"); it != nccl.env.end()) add(it->second.value);
  } else if (pattern == reads::kHomeNcclConf) {
    if (!nccl.home.empty()) add(sys::join(nccl.home, ".nccl.conf"));
    // $HOME may name another home than the passwd entry: a replay may resolve either.
    for (const auto& [k, v] : f.audited_env())
      if (k == "HOME" && !v.empty()) {
        add(sys::join(v, ".nccl.conf"));
        break;
      }
  } else if (pattern == reads::kNcclTopoFile) {
    if (auto s = nccl.get("NCCL_TOPO_FILE")) add(s->value);
  }
  return out;
}

}  // namespace perfgap::facts
