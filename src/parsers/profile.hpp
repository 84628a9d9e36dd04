// GPU timeline profiles: Nsight Systems SQLite exports and PyTorch profiler (Kineto) Chrome
// traces, read into one model (times in ns). The readers take the file's bytes, never a path
// (the CLI reads inputs through sys::read_named_file or sys::BlockReader, with their limits).
#pragma once

#include <cstdint>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include "parsers/byte_source.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

// `graph`: one execution of a whole CUDA graph (nsys --cuda-graph-trace=graph, the
// CUPTI_ACTIVITY_KIND_GRAPH_TRACE table): GPU busy time whose kernels the export does not hold.
enum class ActKind : std::uint8_t { kernel, memcpy, memset, graph };

// A memory copy's direction (CUPTI's memcpy kinds: nsys copyKind, the word after Kineto's
// "Memcpy "); `other` for host-to-host, array and unified-memory copies, `unknown` where the
// profile does not say. Its host memory (nsys srcKind/dstKind, Kineto's "(Pageable -> Device)"):
// `unknown` where not recorded, `none` for a copy that touches no host memory.
enum class CopyKind : std::uint8_t { unknown, h2d, d2h, d2d, p2p, other };
inline constexpr int kCopyKindCount = 6;
std::string_view copy_kind_name(CopyKind k);  // "H2D", "D2H", "D2D", "P2P", "other", "unknown"
enum class HostMem : std::uint8_t { unknown, none, pageable, pinned, managed };
inline constexpr int kHostMemCount = 5;
std::string_view host_mem_name(HostMem m);  // "pageable", "pinned", "managed", "" (none), "unknown"

// NCCL collectives; `none` for a kernel that is not NCCL's, `other` for an NCCL kernel whose
// collective the name does not say (NCCL 2.19+ `ncclDevKernel_Generic`, without Kineto args).
enum class Coll : std::uint8_t { none, AllGather, ReduceScatter, AllReduce, Broadcast, Reduce, AllToAll, SendRecv, other };
inline constexpr int kCollCount = 9;
std::string_view coll_name(Coll c);
// The collective of an NCCL kernel name of any NCCL 2.x naming: `ncclKernel_AllReduce_RING_LL_Sum_float`,
// `ncclDevKernel_AllGather_RING_LL(...)`, `ncclKernel_SendRecv_*`, `ncclAllReduceRingLLKernel_sum_f32`
// (2.0-2.6), with or without a leading `void `; Coll::none when the name is not NCCL's.
Coll nccl_collective(std::string_view kernel_name);
// A kernel's qualified base name: its demangled name without a leading `void `, template arguments
// and argument list, namespaces kept (`void deep_ep::internode::dispatch<false, 8>(int4*, ...)` ->
// `deep_ep::internode::dispatch`); `(anonymous namespace)` and nsys's `<unnamed>` stay part of it.
// A view into `name`.
std::string_view kernel_base_name(std::string_view name);
// Kineto's `Collective name` arg (allreduce, all_gather, _allgather_base, reduce_scatter_tensor, send, recv, ...).
Coll collective_from_arg(std::string_view arg);
// The collective a benchmark's or user's name says: "all_reduce_perf", "alltoall_perf",
// "allreduce", "all-reduce", "AllReduce" (nccl-tests' binary, whatif's COLL=, a file's name);
// Coll::none when it names none of AllGather, ReduceScatter, AllReduce, AllToAll, Broadcast,
// SendRecv, Reduce.
Coll collective_named(std::string_view name);
// The collective a benchmark command runs, as fanout --pairs records it ("all_reduce_perf -b 1G
// -e 1G", "/opt/nccl-tests/build/alltoall_perf ...", "perfgap-collbench all_gather -b 1G";
// perfgap-collbench without a collective runs all_reduce): Coll::none where the command names
// no nccl-tests binary nor perfgap-collbench, or a binary of no collective the profile names
// (hypercube_perf, gather_perf).
Coll collective_of_command(std::string_view command);

// True for a CUDA runtime/driver call that makes the host wait for the GPU: cudaStreamSynchronize,
// cuStreamSynchronize, cudaDeviceSynchronize, cuCtxSynchronize, cudaEventSynchronize,
// cuEventSynchronize, and the synchronous copies (cudaMemcpy, cudaMemcpy2D, cuMemcpyDtoH_v2, ...:
// a Memcpy call without Async in its name); nsys's version suffixes (`_v3020`) allowed.
bool is_sync_call(std::string_view name);

// A point-to-point kernel's direction: Kineto's "Collective name" `send` or `recv`; `unknown`
// where the trace does not say (nsys kernel names, Kineto traces before PyTorch 2.1).
enum class P2pDir : std::uint8_t { unknown, send, recv };

struct GpuActivity {
  std::int64_t start = 0, end = 0;            // ns on the GPU timeline
  std::int64_t api_start = -1, api_end = -1;  // the host call that launched it (joined by correlation), -1: none
  std::uint32_t gpu = 0;                      // index into Profile::gpus
  std::uint32_t name = 0;                     // index into Profile::names (kernels; 0 = "" otherwise)
  std::uint32_t stream = 0;
  std::uint32_t group_size = 0;               // Kineto NCCL args; 0 unknown
  std::uint64_t msg_bytes = 0;                // Kineto NCCL args (In msg nelems x dtype size), a copy's bytes; 0 unknown
  // A point-to-point kernel's peer, the job's (global) rank it sends to or receives from:
  // Kineto's "Dst Rank" of a send, "Src Rank" of a recv (PyTorch's record_param_comms
  // metadata, copied onto the kernel); -1 unknown (older traces, nsys exports).
  std::int32_t peer = -1;
  std::uint32_t api_thread = 0;  // the thread of its host call (Kineto's tid, its low 32 bits); 0 unknown
  ActKind kind = ActKind::kernel;
  Coll coll = Coll::none;
  CopyKind copy = CopyKind::unknown;    // memcpy only
  HostMem host_mem = HostMem::unknown;  // memcpy only
  bool graph_launch = false;            // its host call is a CUDA graph launch (cudaGraphLaunch, cuGraphLaunch)
  P2pDir p2p = P2pDir::unknown;         // a SendRecv kernel's direction (Kineto's "Collective name" send or recv)
};
static_assert(sizeof(GpuActivity) <= 72, "a profile holds 10^6-10^7 activities: keep the record small");

struct GpuInfo {
  std::uint32_t file = 0;     // which input (profiles of several files are merged)
  std::uint64_t process = 0;  // nsys globalPid; 0 for Kineto (one process per trace)
  std::int64_t device = 0;
  std::string label;          // "GPU 3 (Tesla V100-SXM2-16GB) pid 1234", "rank 1 GPU 1"
  std::string key;            // for per-GPU metric names: "pid1234.gpu3", "rank1.gpu1" (unique in a merged profile)
  std::string host;           // the node, where the profile names it (nsys TARGET_INFO_SYSTEM_ENV Hostname); empty: unknown
  // What the correlation ids of its trace's host calls say of how complete the trace is (Kineto;
  // 0 where unknown): CUPTI numbers every runtime and driver call of the process, so a complete
  // trace holds most numbers (consecutive recorded calls 1 to 6 apart at the median over HTA's
  // and PyTorch's real traces) and a filtered or sampled one a few (HTA's trace_filter: 36).
  std::uint64_t host_calls = 0;       // its trace's host calls with a correlation id
  std::uint64_t launching_calls = 0;  // of those, the ones that launched GPU work in the trace
  std::int64_t corr_span = 0;         // last correlation id - first + 1
  std::int64_t corr_gap_median = 0;   // median step between consecutive recorded calls' ids
};

// A host runtime/driver call of kSlowHostCallNs or longer (Kineto cuda_runtime/cuda_driver):
// what the host sat in while the GPU waited (profile.launch_bound's host stalls).
inline constexpr std::int64_t kSlowHostCallNs = 100'000;
struct SlowHostCall {
  std::int64_t start = 0, end = 0;
  std::uint32_t name = 0;  // index into Profile::call_names
  std::uint32_t thread = 0;
  std::uint32_t file = 0;
};

// A host-side annotation: NVTX push/pop or start/end range, Kineto user_annotation.
struct ProfileRange {
  std::int64_t start = 0, end = 0;
  std::uint32_t file = 0;
  std::uint64_t process = 0;
  std::uint32_t name = 0;  // index into Profile::names
};

// The framework that made a profile's GPU work, where its names say so (profile_framework.cpp):
// the fixes of the profile findings are written in its words. `unknown` where the names say
// nothing, or more than one framework.
enum class Framework : std::uint8_t { unknown, pytorch, jax, openmp };
std::string_view framework_name(Framework f);  // "PyTorch", "JAX/XLA", "OpenMP offload", "unknown"
struct FrameworkSeen {
  Framework framework = Framework::unknown;
  std::string why;  // the names that told it (or why none could): "33 of 33 kernels in ATen's namespace (at::)"
};

struct Profile {
  std::string format;                   // "Nsight Systems SQLite export, schema 3.7.2", "Kineto trace"
  std::vector<std::string> names{""};   // kernel and range names (index 0 = "")
  std::vector<GpuInfo> gpus;
  std::vector<GpuActivity> acts;
  std::vector<ProfileRange> ranges;
  std::size_t api_calls = 0;            // host API calls read (0: no launch data in the profile)
  // Host calls that block until the GPU is done (is_sync_call): how many and their summed time (ns).
  std::size_t sync_calls = 0;
  std::int64_t sync_ns = 0;
  bool env_present = false;             // nsys TARGET_INFO_SYSTEM_ENV was there
  std::vector<std::pair<std::string, std::string>> env;     // the profiled job's environment (NAME, value)
  std::vector<std::pair<std::string, std::string>> system;  // driver version, CPU sockets, GPU names ...
  std::vector<std::string> notes;       // what the profile lacks or what was left out, for the report
  // The names of the profiled processes' threads (nsys ThreadNames of the processes with GPU
  // work, each name once); empty for Kineto traces.
  std::vector<std::string> threads;
  FrameworkSeen framework;              // set by the readers (framework_of; Kineto: PyTorch)
  // Its host calls of kSlowHostCallNs or longer, by start.
  std::vector<SlowHostCall> slow_calls;
  std::vector<std::string> call_names;  // their names (a few dozen runtime/driver calls)
  // A slow host call's index in call_names, without nsys's API version suffix (cudaMalloc_v3020
  // is cudaMalloc); past 255 names (no real trace has that many slow calls' names) "other calls".
  std::uint32_t call_name_index(std::string_view name);

  // Appends another profile (of input `file`): its GPUs, activities and ranges keep their own identity.
  void merge(Profile&& other, std::uint32_t file);
};

// The framework a profile's names show: PyTorch (Kineto traces; ATen kernels `at::`, TorchInductor
// `triton_*_fused*`, nvFuser `CudaCodeGen::`; NVTX ranges `aten::*`, `ProfilerStep#N`; threads
// `pt_autograd_*`, `pt_main_thread`), JAX/XLA (NVTX ranges `XlaModule:`, `Thunk:`; threads
// naming XLA or PjRt; XLA fusion kernels `fusion_N`, `loop_*_fusion`, `input_*_fusion` for at
// least a tenth of the kernels), OpenMP offload (kernels `__omp_offloading_*`, NVHPC's
// `nvkernel_*`). Unknown where none, or more than one, shows.
FrameworkSeen framework_of(const Profile& p);
// Two inputs' frameworks as one job's: the same, or unknown with both named.
FrameworkSeen framework_joined(const FrameworkSeen& a, const FrameworkSeen& b);

// NCCL runs all-to-all (and, in some builds, other collectives) as grouped send/recv: its
// kernels are named SendRecv whatever the call was. Each SendRecv kernel whose launch call lies
// inside a PyTorch communication op's range (`nccl:all_to_all`, `nccl:_all_gather_base`: the
// record_param_comms annotation, a Kineto user_annotation or cpu_op, an NVTX range under
// emit_nvtx) takes the collective that op names, the innermost op of the kernel's process;
// `nccl:send`/`nccl:recv` (and batch_isend_irecv) keep SendRecv with their direction. `ops`:
// such ranges read apart from Profile::ranges (Kineto's cpu_op events); Profile::ranges are
// searched too. Returns the number of kernels given another collective.
std::size_t name_sendrecv_collectives(Profile& p, const std::vector<ProfileRange>& ops = {});

// Nsight Systems `nsys export --type sqlite` output (schema of 2021, TARGET_INFO_CUDA_GPU,
// through 2025's, docs/ANALYZE.md "Nsight Systems export schemas"): tables and columns are
// probed; names resolve through StringIds; kernels, memcpys, memsets and whole-graph
// executions join their runtime/driver call on correlationId within the process.
Parsed<Profile> read_nsys_sqlite(std::string_view bytes);
// True when `bytes` start like an SQLite database.
bool looks_sqlite(std::string_view bytes);
// True when `bytes` start like an Nsight Systems .nsys-rep / .qdrep report.
bool looks_nsys_report(std::string_view bytes);

// PyTorch profiler / Kineto Chrome-trace JSON (already decompressed), pulled from `next` a block
// at a time and never held whole: memory is the model plus a block (RapidJSON's SAX Reader).
// A failing source's error is the error; bad JSON names its line and byte offset.
Parsed<Profile> read_kineto(const ByteSource& next);
// The same over bytes in memory.
Parsed<Profile> parse_kineto(std::string_view json);
// read_kineto's errors for JSON that is no trace at all (another program's .json beside the
// traces), as against a trace that is damaged or cut short.
inline constexpr std::string_view kKinetoNoTraceEvents = "JSON without a traceEvents array: not a Chrome/Kineto trace (PyTorch profiler export_chrome_trace)";
inline constexpr std::string_view kKinetoNotJsonContainer = "not a JSON object or array: a Kineto trace is {\"traceEvents\": [...]} (or, as PyTorch wrote it in 2020, [...])";
bool is_not_a_kineto_trace(std::string_view why);
// What read_kineto says of a trace of another device than an NVIDIA GPU.
inline constexpr std::string_view kNotAGpuTraceWords = "perfgap reads NVIDIA GPU activity (CUDA kernels, copies, memsets) only";
// The host of a trace that torch.profiler.tensorboard_trace_handler named with its default worker
// name, "{hostname}_{pid}.{time_ns}.pt.trace.json[.gz]" (a Kineto trace records no host of its
// own); "" for any other name.
std::string kineto_trace_host(std::string_view path);

}  // namespace perfgap::parsers
