// Platform facts for the virtualization, pcie and gpu checks: the running kernel's
// configuration, Grace detection (shared/spec/checks.md "Shared definitions"), SMMUv3 and
// CMDQV, IOMMU groups, the kernel log, the base page size, PCIe link attributes and what
// the NVIDIA driver lists. Read once through Facts::memo; parsers take text and are fuzzed.
#pragma once

#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "facts/facts.hpp"

namespace perfgap::facts {

// ---- text parsers (no file access) -------------------------------------------------------

// A kernel .config: "CONFIG_X=value" lines and "# CONFIG_X is not set" (value "n").
struct KernelConfig {
  std::string source;  // the path it was read from
  std::map<std::string, std::string, std::less<>> values;
  // The value of CONFIG_<name> ("y", "m", "n", a string or number); nullopt when the config
  // does not mention it (its dependencies are not met: it is not built).
  std::optional<std::string> get(std::string_view name) const;
};
// Fails (with a reason) on text that holds no CONFIG_ line at all.
tl::expected<KernelConfig, std::string> parse_kernel_config(std::string_view text);

// Decompresses a whole gzip stream (zlib); a truncated or corrupt stream, or output beyond
// max_out bytes, is an error with the reason.
tl::expected<std::string, std::string> gunzip(std::string_view bytes, std::size_t max_out = 32u << 20);

// Kernel log text as /dev/kmsg records ("6,1234,5678,-;message" plus " KEY=value"
// continuation lines), dmesg output ("[    1.234] message") or plain lines: the messages,
// without prefixes. Bytes outside printable ASCII become '?', so messages are safe in any
// report; lines longer than 512 bytes are cut.
std::vector<std::string> parse_kernel_log(std::string_view text);

// A PCIe link speed as sysfs prints it ("16.0 GT/s PCIe", "8 GT/s", "2.5 GT/s PCIe"), in
// GT/s; nullopt for "Unknown" or anything else.
std::optional<double> parse_link_speed(std::string_view text);
// A link width ("16", "x16"); nullopt for garbage. 0 is returned as 0 (link down / unknown).
std::optional<int> parse_link_width(std::string_view text);

// ---- facts -------------------------------------------------------------------------------

// /boot/config-<osrelease>, else /proc/config.gz. The error names both attempts.
const Avail<KernelConfig>& kernel_config(Facts& f);

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
};
// Options::dmesg_path, else (under --root) the tree's /.perfgap/dmesg.txt, else live
// /dev/kmsg read without blocking.
const Avail<KernelLog>& kernel_log(Facts& f);

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

}  // namespace perfgap::facts
