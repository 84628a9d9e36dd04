// TEST DOUBLE: a fake libcuda.so.1 for perfgap-gpu --probe (tests/unit/test_gpu_probe.cpp,
// tests/cli/test_probe.cpp). It is NOT the CUDA driver: no GPU, no copies are made. It
// implements exactly the calls the helper makes and answers from a script named by
// FAKE_CUDA_SCRIPT, one fact a line:
//   gpus N                  how many GPUs (default 1)
//   driver 12040            cuDriverGetVersion
//   fail CALL CODE          CALL returns CODE for every GPU (cuInit 100: no device)
//   hang CALL SECONDS       CALL sleeps that long first (a driver that does not answer)
//   G bus 0000:18:00.0      GPU G's PCI bus id (default 0000:0G:00.0), G name NAME
//   G h2d NODE GBPS         the rate a copy from a host buffer on NODE takes (default 20)
//   G d2h NODE GBPS         the same, device to host
//   G launch_us US          how long cuStreamSynchronize after a launch spins (default 5)
//   G fail CALL CODE        CALL returns CODE on GPU G only
// Copies advance the stream's virtual clock by bytes / rate, which CUDA events read back; the
// host buffer's node is asked of the kernel (get_mempolicy), so the helper's mbind is what
// decides which rate applies. FAKE_CUDA_CALLS names a file that gets one line per call
// ("CALL GPU"), so a test can prove every context, registration and buffer was released.
#include <sys/syscall.h>
#include <time.h>  // NOLINT(modernize-deprecated-headers)
#include <unistd.h>

#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <map>
#include <string>

namespace {

struct FakeGpu {
  std::string bus, name = "Fake GPU (test double)";
  std::map<int, double> h2d, d2h;
  double launch_us = 5;
  std::map<std::string, int> fail;
};

struct FakeScript {
  bool loaded = false;
  int gpus = 1;
  int driver = 12040;
  std::map<std::string, int> fail;
  std::map<std::string, int> hang;
  std::map<int, FakeGpu> gpu;
};

FakeScript& script() {
  static FakeScript sc;
  if (sc.loaded) return sc;
  sc.loaded = true;
  const char* path = std::getenv("FAKE_CUDA_SCRIPT");
  FILE* f = path ? std::fopen(path, "r") : nullptr;
  if (!f) return sc;
  char line[512];
  while (std::fgets(line, sizeof line, f)) {
    char a[128] = "", b[128] = "", c[128] = "", d[256] = "";
    int got = std::sscanf(line, "%127s %127s %127s %255[^\n]", a, b, c, d);
    if (got < 2 || a[0] == '#') continue;
    std::string k = a;
    if (k == "gpus") sc.gpus = std::atoi(b);
    else if (k == "driver") sc.driver = std::atoi(b);
    else if (k == "fail" && got >= 3) sc.fail[b] = std::atoi(c);
    else if (k == "hang" && got >= 3) sc.hang[b] = std::atoi(c);
    else {
      FakeGpu& g = sc.gpu[std::atoi(a)];
      std::string key = b;
      if (key == "bus") g.bus = c;
      else if (key == "name") g.name = got >= 4 ? std::string(c) + " " + d : std::string(c);
      else if (key == "h2d" && got >= 4) g.h2d[std::atoi(c)] = std::atof(d);
      else if (key == "d2h" && got >= 4) g.d2h[std::atoi(c)] = std::atof(d);
      else if (key == "launch_us") g.launch_us = std::atof(c);
      else if (key == "fail" && got >= 4) g.fail[c] = std::atoi(d);
    }
  }
  std::fclose(f);
  return sc;
}

void log_call(const char* call, int gpu) {
  const char* path = std::getenv("FAKE_CUDA_CALLS");
  if (!path) return;
  if (FILE* f = std::fopen(path, "a")) {
    std::fprintf(f, "%s %d\n", call, gpu);
    std::fclose(f);
  }
}

struct Ctx {
  int dev;
};
struct FakeStream {
  double ms = 0;  // virtual time
  bool launched = false;
};
struct FakeEvent {
  double ms = 0;
};

Ctx* g_current = nullptr;
bool g_init = false;

// The result scripted for CALL on the current (or given) GPU: 0 unless a `fail` line says.
int scripted(const char* call, int gpu) {
  log_call(call, gpu);
  FakeScript& sc = script();
  if (auto h = sc.hang.find(call); h != sc.hang.end()) sleep(static_cast<unsigned>(h->second));
  if (gpu >= 0)
    if (auto it = sc.gpu[gpu].fail.find(call); it != sc.gpu[gpu].fail.end()) return it->second;
  if (auto it = sc.fail.find(call); it != sc.fail.end()) return it->second;
  return 0;
}
int cur() { return g_current ? g_current->dev : -1; }

int node_of(const void* p) {
  int node = -1;
  if (syscall(SYS_get_mempolicy, &node, nullptr, 0, p, 3) != 0) return -1;
  return node;
}

double rate(const std::map<int, double>& m, int node) {
  auto it = m.find(node);
  return it == m.end() ? 20.0 : it->second;
}

}  // namespace

#define FAKE_CUDA_API extern "C" __attribute__((visibility("default")))

FAKE_CUDA_API int cuInit(unsigned) {
  int r = scripted("cuInit", -1);
  g_init = r == 0;
  return r;
}
FAKE_CUDA_API int cuDriverGetVersion(int* v) {
  *v = script().driver;
  return scripted("cuDriverGetVersion", -1);
}
FAKE_CUDA_API int cuGetErrorName(int r, const char** name) {
  *name = r == 100 ? "CUDA_ERROR_NO_DEVICE" : r == 2 ? "CUDA_ERROR_OUT_OF_MEMORY" : r == 3 ? "CUDA_ERROR_NOT_INITIALIZED" : "CUDA_ERROR_FAKE";
  return 0;
}
FAKE_CUDA_API int cuDeviceGetCount(int* n) {
  if (!g_init) return 3;
  *n = script().gpus;
  return scripted("cuDeviceGetCount", -1);
}
FAKE_CUDA_API int cuDeviceGet(int* d, int i) {
  if (i < 0 || i >= script().gpus) return 101;  // CUDA_ERROR_INVALID_DEVICE
  *d = i;
  return scripted("cuDeviceGet", i);
}
FAKE_CUDA_API int cuDeviceGetName(char* buf, int n, int d) {
  std::snprintf(buf, static_cast<std::size_t>(n), "%s", script().gpu[d].name.c_str());
  return scripted("cuDeviceGetName", d);
}
FAKE_CUDA_API int cuDeviceGetPCIBusId(char* buf, int n, int d) {
  const auto& b = script().gpu[d].bus;
  if (b.empty()) std::snprintf(buf, static_cast<std::size_t>(n), "0000:%02X:00.0", d + 1);
  else std::snprintf(buf, static_cast<std::size_t>(n), "%s", b.c_str());
  return scripted("cuDeviceGetPCIBusId", d);
}
FAKE_CUDA_API int cuCtxCreate_v2(void** ctx, unsigned, int d) {
  if (int r = scripted("cuCtxCreate_v2", d)) return r;
  g_current = new Ctx{d};
  *ctx = g_current;
  return 0;
}
FAKE_CUDA_API int cuCtxDestroy_v2(void* ctx) {
  auto* c = static_cast<Ctx*>(ctx);
  log_call("cuCtxDestroy_v2", c->dev);
  if (g_current == c) g_current = nullptr;
  delete c;
  return 0;
}
FAKE_CUDA_API int cuStreamCreate(void** s, unsigned) {
  if (int r = scripted("cuStreamCreate", cur())) return r;
  *s = new FakeStream;
  return 0;
}
FAKE_CUDA_API int cuStreamDestroy_v2(void* s) {
  log_call("cuStreamDestroy_v2", cur());
  delete static_cast<FakeStream*>(s);
  return 0;
}
FAKE_CUDA_API int cuStreamSynchronize(void* s) {
  auto* st = static_cast<FakeStream*>(s);
  if (st->launched) {
    // A launch's round trip: spin for the scripted time (the helper times it on the host).
    const double us = script().gpu[cur()].launch_us;
    timespec t0{}, t{};
    clock_gettime(CLOCK_MONOTONIC, &t0);
    do clock_gettime(CLOCK_MONOTONIC, &t);
    while (static_cast<double>(t.tv_sec - t0.tv_sec) * 1e6 + static_cast<double>(t.tv_nsec - t0.tv_nsec) / 1e3 < us);
    st->launched = false;
  }
  return 0;
}
FAKE_CUDA_API int cuMemAlloc_v2(unsigned long long* p, std::size_t n) {
  if (int r = scripted("cuMemAlloc_v2", cur())) return r;
  *p = 0x1000000ull + n;
  return 0;
}
FAKE_CUDA_API int cuMemFree_v2(unsigned long long) {
  log_call("cuMemFree_v2", cur());
  return 0;
}
FAKE_CUDA_API int cuMemHostRegister_v2(void*, std::size_t, unsigned) { return scripted("cuMemHostRegister_v2", cur()); }
FAKE_CUDA_API int cuMemHostUnregister(void*) {
  log_call("cuMemHostUnregister", cur());
  return 0;
}
FAKE_CUDA_API int cuMemcpyHtoDAsync_v2(unsigned long long, const void* host, std::size_t n, void* s) {
  if (int r = scripted("cuMemcpyHtoDAsync_v2", cur())) return r;
  static_cast<FakeStream*>(s)->ms += static_cast<double>(n) / (rate(script().gpu[cur()].h2d, node_of(host)) * 1e9) * 1e3;
  return 0;
}
FAKE_CUDA_API int cuMemcpyDtoHAsync_v2(void* host, unsigned long long, std::size_t n, void* s) {
  if (int r = scripted("cuMemcpyDtoHAsync_v2", cur())) return r;
  static_cast<FakeStream*>(s)->ms += static_cast<double>(n) / (rate(script().gpu[cur()].d2h, node_of(host)) * 1e9) * 1e3;
  return 0;
}
FAKE_CUDA_API int cuEventCreate(void** e, unsigned) {
  if (int r = scripted("cuEventCreate", cur())) return r;
  *e = new FakeEvent;
  return 0;
}
FAKE_CUDA_API int cuEventDestroy_v2(void* e) {
  log_call("cuEventDestroy_v2", cur());
  delete static_cast<FakeEvent*>(e);
  return 0;
}
FAKE_CUDA_API int cuEventRecord(void* e, void* s) {
  static_cast<FakeEvent*>(e)->ms = static_cast<FakeStream*>(s)->ms;
  return 0;
}
FAKE_CUDA_API int cuEventSynchronize(void*) { return 0; }
FAKE_CUDA_API int cuEventElapsedTime(float* ms, void* a, void* b) {
  *ms = static_cast<float>(static_cast<FakeEvent*>(b)->ms - static_cast<FakeEvent*>(a)->ms);
  return 0;
}
FAKE_CUDA_API int cuModuleLoadData(void** m, const void* image) {
  if (int r = scripted("cuModuleLoadData", cur())) return r;
  // The helper's PTX must name the kernel it then asks for.
  if (!std::strstr(static_cast<const char*>(image), ".entry perfgap_empty")) return 218;  // CUDA_ERROR_INVALID_PTX
  *m = new int(1);
  return 0;
}
FAKE_CUDA_API int cuModuleUnload(void* m) {
  log_call("cuModuleUnload", cur());
  delete static_cast<int*>(m);
  return 0;
}
FAKE_CUDA_API int cuModuleGetFunction(void** f, void* m, const char* name) {
  if (std::strcmp(name, "perfgap_empty") != 0) return 500;  // CUDA_ERROR_NOT_FOUND
  *f = m;
  return scripted("cuModuleGetFunction", cur());
}
FAKE_CUDA_API int cuLaunchKernel(void*, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, void* s, void**, void**) {
  // Logged once per GPU, not per launch: the call log stays small.
  static int logged_for = -2;
  if (logged_for != cur()) log_call("cuLaunchKernel", cur()), logged_for = cur();
  FakeScript& sc = script();
  if (auto it = sc.gpu[cur()].fail.find("cuLaunchKernel"); it != sc.gpu[cur()].fail.end()) return it->second;
  static_cast<FakeStream*>(s)->launched = true;
  return 0;
}
