// The profile findings' fixes that name a framework's API, in the words of the framework the
// profile shows (parsers::framework_of): PyTorch's, JAX/XLA's, OpenMP offload's, or CUDA's own
// calls where the framework is unknown (profile_model.hpp framework_fix).
#include <fmt/format.h>

#include <algorithm>
#include <initializer_list>

#include "analyzers/profile_model.hpp"

namespace perfgap::analyzers::profile_model {

namespace {

using parsers::Framework;

// One topic's text per framework: PyTorch, JAX/XLA, OpenMP offload, unknown (CUDA's words).
struct FixWords {
  const char* pytorch;
  const char* jax;
  const char* openmp;
  const char* cuda;
};

constexpr const char* kLaunchThreadFast =
    "then make the launching thread fast: SMMU/IOMMU overhead (perf.smmu_cmdq, smmu.cmdqv), deep C-states and clocks (cpu.cstate.deep_idle, "
    "cpu.governor), and placement of the rank's threads (placement.gpu_affinity, placement.shared_cores): perfgap check on the node";
constexpr const char* kSyncLead =
    "The host waits for the GPU to finish before it launches more work, so the GPU idles while the host catches up: synchronisation, not launch "
    "overhead (CUDA graphs or fewer kernels would not remove it). ";
constexpr const char* kStallLead =
    "The GPU waits while its host does something else for a millisecond or more before it launches again: a host stall, not launch overhead "
    "(CUDA graphs or fewer kernels would not remove it). Find what the host does in those gaps: ";
constexpr const char* kOverheadLead =
    "The small-kernel/CPU-overhead signature: the host cannot launch kernels as fast as the GPU runs them. ";

// The communication topics' words (whatif.overlap, profile.exposed_comm's overlap).
FixWords comm_fix_words(FixTopic t) {
  switch (t) {
    case FixTopic::whatif_overlap:
      return {"overlap communication with compute where the model allows it: find what waits for each collective's result early (a .wait(), "
              ".item() or host synchronisation right after it, DDP with too few buckets or find_unused_parameters, FSDP without "
              "backward_prefetch/forward_prefetch, Megatron without --overlap-grad-reduce/--overlap-param-gather); profile.exposed_comm says "
              "which collectives are exposed",
              "overlap communication with compute where the model allows it: find what waits for each collective's result early (a "
              "jax.block_until_ready or a host read right after it) and let XLA schedule the collectives under compute (its latency-hiding "
              "scheduler: --xla_gpu_enable_latency_hiding_scheduler=true in XLA_FLAGS); profile.exposed_comm says which collectives are exposed",
              "overlap communication with compute where the program allows it: find what waits for each collective's result early (a taskwait, "
              "a target region without nowait or a host wait right after the NCCL call), run the collectives on their own stream and wait only "
              "where the result is read; profile.exposed_comm says which collectives are exposed",
              "overlap communication with compute where the program allows it: find what waits for each collective's result early (a "
              "cudaStreamSynchronize or a host read right after the NCCL call), run the collectives on their own stream and wait on an event "
              "(cudaStreamWaitEvent) only where the result is read; profile.exposed_comm says which collectives are exposed"};
    case FixTopic::exposed_gather:
      return {"prefetch the next layer's parameters (FSDP forward_prefetch/backward_prefetch, ZeRO-3 prefetch bucket) so it runs under compute; ",
              "let XLA schedule the parameter gathers and gradient reductions under compute (its latency-hiding scheduler: "
              "--xla_gpu_enable_latency_hiding_scheduler=true in XLA_FLAGS); ",
              "start each gather before the compute that does not need it, on a stream of its own, and wait on an event only where its data "
              "is read; ",
              "start each gather before the compute that does not need it, on a stream of its own, and wait on an event (cudaStreamWaitEvent) "
              "only where its data is read; "};
    case FixTopic::exposed_allreduce:
      return {"overlap gradient buckets with the backward pass (DDP bucket_cap_mb, no find_unused_parameters); ",
              "let XLA overlap the gradient all-reduces with the backward pass (its latency-hiding scheduler: "
              "--xla_gpu_enable_latency_hiding_scheduler=true in XLA_FLAGS; --xla_gpu_all_reduce_combine_threshold_bytes sets how many "
              "gradients one all-reduce carries); ",
              "start each all-reduce as soon as its data is ready (in buckets, not all at the end), on a stream of its own, and wait only where "
              "its result is read; ",
              "start each all-reduce as soon as its data is ready (in buckets, not all at the end), on a stream of its own, and wait on an event "
              "(cudaStreamWaitEvent) only where its result is read; "};
    case FixTopic::exposed_alltoall:
      return {"overlap the all-to-all with compute: an embedding model's sparse-feature and pooled-embedding exchange (TorchRec's pipelined "
              "training, TrainPipelineSparseDist, starts the next batch's input all-to-all during this batch's compute), an MoE's expert "
              "dispatch and combine (comm/compute pipelining); ",
              "overlap the all-to-all with compute: the next batch's exchange started during this batch's compute, an MoE's expert dispatch "
              "and combine pipelined with another micro-batch's compute; ",
              "overlap the all-to-all with compute: the next exchange started during this step's compute; ",
              "overlap the all-to-all with compute: the next batch's exchange started during this batch's compute, an MoE's expert dispatch "
              "and combine pipelined with another micro-batch's compute; "};
    default: break;
  }
  return {"", "", "", ""};
}

FixWords fix_words(FixTopic t) {
  switch (t) {
    case FixTopic::launch_sync:
      return {"Drop the per-step syncs: .item(), .cpu(), .tolist() and printing or logging tensors, torch.cuda.synchronize(), blocking copies (copy "
              "into pinned memory with non_blocking=True), cudaStreamSynchronize/cudaDeviceSynchronize in your own code; keep the one sync a step "
              "needs at its end, and overlap: queue the next kernels before waiting, wait on CUDA events instead of whole streams. "
              "torch.cuda.set_sync_debug_mode('warn') names each synchronising call",
              "Drop the per-step waits: jax.block_until_ready(), jax.device_get(), float()/np.asarray() of device arrays and printing or logging "
              "arrays inside the step; keep the one wait a step needs at its end (read metrics every N steps), jit the whole step so one dispatch "
              "runs it, and let JAX's asynchronous dispatch queue the next step before reading results. jax.transfer_guard('disallow') names each "
              "implicit transfer; a jax.profiler trace shows where the host blocks",
              "Drop the per-step waits: a target region without nowait waits for its kernel, map(from:)/map(tofrom:) and target update from copy back "
              "and wait, and so do omp_target_memcpy and taskwait; launch independent regions with nowait and depend clauses, wait once (taskwait) "
              "where the results are needed, and map the data once with target data (or target enter/exit data) around the time loop instead of "
              "on every region. LIBOMPTARGET_INFO (LLVM's offload runtime) lists each mapping and launch",
              "Drop the per-step waits: cudaStreamSynchronize, cudaDeviceSynchronize, cudaEventSynchronize and synchronous copies (cudaMemcpy, any "
              "copy from pageable memory); keep the one wait a step needs at its end, copy with cudaMemcpyAsync from pinned memory (cudaHostAlloc, "
              "cudaHostRegister), queue the next kernels before waiting, and wait on CUDA events (cudaStreamWaitEvent) instead of whole streams. "
              "The trace's CUDA API rows (nsys --trace=cuda) name each synchronising call"};
    case FixTopic::launch_overhead:
      return {"Fewer, larger kernels (CUDA graphs, torch.compile mode='reduce-overhead', fused optimizers, larger micro-batches); ",
              "Fewer, larger kernels: jit whole training steps rather than op by op (jax.lax.scan over layers or micro-batches keeps one program), "
              "XLA's command buffers (CUDA graphs: --xla_gpu_enable_command_buffer in XLA_FLAGS), larger micro-batches; ",
              "Fewer, larger kernels: fuse neighbouring target regions into one (one target teams distribute parallel for over more work, "
              "collapse(n) loops), keep the data mapped with target data so that regions do not map it again, and launch independent regions with "
              "nowait; ",
              "Fewer, larger kernels (fused kernels, CUDA graphs: stream capture with cudaStreamBeginCapture and one cudaGraphLaunch per step, "
              "larger batches); "};
    case FixTopic::host_stall:
      return {"the data loader (DataLoader num_workers, pin_memory, prefetch_factor: a starved loader stalls each step's start), compilation and "
              "warm-up (torch.compile, nvFuser or cuDNN autotuning in the first steps: leave them out of the capture with torch.profiler's "
              "schedule(wait=, warmup=)), Python between steps (logging, checkpointing, metrics read with .item()); a CPU profile of the training "
              "process during them (py-spy record --native, nsys --sample=cpu) names it; ",
              "the input pipeline (tf.data or grain prefetching, jax.device_put of the next batch ahead of use), compilation (the first step of "
              "each new shape; jax.config.update('jax_log_compiles', True) names recompiles: leave the first steps out of the capture), Python "
              "between steps (logging, checkpointing, jax.device_get of metrics); a CPU profile of the process during them (py-spy record "
              "--native, nsys --sample=cpu) names it; ",
              "host computation between target regions, reading input, the offload runtime's first launch of each region (loading and JIT "
              "compiling its image: leave it out of the capture); a CPU profile during them (perf record -g, nsys --sample=cpu) names it; ",
              "reading input, host computation between launches, the first launch of each module (loading and JIT compiling PTX: a warm "
              "CUDA_CACHE_PATH, or leave it out of the capture), logging; a CPU profile of the process during them (perf record -g, nsys "
              "--sample=cpu) names it; "};
    case FixTopic::iterations:
      return {"annotate iterations (torch.profiler schedule gives ProfilerStep#N; nvtx.range_push('step') around each step) or pass --iteration-range NAME",
              "annotate iterations with an NVTX range around each step (the nvtx package: with nvtx.annotate('step'): ...; "
              "jax.profiler.StepTraceAnnotation marks steps in JAX's own profiler, not in nsys) or pass --iteration-range NAME",
              "annotate iterations with an NVTX range around each time step (nvtxRangePushA(\"step\") / nvtxRangePop(), NVTX 3's header-only "
              "nvToolsExt.h) or pass --iteration-range NAME",
              "annotate iterations with an NVTX range around each step (nvtxRangePushA/nvtxRangePop in C and C++, nvtx.annotate in Python) or "
              "pass --iteration-range NAME"};
    case FixTopic::copies_pageable:
      return {"pageable host memory: each such copy is staged through a driver buffer and holds the host until it ends. Pin the host buffers "
              "(DataLoader(pin_memory=True), tensor.pin_memory()) and copy with non_blocking=True on a side stream, so copies overlap compute",
              "pageable host memory: each such copy is staged through a driver buffer and holds the host until it ends. Put the next batch on the "
              "device while the step runs (jax.device_put ahead of use; flax.jax_utils.prefetch_to_device), so copies overlap compute",
              "pageable host memory: each such copy is staged through a driver buffer and holds the host until it ends. Allocate the host buffers "
              "pinned (omp_alloc with the omp_atk_pinned trait, or cudaHostAlloc/cudaHostRegister), map them once with target data and move only "
              "what changes with target update ... nowait",
              "pageable host memory: each such copy is staged through a driver buffer and holds the host until it ends. Pin the host buffers "
              "(cudaHostAlloc, cudaHostRegister) and copy with cudaMemcpyAsync on a side stream, so copies overlap compute"};
    case FixTopic::copies_d2h:
      return {"device-to-host copies inside the step are most often synchronisations (.item(), .cpu(), .tolist(), logging the loss every step): "
              "keep metrics on the GPU and read them every N steps; copy what must come back with non_blocking=True into pinned memory",
              "device-to-host copies inside the step are most often synchronisations (printing or logging arrays, float(loss), np.asarray, "
              "jax.device_get every step): keep metrics on the device and fetch them every N steps",
              "device-to-host copies inside the step: map(from:)/map(tofrom:) on each target region and target update from every step copy back "
              "and wait; keep the data on the device in a target data region and bring back only what is needed, every N steps",
              "device-to-host copies inside the step are most often synchronisations (a result read back every step): keep the data on the GPU and "
              "read it every N steps; copy what must come back with cudaMemcpyAsync into pinned memory"};
    case FixTopic::copies_d2d:
      return {"device-to-device copies are copies the model makes (.contiguous(), .clone(), torch.cat, dtype casts, copy_()): find the ops "
              "that launch them in the trace and fuse or remove them (torch.compile fuses many)",
              "device-to-device copies are copies the program makes (transposes, concatenations, dtype casts, inputs not donated): donate the "
              "buffers a step replaces (jax.jit(..., donate_argnums=...)) and look for copy ops in the compiled HLO (jax.jit(f).lower(...).compile().as_text())",
              "device-to-device copies (omp_target_memcpy between device buffers, regions copying arrays): find the regions that launch them and "
              "compute in place",
              "device-to-device copies (cudaMemcpy*, DeviceToDevice) the program makes: find the calls that launch them in the trace and compute in "
              "place or fuse them into the kernels"};
    case FixTopic::copies_p2p:
      return {"peer copies between GPUs (tensor.to('cuda:N')) are slow without direct P2P: ",
              "peer copies between GPUs (jax.device_put to another device) are slow without direct P2P: ",
              "peer copies between GPUs (omp_target_memcpy between devices) are slow without direct P2P: ",
              "peer copies between GPUs (cudaMemcpyPeer) are slow without direct P2P: "};
    case FixTopic::copies_memset:
      return {"memsets each step (optimizer.zero_grad() without set_to_none, torch.zeros for buffers): use zero_grad(set_to_none=True) and reuse buffers",
              "memsets each step (buffers zeroed inside the step, jnp.zeros): donate the buffers a step replaces (donate_argnums) so that XLA "
              "reuses them, and zero only what must be",
              "memsets each step (buffers cleared on every region): clear once and reuse the buffers, or let the kernels write every element",
              "memsets each step (cudaMemset/cudaMemsetAsync: buffers zeroed each step): zero once and reuse the buffers, or let the kernels write "
              "every element"};
    case FixTopic::copies_overlap:
      return {"copy the next inputs while the current step computes: pinned host memory, non_blocking=True copies on a side stream "
              "(prefetch), and data kept on the GPU between steps",
              "copy the next inputs while the current step computes: the next batch put on the device before the step (jax.device_put; "
              "flax.jax_utils.prefetch_to_device), and data kept on the device between steps",
              "copy the next inputs while the current step computes: target update to(...) nowait (or target enter data ... nowait) with depend "
              "clauses, and data kept mapped between steps with target data",
              "copy the next inputs while the current step computes: cudaMemcpyAsync from pinned memory on a side stream (prefetch), and data "
              "kept on the GPU between steps"};
    case FixTopic::straggler_host:
      return {"the data loader (num_workers, pin_memory)", "the input pipeline (its workers, prefetching to the device)",
              "the host work between its steps (input, host computation)", "the host work between its steps (input, host computation)"};
    case FixTopic::job_partial:
      return {"torch.profiler writes one per rank", "one per rank", "one per rank", "one per rank"};
    case FixTopic::whatif_launch:
      return {"the host launches too late: CUDA graphs (torch.compile mode=\"reduce-overhead\"), fewer and larger kernels, data loading "
              "off the training thread, the launching thread on an idle core of the GPU's NUMA node (profile.launch_bound)",
              "the host launches too late: whole steps jitted, XLA's command buffers (CUDA graphs: --xla_gpu_enable_command_buffer), fewer and "
              "larger kernels, input loading off the training thread, the launching thread on an idle core of the GPU's NUMA node "
              "(profile.launch_bound)",
              "the host launches too late: fewer and larger target regions launched with nowait, data mapped once with target data, the "
              "launching thread on an idle core of the GPU's NUMA node (profile.launch_bound)",
              "the host launches too late: CUDA graphs (stream capture, cudaGraphLaunch), fewer and larger kernels, no host waits between "
              "launches, the launching thread on an idle core of the GPU's NUMA node (profile.launch_bound)"};
    case FixTopic::whatif_launch_pipeline:
      return {"the host launches too late: CUDA graphs, fewer and larger kernels, data loading off the training thread (profile.launch_bound)",
              "the host launches too late: whole steps jitted, XLA's command buffers (CUDA graphs), fewer and larger kernels, input loading off "
              "the training thread (profile.launch_bound)",
              "the host launches too late: fewer and larger target regions launched with nowait, data mapped once with target data "
              "(profile.launch_bound)",
              "the host launches too late: CUDA graphs, fewer and larger kernels, no host waits between launches (profile.launch_bound)"};
    default: break;
  }
  return comm_fix_words(t);
}

}  // namespace

std::string framework_fix(parsers::Framework fw, FixTopic t) {
  const FixWords w = fix_words(t);
  const char* said = fw == Framework::pytorch ? w.pytorch : fw == Framework::jax ? w.jax : fw == Framework::openmp ? w.openmp : w.cuda;
  if (t == FixTopic::launch_sync) return std::string(kSyncLead) + said;
  if (t == FixTopic::launch_overhead) return std::string(kOverheadLead) + said + kLaunchThreadFast;
  if (t == FixTopic::host_stall) return std::string(kStallLead) + said + kLaunchThreadFast;
  return said;
}

std::string host_call_stall_fix(parsers::Framework fw, const std::vector<std::string>& calls) {
  auto any = [&](std::initializer_list<std::string_view> prefixes) {
    return std::any_of(calls.begin(), calls.end(), [&](const std::string& n) {
      return std::any_of(prefixes.begin(), prefixes.end(), [&](std::string_view pre) { return n.starts_with(pre); });
    });
  };
  const bool pytorch = fw == Framework::pytorch;
  std::string s = "The host stalls are spent inside CUDA runtime/driver calls on the launching thread, not in the data loader or Python: ";
  std::vector<std::string> parts;
  if (any({"cudaMalloc", "cudaFree", "cuMemAlloc", "cuMemFree", "cudaHostAlloc", "cuMemHostAlloc", "cuMemCreate", "cuMemMap", "cuMemRelease"}))
    parts.emplace_back(pytorch ? "cudaMalloc/cudaFree are the caching allocator asking the driver for memory (the first steps, or memory handed "
                                 "back by torch.cuda.empty_cache() or an allocator at its limit): keep memory cached (no empty_cache() in the "
                                 "loop; PYTORCH_CUDA_ALLOC_CONF=expandable_segments:True grows segments instead of freeing and reallocating)"
                               : "cudaMalloc/cudaFree ask the driver for memory and synchronise the device: allocate once and reuse (a "
                                 "memory pool, cudaMallocAsync)");
  if (any({"cudaLaunch", "cuLaunch", "cuModule", "cuLibrary"}))
    parts.emplace_back("a launch call of milliseconds to seconds is the first launch of a kernel loading its module (CUDA_MODULE_LOADING=LAZY "
                       "loads each at its first use; JIT compiling PTX without a warm CUDA_CACHE_PATH)");
  if (any({"cudaStreamCreate", "cudaEventCreate", "cuStreamCreate", "cuEventCreate", "cudaSetDevice", "cuCtx", "cudaDeviceSet"}))
    parts.emplace_back("stream, event and context creation is set-up");
  if (std::any_of(calls.begin(), calls.end(), [](const std::string& n) { return parsers::is_sync_call(n); }))
    parts.emplace_back("a synchronising call waits on other work (another stream or GPU) before this GPU gets its next launch");
  for (std::size_t i = 0; i < parts.size(); ++i) s += (i ? "; " : "") + parts[i];
  s += parts.empty() ? "" : ". ";
  s += pytorch ? "Where it is warm-up (the first steps), leave it out of the capture (torch.profiler's schedule(wait=, warmup=, active=)) "
                 "and judge steady-state steps; where it recurs in steady state, the calls above are what to remove"
               : "Where it is warm-up (the first iterations), leave it out of the capture and judge steady-state iterations; where it recurs "
                 "in steady state, the calls above are what to remove";
  return s;
}

void rocm_fix_words(const Digest& d, std::vector<report::Finding>& findings) {
  std::string amd;
  for (const auto& g : d.gpus)
    if (g.label.find("AMD ") != std::string::npos || g.label.find("Radeon") != std::string::npos || g.label.find("Instinct") != std::string::npos)
      amd = g.label;
  if (amd.empty()) return;
  for (auto& f : findings) {
    if (f.fix.empty()) continue;
    f.fix += f.fix.ends_with(".") ? " " : ". ";
    f.fix += "On AMD GPUs (ROCm) read CUDA's names as their counterparts: HIP graphs (hipGraph) for CUDA graphs, rocprofv3 or Omnitrace for "
             "nsys, MIOpen for cuDNN, RCCL for NCCL, HIP_LAUNCH_BLOCKING for CUDA_LAUNCH_BLOCKING.";
    f.add(f.subject, "AMD GPU: " + amd + " (a ROCm trace: its HIP calls are recorded under CUDA's categories)");
  }
}

std::string framework_evidence(const parsers::FrameworkSeen& f) {
  if (f.framework == Framework::unknown)
    return fmt::format("framework: not recognised ({}): the fix names CUDA calls, no framework's API", f.why.empty() ? "not recorded" : f.why);
  return fmt::format("framework: {} ({}): the fix is in its words", parsers::framework_name(f.framework), f.why);
}

}  // namespace perfgap::analyzers::profile_model
