// Data-parallel jobs whose gradient AllReduces are exposed or overlapped (profile_gen.hpp
// gen::ddp_overlap): the generator's own schedule, simulated bucket by bucket on every rank; the
// trace is what the simulation ran, and the answers are the simulation's step times with the
// compute waiting for each AllReduce and with it running on under them.
#include <algorithm>
#include <cmath>
#include <string>
#include <vector>

#include "profile_gen.hpp"

namespace perfgap::gen {

namespace {

constexpr std::int64_t kDdpT0 = 1'000'000'000;  // every timeline starts 1 s in
constexpr std::int64_t kDdpUs = 1'000;

std::int64_t ddp_ns(double ms) { return static_cast<std::int64_t>(std::llround(ms * 1e6)); }

// One iteration of every rank, from `t0` (all ranks start together after the optimizer): the
// issue points and kernel spans of each bucket's AllReduce, and when the iteration ends.
struct DdpIteration {
  std::vector<std::vector<std::int64_t>> issue, nccl_start;  // [rank][bucket]
  std::vector<std::int64_t> end;                             // [bucket]: the AllReduce's end on every rank
  std::vector<std::vector<std::int64_t>> bucket_start;       // [rank][bucket]: its backward compute's start
  std::int64_t next = 0;                                     // the next iteration's start (after the optimizer)
};

// Rank r's backward compute of bucket b: the bucket's time, 10% longer or shorter by rank and
// bucket, so that a different rank is last at each AllReduce.
std::int64_t bucket_ns(const DdpOverlapSpec& s, int r, int b) { return ddp_ns(s.bucket_ms * (1 + 0.1 * ((r + b) % 3 - 1))); }

DdpIteration ddp_simulate(const DdpOverlapSpec& s, std::int64_t t0, bool overlapped) {
  const auto R = static_cast<std::size_t>(s.ranks), B = static_cast<std::size_t>(s.buckets);
  DdpIteration it;
  it.issue.assign(R, std::vector<std::int64_t>(B));
  it.nccl_start.assign(R, std::vector<std::int64_t>(B));
  it.bucket_start.assign(R, std::vector<std::int64_t>(B));
  it.end.assign(B, 0);
  std::vector<std::int64_t> compute_at(R, t0 + ddp_ns(s.forward_ms));  // each rank's compute stream after its forward
  std::int64_t prev_end = t0;  // the NCCL stream: the previous AllReduce's end
  for (std::size_t b = 0; b < B; ++b) {
    std::int64_t last = 0;
    for (std::size_t r = 0; r < R; ++r) {
      // Exposed: the compute stream waits for the previous bucket's AllReduce before going on.
      const std::int64_t from = overlapped || b == 0 ? compute_at[r] : std::max(compute_at[r], prev_end);
      it.bucket_start[r][b] = from;
      it.issue[r][b] = from + bucket_ns(s, static_cast<int>(r), static_cast<int>(b));
      compute_at[r] = it.issue[r][b];
      last = std::max(last, it.issue[r][b]);
    }
    // The AllReduce starts once its last rank has issued it and the one before has ended; each
    // rank's kernel runs from its own issue (or the previous one's end) to the common end.
    const std::int64_t start = std::max(last, prev_end);
    it.end[b] = start + ddp_ns(s.allreduce_ms);
    for (std::size_t r = 0; r < R; ++r) it.nccl_start[r][b] = std::max(it.issue[r][b], prev_end);
    prev_end = it.end[b];
  }
  // The optimizer needs every gradient: after the last AllReduce (and every rank's compute).
  std::int64_t opt = prev_end;
  for (auto c : compute_at) opt = std::max(opt, c);
  it.next = opt + ddp_ns(s.optimizer_ms);
  return it;
}

}  // namespace

Scenario ddp_overlap(const DdpOverlapSpec& spec, DdpOverlapAnswer* answer) {
  Scenario s;
  const auto R = static_cast<std::size_t>(spec.ranks), B = static_cast<std::size_t>(spec.buckets);
  s.gpus.resize(R);
  for (std::size_t r = 0; r < R; ++r) {
    s.gpus[r].device = static_cast<int>(r % 8);
    s.gpus[r].pid = 7000 + static_cast<std::uint32_t>(r);
  }
  constexpr int kForwardKernels = 10, kBucketKernels = 3;
  std::int64_t t0 = kDdpT0;
  for (int i = 0; i < spec.iterations; ++i) {
    const DdpIteration it = ddp_simulate(spec, t0, spec.overlapped);
    for (std::size_t r = 0; r < R; ++r) {
      auto& gpu = s.gpus[r];
      std::int64_t api = t0 - 400 * kDdpUs;  // the host queues the step's kernels ahead of the GPU
      auto add = [&](std::int64_t a, std::int64_t e, std::string name, std::uint32_t stream) {
        Kernel k;
        k.start = a, k.end = e, k.name = std::move(name), k.stream = stream;
        k.api_start = api, k.api_end = api + 5 * kDdpUs;
        api += 6 * kDdpUs;
        gpu.kernels.push_back(std::move(k));
        return &gpu.kernels.back();
      };
      const std::int64_t f = ddp_ns(spec.forward_ms) / kForwardKernels;
      for (int k = 0; k < kForwardKernels; ++k) add(t0 + k * f, t0 + (k + 1) * f, "sm90_xmma_gemm_bf16_fwd" + std::to_string(k), 7);
      for (std::size_t b = 0; b < B; ++b) {
        const std::int64_t from = it.bucket_start[r][b], len = it.issue[r][b] - from;
        for (int k = 0; k < kBucketKernels; ++k)
          add(from + len * k / kBucketKernels, from + len * (k + 1) / kBucketKernels, "sm90_xmma_gemm_bf16_bwd" + std::to_string(b * kBucketKernels + static_cast<std::size_t>(k)), 7);
        Kernel* ar = add(it.nccl_start[r][b], it.end[b], "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 20);
        ar->collective = "allreduce", ar->nelems = 1 << 22;
        if (spec.concurrent_allgather && b == 0) {
          Kernel* ag = add(it.end[b] - 100 * kDdpUs, it.end[b] + 100 * kDdpUs, "ncclKernel_AllGather_RING_LL_Sum_int8(ncclWorkElem)", 21);
          ag->collective = "allgather", ag->nelems = 1 << 16;
        }
      }
      std::int64_t opt = it.end.back();
      for (std::size_t q = 0; q < R; ++q) opt = std::max(opt, it.issue[q].back());
      add(opt, it.next, "multi_tensor_apply_kernel_adam", 7);
      if (spec.steps) s.ranges.push_back({t0 - 500 * kDdpUs, it.next - 500 * kDdpUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    t0 = it.next;
  }
  if (answer) {
    // Every iteration alike: one simulated from any start is the step.
    answer->step_ms = static_cast<double>(ddp_simulate(spec, 0, spec.overlapped).next) / 1e6;
    answer->overlapped_step_ms = static_cast<double>(ddp_simulate(spec, 0, true).next) / 1e6;
  }
  return s;
}

}  // namespace perfgap::gen
