// perfgap-gpu --probe: the active GPU probes of `perfgap probe --gpu` (docs/PROBE.md), through
// the CUDA driver API loaded with dlopen (libcuda.so.1), libc only like the rest of the
// helper. Per GPU: a context, then for each NUMA node asked (--nodes) a host buffer bound to
// that node with mbind, first-touched, page-locked with cuMemHostRegister and copied to and
// from the GPU (timed with CUDA events, best of kCopyReps), then the launch latency of an
// empty kernel from embedded PTX (host wall time of launch + synchronise). Everything is
// released before the next GPU; the whole run is bounded by --deadline (main.cpp's alarm).
#include "gpu_helper/cuda_probe.hpp"

#include <dlfcn.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <time.h>  // NOLINT(modernize-deprecated-headers): clock_gettime is POSIX
#include <unistd.h>

#include <cerrno>
#include <cstdarg>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "gpu_helper/cuda_abi.hpp"
#include "gpu_helper/old_glibc.hpp"

namespace {
// Named, with using-declarations rather than a using-directive: unity builds batch this file
// with main.cpp, whose anonymous namespace brings in the NVML ABI's names (Device, kSuccess).
namespace cuda_probe_impl {

using perfgap::cuda::Context;
using perfgap::cuda::Device;
using perfgap::cuda::DevicePtr;
using perfgap::cuda::Event;
using perfgap::cuda::Function;
using perfgap::cuda::kEmptyKernelName;
using perfgap::cuda::kEmptyKernelPtx;
using perfgap::cuda::kEventDefault;
using perfgap::cuda::kStreamNonBlocking;
using perfgap::cuda::kSuccess;
using perfgap::cuda::Module;
using perfgap::cuda::Result;
using perfgap::cuda::Stream;

constexpr std::size_t kCopyBytes = std::size_t{64} << 20;
constexpr int kCopyReps = 5;
constexpr int kLaunchWarmup = 50;
constexpr int kLaunches = 2000;
constexpr double kLaunchSeconds = 3.0;  // launches stop after this long even if fewer were made
constexpr int kMaxNodes = 64;
constexpr int kMaxGpus = 64;

#define PERFGAP_CUDA_CALLS(X)                                                                          \
  X(cuInit, Result (*)(unsigned))                                                                      \
  X(cuDriverGetVersion, Result (*)(int*))                                                              \
  X(cuGetErrorName, Result (*)(Result, const char**))                                                  \
  X(cuDeviceGetCount, Result (*)(int*))                                                                \
  X(cuDeviceGet, Result (*)(Device*, int))                                                             \
  X(cuDeviceGetName, Result (*)(char*, int, Device))                                                   \
  X(cuDeviceGetPCIBusId, Result (*)(char*, int, Device))                                               \
  X(cuCtxCreate_v2, Result (*)(Context*, unsigned, Device))                                            \
  X(cuCtxDestroy_v2, Result (*)(Context))                                                              \
  X(cuStreamCreate, Result (*)(Stream*, unsigned))                                                     \
  X(cuStreamDestroy_v2, Result (*)(Stream))                                                            \
  X(cuStreamSynchronize, Result (*)(Stream))                                                           \
  X(cuMemAlloc_v2, Result (*)(DevicePtr*, std::size_t))                                                \
  X(cuMemFree_v2, Result (*)(DevicePtr))                                                               \
  X(cuMemHostRegister_v2, Result (*)(void*, std::size_t, unsigned))                                    \
  X(cuMemHostUnregister, Result (*)(void*))                                                            \
  X(cuMemcpyHtoDAsync_v2, Result (*)(DevicePtr, const void*, std::size_t, Stream))                     \
  X(cuMemcpyDtoHAsync_v2, Result (*)(void*, DevicePtr, std::size_t, Stream))                           \
  X(cuEventCreate, Result (*)(Event*, unsigned))                                                       \
  X(cuEventDestroy_v2, Result (*)(Event))                                                              \
  X(cuEventRecord, Result (*)(Event, Stream))                                                          \
  X(cuEventSynchronize, Result (*)(Event))                                                             \
  X(cuEventElapsedTime, Result (*)(float*, Event, Event))                                              \
  X(cuModuleLoadData, Result (*)(Module*, const void*))                                                \
  X(cuModuleUnload, Result (*)(Module))                                                                \
  X(cuModuleGetFunction, Result (*)(Function*, Module, const char*))                                   \
  X(cuLaunchKernel, Result (*)(Function, unsigned, unsigned, unsigned, unsigned, unsigned, unsigned, \
                               unsigned, Stream, void**, void**))

struct CudaApi {
#define PERFGAP_CUDA_FIELD(name, type) \
  using name##_fn = type;              \
  name##_fn name = nullptr;
  PERFGAP_CUDA_CALLS(PERFGAP_CUDA_FIELD)
#undef PERFGAP_CUDA_FIELD
} cu;

// ---- output: one document in a fixed buffer, written once ---------------------------------
char g_doc[1 << 18];
std::size_t g_doc_len = 0;
bool g_doc_overflow = false;

void out(const char* fmt, ...) __attribute__((format(printf, 1, 2)));
void out(const char* fmt, ...) {
  va_list ap;
  va_start(ap, fmt);
  const std::size_t room = sizeof g_doc - g_doc_len;
  int n = std::vsnprintf(g_doc + g_doc_len, room, fmt, ap);
  va_end(ap);
  if (n < 0 || static_cast<std::size_t>(n) >= room) g_doc_overflow = true;
  else g_doc_len += static_cast<std::size_t>(n);
}

// A JSON string of printable ASCII (CUDA names and bus ids are; anything else becomes '?').
void out_str(const char* s) {
  out("\"");
  for (std::size_t i = 0; s[i] && i < 256; ++i) {
    auto c = static_cast<unsigned char>(s[i]);
    if (c == '"' || c == '\\') out("\\%c", c);
    else if (c < 0x20 || c >= 0x7f) out("?");
    else out("%c", c);
  }
  out("\"");
}

// "cuCtxCreate_v2: CUDA_ERROR_OUT_OF_MEMORY (2)" into buf.
const char* describe(char* buf, std::size_t n, const char* call, Result r) {
  const char* name = nullptr;
  if (!cu.cuGetErrorName || cu.cuGetErrorName(r, &name) != kSuccess || !name) name = "CUDA error";
  std::snprintf(buf, n, "%s: %s (%d)", call, name, r);
  return buf;
}

double now_s() {
  timespec ts{};
  clock_gettime(CLOCK_MONOTONIC, &ts);
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

int compare_double(const void* a, const void* b) {
  double x = *static_cast<const double*>(a), y = *static_cast<const double*>(b);
  return x < y ? -1 : x > y ? 1 : 0;
}

// "0-1,3" -> nodes; false on anything else.
bool parse_nodes(const char* s, int* nodes, int* count) {
  *count = 0;
  while (*s) {
    char* end = nullptr;
    if (*s < '0' || *s > '9') return false;
    long lo = std::strtol(s, &end, 10), hi = lo;
    s = end;
    if (*s == '-') {
      ++s;
      if (*s < '0' || *s > '9') return false;
      hi = std::strtol(s, &end, 10);
      s = end;
    }
    if (lo < 0 || hi < lo || hi > 1023) return false;
    for (long n = lo; n <= hi; ++n) {
      if (*count >= kMaxNodes) return false;
      nodes[(*count)++] = static_cast<int>(n);
    }
    if (*s == ',') {
      if (!*++s) return false;  // a trailing comma
    } else if (*s) {
      return false;
    }
  }
  return *count > 0;
}

// One node's pinned buffer copied both ways; writes the "copies" entry.
void copy_from_node(int node, DevicePtr dev, Stream stream, Event e0, Event e1) {
  char err[160];
  out("{\"node\":%d,\"bytes\":%zu", node, kCopyBytes);
  void* host = ::mmap(nullptr, kCopyBytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS, -1, 0);
  if (host == MAP_FAILED) {
    out(",\"error\":");
    std::snprintf(err, sizeof err, "mmap: %s", std::strerror(errno));
    out_str(err);
    out("}");
    return;
  }
  unsigned long mask[kMaxNodes * 16 / (8 * sizeof(unsigned long)) + 1] = {};
  mask[static_cast<unsigned>(node) / (8 * sizeof(unsigned long))] |= 1ul << (static_cast<unsigned>(node) % (8 * sizeof(unsigned long)));
  const char* fail = nullptr;
  if (::syscall(SYS_mbind, host, kCopyBytes, 2 /* MPOL_BIND */, mask, sizeof mask * 8, 0) != 0) {
    std::snprintf(err, sizeof err, "mbind to node %d: %s", node, std::strerror(errno));
    fail = err;
  }
  bool registered = false;
  if (!fail) {
    std::memset(host, 1, kCopyBytes);  // first touch: the pages are allocated on `node` now
    int landed = -1;
    if (::syscall(SYS_get_mempolicy, &landed, nullptr, 0, host, 3 /* MPOL_F_NODE | MPOL_F_ADDR */) == 0 && landed != node) {
      std::snprintf(err, sizeof err, "the buffer landed on node %d, not %d", landed, node);
      fail = err;
    }
  }
  if (!fail) {
    Result r = cu.cuMemHostRegister_v2(host, kCopyBytes, 0);
    if (r != kSuccess) fail = describe(err, sizeof err, "cuMemHostRegister_v2", r);
    else registered = true;
  }
  double best[2] = {0, 0};
  for (int dir = 0; dir < 2 && !fail; ++dir) {
    for (int rep = 0; rep <= kCopyReps && !fail; ++rep) {  // rep 0 warms up
      Result r = cu.cuEventRecord(e0, stream);
      if (r == kSuccess)
        r = dir == 0 ? cu.cuMemcpyHtoDAsync_v2(dev, host, kCopyBytes, stream) : cu.cuMemcpyDtoHAsync_v2(host, dev, kCopyBytes, stream);
      if (r == kSuccess) r = cu.cuEventRecord(e1, stream);
      if (r == kSuccess) r = cu.cuEventSynchronize(e1);
      float ms = 0;
      if (r == kSuccess) r = cu.cuEventElapsedTime(&ms, e0, e1);
      if (r != kSuccess) {
        fail = describe(err, sizeof err, dir == 0 ? "H2D copy" : "D2H copy", r);
        break;
      }
      if (rep > 0 && ms > 0) {
        double gbps = static_cast<double>(kCopyBytes) / (static_cast<double>(ms) * 1e-3) / 1e9;
        if (gbps > best[dir]) best[dir] = gbps;
      }
    }
  }
  if (registered) cu.cuMemHostUnregister(host);
  ::munmap(host, kCopyBytes);
  if (fail) {
    out(",\"error\":");
    out_str(fail);
  } else {
    out(",\"h2d_gbps\":%.3f,\"d2h_gbps\":%.3f", best[0], best[1]);
  }
  out("}");
}

void launch_latency(Stream stream) {
  char err[160];
  Module mod = nullptr;
  Function fn = nullptr;
  Result r = cu.cuModuleLoadData(&mod, kEmptyKernelPtx);
  if (r != kSuccess) {
    out(",\"launch\":{\"error\":");
    out_str(describe(err, sizeof err, "cuModuleLoadData", r));
    out("}");
    return;
  }
  r = cu.cuModuleGetFunction(&fn, mod, kEmptyKernelName);
  static double us[kLaunches];
  int n = 0;
  const char* fail = r != kSuccess ? describe(err, sizeof err, "cuModuleGetFunction", r) : nullptr;
  const double stop_at = now_s() + kLaunchSeconds;
  for (int i = 0; i < kLaunchWarmup + kLaunches && !fail && now_s() < stop_at; ++i) {
    const double t0 = now_s();
    r = cu.cuLaunchKernel(fn, 1, 1, 1, 1, 1, 1, 0, stream, nullptr, nullptr);
    if (r == kSuccess) r = cu.cuStreamSynchronize(stream);
    const double t1 = now_s();
    if (r != kSuccess) fail = describe(err, sizeof err, "cuLaunchKernel", r);
    else if (i >= kLaunchWarmup) us[n++] = (t1 - t0) * 1e6;
  }
  cu.cuModuleUnload(mod);
  out(",\"launch\":{");
  if (fail) {
    out("\"error\":");
    out_str(fail);
  } else if (n > 0) {
    std::qsort(us, static_cast<std::size_t>(n), sizeof us[0], compare_double);
    const int p99 = n * 99 / 100 < n ? n * 99 / 100 : n - 1;
    out("\"count\":%d,\"p50_us\":%.3f,\"p99_us\":%.3f", n, us[n / 2], us[p99]);
  } else {
    out("\"count\":0");
  }
  out("}");
}

void probe_gpu(int index, const int* nodes, int node_count) {
  char err[160];
  out("{\"index\":%d", index);
  Device d = 0;
  Result r = cu.cuDeviceGet(&d, index);
  if (r != kSuccess) {
    out(",\"error\":");
    out_str(describe(err, sizeof err, "cuDeviceGet", r));
    out("}");
    return;
  }
  char name[256] = "", bus[64] = "";
  if (cu.cuDeviceGetName(name, sizeof name, d) == kSuccess) {
    out(",\"name\":");
    out_str(name);
  }
  if (cu.cuDeviceGetPCIBusId(bus, sizeof bus, d) == kSuccess) {
    out(",\"pci_bus_id\":");
    out_str(bus);
  }
  Context ctx = nullptr;
  Stream stream = nullptr;
  Event e0 = nullptr, e1 = nullptr;
  DevicePtr dev = 0;
  const char* fail = nullptr;
  if ((r = cu.cuCtxCreate_v2(&ctx, 0, d)) != kSuccess) fail = describe(err, sizeof err, "cuCtxCreate_v2", r);
  else if ((r = cu.cuStreamCreate(&stream, kStreamNonBlocking)) != kSuccess) fail = describe(err, sizeof err, "cuStreamCreate", r);
  else if ((r = cu.cuEventCreate(&e0, kEventDefault)) != kSuccess || (r = cu.cuEventCreate(&e1, kEventDefault)) != kSuccess)
    fail = describe(err, sizeof err, "cuEventCreate", r);
  else if ((r = cu.cuMemAlloc_v2(&dev, kCopyBytes)) != kSuccess) fail = describe(err, sizeof err, "cuMemAlloc_v2", r);
  if (fail) {
    out(",\"error\":");
    out_str(fail);
  } else {
    out(",\"copies\":[");
    for (int i = 0; i < node_count; ++i) {
      if (i) out(",");
      copy_from_node(nodes[i], dev, stream, e0, e1);
    }
    out("]");
    launch_latency(stream);
  }
  if (dev) cu.cuMemFree_v2(dev);
  if (e1) cu.cuEventDestroy_v2(e1);
  if (e0) cu.cuEventDestroy_v2(e0);
  if (stream) cu.cuStreamDestroy_v2(stream);
  if (ctx) cu.cuCtxDestroy_v2(ctx);
  out("}");
}

int run_probe(const char* nodes_arg) {
  int nodes[kMaxNodes];
  int node_count = 0;
  if (!parse_nodes(nodes_arg ? nodes_arg : "0", nodes, &node_count)) {
    std::fprintf(stderr, "perfgap-gpu: --nodes takes a NUMA node list (0-1,3), not '%s'\n", nodes_arg);
    return 2;
  }
  void* lib = dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) {
    std::fprintf(stderr, "perfgap-gpu: libcuda.so.1 not loadable: %s\n", dlerror());
    return 3;
  }
#define PERFGAP_CUDA_RESOLVE(name, type) cu.name = reinterpret_cast<CudaApi::name##_fn>(dlsym(lib, #name));
  PERFGAP_CUDA_CALLS(PERFGAP_CUDA_RESOLVE)
#undef PERFGAP_CUDA_RESOLVE
#define PERFGAP_CUDA_REQUIRED(name, type)                                                           \
  if (!cu.name && std::strcmp(#name, "cuGetErrorName") != 0) {                                   \
    std::fprintf(stderr, "perfgap-gpu: libcuda.so.1 lacks %s (driver too old)\n", #name);         \
    return 3;                                                                                      \
  }
  PERFGAP_CUDA_CALLS(PERFGAP_CUDA_REQUIRED)
#undef PERFGAP_CUDA_REQUIRED
  char err[160];
  if (Result r = cu.cuInit(0); r != kSuccess) {
    std::fprintf(stderr, "perfgap-gpu: %s\n", describe(err, sizeof err, "cuInit", r));
    return 4;
  }
  int version = 0, count = 0;
  cu.cuDriverGetVersion(&version);
  out("{\"schema\":1,\"kind\":\"probe\",\"driver_version\":\"%d.%d\"", version / 1000, version % 1000 / 10);
  if (Result r = cu.cuDeviceGetCount(&count); r != kSuccess) {
    out(",\"error\":");
    out_str(describe(err, sizeof err, "cuDeviceGetCount", r));
    count = 0;
  }
  out(",\"gpus\":[");
  for (int i = 0; i < count && i < kMaxGpus; ++i) {
    if (i) out(",");
    probe_gpu(i, nodes, node_count);
  }
  out("]}\n");
  if (g_doc_overflow) {
    std::fputs("perfgap-gpu: output exceeds its buffer\n", stderr);
    return 1;
  }
  std::fwrite(g_doc, 1, g_doc_len, stdout);
  return std::fflush(stdout) == 0 ? 0 : 1;
}

}  // namespace cuda_probe_impl
}  // namespace

int run_cuda_probe(const char* nodes) { return cuda_probe_impl::run_probe(nodes); }
