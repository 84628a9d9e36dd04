// Platform facts for the virtualization, pcie and gpu checks: the running kernel's
// configuration, Grace detection (shared/spec/checks.md "Shared definitions"), SMMUv3 and
// CMDQV, IOMMU groups, the kernel log, the base page size, PCIe link attributes and what
// the NVIDIA driver lists. Read once through Facts::memo; the text is parsed in src/parsers/.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"
#include "parsers/kernel_config.hpp"
#include "parsers/kernel_events.hpp"

namespace perfgap::facts {

using parsers::KernelConfig;

// ---- facts -------------------------------------------------------------------------------

// /boot/config-<osrelease>, else /proc/config.gz. The error names both attempts.
const Avail<KernelConfig>& kernel_config(Facts& f);

// /proc/driver/nvidia/version, read once: the driver's version line, its version number and
// whether it is the open kernel module; missing() with why when unreadable. The one reader of
// that file (report.node.settings.nvidia_driver, gpu.visible, nccl.gdr).
const Avail<parsers::NvidiaDriverVersion>& nvidia_driver(Facts& f);

// NVIDIA Grace, the shared definition: soc0 id jep106:036b:0241, or (a guest without soc0)
// a Neoverse V2 CPU with NVIDIA GPUs. Every check that asks "is this Grace" uses this fact.
struct Grace {
  bool grace = false;
  std::string how;  // why it is (or is not) Grace, for titles
  std::vector<std::pair<std::string, std::string>> evidence;  // (source, observed)
};
// missing() when neither soc0 nor /proc/cpuinfo can decide.
const Avail<Grace>& grace(Facts& f);

struct Smmu {
  std::vector<std::string> instances;  // /sys/class/iommu entries that are SMMUv3 ("smmu3.0x...")
  std::vector<std::string> other_iommus;  // other /sys/class/iommu entries
  std::string iommu_class_error;          // why /sys/class/iommu could not be listed ("" if listed or absent)
  std::vector<std::string> cmdqv_devices;  // /sys/bus/acpi/devices/NVDA200C:* present (status != 0)
  std::vector<std::string> cmdqv_disabled;  // NVDA200C entries whose ACPI status is 0
  std::map<std::string, std::string> params;  // arm_smmu_v3 parameters read: name -> value
};
const Smmu& smmu(Facts& f);

struct KernelLog {
  std::string source;  // "/dev/kmsg", the --dmesg path, or "/.perfgap/dmesg.txt"
  std::vector<std::string> messages;
  std::vector<parsers::KernelEvent> events;  // the hardware events among them (parsers/kernel_events)
  std::optional<double> first_s, last_s;     // the oldest and newest record's seconds since boot
  // When the node booted (/proc/stat btime, seconds since the epoch), for records that carry
  // seconds since boot: known for /dev/kmsg and a snapshot's log (same boot as its /proc/stat),
  // not for --dmesg FILE (which may come from another boot).
  std::optional<long long> boot_time;
  // An event's time for a report: its wall stamp, else boot_time + its seconds since boot (UTC),
  // else "N s after boot", else "time not in the log".
  std::string when(const parsers::KernelEvent& e) const;
};
// Options::dmesg_path, else (under --root) the tree's /.perfgap/dmesg.txt, else live
// /dev/kmsg read without blocking. A file (--dmesg or the tree's) that is not empty and has no
// line of a kernel log (parsers::KernelRecord layout or driver) is missing: "PATH: not a
// kernel log: ..."; an empty --dmesg FILE is missing too ("PATH: empty").
const Avail<KernelLog>& kernel_log(Facts& f);
// Why --dmesg FILE is no kernel log (readable, not empty, and no line of one), the whole
// "PATH: not a kernel log: ..." reason: bad input, which check refuses before any check runs
// (exit 2). nullopt without --dmesg, and for a file that is a log, empty or unreadable.
std::optional<std::string> dmesg_not_a_log(Facts& f);

struct PageSize {
  long kb = 0;
  std::string source;  // "sysconf(_SC_PAGESIZE)" or "/proc/self/smaps"
};
const Avail<PageSize>& page_size(Facts& f);

struct IommuGroup {
  std::string id;
  std::string type;  // "identity", "DMA", "DMA-FQ", "blocked", "unmanaged"; "" when unreadable
  std::string type_error;
  std::vector<std::string> devices;  // BDFs (lower case)
};
// Every group under /sys/kernel/iommu_groups; missing() when the directory cannot be listed.
const Avail<std::vector<IommuGroup>>& iommu_groups(Facts& f);

// The PCI functions the IOMMU and link checks look at: GPUs and NVIDIA/Mellanox NICs.
bool is_nvidia_nic(const PciDevice& d);
// The driver bound to a PCI function ("nvidia", "vfio-pci", "mlx5_core"), "" when none.
std::string pci_driver(Facts& f, const std::string& bdf);

// "identity", "DMA-FQ", "DMA", "mixed" (several types) for the GPUs' and NICs' groups;
// "none" when the IOMMU groups directory exists but holds none of them; nullopt when unknown.
std::optional<std::string> iommu_mode_summary(Facts& f);

struct PcieLink {
  std::string bdf;
  std::string cur_speed_text, cur_width_text, max_speed_text, max_width_text;
  std::optional<double> cur_speed, max_speed;  // GT/s
  std::optional<int> cur_width, max_width;
  std::string error;  // attributes not readable: why
};
PcieLink read_pcie_link(Facts& f, const std::string& bdf);

struct DriverGpu {
  std::string bdf;
  std::string model;  // "Model:" of information, "" when unreadable
  std::optional<std::string> uuid;
};
struct DriverGpus {
  bool listed = false;  // /proc/driver/nvidia/gpus exists
  std::string error;    // why not
  std::vector<DriverGpu> gpus;
};
const DriverGpus& driver_gpus(Facts& f);

// Whether the kernel module `name` is loaded: /sys/module/<name> exists (stat only), read once
// per name. A module asked about is declared in reads::kernel_modules().
bool kernel_module_loaded(Facts& f, std::string_view name);

}  // namespace perfgap::facts
