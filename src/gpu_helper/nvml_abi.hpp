// The slice of NVML's C ABI that perfgap-gpu calls, declared here so the build needs no CUDA
// toolkit. Values and layouts follow NVIDIA's NVML API reference (docs.nvidia.com/deploy/
// nvml-api, the "nvml.h" of driver r535-r575): return codes, enable states, clock types,
// the clocks event reason bits, ECC counter selectors, NVLink error counters and the fabric
// info structs with their health mask fields. Only what the helper and its test double use.
#pragma once

namespace perfgap::nvml {

using Return = int;  // nvmlReturn_t
inline constexpr Return kSuccess = 0;
inline constexpr Return kErrorUninitialized = 1;
inline constexpr Return kErrorInvalidArgument = 2;
inline constexpr Return kErrorNotSupported = 3;
inline constexpr Return kErrorNoPermission = 4;
inline constexpr Return kErrorNotFound = 6;
inline constexpr Return kErrorDriverNotLoaded = 9;
inline constexpr Return kErrorFunctionNotFound = 13;
inline constexpr Return kErrorGpuIsLost = 15;
inline constexpr Return kErrorArgumentVersionMismatch = 25;
inline constexpr Return kErrorUnknown = 999;

using Device = struct DeviceSt*;  // nvmlDevice_t: an opaque handle
using EnableState = int;          // nvmlEnableState_t: 0 disabled, 1 enabled

// nvmlClockType_t
inline constexpr int kClockGraphics = 0;
inline constexpr int kClockSm = 1;
inline constexpr int kClockMem = 2;

// nvmlTemperatureSensors_t / nvmlTemperatureThresholds_t
inline constexpr int kTemperatureGpu = 0;
inline constexpr int kThresholdShutdown = 0;
inline constexpr int kThresholdSlowdown = 1;

// nvmlMemoryErrorType_t, nvmlEccCounterType_t
inline constexpr int kMemoryErrorCorrected = 0;
inline constexpr int kMemoryErrorUncorrected = 1;
inline constexpr int kVolatileEcc = 0;
inline constexpr int kAggregateEcc = 1;

// nvmlNvLinkErrorCounter_t
inline constexpr int kNvLinkErrorDlReplay = 0;
inline constexpr int kNvLinkErrorDlRecovery = 1;
inline constexpr int kNvLinkErrorDlCrcFlit = 2;
inline constexpr int kNvLinkErrorDlCrcData = 3;
// NVML_NVLINK_MAX_LINKS: 18 in older nvml.h, 36 in current ones; the helper stops at the first link the
// driver refuses, so the larger bound is safe on older drivers.
inline constexpr unsigned kNvLinkMaxLinks = 36;

// nvmlDeviceGetFieldValues: one field asked and answered (nvmlFieldValue_t). The value is a
// union of 8 bytes read by its type; NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON is the speed of the
// GPU's active NVLinks in MB/s per link and direction (an unsigned int).
inline constexpr unsigned kFieldNvLinkSpeedCommon = 90;
inline constexpr int kValueTypeDouble = 0;
inline constexpr int kValueTypeUnsignedInt = 1;
inline constexpr int kValueTypeUnsignedLong = 2;
inline constexpr int kValueTypeUnsignedLongLong = 3;
struct FieldValue {
  unsigned field_id;
  unsigned scope_id;
  long long timestamp;
  long long latency_us;
  int value_type;  // nvmlValueType_t
  Return nvml_return;
  union {
    double d;
    unsigned ui;
    unsigned long ul;
    unsigned long long ull;
    long long sll;
  } value;
};
static_assert(sizeof(FieldValue) == 40, "nvmlFieldValue_t is 40 bytes");

// nvmlClocksEventReason* (nvmlClocksThrottleReason* before r535: the same bits).
struct ReasonBit {
  unsigned long long bit;
  const char* name;  // as parsers::GpuFacts::clock_events names it
};
inline constexpr ReasonBit kClockEventReasons[] = {
    {0x1ULL, "gpu_idle"},
    {0x2ULL, "applications_clocks_setting"},
    {0x4ULL, "sw_power_cap"},
    {0x8ULL, "hw_slowdown"},
    {0x10ULL, "sync_boost"},
    {0x20ULL, "sw_thermal_slowdown"},
    {0x40ULL, "hw_thermal_slowdown"},
    {0x80ULL, "hw_power_brake_slowdown"},
    {0x100ULL, "display_clock_setting"},
};

// Buffer sizes (NVML_DEVICE_NAME_V2_BUFFER_SIZE, NVML_DEVICE_UUID_V2_BUFFER_SIZE,
// NVML_SYSTEM_DRIVER_VERSION_BUFFER_SIZE, NVML_SYSTEM_NVML_VERSION_BUFFER_SIZE).
// nvmlPerfPolicyType_t values nvmlDeviceGetViolationStatus answers for, with the document's
// key: the time (ns) the clocks were held down for that reason since the driver loaded.
struct PerfPolicy {
  int type;
  const char* name;
};
inline constexpr PerfPolicy kPerfPolicies[] = {
    {0, "power"},           {1, "thermal"},     {2, "sync_boost"},  {3, "board_limit"},
    {4, "low_utilization"}, {5, "reliability"}, {10, "app_clocks"}, {11, "base_clocks"},
};
struct ViolationTime {  // nvmlViolationTime_t
  unsigned long long reference_time;  // us timestamp of the reading
  unsigned long long violation_time;  // ns held down
};

inline constexpr unsigned kNameBufferSize = 96;
inline constexpr unsigned kUuidBufferSize = 96;
inline constexpr unsigned kVersionBufferSize = 80;

struct PciInfo {  // nvmlPciInfo_t (nvmlDeviceGetPciInfo_v3)
  char bus_id_legacy[16];
  unsigned domain, bus, device, pci_device_id, pci_subsystem_id;
  char bus_id[32];
};

struct Utilization {  // nvmlUtilization_t
  unsigned gpu, memory;
};

inline constexpr unsigned kFabricUuidLen = 16;
inline constexpr unsigned char kFabricStateNotSupported = 0;
inline constexpr unsigned char kFabricStateCompleted = 3;

struct GpuFabricInfo {  // nvmlGpuFabricInfo_t (nvmlDeviceGetGpuFabricInfo, r525+)
  unsigned char cluster_uuid[kFabricUuidLen];
  Return status;
  unsigned clique_id;
  unsigned char state;
};

struct GpuFabricInfoV2 {  // nvmlGpuFabricInfo_v2_t (nvmlDeviceGetGpuFabricInfoV, r545+)
  unsigned version;
  unsigned char cluster_uuid[kFabricUuidLen];
  Return status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
};

struct GpuFabricInfoV3 {  // nvmlGpuFabricInfo_v3_t (r570+): adds the health summary
  unsigned version;
  unsigned char cluster_uuid[kFabricUuidLen];
  Return status;
  unsigned clique_id;
  unsigned char state;
  unsigned health_mask;
  unsigned char health_summary;
};

// NVML_STRUCT_VERSION(data, ver): the struct's size with the version in the top byte.
template <class T>
constexpr unsigned struct_version(unsigned ver) {
  return static_cast<unsigned>(sizeof(T)) | (ver << 24U);
}

}  // namespace perfgap::nvml
