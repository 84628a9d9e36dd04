// NCCL backend: one process driving -g GPUs (ncclCommInitAll, one stream per GPU, each
// iteration one group call), as nccl-tests runs without MPI. Only the headers' types are used:
// libcudart and libnccl are loaded with dlopen when the backend is asked for, so the binary
// builds without a GPU and runs on nodes without CUDA. libcuda (the driver) is used, when
// present, only for the device names of the "Using devices" lines.
#include <cuda_runtime_api.h>
#include <nccl.h>

#include <dlfcn.h>
#include <unistd.h>

#include <chrono>
#include <cstdlib>
#include <string>
#include <vector>

#include "collbench/backend.hpp"
#include "collbench/collectives.hpp"
#include "collbench/nccl_tests_format.hpp"

extern char** environ;

namespace perfgap::collbench {
namespace {

struct Unusable {
  std::string message;
};

// The libraries to try, in order: an explicit path from the environment (no fallback: it
// was asked for), else the sonames (the dynamic loader's search, ld.so.cache included), then
// the CUDA install ($CUDA_HOME, else /usr/local/cuda).
std::vector<std::string> library_candidates(const char* env_override, std::initializer_list<const char*> names) {
  if (const char* path = std::getenv(env_override); path && *path) return {path};
  std::vector<std::string> candidates;
  for (const char* n : names) candidates.emplace_back(n);
  std::string home = std::getenv("CUDA_HOME") ? std::getenv("CUDA_HOME") : "/usr/local/cuda";
  for (const char* n : names)
    for (const char* sub : {"/lib64/", "/lib/"}) candidates.push_back(home + sub + n);
  return candidates;
}

void* open_library(const char* env_override, std::initializer_list<const char*> names, const char* what) {
  std::string first_error;
  for (const auto& c : library_candidates(env_override, names)) {
    if (void* h = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL)) return h;
    if (first_error.empty()) first_error = ::dlerror();
  }
  throw Unusable{std::string("cannot load ") + what + ": " + first_error};
}

template <typename Fn>
Fn symbol(void* lib, const char* name, const char* what) {
  void* p = ::dlsym(lib, name);
  if (!p) throw Unusable{std::string(what) + " has no " + name + " (too old?)"};
  return reinterpret_cast<Fn>(p);
}

#define PG_SYM(lib, what, fn) fn = symbol<decltype(fn)>(lib, #fn, what)

struct Cudart {
  decltype(&::cudaGetDeviceCount) cudaGetDeviceCount;
  decltype(&::cudaSetDevice) cudaSetDevice;
  cudaError_t (*cudaMalloc)(void**, size_t);  // cuda_runtime.h overloads it: name the C one
  decltype(&::cudaFree) cudaFree;
  decltype(&::cudaMemcpy) cudaMemcpy;
  decltype(&::cudaMemset) cudaMemset;
  decltype(&::cudaStreamCreateWithFlags) cudaStreamCreateWithFlags;
  decltype(&::cudaStreamSynchronize) cudaStreamSynchronize;
  decltype(&::cudaStreamDestroy) cudaStreamDestroy;
  decltype(&::cudaDeviceGetAttribute) cudaDeviceGetAttribute;
  decltype(&::cudaGetErrorString) cudaGetErrorString;
  decltype(&::cudaRuntimeGetVersion) cudaRuntimeGetVersion;

  explicit Cudart(void* lib) {
    const char* what = "the CUDA runtime";
    PG_SYM(lib, what, cudaGetDeviceCount);
    PG_SYM(lib, what, cudaSetDevice);
    PG_SYM(lib, what, cudaMalloc);
    PG_SYM(lib, what, cudaFree);
    PG_SYM(lib, what, cudaMemcpy);
    PG_SYM(lib, what, cudaMemset);
    PG_SYM(lib, what, cudaStreamCreateWithFlags);
    PG_SYM(lib, what, cudaStreamSynchronize);
    PG_SYM(lib, what, cudaStreamDestroy);
    PG_SYM(lib, what, cudaDeviceGetAttribute);
    PG_SYM(lib, what, cudaGetErrorString);
    PG_SYM(lib, what, cudaRuntimeGetVersion);
  }

  void check(cudaError_t rc, const char* call) const {
    if (rc != cudaSuccess) throw Unusable{std::string(call) + ": " + cudaGetErrorString(rc)};
  }
};

struct Nccl {
  decltype(&::ncclGetVersion) ncclGetVersion;
  decltype(&::ncclGetErrorString) ncclGetErrorString;
  decltype(&::ncclCommInitAll) ncclCommInitAll;
  decltype(&::ncclCommDestroy) ncclCommDestroy;
  decltype(&::ncclGroupStart) ncclGroupStart;
  decltype(&::ncclGroupEnd) ncclGroupEnd;
  decltype(&::ncclAllReduce) ncclAllReduce;
  decltype(&::ncclAllGather) ncclAllGather;
  decltype(&::ncclReduceScatter) ncclReduceScatter;
  decltype(&::ncclSend) ncclSend;
  decltype(&::ncclRecv) ncclRecv;

  Nccl() {
    const char* what = "NCCL";
    void* lib = open_library("PERFGAP_NCCL_LIBRARY", {"libnccl.so.2", "libnccl.so"}, what);
    PG_SYM(lib, what, ncclGetVersion);
    PG_SYM(lib, what, ncclGetErrorString);
    PG_SYM(lib, what, ncclCommInitAll);
    PG_SYM(lib, what, ncclCommDestroy);
    PG_SYM(lib, what, ncclGroupStart);
    PG_SYM(lib, what, ncclGroupEnd);
    PG_SYM(lib, what, ncclAllReduce);
    PG_SYM(lib, what, ncclAllGather);
    PG_SYM(lib, what, ncclReduceScatter);
    PG_SYM(lib, what, ncclSend);  // alltoall as nccl-tests builds it: a send and a receive per peer
    PG_SYM(lib, what, ncclRecv);
  }

  void check(ncclResult_t rc, const char* call) const {
    if (rc != ncclSuccess) throw Unusable{std::string(call) + ": " + ncclGetErrorString(rc)};
  }
};

#undef PG_SYM

// The first CUDA runtime that sees a GPU: a node may have several (libcudart.so.13 and .12)
// and only those no newer than its driver work.
Cudart load_cudart() {
  std::string first_error, loaded;
  for (const auto& c : library_candidates("PERFGAP_CUDART_LIBRARY", {"libcudart.so.13", "libcudart.so.12", "libcudart.so.11.0", "libcudart.so"})) {
    void* lib = ::dlopen(c.c_str(), RTLD_NOW | RTLD_LOCAL);
    if (!lib) {
      if (first_error.empty()) first_error = ::dlerror();
      continue;
    }
    Cudart cuda(lib);
    int count = 0;
    cudaError_t rc = cuda.cudaGetDeviceCount(&count);
    if (rc == cudaSuccess && count > 0) return cuda;
    if (loaded.empty()) loaded = c + ": cudaGetDeviceCount: " + (rc == cudaSuccess ? std::string("0 devices") : cuda.cudaGetErrorString(rc));
  }
  if (loaded.empty()) throw Unusable{"cannot load the CUDA runtime: " + first_error};
  // Without a driver the runtime says "driver version is insufficient": name the real cause.
  if (void* driver = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL); !driver)
    throw Unusable{std::string("no usable GPU: no NVIDIA driver on this node (") + ::dlerror() + ")"};
  throw Unusable{"no usable GPU (" + loaded + ")"};
}

// "NVIDIA H100 80GB HBM3" from the driver API, which has kept this signature since CUDA 1.
std::string device_name(int device) {
  void* lib = ::dlopen("libcuda.so.1", RTLD_NOW | RTLD_LOCAL);
  if (!lib) return "GPU";
  using Init = int (*)(unsigned);
  using Get = int (*)(int*, int);
  using Name = int (*)(char*, int, int);
  auto init = reinterpret_cast<Init>(::dlsym(lib, "cuInit"));
  auto get = reinterpret_cast<Get>(::dlsym(lib, "cuDeviceGet"));
  auto name = reinterpret_cast<Name>(::dlsym(lib, "cuDeviceGetName"));
  char buf[256] = {};
  int handle = 0;
  if (!init || !get || !name || init(0) != 0 || get(&handle, device) != 0 || name(buf, sizeof buf - 1, handle) != 0) return "GPU";
  return buf;
}

class NcclBench {
 public:
  NcclBench(const Options& o, const Cudart& cuda, const Nccl& nccl) : o_(o), cuda_(cuda), nccl_(nccl), gpus_(o.gpus) {}

  ~NcclBench() {
    for (auto c : comms_)
      if (c) nccl_.ncclCommDestroy(c);
    for (int g = 0; g < static_cast<int>(streams_.size()); ++g) {
      cuda_.cudaSetDevice(g);
      if (streams_[g]) cuda_.cudaStreamDestroy(streams_[g]);
      if (send_[g]) cuda_.cudaFree(send_[g]);
      if (recv_[g]) cuda_.cudaFree(recv_[g]);
    }
  }

  void setup(const Shape& largest) {
    streams_.assign(gpus_, nullptr);
    send_.assign(gpus_, nullptr);
    recv_.assign(gpus_, nullptr);
    std::size_t send_bytes = std::max<std::uint64_t>(largest.send_count, 1) * kElementBytes;
    std::size_t recv_bytes = std::max<std::uint64_t>(std::max(largest.send_count, largest.recv_count), 1) * kElementBytes;
    for (int g = 0; g < gpus_; ++g) {
      cuda_.check(cuda_.cudaSetDevice(g), "cudaSetDevice");
      cuda_.check(cuda_.cudaStreamCreateWithFlags(&streams_[g], cudaStreamNonBlocking), "cudaStreamCreateWithFlags");
      cuda_.check(cuda_.cudaMalloc(reinterpret_cast<void**>(&send_[g]), send_bytes), "cudaMalloc");
      cuda_.check(cuda_.cudaMalloc(reinterpret_cast<void**>(&recv_[g]), recv_bytes), "cudaMalloc");
    }
    std::vector<int> devices(gpus_);
    for (int g = 0; g < gpus_; ++g) devices[g] = g;
    comms_.assign(gpus_, nullptr);
    nccl_.check(nccl_.ncclCommInitAll(comms_.data(), gpus_, devices.data()), "ncclCommInitAll");
  }

  Timing measure(const Shape& s, bool in_place) {
    Timing t;
    for (int i = 0; i < o_.warmup; ++i) launch(s, in_place);
    synchronize();
    auto start = std::chrono::steady_clock::now();
    for (int i = 0; i < o_.iters; ++i) launch(s, in_place);
    synchronize();  // every GPU done: the group is as slow as its slowest member
    t.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start).count() / o_.iters;
    // nccl-tests does not check in-place alltoall: a send/receive pair per peer on one buffer
    // overwrites data still to be sent.
    if (o_.check && !(in_place && o_.collective == Collective::alltoall)) t.wrong = check_once(s, in_place);
    return t;
  }

 private:
  void launch(const Shape& s, bool in_place) {
    const std::size_t n = s.per_rank;
    nccl_.check(nccl_.ncclGroupStart(), "ncclGroupStart");
    for (int g = 0; g < gpus_; ++g) {
      float* send = in_place ? recv_[g] : send_[g];
      float* recv = recv_[g];
      if (in_place) {
        auto layout = in_place_layout(o_.collective, Api::nccl, s, g);
        send = recv_[g] + layout.input_offset;
        recv = recv_[g] + layout.result_offset;
      }
      switch (o_.collective) {
        case Collective::all_reduce:
          nccl_.check(nccl_.ncclAllReduce(send, recv, n, ncclFloat, ncclSum, comms_[g], streams_[g]), "ncclAllReduce");
          break;
        case Collective::all_gather:
          nccl_.check(nccl_.ncclAllGather(send, recv, n, ncclFloat, comms_[g], streams_[g]), "ncclAllGather");
          break;
        case Collective::reduce_scatter:
          nccl_.check(nccl_.ncclReduceScatter(send, recv, n, ncclFloat, ncclSum, comms_[g], streams_[g]), "ncclReduceScatter");
          break;
        case Collective::alltoall:
          for (int peer = 0; n > 0 && peer < gpus_; ++peer) {
            nccl_.check(nccl_.ncclSend(send + peer * n, n, ncclFloat, peer, comms_[g], streams_[g]), "ncclSend");
            nccl_.check(nccl_.ncclRecv(recv + peer * n, n, ncclFloat, peer, comms_[g], streams_[g]), "ncclRecv");
          }
          break;
      }
    }
    nccl_.check(nccl_.ncclGroupEnd(), "ncclGroupEnd");
  }

  void synchronize() {
    for (int g = 0; g < gpus_; ++g) {
      cuda_.check(cuda_.cudaSetDevice(g), "cudaSetDevice");
      cuda_.check(cuda_.cudaStreamSynchronize(streams_[g]), "cudaStreamSynchronize");
    }
  }

  // Fresh inputs, one call, results copied back to the host and compared element by element.
  std::uint64_t check_once(const Shape& s, bool in_place) {
    std::vector<float> host;
    for (int g = 0; g < gpus_; ++g) {
      cuda_.check(cuda_.cudaSetDevice(g), "cudaSetDevice");
      host.assign(s.send_count, 0.0f);
      fill_input(g, host);
      auto layout = in_place ? in_place_layout(o_.collective, Api::nccl, s, g) : InPlaceLayout{0, 0, s.recv_count};
      // All-ones bytes are NaN floats: an element the collective never writes counts as wrong.
      cuda_.check(cuda_.cudaMemset(recv_[g], 0xff, std::max(layout.buffer_count, s.recv_count) * kElementBytes), "cudaMemset");
      float* input = in_place ? recv_[g] + layout.input_offset : send_[g];
      cuda_.check(cuda_.cudaMemcpy(input, host.data(), s.send_count * kElementBytes, cudaMemcpyHostToDevice), "cudaMemcpy");
    }
    launch(s, in_place);
    synchronize();
    std::uint64_t wrong = 0;
    for (int g = 0; g < gpus_; ++g) {
      cuda_.check(cuda_.cudaSetDevice(g), "cudaSetDevice");
      std::uint64_t offset = in_place ? in_place_layout(o_.collective, Api::nccl, s, g).result_offset : 0;
      host.assign(s.recv_count, 0.0f);
      cuda_.check(cuda_.cudaMemcpy(host.data(), recv_[g] + offset, s.recv_count * kElementBytes, cudaMemcpyDeviceToHost), "cudaMemcpy");
      wrong += count_wrong(o_.collective, s, g, gpus_, host);
    }
    return wrong;
  }

  const Options& o_;
  const Cudart& cuda_;
  const Nccl& nccl_;
  int gpus_;
  std::vector<cudaStream_t> streams_;
  std::vector<float*> send_, recv_;
  std::vector<ncclComm_t> comms_;
};

std::string version_text(int code) {
  // NCCL >= 2.9 encodes major*10000 + minor*100 + patch; older ones major*1000 + minor*100 + patch.
  int major = code >= 10000 ? code / 10000 : code / 1000, minor = code >= 10000 ? (code / 100) % 100 : (code / 100) % 10, patch = code % 100;
  return std::to_string(major) + "." + std::to_string(minor) + "." + std::to_string(patch);
}

int run(const Options& o) {
  Options opts = o;
  if (opts.gpus == 0) opts.gpus = 1;  // --backend nccl without -g: one GPU, as nccl-tests
  Nccl nccl;
  Cudart cuda = load_cudart();
  int available = 0;
  cuda.check(cuda.cudaGetDeviceCount(&available), "cudaGetDeviceCount");
  if (available < opts.gpus)
    throw Unusable{"-g " + std::to_string(opts.gpus) + " asked for, " + std::to_string(available) + " GPU(s) visible"};
  int nccl_code = 0, runtime = 0;
  nccl.check(nccl.ncclGetVersion(&nccl_code), "ncclGetVersion");
  cuda.cudaRuntimeGetVersion(&runtime);

  auto sizes = size_steps(opts);
  Shape largest = shape(opts.collective, sizes.empty() ? 0 : sizes.back(), opts.gpus);
  NcclBench bench(opts, cuda, nccl);
  bench.setup(largest);

  std::printf("# perfgap-collbench %s backend: nccl (NCCL %s, CUDA runtime %d.%d) nccl-headers=%d nccl-library=%d\n", PERFGAP_VERSION,
              version_text(nccl_code).c_str(), runtime / 1000, (runtime % 1000) / 10, NCCL_VERSION_CODE, nccl_code);
  if (std::string settings = tunable_settings(environ); !settings.empty()) std::printf("# Settings: %s\n", settings.c_str());
  std::printf("# Collective test starting: %s\n", program_name(opts.collective).c_str());
  std::fputs(run_header_line(opts, opts.gpus).c_str(), stdout);
  std::printf("#\n# Using devices\n");
  std::string host = host_name();
  for (int g = 0; g < opts.gpus; ++g) {
    int domain = 0, bus = 0, dev = 0;
    cuda.cudaDeviceGetAttribute(&domain, cudaDevAttrPciDomainId, g);
    cuda.cudaDeviceGetAttribute(&bus, cudaDevAttrPciBusId, g);
    cuda.cudaDeviceGetAttribute(&dev, cudaDevAttrPciDeviceId, g);
    char pci[32];
    std::snprintf(pci, sizeof pci, "%04x:%02x:%02x", domain, bus, dev);
    std::fputs(rank_line(g, static_cast<long>(::getpid()), host, g, pci, device_name(g)).c_str(), stdout);
  }
  std::fputs(table_header().c_str(), stdout);
  std::fflush(stdout);

  TableWriter table(opts.collective, opts.gpus);
  for (auto size : sizes) {
    Shape s = shape(opts.collective, size, opts.gpus);
    Timing out_of_place = bench.measure(s, false);
    Timing in_place = bench.measure(s, true);
    std::fputs(table.row(s, out_of_place, in_place).c_str(), stdout);
    std::fflush(stdout);
  }
  std::fputs(table.footer().c_str(), stdout);
  std::fflush(stdout);
  return table.wrong() ? kExitWrong : kExitOk;
}

}  // namespace

int run_nccl(const Options& o) {
  try {
    return run(o);
  } catch (const Unusable& e) {
    std::fflush(stdout);
    print_error("NCCL backend: " + e.message);
    return kExitUnusable;
  } catch (const std::bad_alloc&) {
    print_error("NCCL backend: out of host memory for -e " + std::to_string(o.max_bytes));
    return kExitUnusable;
  }
}

}  // namespace perfgap::collbench
