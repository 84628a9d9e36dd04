// perfgap-gpu: prints one JSON document of NVML facts per GPU (docs/GPU.md). Dynamically
// linked against libc and libdl only: libnvidia-ml.so.1 is dlopen'ed and every call is found
// with dlsym, so one binary runs on any driver (a call an older driver lacks is a fact left
// out, not a failure) and on nodes without one (exit 3). No C++ library is used on purpose:
// the output is built in a fixed buffer and written once, so a timeout never leaves half a
// document.
//
// A GPU not in persistence mode is asked only its identity and the mode itself: the queries
// after that would keep the driver state up and disturb the node; --nvml asks anyway.
#include <dlfcn.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction and alarm are POSIX, not in <csignal>
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu_helper/cuda_probe.hpp"
#include "gpu_helper/nvml_abi.hpp"
#include "gpu_helper/old_glibc.hpp"

namespace {

using namespace perfgap::nvml;

// The default bound on the whole run; perfgap, which also times the helper out, may pass its
// own remaining budget with --deadline.
constexpr unsigned kDeadlineSeconds = 10;
constexpr unsigned kMaxDeadlineSeconds = 600;

// ---- output: JSON into a fixed buffer ----------------------------------------------------
char g_out[1 << 20];
std::size_t g_len = 0;
bool g_overflow = false;
bool g_first[32] = {true};  // per nesting level: nothing written at this level yet
int g_depth = 0;

void raw(const char* s, std::size_t n) {
  if (g_len + n >= sizeof g_out) {
    g_overflow = true;
    return;
  }
  std::memcpy(g_out + g_len, s, n);
  g_len += n;
}
void raw(const char* s) { raw(s, std::strlen(s)); }

void string(const char* s, std::size_t max) {
  raw("\"");
  for (std::size_t i = 0; i < max && s[i]; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    char buf[8];
    if (c == '"' || c == '\\') {
      buf[0] = '\\', buf[1] = static_cast<char>(c);
      raw(buf, 2);
    } else if (c < 0x20 || c == 0x7f) {
      std::snprintf(buf, sizeof buf, "\\u%04x", c);
      raw(buf);
    } else if (c >= 0x80) {
      // NVML strings are ASCII; a byte beyond it is replaced so the document stays valid UTF-8.
      raw("?");
    } else {
      raw(reinterpret_cast<const char*>(&c), 1);
    }
  }
  raw("\"");
}

void sep() {
  if (!g_first[g_depth]) raw(",");
  g_first[g_depth] = false;
}
void key(const char* k) {
  sep();
  string(k, 256);
  raw(":");
}
void open(const char* k, char brace) {
  if (k) key(k);
  else sep();
  raw(&brace, 1);
  g_first[++g_depth] = true;
}
void close(char brace) {
  raw(&brace, 1);
  --g_depth;
}
void put_str(const char* k, const char* v, std::size_t max) {
  key(k);
  string(v, max);
}
void put_u(const char* k, unsigned long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%llu", v);
  key(k);
  raw(buf);
}
void put_i(const char* k, long long v) {
  char buf[32];
  std::snprintf(buf, sizeof buf, "%lld", v);
  key(k);
  raw(buf);
}
void put_bool(const char* k, bool v) {
  key(k);
  raw(v ? "true" : "false");
}

// ---- NVML entry points -------------------------------------------------------------------
#define PERFGAP_NVML_CALLS(X)                                                                  \
  X(nvmlInit_v2, Return (*)())                                                                 \
  X(nvmlShutdown, Return (*)())                                                                \
  X(nvmlSystemGetDriverVersion, Return (*)(char*, unsigned))                                   \
  X(nvmlSystemGetNVMLVersion, Return (*)(char*, unsigned))                                     \
  X(nvmlDeviceGetCount_v2, Return (*)(unsigned*))                                              \
  X(nvmlDeviceGetHandleByIndex_v2, Return (*)(unsigned, Device*))                              \
  X(nvmlDeviceGetName, Return (*)(Device, char*, unsigned))                                    \
  X(nvmlDeviceGetUUID, Return (*)(Device, char*, unsigned))                                    \
  X(nvmlDeviceGetPciInfo_v3, Return (*)(Device, PciInfo*))                                     \
  X(nvmlDeviceGetPersistenceMode, Return (*)(Device, EnableState*))                            \
  X(nvmlDeviceGetMigMode, Return (*)(Device, unsigned*, unsigned*))                            \
  X(nvmlDeviceGetPerformanceState, Return (*)(Device, int*))                                   \
  X(nvmlDeviceGetUtilizationRates, Return (*)(Device, Utilization*))                           \
  X(nvmlDeviceGetClockInfo, Return (*)(Device, int, unsigned*))                                \
  X(nvmlDeviceGetApplicationsClock, Return (*)(Device, int, unsigned*))                        \
  X(nvmlDeviceGetDefaultApplicationsClock, Return (*)(Device, int, unsigned*))                 \
  X(nvmlDeviceGetMaxClockInfo, Return (*)(Device, int, unsigned*))                             \
  X(nvmlDeviceGetCurrentClocksEventReasons, Return (*)(Device, unsigned long long*))           \
  X(nvmlDeviceGetCurrentClocksThrottleReasons, Return (*)(Device, unsigned long long*))        \
  X(nvmlDeviceGetViolationStatus, Return (*)(Device, int, ViolationTime*))                     \
  X(nvmlDeviceGetPowerUsage, Return (*)(Device, unsigned*))                                    \
  X(nvmlDeviceGetEnforcedPowerLimit, Return (*)(Device, unsigned*))                            \
  X(nvmlDeviceGetPowerManagementDefaultLimit, Return (*)(Device, unsigned*))                   \
  X(nvmlDeviceGetPowerManagementLimitConstraints, Return (*)(Device, unsigned*, unsigned*))    \
  X(nvmlDeviceGetTemperature, Return (*)(Device, int, unsigned*))                              \
  X(nvmlDeviceGetTemperatureThreshold, Return (*)(Device, int, unsigned*))                     \
  X(nvmlDeviceGetEccMode, Return (*)(Device, EnableState*, EnableState*))                      \
  X(nvmlDeviceGetTotalEccErrors, Return (*)(Device, int, int, unsigned long long*))            \
  X(nvmlDeviceGetRemappedRows, Return (*)(Device, unsigned*, unsigned*, unsigned*, unsigned*)) \
  X(nvmlDeviceGetRetiredPagesPendingStatus, Return (*)(Device, EnableState*))                  \
  X(nvmlDeviceGetCurrPcieLinkGeneration, Return (*)(Device, unsigned*))                        \
  X(nvmlDeviceGetMaxPcieLinkGeneration, Return (*)(Device, unsigned*))                         \
  X(nvmlDeviceGetCurrPcieLinkWidth, Return (*)(Device, unsigned*))                             \
  X(nvmlDeviceGetMaxPcieLinkWidth, Return (*)(Device, unsigned*))                              \
  X(nvmlDeviceGetPcieReplayCounter, Return (*)(Device, unsigned*))                             \
  X(nvmlDeviceGetNvLinkState, Return (*)(Device, unsigned, EnableState*))                      \
  X(nvmlDeviceGetNvLinkErrorCounter, Return (*)(Device, unsigned, int, unsigned long long*))   \
  X(nvmlDeviceGetFieldValues, Return (*)(Device, int, FieldValue*))                            \
  X(nvmlDeviceGetGpuFabricInfoV, Return (*)(Device, void*))                                    \
  X(nvmlDeviceGetGpuFabricInfo, Return (*)(Device, GpuFabricInfo*))

struct Api {
#define PERFGAP_NVML_FIELD(name, type) \
  using name##_fn = type;              \
  name##_fn name = nullptr;
  PERFGAP_NVML_CALLS(PERFGAP_NVML_FIELD)
#undef PERFGAP_NVML_FIELD
} api;

// Calls that failed for a reason other than "not supported" (which is an absent fact): the
// document says which and with what code, per GPU.
struct Failure {
  const char* call;
  Return code;
};
Failure g_failures[64];
int g_failure_count = 0;

bool ok(const char* call, Return r) {
  if (r == kSuccess) return true;
  if (r != kErrorNotSupported && r != kErrorFunctionNotFound && g_failure_count < 64) g_failures[g_failure_count++] = {call, r};
  return false;
}
// Calls `name` when the driver has it: false (and the fact left out) when it has not.
#define PERFGAP_ASK(name, ...) (api.name && ok(#name, api.name(__VA_ARGS__)))

void put_failures() {
  if (!g_failure_count) return;
  open("errors", '{');
  for (int i = 0; i < g_failure_count; ++i) put_i(g_failures[i].call, g_failures[i].code);
  close('}');
  g_failure_count = 0;
}

void clocks(Device d) {
  struct {
    const char* key;
    Return (**fn)(Device, int, unsigned*);
    const char* call;
    int type;
  } const asks[] = {
      {"sm_mhz", &api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", kClockSm},
      {"mem_mhz", &api.nvmlDeviceGetClockInfo, "nvmlDeviceGetClockInfo", kClockMem},
      {"app_sm_mhz", &api.nvmlDeviceGetApplicationsClock, "nvmlDeviceGetApplicationsClock", kClockGraphics},
      {"app_mem_mhz", &api.nvmlDeviceGetApplicationsClock, "nvmlDeviceGetApplicationsClock", kClockMem},
      {"default_app_sm_mhz", &api.nvmlDeviceGetDefaultApplicationsClock, "nvmlDeviceGetDefaultApplicationsClock", kClockGraphics},
      {"default_app_mem_mhz", &api.nvmlDeviceGetDefaultApplicationsClock, "nvmlDeviceGetDefaultApplicationsClock", kClockMem},
      {"max_sm_mhz", &api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", kClockSm},
      {"max_mem_mhz", &api.nvmlDeviceGetMaxClockInfo, "nvmlDeviceGetMaxClockInfo", kClockMem},
  };
  open("clocks", '{');
  for (const auto& a : asks) {
    unsigned v = 0;
    if (*a.fn && ok(a.call, (*a.fn)(d, a.type, &v))) put_u(a.key, v);
  }
  close('}');

  unsigned long long mask = 0;
  bool have = PERFGAP_ASK(nvmlDeviceGetCurrentClocksEventReasons, d, &mask);
  // Drivers before r535 have only the older name for the same bits.
  if (!have && !api.nvmlDeviceGetCurrentClocksEventReasons) have = PERFGAP_ASK(nvmlDeviceGetCurrentClocksThrottleReasons, d, &mask);
  if (have) {
    char hex[32];
    std::snprintf(hex, sizeof hex, "0x%llx", mask);
    put_str("clock_event_mask", hex, sizeof hex);
    open("clock_events", '{');
    for (const auto& r : kClockEventReasons) put_bool(r.name, (mask & r.bit) != 0);
    close('}');
  }
  // Per-reason time counters: how long (ns since the driver loaded) each policy held the
  // clocks down; two samples give the growth over the run. A policy the GPU does not track
  // answers "not supported" and is left out.
  if (!api.nvmlDeviceGetViolationStatus) return;
  bool opened = false;
  for (const auto& p : kPerfPolicies) {
    ViolationTime v{};
    if (!PERFGAP_ASK(nvmlDeviceGetViolationStatus, d, p.type, &v)) continue;
    if (!opened) open("violation_ns", '{'), opened = true;
    put_u(p.name, v.violation_time);
  }
  if (opened) close('}');
}

void power_and_temperature(Device d) {
  unsigned mw = 0, lo = 0, hi = 0;
  open("power", '{');
  // Milliwatts in NVML; watts in the document, as GpuFacts holds them (three decimals).
  auto watts = [](const char* k, unsigned v) {
    char buf[32];
    std::snprintf(buf, sizeof buf, "%u.%03u", v / 1000, v % 1000);
    key(k);
    raw(buf);
  };
  if (PERFGAP_ASK(nvmlDeviceGetPowerUsage, d, &mw)) watts("draw_w", mw);
  if (PERFGAP_ASK(nvmlDeviceGetEnforcedPowerLimit, d, &mw)) watts("enforced_limit_w", mw);
  if (PERFGAP_ASK(nvmlDeviceGetPowerManagementDefaultLimit, d, &mw)) watts("default_limit_w", mw);
  if (PERFGAP_ASK(nvmlDeviceGetPowerManagementLimitConstraints, d, &lo, &hi)) watts("max_limit_w", hi);
  close('}');
  unsigned t = 0;
  if (PERFGAP_ASK(nvmlDeviceGetTemperature, d, kTemperatureGpu, &t)) put_u("temp_c", t);
  if (PERFGAP_ASK(nvmlDeviceGetTemperatureThreshold, d, kThresholdSlowdown, &t)) put_u("slowdown_temp_c", t);
  if (PERFGAP_ASK(nvmlDeviceGetTemperatureThreshold, d, kThresholdShutdown, &t)) put_u("shutdown_temp_c", t);
}

void memory_errors(Device d) {
  EnableState cur = 0, pending = 0;
  open("ecc", '{');
  if (PERFGAP_ASK(nvmlDeviceGetEccMode, d, &cur, &pending)) {
    put_bool("enabled", cur == 1);
    put_bool("pending_enabled", pending == 1);
  }
  const int counters[] = {kVolatileEcc, kAggregateEcc};
  for (int counter : counters) {
    open(counter == kVolatileEcc ? "volatile" : "aggregate", '{');
    unsigned long long n = 0;
    if (PERFGAP_ASK(nvmlDeviceGetTotalEccErrors, d, kMemoryErrorCorrected, counter, &n)) put_u("corrected", n);
    if (PERFGAP_ASK(nvmlDeviceGetTotalEccErrors, d, kMemoryErrorUncorrected, counter, &n)) put_u("uncorrected", n);
    close('}');
  }
  close('}');
  unsigned corr = 0, unc = 0, is_pending = 0, failure = 0;
  if (PERFGAP_ASK(nvmlDeviceGetRemappedRows, d, &corr, &unc, &is_pending, &failure)) {
    open("remapped_rows", '{');
    put_u("correctable", corr);
    put_u("uncorrectable", unc);
    put_bool("pending", is_pending != 0);
    put_bool("failure", failure != 0);
    close('}');
  }
  EnableState retire = 0;
  if (PERFGAP_ASK(nvmlDeviceGetRetiredPagesPendingStatus, d, &retire)) put_bool("retirement_pending", retire == 1);
}

void pcie(Device d) {
  unsigned v = 0;
  open("pcie", '{');
  if (PERFGAP_ASK(nvmlDeviceGetCurrPcieLinkGeneration, d, &v)) put_u("gen_current", v);
  if (PERFGAP_ASK(nvmlDeviceGetMaxPcieLinkGeneration, d, &v)) put_u("gen_max", v);
  if (PERFGAP_ASK(nvmlDeviceGetCurrPcieLinkWidth, d, &v)) put_u("width_current", v);
  if (PERFGAP_ASK(nvmlDeviceGetMaxPcieLinkWidth, d, &v)) put_u("width_max", v);
  if (PERFGAP_ASK(nvmlDeviceGetPcieReplayCounter, d, &v)) put_u("replay_counter", v);
  close('}');
}

// The speed of the GPU's active NVLinks (MB/s per link and direction), where the driver says it.
void nvlink_speed(Device d) {
  if (!api.nvmlDeviceGetFieldValues) return;
  FieldValue v{};
  v.field_id = kFieldNvLinkSpeedCommon;
  if (!ok("nvmlDeviceGetFieldValues", api.nvmlDeviceGetFieldValues(d, 1, &v)) || !ok("nvmlDeviceGetFieldValues", v.nvml_return)) return;
  unsigned long long mbps = 0;
  if (v.value_type == kValueTypeUnsignedInt) mbps = v.value.ui;
  else if (v.value_type == kValueTypeUnsignedLong) mbps = v.value.ul;
  else if (v.value_type == kValueTypeUnsignedLongLong) mbps = v.value.ull;
  else return;
  if (mbps > 0) put_u("nvlink_speed_mbps", mbps);  // 0: no link active, no speed to say
}

// True when the GPU has NVLinks (the list was written).
bool nvlinks(Device d) {
  if (!api.nvmlDeviceGetNvLinkState) return false;
  // Links are numbered from 0; the first one the driver refuses ends the list (a GPU without
  // NVLink refuses link 0, and the list stays empty).
  bool opened = false;
  for (unsigned link = 0; link < kNvLinkMaxLinks; ++link) {
    EnableState st = 0;
    Return r = api.nvmlDeviceGetNvLinkState(d, link, &st);
    if (r == kErrorNotSupported || r == kErrorInvalidArgument) break;
    if (!opened) open("nvlinks", '['), opened = true;
    open(nullptr, '{');
    put_u("link", link);
    if (ok("nvmlDeviceGetNvLinkState", r)) put_bool("up", st == 1);
    struct {
      const char* key;
      int counter;
    } const counters[] = {{"replay", kNvLinkErrorDlReplay},
                          {"recovery", kNvLinkErrorDlRecovery},
                          {"crc_flit", kNvLinkErrorDlCrcFlit},
                          {"crc_data", kNvLinkErrorDlCrcData}};
    for (const auto& c : counters) {
      unsigned long long n = 0;
      if (PERFGAP_ASK(nvmlDeviceGetNvLinkErrorCounter, d, link, c.counter, &n)) put_u(c.key, n);
    }
    close('}');
  }
  if (opened) close(']');
  return opened;
}

void put_fabric(const unsigned char* uuid, Return status, unsigned clique, unsigned char state) {
  put_u("state", state);
  put_i("status", status);
  put_u("clique_id", clique);
  char hex[2 * kFabricUuidLen + 1];
  for (unsigned i = 0; i < kFabricUuidLen; ++i) std::snprintf(hex + 2 * i, 3, "%02x", uuid[i]);
  put_str("cluster_uuid", hex, sizeof hex);
}

void fabric(Device d) {
  if (api.nvmlDeviceGetGpuFabricInfoV) {
    // The newest layout first; a driver that knows only v2 answers "version mismatch".
    GpuFabricInfoV3 v3{};
    v3.version = struct_version<GpuFabricInfoV3>(3);
    Return r = api.nvmlDeviceGetGpuFabricInfoV(d, &v3);
    if (r == kSuccess) {
      open("fabric", '{');
      put_fabric(v3.cluster_uuid, v3.status, v3.clique_id, v3.state);
      put_u("health_mask", v3.health_mask);
      put_u("health_summary", v3.health_summary);
      close('}');
      return;
    }
    if (r == kErrorArgumentVersionMismatch) {
      GpuFabricInfoV2 v2{};
      v2.version = struct_version<GpuFabricInfoV2>(2);
      if (ok("nvmlDeviceGetGpuFabricInfoV", api.nvmlDeviceGetGpuFabricInfoV(d, &v2))) {
        open("fabric", '{');
        put_fabric(v2.cluster_uuid, v2.status, v2.clique_id, v2.state);
        put_u("health_mask", v2.health_mask);
        close('}');
      }
      return;
    }
    if (r != kErrorFunctionNotFound) {
      ok("nvmlDeviceGetGpuFabricInfoV", r);
      return;
    }
  }
  GpuFabricInfo v1{};
  if (PERFGAP_ASK(nvmlDeviceGetGpuFabricInfo, d, &v1)) {
    open("fabric", '{');
    put_fabric(v1.cluster_uuid, v1.status, v1.clique_id, v1.state);
    close('}');
  }
}

void gpu(unsigned index, bool force) {
  open(nullptr, '{');
  put_u("index", index);
  Device d = nullptr;
  if (!PERFGAP_ASK(nvmlDeviceGetHandleByIndex_v2, index, &d)) {
    put_str("skipped", "no handle", 16);
    put_failures();
    close('}');
    return;
  }
  char buf[kNameBufferSize > kUuidBufferSize ? kNameBufferSize : kUuidBufferSize];
  if (PERFGAP_ASK(nvmlDeviceGetName, d, buf, kNameBufferSize)) put_str("name", buf, kNameBufferSize);
  if (PERFGAP_ASK(nvmlDeviceGetUUID, d, buf, kUuidBufferSize)) put_str("uuid", buf, kUuidBufferSize);
  PciInfo pci{};
  if (PERFGAP_ASK(nvmlDeviceGetPciInfo_v3, d, &pci)) put_str("pci_bus_id", pci.bus_id, sizeof pci.bus_id);
  EnableState pm = 0;
  bool known = PERFGAP_ASK(nvmlDeviceGetPersistenceMode, d, &pm);
  if (known) put_bool("persistence", pm == 1);
  if (!force && (!known || pm != 1)) {
    put_str("skipped", known ? "persistence mode off" : "persistence mode unknown", 32);
    put_failures();
    close('}');
    return;
  }
  unsigned cur = 0, pending = 0;
  if (PERFGAP_ASK(nvmlDeviceGetMigMode, d, &cur, &pending)) put_bool("mig_enabled", cur == 1);
  int pstate = 0;
  if (PERFGAP_ASK(nvmlDeviceGetPerformanceState, d, &pstate) && pstate >= 0 && pstate <= 15) put_i("performance_state", pstate);
  Utilization u{};
  if (PERFGAP_ASK(nvmlDeviceGetUtilizationRates, d, &u)) put_u("gpu_util_pct", u.gpu);
  clocks(d);
  power_and_temperature(d);
  memory_errors(d);
  pcie(d);
  if (nvlinks(d)) nvlink_speed(d);
  fabric(d);
  put_failures();
  close('}');
}

bool g_probe_mode = false;
void on_alarm(int) {
  static const char nvml[] = "perfgap-gpu: NVML did not answer within the deadline\n";
  static const char cuda[] = "perfgap-gpu: the GPU probes did not finish within the deadline\n";
  if (g_probe_mode) (void)!write(2, cuda, sizeof cuda - 1);
  else (void)!write(2, nvml, sizeof nvml - 1);
  _exit(5);
}

int usage(FILE* to, int rc) {
  std::fputs(
      "usage: perfgap-gpu [--nvml] [--deadline SECONDS]\n"
      "       perfgap-gpu --probe [--nodes LIST] [--deadline SECONDS]\n"
      "Prints NVML facts of every GPU as one JSON document (docs/GPU.md); with --probe, runs the\n"
      "active GPU probes through libcuda.so.1 instead (docs/PROBE.md: copies, launch latency).\n"
      "  --nvml                also query GPUs whose persistence mode is off (initialises them)\n"
      "  --probe               H2D/D2H bandwidth from each NUMA node and launch latency per GPU\n"
      "  --nodes LIST          --probe: NUMA nodes to put host buffers on (default 0)\n"
      "  --deadline SECONDS    give up after SECONDS (1-600, default 10): exit 5, nothing printed\n"
      "exit: 0 printed, 2 usage, 3 libnvidia-ml.so.1 (libcuda.so.1) not loadable, 4 NVML (cuInit)\n"
      "init failed, 5 deadline\n",
      to);
  return rc;
}

}  // namespace

int main(int argc, char** argv) {
  bool force = false, probe = false;
  const char* nodes = nullptr;
  unsigned deadline = kDeadlineSeconds;
  for (int i = 1; i < argc; ++i) {
    if (std::strcmp(argv[i], "--nvml") == 0) force = true;
    else if (std::strcmp(argv[i], "--probe") == 0) probe = true;
    else if (std::strcmp(argv[i], "--nodes") == 0 && i + 1 < argc) nodes = argv[++i];
    else if (std::strcmp(argv[i], "--deadline") == 0 && i + 1 < argc) {
      char* end = nullptr;
      unsigned long v = std::strtoul(argv[++i], &end, 10);
      if (!end || *end || argv[i][0] < '0' || argv[i][0] > '9' || v < 1 || v > kMaxDeadlineSeconds) {
        std::fprintf(stderr, "perfgap-gpu: --deadline takes whole seconds from 1 to %u, not '%s'\n", kMaxDeadlineSeconds, argv[i]);
        return 2;
      }
      deadline = static_cast<unsigned>(v);
    } else if (std::strcmp(argv[i], "--help") == 0 || std::strcmp(argv[i], "-h") == 0) return usage(stdout, 0);
    else {
      std::fprintf(stderr, "perfgap-gpu: unknown argument '%s'\n", argv[i]);
      return usage(stderr, 2);
    }
  }
  if (nodes && !probe) {
    std::fputs("perfgap-gpu: --nodes is for --probe\n", stderr);
    return 2;
  }
  if (probe && force) {
    std::fputs("perfgap-gpu: --nvml is for the NVML document, not --probe\n", stderr);
    return 2;
  }
  g_probe_mode = probe;
  signal(SIGALRM, on_alarm);
  alarm(deadline);
  if (probe) return run_cuda_probe(nodes);

  void* lib = dlopen("libnvidia-ml.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "perfgap-gpu: libnvidia-ml.so.1 not loadable: %s\n", dlerror());
    return 3;
  }
#define PERFGAP_NVML_RESOLVE(name, type) api.name = reinterpret_cast<Api::name##_fn>(dlsym(lib, #name));
  PERFGAP_NVML_CALLS(PERFGAP_NVML_RESOLVE)
#undef PERFGAP_NVML_RESOLVE
  if (!api.nvmlInit_v2 || !api.nvmlDeviceGetCount_v2 || !api.nvmlDeviceGetHandleByIndex_v2) {
    std::fprintf(stderr, "perfgap-gpu: libnvidia-ml.so.1 lacks nvmlInit_v2/nvmlDeviceGetCount_v2 (driver too old)\n");
    return 3;
  }
  if (Return r = api.nvmlInit_v2(); r != kSuccess) {
    std::fprintf(stderr, "perfgap-gpu: nvmlInit_v2 failed (NVML error %d)\n", r);
    return 4;
  }

  open(nullptr, '{');
  put_u("schema", 1);
  char version[kVersionBufferSize];
  if (PERFGAP_ASK(nvmlSystemGetDriverVersion, version, kVersionBufferSize)) put_str("driver_version", version, kVersionBufferSize);
  if (PERFGAP_ASK(nvmlSystemGetNVMLVersion, version, kVersionBufferSize)) put_str("nvml_version", version, kVersionBufferSize);
  put_bool("forced", force);
  // Calls this driver's library does not have: the facts they give are absent below.
  open("missing_calls", '[');
#define PERFGAP_NVML_MISSING(name, type) \
  if (!api.name) {                       \
    sep();                               \
    string(#name, 64);                   \
  }
  PERFGAP_NVML_CALLS(PERFGAP_NVML_MISSING)
#undef PERFGAP_NVML_MISSING
  close(']');
  unsigned count = 0;
  bool counted = PERFGAP_ASK(nvmlDeviceGetCount_v2, &count);
  put_failures();
  open("gpus", '[');
  for (unsigned i = 0; counted && i < count && i < 64; ++i) gpu(i, force);
  close(']');
  close('}');
  raw("\n");
  if (api.nvmlShutdown) api.nvmlShutdown();
  if (g_overflow) {
    std::fputs("perfgap-gpu: output exceeds its buffer\n", stderr);
    return 1;
  }
  std::fwrite(g_out, 1, g_len, stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}
