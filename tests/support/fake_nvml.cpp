// TEST DOUBLE: a fake libnvidia-ml.so.1 for tests/cli/test_gpu_helper.cpp. It is NOT NVML and
// talks to no driver: it implements exactly the calls perfgap-gpu makes and answers them from
// a script named by FAKE_NVML_SCRIPT, one fact a line:
//   gpus N                      how many GPUs (default 1)
//   driver 550.54.15            the driver version (nvml version: "12.<driver>")
//   fail CALL CODE              CALL returns the NVML error CODE on every GPU
//   hang CALL SECONDS           CALL sleeps that long first (a driver that does not answer)
//   G KEY VALUE...              GPU G's fact KEY (see kKeys below); unset = NOT_SUPPORTED
//   G fail CALL CODE            CALL returns CODE on GPU G only
//   G nvlink L up|down [replay recovery crc_flit crc_data]
//   G nvlink_speed_mbps N       the common speed of the active NVLinks (nvmlDeviceGetFieldValues)
//   G fabric_version V          the newest nvmlGpuFabricInfo_v* it accepts (default 3)
//   G violation_POLICY NS       nvmlDeviceGetViolationStatus of POLICY (power, thermal, ...)
// FAKE_NVML_CALLS names a file that gets one line "CALL GPU" per call (GPU -1: none), so a
// test can prove which calls were made for which GPU. Built twice: with FAKE_NVML_OLD it lacks
// the calls newer drivers added (clocks event reasons, fabric info, remapped rows), as an old
// driver's library does.
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>
#include <vector>

#include "gpu_helper/nvml_abi.hpp"

namespace {

using namespace perfgap::nvml;

struct Link {
  bool up = false;
  unsigned long long counters[4] = {0, 0, 0, 0};  // replay, recovery, crc_flit, crc_data
};

struct Gpu {
  std::map<std::string, unsigned long long> v;  // KEY -> value
  std::map<std::string, std::string> s;         // name, uuid, bus
  std::map<std::string, int> fail;              // CALL -> code
  std::vector<Link> links;
  unsigned fabric_version = 3;
};

struct Script {
  bool loaded = false;
  unsigned gpus = 1;
  std::string driver = "550.54.15";
  std::map<std::string, int> fail;
  std::map<std::string, int> hang;
  std::map<unsigned, Gpu> gpu;
};

Script& script() {
  static Script sc;
  if (sc.loaded) return sc;
  sc.loaded = true;
  const char* path = std::getenv("FAKE_NVML_SCRIPT");
  FILE* f = path ? std::fopen(path, "r") : nullptr;
  if (!f) return sc;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    char a[128] = "", b[128] = "", c[128] = "", d[128] = "";
    unsigned long long n[4] = {0, 0, 0, 0};
    int got = std::sscanf(line, "%127s %127s %127s %127s", a, b, c, d);
    if (got < 2 || a[0] == '#') continue;
    std::string k = a;
    if (k == "gpus") sc.gpus = static_cast<unsigned>(std::strtoul(b, nullptr, 0));
    else if (k == "driver") sc.driver = b;
    else if (k == "fail" && got >= 3) sc.fail[b] = std::atoi(c);
    else if (k == "hang" && got >= 3) sc.hang[b] = std::atoi(c);
    else {
      Gpu& g = sc.gpu[static_cast<unsigned>(std::strtoul(a, nullptr, 10))];
      std::string key = b;
      if (key == "fail" && got >= 4) g.fail[c] = std::atoi(d);
      else if (key == "name" || key == "uuid" || key == "bus") g.s[key] = c;
      else if (key == "nvlink" && got >= 4) {
        unsigned l = static_cast<unsigned>(std::strtoul(c, nullptr, 10));
        if (g.links.size() <= l) g.links.resize(l + 1);
        g.links[l].up = std::strcmp(d, "up") == 0;
        char w1[16], w2[16], w3[16];
        if (std::sscanf(line, "%15s %15s %15s %15s %llu %llu %llu %llu", w1, w2, w3, w3, &n[0], &n[1], &n[2], &n[3]) == 8)
          for (int i = 0; i < 4; ++i) g.links[l].counters[i] = n[i];
      } else if (key == "fabric_version") g.fabric_version = static_cast<unsigned>(std::strtoul(c, nullptr, 0));
      else g.v[key] = std::strtoull(c, nullptr, 0);
    }
  }
  std::fclose(f);
  return sc;
}

Device handle(unsigned i) { return reinterpret_cast<Device>(static_cast<std::uintptr_t>(i) + 1); }
long index_of(Device d) { return static_cast<long>(reinterpret_cast<std::uintptr_t>(d)) - 1; }

void log_call(const char* call, long gpu) {
  const char* path = std::getenv("FAKE_NVML_CALLS");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %ld\n", call, gpu);
    std::fclose(f);
  }
}

// The scripted GPU of a handle, or null (INVALID_ARGUMENT) for a handle this fake never gave.
Gpu* device(Device d, const char* call, Return* err) {
  long i = index_of(d);
  log_call(call, i);
  Script& sc = script();
  if (auto h = sc.hang.find(call); h != sc.hang.end()) sleep(static_cast<unsigned>(h->second));
  *err = kSuccess;
  if (i < 0 || static_cast<unsigned long>(i) >= sc.gpus) {
    *err = kErrorInvalidArgument;
    return nullptr;
  }
  Gpu& g = sc.gpu[static_cast<unsigned>(i)];
  if (auto it = g.fail.find(call); it != g.fail.end()) *err = it->second;
  else if (auto jt = sc.fail.find(call); jt != sc.fail.end()) *err = jt->second;
  return *err == kSuccess ? &g : nullptr;
}

// A scalar fact: its value, or NOT_SUPPORTED when the script does not set it.
template <class T>
Return fact(Device d, const char* call, const char* key, T* out) {
  Return r;
  Gpu* g = device(d, call, &r);
  if (!g) return r;
  auto it = g->v.find(key);
  if (it == g->v.end()) return kErrorNotSupported;
  *out = static_cast<T>(it->second);
  return kSuccess;
}

Return copy(const std::string& s, char* buf, unsigned len) {
  if (s.size() + 1 > len) return 7;  // NVML_ERROR_INSUFFICIENT_SIZE
  std::memcpy(buf, s.c_str(), s.size() + 1);
  return kSuccess;
}

const char* clock_key(const char* prefix, int type, char* buf) {
  std::snprintf(buf, 32, "%s%s", prefix, type == kClockMem ? "mem" : "sm");
  return buf;
}

}  // namespace

#define FAKE_EXPORT extern "C" __attribute__((visibility("default")))

FAKE_EXPORT Return nvmlInit_v2() {
  log_call("nvmlInit_v2", -1);
  auto& f = script().fail;
  auto it = f.find("nvmlInit_v2");
  return it == f.end() ? kSuccess : it->second;
}
FAKE_EXPORT Return nvmlShutdown() {
  log_call("nvmlShutdown", -1);
  return kSuccess;
}
FAKE_EXPORT Return nvmlSystemGetDriverVersion(char* buf, unsigned len) {
  log_call("nvmlSystemGetDriverVersion", -1);
  return copy(script().driver, buf, len);
}
FAKE_EXPORT Return nvmlSystemGetNVMLVersion(char* buf, unsigned len) {
  log_call("nvmlSystemGetNVMLVersion", -1);
  return copy("12." + script().driver, buf, len);
}
FAKE_EXPORT Return nvmlDeviceGetCount_v2(unsigned* n) {
  log_call("nvmlDeviceGetCount_v2", -1);
  *n = script().gpus;
  return kSuccess;
}
FAKE_EXPORT Return nvmlDeviceGetHandleByIndex_v2(unsigned i, Device* d) {
  log_call("nvmlDeviceGetHandleByIndex_v2", i);
  if (i >= script().gpus) return kErrorInvalidArgument;
  *d = handle(i);
  return kSuccess;
}
FAKE_EXPORT Return nvmlDeviceGetName(Device d, char* buf, unsigned len) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetName", &r);
  if (!g) return r;
  return copy(g->s.count("name") ? g->s["name"] : "NVIDIA H100 80GB HBM3", buf, len);
}
FAKE_EXPORT Return nvmlDeviceGetUUID(Device d, char* buf, unsigned len) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetUUID", &r);
  if (!g) return r;
  char def[64];
  std::snprintf(def, sizeof def, "GPU-fake-%04ld", index_of(d));
  return copy(g->s.count("uuid") ? g->s["uuid"] : def, buf, len);
}
FAKE_EXPORT Return nvmlDeviceGetPciInfo_v3(Device d, PciInfo* p) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetPciInfo_v3", &r);
  if (!g) return r;
  std::memset(p, 0, sizeof *p);
  char def[32];
  std::snprintf(def, sizeof def, "00000000:%02lX:00.0", 0x18 + index_of(d));
  return copy(g->s.count("bus") ? g->s["bus"] : def, p->bus_id, sizeof p->bus_id);
}
FAKE_EXPORT Return nvmlDeviceGetPersistenceMode(Device d, EnableState* s) {
  return fact(d, "nvmlDeviceGetPersistenceMode", "persistence", s);
}
FAKE_EXPORT Return nvmlDeviceGetMigMode(Device d, unsigned* cur, unsigned* pending) {
  Return r = fact(d, "nvmlDeviceGetMigMode", "mig", cur);
  if (r == kSuccess) *pending = *cur;
  return r;
}
FAKE_EXPORT Return nvmlDeviceGetPerformanceState(Device d, int* p) { return fact(d, "nvmlDeviceGetPerformanceState", "pstate", p); }
FAKE_EXPORT Return nvmlDeviceGetUtilizationRates(Device d, Utilization* u) {
  u->memory = 0;
  return fact(d, "nvmlDeviceGetUtilizationRates", "util", &u->gpu);
}
FAKE_EXPORT Return nvmlDeviceGetClockInfo(Device d, int type, unsigned* v) {
  char k[32];
  return fact(d, "nvmlDeviceGetClockInfo", clock_key("", type, k), v);
}
FAKE_EXPORT Return nvmlDeviceGetApplicationsClock(Device d, int type, unsigned* v) {
  char k[32];
  return fact(d, "nvmlDeviceGetApplicationsClock", clock_key("app_", type, k), v);
}
FAKE_EXPORT Return nvmlDeviceGetDefaultApplicationsClock(Device d, int type, unsigned* v) {
  char k[32];
  return fact(d, "nvmlDeviceGetDefaultApplicationsClock", clock_key("default_app_", type, k), v);
}
FAKE_EXPORT Return nvmlDeviceGetMaxClockInfo(Device d, int type, unsigned* v) {
  char k[32];
  return fact(d, "nvmlDeviceGetMaxClockInfo", clock_key("max_", type, k), v);
}
#ifndef FAKE_NVML_OLD
FAKE_EXPORT Return nvmlDeviceGetCurrentClocksEventReasons(Device d, unsigned long long* m) {
  return fact(d, "nvmlDeviceGetCurrentClocksEventReasons", "clock_events", m);
}
#endif
FAKE_EXPORT Return nvmlDeviceGetCurrentClocksThrottleReasons(Device d, unsigned long long* m) {
  return fact(d, "nvmlDeviceGetCurrentClocksThrottleReasons", "clock_events", m);
}
// Per-policy violation time: key violation_<policy> (violation_power, violation_thermal, ...)
// in ns; reference_time is a fixed stamp.
FAKE_EXPORT Return nvmlDeviceGetViolationStatus(Device d, int type, ViolationTime* v) {
  const char* name = nullptr;
  for (const auto& p : kPerfPolicies)
    if (p.type == type) name = p.name;
  if (!name) return kErrorInvalidArgument;
  char key[48];
  std::snprintf(key, sizeof key, "violation_%s", name);
  v->reference_time = 1700000000000000ull;
  return fact(d, "nvmlDeviceGetViolationStatus", key, &v->violation_time);
}
FAKE_EXPORT Return nvmlDeviceGetPowerUsage(Device d, unsigned* mw) { return fact(d, "nvmlDeviceGetPowerUsage", "power_mw", mw); }
FAKE_EXPORT Return nvmlDeviceGetEnforcedPowerLimit(Device d, unsigned* mw) {
  return fact(d, "nvmlDeviceGetEnforcedPowerLimit", "enforced_mw", mw);
}
FAKE_EXPORT Return nvmlDeviceGetPowerManagementDefaultLimit(Device d, unsigned* mw) {
  return fact(d, "nvmlDeviceGetPowerManagementDefaultLimit", "default_mw", mw);
}
FAKE_EXPORT Return nvmlDeviceGetPowerManagementLimitConstraints(Device d, unsigned* lo, unsigned* hi) {
  *lo = 0;
  return fact(d, "nvmlDeviceGetPowerManagementLimitConstraints", "max_mw", hi);
}
FAKE_EXPORT Return nvmlDeviceGetTemperature(Device d, int, unsigned* t) { return fact(d, "nvmlDeviceGetTemperature", "temp", t); }
FAKE_EXPORT Return nvmlDeviceGetTemperatureThreshold(Device d, int type, unsigned* t) {
  return fact(d, "nvmlDeviceGetTemperatureThreshold", type == kThresholdSlowdown ? "slowdown_temp" : "shutdown_temp", t);
}
FAKE_EXPORT Return nvmlDeviceGetEccMode(Device d, EnableState* cur, EnableState* pending) {
  Return r = fact(d, "nvmlDeviceGetEccMode", "ecc", cur);
  if (r == kSuccess) *pending = *cur;
  return r;
}
FAKE_EXPORT Return nvmlDeviceGetTotalEccErrors(Device d, int type, int counter, unsigned long long* n) {
  const char* key = counter == kVolatileEcc ? (type == kMemoryErrorCorrected ? "vol_corr" : "vol_unc")
                                            : (type == kMemoryErrorCorrected ? "agg_corr" : "agg_unc");
  return fact(d, "nvmlDeviceGetTotalEccErrors", key, n);
}
#ifndef FAKE_NVML_OLD
FAKE_EXPORT Return nvmlDeviceGetRemappedRows(Device d, unsigned* corr, unsigned* unc, unsigned* pending, unsigned* failure) {
  Return r = fact(d, "nvmlDeviceGetRemappedRows", "remap_corr", corr);
  if (r != kSuccess) return r;
  Gpu& g = script().gpu[static_cast<unsigned>(index_of(d))];
  *unc = static_cast<unsigned>(g.v["remap_unc"]);
  *pending = static_cast<unsigned>(g.v["remap_pending"]);
  *failure = static_cast<unsigned>(g.v["remap_failure"]);
  return kSuccess;
}
#endif
FAKE_EXPORT Return nvmlDeviceGetRetiredPagesPendingStatus(Device d, EnableState* s) {
  return fact(d, "nvmlDeviceGetRetiredPagesPendingStatus", "retired_pending", s);
}
FAKE_EXPORT Return nvmlDeviceGetCurrPcieLinkGeneration(Device d, unsigned* v) {
  return fact(d, "nvmlDeviceGetCurrPcieLinkGeneration", "pcie_gen", v);
}
FAKE_EXPORT Return nvmlDeviceGetMaxPcieLinkGeneration(Device d, unsigned* v) {
  return fact(d, "nvmlDeviceGetMaxPcieLinkGeneration", "pcie_gen_max", v);
}
FAKE_EXPORT Return nvmlDeviceGetCurrPcieLinkWidth(Device d, unsigned* v) {
  return fact(d, "nvmlDeviceGetCurrPcieLinkWidth", "pcie_width", v);
}
FAKE_EXPORT Return nvmlDeviceGetMaxPcieLinkWidth(Device d, unsigned* v) {
  return fact(d, "nvmlDeviceGetMaxPcieLinkWidth", "pcie_width_max", v);
}
FAKE_EXPORT Return nvmlDeviceGetPcieReplayCounter(Device d, unsigned* v) { return fact(d, "nvmlDeviceGetPcieReplayCounter", "replay", v); }
FAKE_EXPORT Return nvmlDeviceGetNvLinkState(Device d, unsigned link, EnableState* s) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetNvLinkState", &r);
  if (!g) return r;
  if (g->links.empty()) return kErrorNotSupported;
  if (link >= g->links.size()) return kErrorInvalidArgument;
  *s = g->links[link].up ? 1 : 0;
  return kSuccess;
}
// Answers NVML_FI_DEV_NVLINK_SPEED_MBPS_COMMON from the script's `G nvlink_speed_mbps N`; any other
// field, or no speed scripted, is NOT_SUPPORTED in that field's own return.
FAKE_EXPORT Return nvmlDeviceGetFieldValues(Device d, int count, FieldValue* values) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetFieldValues", &r);
  if (!g) return r;
  if (count < 0 || (count > 0 && !values)) return kErrorInvalidArgument;
  for (int i = 0; i < count; ++i) {
    auto it = g->v.find("nvlink_speed_mbps");
    values[i].nvml_return = values[i].field_id == kFieldNvLinkSpeedCommon && it != g->v.end() ? kSuccess : kErrorNotSupported;
    values[i].value_type = kValueTypeUnsignedInt;
    values[i].value.ull = 0;
    if (values[i].nvml_return == kSuccess) values[i].value.ui = static_cast<unsigned>(it->second);
  }
  return kSuccess;
}
FAKE_EXPORT Return nvmlDeviceGetNvLinkErrorCounter(Device d, unsigned link, int counter, unsigned long long* n) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetNvLinkErrorCounter", &r);
  if (!g) return r;
  if (link >= g->links.size() || counter < 0 || counter > 3) return kErrorInvalidArgument;
  *n = g->links[link].counters[counter];
  return kSuccess;
}
#ifndef FAKE_NVML_OLD
namespace {
template <class T>
void fill_fabric(Gpu& g, T* out) {
  for (unsigned i = 0; i < kFabricUuidLen; ++i) out->cluster_uuid[i] = static_cast<unsigned char>(0xa0 + i);
  out->status = static_cast<Return>(g.v["fabric_status"]);
  out->clique_id = static_cast<unsigned>(g.v["clique"]);
  out->state = static_cast<unsigned char>(g.v["fabric_state"]);
}
}  // namespace
FAKE_EXPORT Return nvmlDeviceGetGpuFabricInfoV(Device d, void* info) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetGpuFabricInfoV", &r);
  if (!g) return r;
  if (!g->v.count("fabric_state")) return kErrorNotSupported;
  unsigned version = *static_cast<unsigned*>(info);
  if (version == struct_version<GpuFabricInfoV3>(3) && g->fabric_version >= 3) {
    auto* v3 = static_cast<GpuFabricInfoV3*>(info);
    fill_fabric(*g, v3);
    v3->health_mask = static_cast<unsigned>(g->v["health_mask"]);
    v3->health_summary = static_cast<unsigned char>(g->v["health_summary"]);
    return kSuccess;
  }
  if (version == struct_version<GpuFabricInfoV2>(2)) {
    auto* v2 = static_cast<GpuFabricInfoV2*>(info);
    fill_fabric(*g, v2);
    v2->health_mask = static_cast<unsigned>(g->v["health_mask"]);
    return kSuccess;
  }
  return kErrorArgumentVersionMismatch;
}
FAKE_EXPORT Return nvmlDeviceGetGpuFabricInfo(Device d, GpuFabricInfo* info) {
  Return r;
  Gpu* g = device(d, "nvmlDeviceGetGpuFabricInfo", &r);
  if (!g) return r;
  if (!g->v.count("fabric_state")) return kErrorNotSupported;
  fill_fabric(*g, info);
  return kSuccess;
}
#endif
