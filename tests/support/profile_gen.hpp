// Synthetic GPU profiles with known overlap, idle and launch patterns, written as an Nsight
// Systems SQLite export (the tables and columns that exports of a schema hold) and as
// Kineto Chrome traces, so that every profile.* finding's statuses can be tested and the
// readers benchmarked. Times are ns; Kineto output is in µs with three decimals.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perfgap::gen {

struct Kernel {
  std::int64_t start = 0, end = 0;
  std::string name;
  std::uint32_t stream = 7;
  std::int64_t api_start = -1, api_end = -1;  // its launch call; -1: none
  std::string collective;                     // Kineto "Collective name" arg; empty: none
  std::int64_t nelems = 0;                    // Kineto "In msg nelems" (float)
  int peer = -1;  // a send's "Dst Rank" or a recv's "Src Rank" (PyTorch's metadata on the kernel); -1: none written
  int graph =
      -1;  // >= 0: run by a CUDA graph; the kernels of one graph number (per GPU) share its one cudaGraphLaunch (the first's api_start/end)
  int group = 0;  // Kineto "Group size" of a collective: its communicator's ranks; 0: the scenario's ranks
};
struct Copy {
  std::int64_t start = 0, end = 0;
  std::uint32_t stream = 7;
  std::int64_t api_start = -1, api_end = -1;
  bool memset = false;
  std::string kind = "HtoD";    // CUPTI's words: HtoD, DtoH, DtoD, PtoP (nsys copyKind 1, 2, 8, 10)
  std::string host = "Pinned";  // the host side's memory: Pageable or Pinned (nsys srcKind/dstKind); device-only copies ignore it
  std::int64_t bytes = 1 << 20;
};
struct HostCall {  // a runtime call that launches nothing (cudaStreamSynchronize, a synchronous cudaMemcpy's API side)
  std::int64_t start = 0, end = 0;
  std::string name;  // Kineto's name; nsys's gets the _v3020 suffix
};
struct Gpu {
  int device = 0;
  std::uint32_t pid = 1000;
  std::vector<Kernel> kernels;
  std::vector<Copy> copies;
  std::vector<HostCall> calls;
  // Kineto: each correlation id written times this (> 1: the calls between them left out, as a
  // filtered or sampled trace holds them).
  std::int64_t corr_stride = 1;
};
struct Range {  // NVTX push/pop (nsys) or user_annotation (Kineto) of process `pid`
  std::int64_t start = 0, end = 0;
  std::string name;
  std::uint32_t pid = 1000;
};
struct Scenario {
  std::vector<Gpu> gpus;
  std::vector<Range> ranges;
  std::vector<std::pair<std::string, std::string>> env;  // the job's environment (nsys TARGET_INFO_SYSTEM_ENV)
  std::string gpu_name = "NVIDIA H100 80GB HBM3";
  std::string driver = "550.54.15";
  int sockets = 2;
  std::string host;  // nsys TARGET_INFO_SYSTEM_ENV Hostname (one export is one node's); empty: none written
  // nsys TARGET_INFO_SESSION_START_TIME.utcEpochNs (3.7.2 and later; the times count from it):
  // one generated job's ranks started together (2023-11-14 22:13:20 UTC); < 0: none written.
  std::int64_t session_start_utc_ns = 1'700'000'000'000'000'000;
  // Kineto distributedInfo's world_size: the job's ranks, of which these GPUs are traced (a
  // trace of rank 0 of a 16-rank job); 0: the GPUs'.
  std::size_t world_size = 0;
};

// Seed scenario 1 (FSDP-like): per iteration, 60 x 1 ms compute kernels, an AllGather of
// `allgather_ms` (>= 10) starting at 50 ms (10 ms under compute, the rest exposed), then a
// ReduceScatter of `reducescatter_ms` (all exposed), then 5 ms idle: the iteration is
// 55 + AG + RS ms. The next iteration's first launch call begins 0.05 ms before it runs
// (after the GPU went idle: host-bound idle). A smaller AG/RS is the run with a better NCCL
// setting. Iterations are ProfilerStep#N ranges when `ranges`, else only the timeline's period.
Scenario exposed_comm(int gpus, int iterations, double allgather_ms, double reducescatter_ms, bool ranges = true);
// Seed scenario 2: small kernels (5 µs) launched every 30 µs of host time (8 µs launch call,
// 4 µs launch latency): the GPU waits on the host most of the time.
Scenario launch_bound(int gpus, int iterations, int kernels_per_iter = 200);
// One GPU, 5 steps of 20 kernels of 1 ms named `kernel`, each launched by a 10 us call and
// starting 5 us after it; with `sync`, the host then waits in cudaStreamSynchronize until 5 us
// after the kernel ends (an OpenMP offload export's shape); either way 150 us of host work follow
// before the next launch. Each step is an NVTX range (Kineto annotation) named `range` and its
// number, 2 to 6 (`ProfilerStep#` gives ProfilerStep#2 ... #6).
Scenario sync_every_kernel(const std::string& kernel, const std::string& range, bool sync = true);
// Healthy: compute covers the iteration's 50 ms, a 20 ms AllReduce under it, a 2 ms memcpy, the
// host 15 ms ahead; idle only at the iteration's end (`idle_ms` < 15, never host-bound).
// One process drives every GPU; iterations are NVTX ranges named 'step'.
Scenario overlapped(int gpus, int iterations, double idle_ms = 1);
// A GPU busy with copies (the shape of a real 2-GPU H100 Nsight export, issue 42): per
// iteration of 29.3 ms, a 0.9 ms compute kernel, then a 20 ms pageable H2D copy, a 5 ms pinned
// H2D copy, a 2 ms D2D copy, a 1 ms pageable D2H copy and a 0.4 ms P2P copy one after the
// other (28.4 ms of copies, none under a kernel); NVTX ranges 'step'. Every GPU the same.
Scenario copy_bound(int gpus, int iterations);
// Kernels run by CUDA graphs: per iteration (10 ms, ProfilerStep#N), 100 kernels of 20 us
// launched one by one (call 10 us, each starting 5 us after its call ends), then one graph of
// 300 kernels of 10 us all joined to one cudaGraphLaunch of 16 us that began 1 ms before.
Scenario graphs(int gpus, int iterations);
// A large run for benchmarks: `gpus` GPUs with `kernels_per_gpu` kernels each (compute and
// NCCL), every kernel with its launch call; with `steps`, a ProfilerStep#N range per iteration
// of `kernels_per_iter` kernels (from its first launch call to the next iteration's).
Scenario large(int gpus, std::size_t kernels_per_gpu, std::size_t kernels_per_iter = 2000, bool steps = false);

// Communication that is not NCCL's (data/kb/comm_kernels.yaml). An expert-parallel MoE step with
// DeepEP's kernels, one GPU and process per rank, ProfilerStep#N ranges, iterations of 60 ms:
// 40 compute kernels of 1 ms from 0 ms; DeepEP's notify_dispatch 30-30.5 ms (under compute),
// dispatch 31-46 ms (9 ms under compute, 6 exposed), 4 expert kernels of 1 ms from 46 ms, combine
// 50-58 ms (all exposed), an NCCL AllReduce 58-59 ms ending together on every rank (exposed),
// idle to 60 ms; and DeepEP's get_dispatch_layout, a local count that is compute, 28-28.2 ms.
// Per iteration DeepEP is 23.5 ms of communication, 14 ms exposed; all communication 24.5 ms,
// 15 exposed. Even GPUs carry the names of deepseek-ai/DeepEP's first release
// (`void deep_ep::internode::dispatch<...>(...)`), odd ones those of DeepSeek's public profiles
// (`dpsk::ep::internode::*`), with a CUB kernel of theirs in `cdpsk::ep::` 28.2-28.4 ms (compute).
Scenario moe_deepep(int gpus, int iterations);
// NVSHMEM on-stream kernels: iterations of 30 ms (ProfilerStep#N), 20 compute kernels of 1 ms
// from 0 ms, nvshmemx_alltoall_on_stream's kernel 18-24 ms and
// nvshmemi_signal_wait_until_on_stream_kernel 20-23 ms on other streams: NVSHMEM 6 ms of
// communication per iteration, 4 ms exposed.
Scenario nvshmem(int gpus, int iterations);
// A pipeline of `stages` ranks (one GPU and process each) whose only NCCL kernels are send/recv:
// iterations of 50 ms (ProfilerStep#N); stage r waits (2 + r) ms in a receive from 0 ms, computes
// 40 kernels of 1 ms from (2 + r) ms, and sends from (41 + r) to (44 + r) ms (1 ms under its last
// compute kernel). SendRecv per stage: (5 + r) ms of communication, (4 + r) exposed.
Scenario pipeline(int stages, int iterations);

// A pipeline-parallel job of send/recv (with `dp_allreduce`, also each stage's gradient AllReduce
// across its data-parallel copies), and the answers of its own schedule model: S
// stages (one GPU and process each; `replicas` independent copies of the pipeline, rank
// replica x S + stage), M microbatches an iteration, a forward of `fwd_ms` and a backward of
// `bwd_ms` per microbatch and stage (the slow stage's `slow_factor` times longer), an optimizer
// kernel of `opt_ms` at each iteration's end; every send joined to its receive as NCCL does:
// both kernels start when posted, and end together `transfer_ms` after the later one was posted.
// GPipe: every forward, then every backward (last microbatch first). 1F1B (PipeDream-flush,
// Megatron's non-interleaved): min(S - s - 1, M) warm-up forwards, then one forward and one
// backward in turn, then the remaining backwards; a stage sending to and receiving from one
// neighbour at one point of the schedule sends first on even stages and receives first on odd
// ones (blocking send/recv do not deadlock). The iteration of a stage is its ProfilerStep#N, from
// its first send/recv or kernel to the next iteration's. The simulation is the generator's own:
// each op matched to its peer's by microbatch, never by order.
struct PipelineSpec {
  bool one_f_one_b = true;  // else GPipe
  int stages = 4, microbatches = 8, iterations = 6, replicas = 1;
  double fwd_ms = 2, bwd_ms = 4, opt_ms = 1, transfer_ms = 0.5;
  int slow_stage = -1;  // -1: none
  double slow_factor = 1.5;
  int slow_rank = -1;   // this one rank (of a stage of several replicas) computes `slow_factor` longer; -1: none
  std::vector<double> clock_offset_ms;  // per rank: its clock runs this far ahead; missing: 0
  bool peers = true;    // write "Dst Rank"/"Src Rank" (Kineto since 2024); false: the kernels name no peer (older traces)
  // Data parallel over the replicas (PP + DP, Megatron's layout): after its last backward each
  // stage all-reduces its gradients across the stage's `replicas` copies (one AllReduce per
  // iteration and stage, "Group size" the replicas), then runs its optimizer. The AllReduce
  // starts when the stage's last copy has posted it and ends on every copy `allreduce_ms` later.
  bool dp_allreduce = false;
  double allreduce_ms = 3;
  // These ranks compute `slow_factor` longer too (a node's: rank_of puts ranks 8k..8k+7 on node k).
  std::vector<int> slow_ranks;
};
struct PipelineAnswer {
  double step_ms = 0;           // the iterations' mean ProfilerStep window, mean over the ranks
  double balanced_step_ms = 0;  // the same with the slow stage (or ranks) computing as the others do
};
Scenario pipeline_job(const PipelineSpec& spec, PipelineAnswer* answer = nullptr);

// A data-parallel job whose gradients are all-reduced in buckets (tests/support/ddp_gen.cpp):
// one GPU and process per rank, per iteration a forward of `forward_ms` (10 kernels), then per
// bucket its backward compute (`bucket_ms`, 10% longer or shorter by rank and bucket: 3 kernels)
// and its AllReduce (`allreduce_ms` after its last rank issued it and the one before ended, on its
// own stream), then a `optimizer_ms` optimizer kernel once every AllReduce has ended;
// ProfilerStep#N ranges, one clock. Exposed (`overlapped` false): each bucket's compute waits for
// the previous bucket's AllReduce; overlapped: the compute runs on under them. The answers are
// the generator's schedule: the step, and the step with the compute running on (the overlapped
// job's step).
struct DdpOverlapSpec {
  int ranks = 4, iterations = 10, buckets = 4;
  bool overlapped = false;
  bool steps = true;  // ProfilerStep#N ranges; false: none (iterations only from the timeline's period)
  // Per iteration a 0.2 ms AllGather of another communicator on its own stream, starting 0.1 ms
  // before the first bucket's AllReduce ends (two communicators' collectives at once; the
  // schedule and its answers are unchanged).
  bool concurrent_allgather = false;
  double forward_ms = 20, bucket_ms = 6, allreduce_ms = 5, optimizer_ms = 2;
};
struct DdpOverlapAnswer {
  double step_ms = 0;             // the job's step as generated
  double overlapped_step_ms = 0;  // the step with the compute running on under the AllReduces
};
Scenario ddp_overlap(const DdpOverlapSpec& spec, DdpOverlapAnswer* answer = nullptr);

// A data-parallel job for the cross-rank analysis: one GPU and process per rank (rank r is GPU
// r % 8 of node r / 8), per iteration 40 compute kernels of 1 ms, then an AllReduce that starts
// on each rank when its compute ends and ends on every rank together `allreduce_ms` after the
// last rank arrived, then a 2 ms optimizer kernel; ProfilerStep#N ranges. Arrivals jitter by
// up to +-50 µs and ends by +-3 µs (deterministic).
struct JobSpec {
  int ranks = 8;
  int iterations = 10;
  int late_rank = -1;      // this rank computes `late_ms` longer each iteration; -1: none
  double late_ms = 30;
  std::vector<int> also_late;  // these ranks too compute `late_ms` longer (late together with late_rank)
  double allreduce_ms = 20;
  std::vector<double> clock_offset_ms;  // per rank: its clock runs this far ahead (every timestamp of its trace); missing: 0
  int foreign_rank = -1;   // this rank's trace is of another job: iterations 3 ms longer, its collectives ending on their own
  // This rank's GPU waits `launch_gap_us` before each of its compute kernels but the first: each
  // launch call begins after the previous kernel ended (host-bound idle, 39 gaps an iteration).
  int launch_bound_rank = -1;
  double launch_gap_us = 500;
  // The iterations (from 0) in which it waits: [launch_bound_from, launch_bound_to); to < 0: to the
  // last. Its other iterations are as every rank's, so the iterations differ in length.
  int launch_bound_from = 0, launch_bound_to = -1;
};
// The generator's own answers for a job: each iteration's length as generated (its ProfilerStep
// window; the ranks share it), and an iteration's with no GPU waiting for a launch: every rank's
// 40 ms of compute (the late ones' longer), the AllReduce's transfer after the last arrival, and
// the optimizer kernel, the next iteration's compute starting at once. It is also the GPU's busy
// time of an iteration of a rank that is never late (the AllReduce's kernel running from its
// arrival, and the others arriving within the jitter).
struct JobAnswer {
  std::vector<double> iteration_ms;
  double no_launch_wait_ms = 0;
};
Scenario job(const JobSpec& spec, JobAnswer* answer = nullptr);
// Clock offsets of up to +-7 ms per node (the 8 ranks of a node share their node's, within 10 µs):
// unsynchronised hosts whose traces must be aligned before arrivals can be compared.
std::vector<double> node_clock_offsets(int ranks);
// The GPU `g` of a scenario alone, with its ranges and, for nsys, its node's host name
// ("node<g / 8>"): a rank's own export.
Scenario rank_of(const Scenario& s, std::size_t g);

// The export schema written: 2021's (TARGET_INFO_CUDA_GPU, no version table), 3.7.2 (nsys
// 2023.4) and a "2025-style" one built from what is documented of 2024-25's (docs/ANALYZE.md
// "Nsight Systems export schemas"; no real export of those years was at hand).
enum class NsysSchema { v2021, v372, v2025 };
// Writes `s` as an nsys SQLite export to `path` (replaced); error text or empty.
std::string write_nsys_sqlite(const Scenario& s, const std::string& path, NsysSchema schema = NsysSchema::v372);
// The Kineto trace of one GPU's process (its GPU, launch calls and ranges).
std::string kineto_json(const Scenario& s, std::size_t gpu, int rank = -1);

}  // namespace perfgap::gen
