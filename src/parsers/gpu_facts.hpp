// The GPU facts model: what one snapshot says about each GPU, whoever read it (a saved
// `nvidia-smi -q -x` or -q text, parsers/nvidia_smi.cpp; the NVML helper's JSON). Every field is
// optional: nullopt (or an empty map) means "not in this capture" (an older schema, N/A,
// "Requested functionality has been deprecated", or a source that does not have it), never
// zero or healthy. No I/O here.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <vector>

namespace perfgap::parsers {

struct GpuClocks {
  std::optional<double> sm_mhz, mem_mhz;          // current
  std::optional<double> app_sm_mhz, app_mem_mhz;  // application clocks (graphics clock)
  std::optional<double> default_app_sm_mhz, default_app_mem_mhz;
  std::optional<double> max_sm_mhz, max_mem_mhz;
};

struct GpuPower {
  std::optional<double> draw_w;            // power_draw, or instant_power_draw (DTD v13)
  std::optional<double> enforced_limit_w;  // enforced_power_limit (v11), current_power_limit (v12+)
  std::optional<double> default_limit_w, max_limit_w;
};

struct GpuEccCounts {
  std::optional<std::uint64_t> corrected, uncorrected;  // SRAM + DRAM
};

struct GpuRemappedRows {
  std::optional<std::uint64_t> correctable, uncorrectable;
  std::optional<bool> pending, failure;
};

struct GpuPcie {
  std::optional<int> gen_current, gen_max, width_current, width_max;
  std::optional<std::uint64_t> replay_counter, replay_rollovers;
};

struct GpuNvLink {
  int link = 0;
  std::optional<bool> up;
  std::optional<std::uint64_t> crc_errors, replay_errors, recovery_errors;
  std::optional<double> speed_gbps;  // GB/s per direction (nvidia-smi nvlink -s)
};

struct GpuFabric {
  std::optional<std::string> state, status, clique_id, cluster_uuid;  // "Completed", "Success", ...
  std::optional<std::string> health_summary;
  std::map<std::string, std::string> health;  // the health mask's named fields (bandwidth, route_unhealthy, ...)
};

struct GpuFacts {
  // Identity (no serial: reports get passed around).
  std::string name, uuid, pci_bus_id;  // pci_bus_id as the tool prints it ("00000000:01:00.0")
  std::optional<std::string> architecture;
  std::optional<bool> persistence;
  std::optional<bool> mig_enabled;
  std::optional<std::string> performance_state;  // "P0".."P12"
  // nvidia-smi's GPU Virtualization Mode: "None" on bare metal, "Pass-Through" in a VM given the
  // whole GPU, "VGPU"/"Host VGPU"/"Host VSGA" for shared ones.
  std::optional<std::string> virtualization_mode;
  std::optional<double> gpu_util_pct;
  GpuClocks clocks;
  // Clock event (throttle) reasons by NVML's name without prefix ("hw_slowdown",
  // "sw_power_cap", ...): true when active. Only the reasons the capture has.
  std::map<std::string, bool> clock_events;
  // Time spent in each reason since the driver loaded, in microseconds (DTD v13, NVML 12.x).
  std::map<std::string, std::uint64_t> clock_event_us;
  // NVML's per-policy violation times (nvmlDeviceGetViolationStatus), in nanoseconds since the
  // driver loaded, by policy ("power", "thermal", "sync_boost", "board_limit",
  // "low_utilization", "reliability", "app_clocks", "base_clocks"): perfgap-gpu only.
  std::map<std::string, std::uint64_t> violation_ns;
  GpuPower power;
  std::optional<double> temp_c, mem_temp_c, slowdown_temp_c, shutdown_temp_c;
  std::optional<bool> ecc_enabled, ecc_pending_enabled;
  GpuEccCounts ecc_volatile, ecc_aggregate;
  std::optional<bool> retirement_pending;  // pre-Ampere page retirement waiting for a reset
  std::optional<std::uint64_t> retired_pages_sbe, retired_pages_dbe;  // pages retired (single-bit, double-bit), pre-Ampere
  std::optional<GpuRemappedRows> remapped_rows;
  GpuPcie pcie;
  std::optional<std::vector<GpuNvLink>> nvlinks;  // nullopt: the source has no NVLink state
  std::optional<double> nvlink_speed_gbps;        // the active links' common GB/s per link and direction (NVML)
  std::optional<GpuFabric> fabric;                // nullopt: no fabric block at all
};

struct GpuSnapshot {
  std::string driver_version, cuda_version, timestamp;
  std::optional<int> attached_gpus;  // what the tool says; `gpus` may hold fewer (a trimmed capture)
  std::string schema;                // "nvsmi_device_v12.dtd", or "" when not said
  std::vector<GpuFacts> gpus;
};

}  // namespace perfgap::parsers
