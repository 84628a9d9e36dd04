#include "profile_gen.hpp"

#include <sqlite3.h>

#include <cmath>
#include <algorithm>
#include <cstdio>
#include <map>
#include <tuple>

namespace perfgap::gen {

namespace {

constexpr std::int64_t kMs = 1'000'000, kUs = 1'000;
constexpr std::int64_t kT0 = 1'000 * kMs;  // every timeline starts 1 s in

std::int64_t ns(double ms) { return static_cast<std::int64_t>(std::llround(ms * 1e6)); }

Kernel kernel(std::int64_t start, std::int64_t end, std::string name, std::uint32_t stream) {
  Kernel k;
  k.start = start, k.end = end, k.name = std::move(name), k.stream = stream;
  return k;
}

Copy copy(std::int64_t start, std::int64_t end, std::uint32_t stream) {
  Copy c;
  c.start = start, c.end = end, c.stream = stream;
  return c;
}

}  // namespace

Scenario exposed_comm(int gpus, int iterations, double allgather_ms, double reducescatter_ms, bool ranges) {
  Scenario s;
  s.env = {{"NCCL_DEBUG", "WARN"}, {"NCCL_IB_HCA", "mlx5_0,mlx5_1"}, {"PATH", "/usr/bin"}, {"NCCL_MIN_NCHANNELS", "4"}};
  const std::int64_t T = ns(50 + allgather_ms + reducescatter_ms + 5);
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 1000 + static_cast<std::uint32_t>(g);
    for (int i = 0; i < iterations; ++i) {
      std::int64_t base = kT0 + i * T;
      for (int k = 0; k < 60; ++k) {
        Kernel kn = kernel(base + k * kMs, base + (k + 1) * kMs, "sm90_xmma_gemm_layer" + std::to_string(k), 7);
        // Launched ahead (queued), except the first: its call begins 0.05 ms before it runs.
        kn.api_start = k == 0 ? base - 50 * kUs : base - 40 * kUs + k * 10 * kUs;
        kn.api_end = kn.api_start + 5 * kUs;
        if (k == 0) kn.api_end = base - 40 * kUs;
        gpu.kernels.push_back(kn);
      }
      Kernel ag = kernel(base + 50 * kMs, base + 50 * kMs + ns(allgather_ms), "ncclDevKernel_AllGather_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20);
      ag.api_start = base + 40 * kMs, ag.api_end = ag.api_start + 6 * kUs;
      ag.collective = "_allgather_base", ag.nelems = 1 << 24;
      Kernel rs = kernel(base + 50 * kMs + ns(allgather_ms), base + 50 * kMs + ns(allgather_ms + reducescatter_ms), "ncclKernel_ReduceScatter_RING_SIMPLE_Sum_bf16(ncclDevComm*, unsigned long, ncclWork*)", 20);
      rs.api_start = base + 45 * kMs, rs.api_end = rs.api_start + 6 * kUs;
      rs.collective = "reduce_scatter_tensor", rs.nelems = 1 << 22;
      gpu.kernels.push_back(ag);
      gpu.kernels.push_back(rs);
      if (ranges && g == 0)
        for (int p = 0; p < gpus; ++p)
          s.ranges.push_back({base - 500 * kUs, base + T - 500 * kUs, "ProfilerStep#" + std::to_string(i + 1), 1000 + static_cast<std::uint32_t>(p)});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario launch_bound(int gpus, int iterations, int kernels_per_iter) {
  Scenario s;
  const std::int64_t P = 30 * kUs;
  const std::int64_t T = P * kernels_per_iter + 100 * kUs;
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 2000 + static_cast<std::uint32_t>(g);
    for (int i = 0; i < iterations; ++i) {
      std::int64_t base = kT0 + i * T;
      for (int k = 0; k < kernels_per_iter; ++k) {
        Kernel kn;
        kn.api_start = base + k * P;
        kn.api_end = kn.api_start + 8 * kUs;
        kn.start = kn.api_end + 4 * kUs;
        kn.end = kn.start + 5 * kUs;
        kn.name = "void at::native::vectorized_elementwise_kernel<4, op" + std::to_string(k % 7) + ">";
        kn.stream = 7;
        gpu.kernels.push_back(kn);
      }
      if (g == 0)
        for (int p = 0; p < gpus; ++p)
          s.ranges.push_back({base, base + T, "train_step " + std::to_string(i), 2000 + static_cast<std::uint32_t>(p)});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario sync_every_kernel(const std::string& kernel, const std::string& range, bool sync) {
  Scenario s;
  Gpu g;
  std::int64_t t = 1'000'000;
  for (int step = 0; step < 5; ++step) {
    const std::int64_t step_start = t;
    for (int k = 0; k < 20; ++k) {
      Kernel kn;
      kn.name = kernel;
      kn.api_start = t, kn.api_end = t + 10'000;
      kn.start = t + 15'000, kn.end = kn.start + 1'000'000;
      g.kernels.push_back(kn);
      if (sync) g.calls.push_back({.start = kn.api_end, .end = kn.end + 5'000, .name = "cudaStreamSynchronize"});
      t = kn.end + 5'000 + 150'000;
    }
    s.ranges.push_back({.start = step_start - 1'000, .end = t - 1'000, .name = range + std::to_string(step + 2), .pid = g.pid});
  }
  s.gpus.push_back(g);
  return s;
}

Scenario overlapped(int gpus, int iterations, double idle_ms) {
  Scenario s;
  s.env = {{"NCCL_IB_DISABLE", "1"}, {"NCCL_SOCKET_IFNAME", "eth0"}};
  const std::int64_t busy = 50 * kMs, T = busy + ns(idle_ms);
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 3000;  // one process drives every GPU
    for (int i = 0; i < iterations; ++i) {
      std::int64_t base = kT0 + i * T;
      for (int k = 0; k < 50; ++k) {
        Kernel kn = kernel(base + k * kMs, base + (k + 1) * kMs, "ampere_bf16_gemm_" + std::to_string(k), 7);
        kn.api_start = base - 15 * kMs + k * 20 * kUs;  // the host runs 15 ms ahead: never host-bound (idle < 15 ms)
        kn.api_end = kn.api_start + 5 * kUs;
        gpu.kernels.push_back(kn);
      }
      Kernel ar = kernel(base + 10 * kMs, base + 30 * kMs, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 20);
      ar.api_start = base - 14 * kMs, ar.api_end = ar.api_start + 6 * kUs;
      gpu.kernels.push_back(ar);
      Copy c = copy(base + 20 * kMs, base + 22 * kMs, 30);
      c.api_start = base - 14 * kMs, c.api_end = c.api_start + 4 * kUs;
      gpu.copies.push_back(c);
      if (g == 0) s.ranges.push_back({base - 20 * kMs, base + T - 20 * kMs, "step", 3000});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario copy_bound(int gpus, int iterations) {
  Scenario s;
  const std::int64_t T = ns(29.3);
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 4000 + static_cast<std::uint32_t>(g);
    for (int i = 0; i < iterations; ++i) {
      const std::int64_t base = kT0 + i * T;
      for (int k = 0; k < 60; ++k) {  // 0.9 ms of compute
        Kernel kn = kernel(base + k * 15 * kUs, base + (k + 1) * 15 * kUs, "sm90_gemm_" + std::to_string(k), 7);
        kn.api_start = base - 50 * kUs + k * 10 * kUs, kn.api_end = kn.api_start + 5 * kUs;
        gpu.kernels.push_back(kn);
      }
      std::int64_t at = base + 900 * kUs;
      for (auto [kind, host, ms_] : {std::tuple{"HtoD", "Pageable", 20.0}, std::tuple{"HtoD", "Pinned", 5.0}, std::tuple{"DtoD", "", 2.0},
                                     std::tuple{"DtoH", "Pageable", 1.0}, std::tuple{"PtoP", "", 0.4}}) {
        Copy c = copy(at, at + ns(ms_), 9);
        c.kind = kind, c.host = host, c.bytes = static_cast<std::int64_t>(ms_ * 1e6);  // 1 GB/s
        c.api_start = base + 10 * kUs, c.api_end = c.api_start + 5 * kUs;
        gpu.copies.push_back(c);
        at = c.end;
      }
      s.ranges.push_back({base - 100 * kUs, base + T - 100 * kUs, "step", gpu.pid});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario graphs(int gpus, int iterations) {
  Scenario s;
  const std::int64_t T = 10 * kMs;
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 5000 + static_cast<std::uint32_t>(g);
    for (int i = 0; i < iterations; ++i) {
      const std::int64_t base = kT0 + i * T;
      for (int k = 0; k < 100; ++k) {
        Kernel kn = kernel(base + k * 50 * kUs, base + k * 50 * kUs + 20 * kUs, "eager_" + std::to_string(k % 10), 7);
        kn.api_end = kn.start - 5 * kUs, kn.api_start = kn.api_end - 10 * kUs;
        gpu.kernels.push_back(kn);
      }
      for (int k = 0; k < 300; ++k) {
        Kernel kn = kernel(base + 5 * kMs + k * 10 * kUs, base + 5 * kMs + (k + 1) * 10 * kUs, "graph_node_" + std::to_string(k % 30), 7);
        kn.graph = i;
        kn.api_start = base + 4 * kMs, kn.api_end = kn.api_start + 16 * kUs;
        gpu.kernels.push_back(kn);
      }
      s.ranges.push_back({base - 100 * kUs, base + T - 100 * kUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario large(int gpus, std::size_t kernels_per_gpu, std::size_t per_iter, bool steps) {
  Scenario s;
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 4000 + static_cast<std::uint32_t>(g);
    gpu.kernels.reserve(kernels_per_gpu);
    std::int64_t t = kT0;
    std::int64_t step_start = -1;
    for (std::size_t k = 0; k < kernels_per_gpu; ++k) {
      std::size_t pos = k % per_iter;
      if (steps && pos == 0) {
        if (step_start >= 0) s.ranges.push_back({step_start, t - 30 * kUs, "ProfilerStep#" + std::to_string(k / per_iter), gpu.pid});
        step_start = t - 30 * kUs;
      }
      bool nccl = pos % 50 == 49;
      Kernel kn;
      kn.start = t;
      kn.end = t + (nccl ? 40 : 8 + static_cast<std::int64_t>(pos % 13)) * kUs;
      kn.name = nccl ? (pos % 100 == 99 ? "ncclDevKernel_ReduceScatter_Sum_bf16_RING_LL" : "ncclDevKernel_AllGather_RING_LL")
                     : "kernel_" + std::to_string(pos % 500);
      kn.stream = nccl ? 20 : 7;
      kn.api_start = t - 30 * kUs;
      kn.api_end = kn.api_start + 4 * kUs;
      t = nccl ? t + 10 * kUs : kn.end + 2 * kUs;
      gpu.kernels.push_back(std::move(kn));
    }
    if (steps && step_start >= 0)
      s.ranges.push_back({step_start, t, "ProfilerStep#" + std::to_string((kernels_per_gpu + per_iter - 1) / per_iter), gpu.pid});
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario job(const JobSpec& spec, JobAnswer* answer) {
  Scenario s;
  const int n = spec.ranks;
  const double late = spec.late_rank >= 0 ? spec.late_ms : 0;
  const std::int64_t gap = spec.launch_bound_rank >= 0 ? static_cast<std::int64_t>(spec.launch_gap_us * 1000) : 0;
  const std::int64_t T = ns(40 + late + spec.allreduce_ms + 3.2) + 39 * gap;
  const std::int64_t foreign_T = T + 3 * kMs;
  // The launch-bound rank waits in these iterations only; the others are 39 gaps shorter.
  auto bound = [&](int i) { return i >= spec.launch_bound_from && (spec.launch_bound_to < 0 || i < spec.launch_bound_to); };
  auto length = [&](int i) { return bound(i) ? T : T - 39 * gap; };
  std::int64_t start_of_iteration = kT0;
  if (answer) {
    answer->iteration_ms.clear();
    for (int i = 0; i < spec.iterations; ++i) answer->iteration_ms.push_back(static_cast<double>(length(i)) / static_cast<double>(kMs));
    answer->no_launch_wait_ms = 40 + late + spec.allreduce_ms + 2;
  }
  s.gpus.resize(static_cast<std::size_t>(n));
  for (int r = 0; r < n; ++r) {
    s.gpus[static_cast<std::size_t>(r)].device = r % 8;
    s.gpus[static_cast<std::size_t>(r)].pid = 5000 + static_cast<std::uint32_t>(r);
  }
  auto jitter = [](int r, int i) { return ((r * 7919 + i * 104729) % 101 - 50) * kUs; };
  auto end_jitter = [](int r, int i) { return ((r * 31 + i * 17) % 7 - 3) * kUs; };
  for (int i = 0; i < spec.iterations; ++i) {
    std::vector<std::int64_t> arrival(static_cast<std::size_t>(n));
    std::int64_t last = 0;
    for (int r = 0; r < n; ++r) {
      const bool foreign = r == spec.foreign_rank;
      const std::int64_t base = foreign ? kT0 + i * foreign_T : start_of_iteration;
      const bool is_late = r == spec.late_rank || std::find(spec.also_late.begin(), spec.also_late.end(), r) != spec.also_late.end();
      const std::int64_t klen = ns((40 + (is_late ? late : 0)) / 40);
      auto& gpu = s.gpus[static_cast<std::size_t>(r)];
      const std::int64_t start = base + jitter(r, i);
      const std::int64_t wait = r == spec.launch_bound_rank && bound(i) ? gap : 0;
      for (int k = 0; k < 40; ++k) {
        const std::int64_t ks = start + k * (klen + wait);
        Kernel kn = kernel(ks, ks + klen, "sm90_xmma_gemm_bf16_layer" + std::to_string(k), 7);
        kn.api_start = base - 400 * kUs + k * 5 * kUs;  // queued ahead of the GPU, inside the step's range
        if (wait && k > 0) kn.api_start = ks - wait + 2 * kUs;  // launched only after the previous kernel ended
        kn.api_end = kn.api_start + 5 * kUs;
        gpu.kernels.push_back(kn);
      }
      arrival[static_cast<std::size_t>(r)] = start + 40 * klen + 39 * wait;
      if (!foreign) last = std::max(last, arrival[static_cast<std::size_t>(r)]);
      s.ranges.push_back({base - 500 * kUs, base + (foreign ? foreign_T : length(i)) - 500 * kUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    start_of_iteration += length(i);
    for (int r = 0; r < n; ++r) {
      const bool foreign = r == spec.foreign_rank;
      const std::int64_t a = arrival[static_cast<std::size_t>(r)];
      const std::int64_t end = (foreign ? a : last) + ns(spec.allreduce_ms) + end_jitter(r, i);
      auto& gpu = s.gpus[static_cast<std::size_t>(r)];
      Kernel ar = kernel(a, end, "ncclKernel_AllReduce_RING_LL_Sum_float(ncclWorkElem)", 20);
      ar.api_start = a - 2 * kMs, ar.api_end = ar.api_start + 6 * kUs;
      ar.collective = "allreduce", ar.nelems = 1 << 24;
      gpu.kernels.push_back(ar);
      Kernel opt = kernel(end, end + 2 * kMs, "multi_tensor_apply_kernel_adam", 7);
      opt.api_start = a - kMs, opt.api_end = opt.api_start + 5 * kUs;
      gpu.kernels.push_back(opt);
    }
  }
  // Each rank's clock: every timestamp of its trace moved by its offset.
  for (int r = 0; r < n && static_cast<std::size_t>(r) < spec.clock_offset_ms.size(); ++r) {
    const std::int64_t d = ns(spec.clock_offset_ms[static_cast<std::size_t>(r)]);
    auto& gpu = s.gpus[static_cast<std::size_t>(r)];
    for (auto& k : gpu.kernels) k.start += d, k.end += d, k.api_start += d, k.api_end += d;
    for (auto& rg : s.ranges)
      if (rg.pid == gpu.pid) rg.start += d, rg.end += d;
  }
  return s;
}

namespace {

// `n` compute kernels of 1 ms on stream 7 from `from`, queued by the host 0.4 ms before the step.
void compute_kernels(Gpu& gpu, std::int64_t base, std::int64_t from, int n, const std::string& name) {
  for (int k = 0; k < n; ++k) {
    Kernel kn = kernel(from + k * kMs, from + (k + 1) * kMs, name + std::to_string(k), 7);
    kn.api_start = base - 400 * kUs + k * 5 * kUs;
    kn.api_end = kn.api_start + 5 * kUs;
    gpu.kernels.push_back(kn);
  }
}

// A kernel on `stream` from `s` to `e` ms after `base`, launched 0.45 ms before the step.
Kernel timed(std::int64_t base, double s, double e, std::string name, std::uint32_t stream) {
  Kernel kn = kernel(base + ns(s), base + ns(e), std::move(name), stream);
  kn.api_start = base - 450 * kUs;
  kn.api_end = kn.api_start + 6 * kUs;
  return kn;
}

}  // namespace

Scenario moe_deepep(int gpus, int iterations) {
  Scenario s;
  const std::int64_t T = 60 * kMs;
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 6000 + static_cast<std::uint32_t>(g);
    // The names as a trace shows them: deepseek-ai/DeepEP's template and argument lists, or the
    // dpsk:: build of DeepSeek's own profiles.
    const bool dpsk = g % 2 == 1;
    const std::string notify = dpsk ? "void dpsk::ep::internode::notify_dispatch<false, 4>(int const*, long*, int, int const*, int*, int const*, int*, int)"
                                    : "void deep_ep::internode::notify_dispatch<false, 8>(int const*, int*, int, int const*, int*, int const*, int*, int, bool const*, int)";
    const std::string dispatch = dpsk ? "void dpsk::ep::internode::dispatch<false, 8, true, 8>(int4*, float*, long*, float*, int4 const*)"
                                      : "void deep_ep::internode::dispatch<false, 8, false, 2, 8>(int4*, float*, long*, float*, deep_ep::internode::SourceMeta*, int4 const*)";
    const std::string combine = dpsk ? "void dpsk::ep::internode::combine<false, 8>(int4*, float*, bool const*, int4 const*, float const*)"
                                     : "void deep_ep::internode::combine<__nv_bfloat16, false, 8, 2, 8>(int4*, float*, bool const*, int4 const*, float const*)";
    const std::string layout = dpsk ? "void dpsk::ep::cuda::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)"
                                    : "void deep_ep::internode::get_dispatch_layout<256, 32, 8>(long const*, int*, int*, int*, bool*, int, int, int, int)";
    for (int i = 0; i < iterations; ++i) {
      const std::int64_t base = kT0 + i * T;
      compute_kernels(gpu, base, base, 40, "sm90_xmma_gemm_attn_mlp");
      gpu.kernels.push_back(timed(base, 28, 28.2, layout, 8));
      if (dpsk)
        gpu.kernels.push_back(timed(base, 28.2, 28.4, "void cdpsk::ep::CUB_200700_900_NS::DeviceScanKernel<int, int*>(int*, int*, int)", 8));
      gpu.kernels.push_back(timed(base, 30, 30.5, notify, 27));
      gpu.kernels.push_back(timed(base, 31, 46, dispatch, 27));
      for (int k = 0; k < 4; ++k) gpu.kernels.push_back(timed(base, 46 + k, 47 + k, "sm90_xmma_grouped_gemm_experts" + std::to_string(k), 7));
      gpu.kernels.push_back(timed(base, 50, 58, combine, 27));
      Kernel ar = timed(base, 58, 59, "ncclDevKernel_AllReduce_Sum_bf16_RING_LL(ncclDevKernelArgsStorage<4096ul>)", 20);
      ar.collective = "allreduce", ar.nelems = 1 << 20;
      gpu.kernels.push_back(ar);
      s.ranges.push_back({base - 500 * kUs, base + T - 500 * kUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario nvshmem(int gpus, int iterations) {
  Scenario s;
  const std::int64_t T = 30 * kMs;
  for (int g = 0; g < gpus; ++g) {
    Gpu gpu;
    gpu.device = g;
    gpu.pid = 6500 + static_cast<std::uint32_t>(g);
    for (int i = 0; i < iterations; ++i) {
      const std::int64_t base = kT0 + i * T;
      compute_kernels(gpu, base, base, 20, "sm90_xmma_gemm_layer");
      // A template kernel's demangled name has its return type, a plain function's has none.
      gpu.kernels.push_back(timed(base, 18, 24, "void alltoall_on_stream_kernel<float>(int, float*, float const*, unsigned long)", 30));
      gpu.kernels.push_back(timed(base, 20, 23, "nvshmemi_signal_wait_until_on_stream_kernel(unsigned long volatile*, int, unsigned long)", 31));
      s.ranges.push_back({base - 500 * kUs, base + T - 500 * kUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

Scenario pipeline(int stages, int iterations) {
  Scenario s;
  const std::int64_t T = 50 * kMs;
  for (int r = 0; r < stages; ++r) {
    Gpu gpu;
    gpu.device = r % 8;
    gpu.pid = 7000 + static_cast<std::uint32_t>(r);
    const double wait = 2 + r;
    for (int i = 0; i < iterations; ++i) {
      const std::int64_t base = kT0 + i * T;
      Kernel recv = timed(base, 0, wait, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20);
      recv.collective = "recv", recv.nelems = 1 << 22;
      gpu.kernels.push_back(recv);
      compute_kernels(gpu, base, base + ns(wait), 40, "sm90_xmma_gemm_stage");
      Kernel send = timed(base, 39 + wait, 42 + wait, "ncclDevKernel_SendRecv(ncclDevKernelArgsStorage<4096ul>)", 20);
      send.collective = "send", send.nelems = 1 << 22;
      gpu.kernels.push_back(send);
      s.ranges.push_back({base - 500 * kUs, base + T - 500 * kUs, "ProfilerStep#" + std::to_string(i + 1), gpu.pid});
    }
    s.gpus.push_back(std::move(gpu));
  }
  return s;
}

std::vector<double> node_clock_offsets(int ranks) {
  std::vector<double> out;
  for (int r = 0; r < ranks; ++r) out.push_back(static_cast<double>((r / 8 * 13 + 5) % 15 - 7) + 0.01 * (r % 8));
  return out;
}

Scenario rank_of(const Scenario& s, std::size_t g) {
  Scenario one = s;
  one.gpus = {s.gpus.at(g)};
  one.ranges.clear();
  for (const auto& rg : s.ranges)
    if (rg.pid == one.gpus[0].pid) one.ranges.push_back(rg);
  one.host = "node" + std::to_string(g / 8);
  return one;
}

namespace {

// Columns as the 3.7.2 export names and types them (a subset: what exports always fill).
const char* const kDdl372 = R"(
CREATE TABLE StringIds (id INTEGER NOT NULL PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE META_DATA_EXPORT (name TEXT, value TEXT);
CREATE TABLE TARGET_INFO_SESSION_START_TIME (utcEpochNs INTEGER, utcTime TEXT, localTime TEXT);
CREATE TABLE TARGET_INFO_SYSTEM_ENV (globalVid INTEGER, devStateName TEXT NOT NULL, name TEXT NOT NULL, nameEnum INTEGER NOT NULL, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_GPU (vmId INTEGER NOT NULL, id INTEGER NOT NULL, name TEXT, busLocation TEXT, isDiscrete INTEGER, smCount INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL,
  shortName INTEGER NOT NULL, mangledName INTEGER, launchType INTEGER, gridX INTEGER NOT NULL, blockX INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL, callchainId INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL,
  srcKind INTEGER, dstKind INTEGER);
CREATE TABLE ENUM_CUDA_MEMCPY_OPER (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE ENUM_CUDA_MEM_KIND (id INTEGER NOT NULL PRIMARY KEY, name TEXT, label TEXT);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  greenContextId INTEGER, streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER,
  text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
)";

// The 2021 export (shared/fixtures/profiles/nsys_2021_*.sqlite): no version, environment, ENUM_* or
// TARGET_INFO_GPU table; GPUs in TARGET_INFO_CUDA_GPU (deviceId, pid); no greenContextId or
// mangledName. Its MEMSET and NVTX_EVENTS columns are the 3.7.2 ones that 2021 already had
// (that file has neither table).
const char* const kDdl2021 = R"(
CREATE TABLE StringIds (id INTEGER PRIMARY KEY, value TEXT NOT NULL);
CREATE TABLE TARGET_INFO_CUDA_GPU (vmId INTEGER NOT NULL, name TEXT NOT NULL, pciBusId TEXT, numMultiprocessors INTEGER NOT NULL, deviceId INTEGER NOT NULL, pid INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_KERNEL (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, demangledName INTEGER NOT NULL, shortName INTEGER NOT NULL,
  launchType INTEGER, gridX INTEGER NOT NULL, blockX INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_RUNTIME (start INTEGER NOT NULL, end INTEGER NOT NULL, eventClass INTEGER NOT NULL, globalTid INTEGER,
  correlationId INTEGER, nameId INTEGER NOT NULL, returnValue INTEGER NOT NULL);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMCPY (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, bytes INTEGER NOT NULL, copyKind INTEGER NOT NULL, srcKind INTEGER,
  dstKind INTEGER);
CREATE TABLE CUPTI_ACTIVITY_KIND_MEMSET (start INTEGER NOT NULL, end INTEGER NOT NULL, deviceId INTEGER NOT NULL, contextId INTEGER NOT NULL,
  streamId INTEGER NOT NULL, correlationId INTEGER, globalPid INTEGER, value INTEGER NOT NULL, bytes INTEGER NOT NULL);
CREATE TABLE NVTX_EVENTS (start INTEGER NOT NULL, end INTEGER, eventType INTEGER NOT NULL, rangeId INTEGER, category INTEGER, color INTEGER,
  text TEXT, globalTid INTEGER, endGlobalTid INTEGER, textId INTEGER, domainId INTEGER);
)";

// "2025-style" (docs/ANALYZE.md "Nsight Systems export schemas"; no real export of 2024-25 was
// at hand): 3.7.2 plus CUPTI_ACTIVITY_KIND_MEMCPY.copyCount (schema 3.17.2's note),
// CUPTI_ACTIVITY_KIND_KERNEL.graphId and TARGET_INFO_CUDA_DEVICE (pid, cudaId -> gpuId), with
// TARGET_INFO_GPU ids that differ from the CUDA device ids (as under CUDA_VISIBLE_DEVICES).
const char* const kDdl2025Extra = R"(
ALTER TABLE CUPTI_ACTIVITY_KIND_MEMCPY ADD COLUMN copyCount INTEGER;
ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphId INTEGER;
ALTER TABLE CUPTI_ACTIVITY_KIND_KERNEL ADD COLUMN graphNodeId INTEGER;
CREATE TABLE TARGET_INFO_CUDA_DEVICE (gpuId INTEGER, cudaId INTEGER, pid INTEGER, uuid TEXT, numMultiprocessors INTEGER);
)";
constexpr int kGpuIdOffset2025 = 4;  // TARGET_INFO_GPU.id = CUDA device + 4 in the 2025-style variant

struct Sql {
  sqlite3* db = nullptr;
  std::string err;
  bool exec(const char* q) {
    char* e = nullptr;
    if (sqlite3_exec(db, q, nullptr, nullptr, &e) != SQLITE_OK) {
      err = e ? e : "sqlite3_exec failed";
      sqlite3_free(e);
      return false;
    }
    return true;
  }
};

struct Ins {
  sqlite3_stmt* st = nullptr;
  Ins(sqlite3* db, const char* q) { sqlite3_prepare_v2(db, q, -1, &st, nullptr); }
  ~Ins() { sqlite3_finalize(st); }
  Ins& i(int col, std::int64_t v) {
    sqlite3_bind_int64(st, col, v);
    return *this;
  }
  Ins& t(int col, const std::string& v) {
    sqlite3_bind_text(st, col, v.c_str(), static_cast<int>(v.size()), SQLITE_TRANSIENT);
    return *this;
  }
  bool go() {
    bool ok = sqlite3_step(st) == SQLITE_DONE;
    sqlite3_reset(st);
    return ok;
  }
};

}  // namespace

std::string write_nsys_sqlite(const Scenario& s, const std::string& path, NsysSchema schema) {
  std::remove(path.c_str());
  Sql q;
  if (sqlite3_open(path.c_str(), &q.db) != SQLITE_OK) return "cannot create " + path;
  struct Close {
    sqlite3* d;
    ~Close() { sqlite3_close(d); }
  } close{q.db};
  const bool old = schema == NsysSchema::v2021, late = schema == NsysSchema::v2025;
  if (!q.exec("PRAGMA journal_mode=OFF; PRAGMA synchronous=OFF; BEGIN") || !q.exec(old ? kDdl2021 : kDdl372)) return q.err;
  if (late && !q.exec(kDdl2025Extra)) return q.err;
  std::map<std::string, std::int64_t> ids;
  Ins str(q.db, "INSERT INTO StringIds VALUES (?, ?)");
  auto id = [&](const std::string& v) {
    auto [it, fresh] = ids.emplace(v, static_cast<std::int64_t>(ids.size() + 1));
    if (fresh) str.i(1, it->second).t(2, v).go();
    return it->second;
  };
  if (old) {
    Ins g(
        q.db,
        "INSERT INTO TARGET_INFO_CUDA_GPU (vmId, name, pciBusId, numMultiprocessors, deviceId, pid) VALUES (0, ?, '0000:00:00.0', 132, ?, ?)");
    std::map<std::pair<int, std::uint32_t>, int> seen;
    for (const auto& gpu : s.gpus)
      if (!seen[{gpu.device, gpu.pid}]++) g.t(1, s.gpu_name).i(2, gpu.device).i(3, gpu.pid).go();
  } else {
    Ins m(q.db, "INSERT INTO META_DATA_EXPORT VALUES (?, ?)");
    // 3.17.2: the newest version in the schema notes shipped with CUDA 12.9.1's Nsight Systems.
    const std::string version = late ? "3.17.2" : "3.7.2";
    m.t(1, "EXPORT_SCHEMA_VERSION").t(2, version).go();
    if (!late) m.t(1, "EXPORT_PRODUCT_VERSION").t(2, "2023.4.4.54").go();
    if (s.session_start_utc_ns >= 0) Ins(q.db, "INSERT INTO TARGET_INFO_SESSION_START_TIME VALUES (?, '', '')").i(1, s.session_start_utc_ns).go();
    Ins e(q.db, "INSERT INTO TARGET_INFO_SYSTEM_ENV VALUES (0, 'Online', ?, 0, ?)");
    std::string env;
    for (const auto& [k, v] : s.env) env += (env.empty() ? "" : ";") + k + "=" + v;
    if (!s.env.empty()) e.t(1, "DeviceEnvironment").t(2, env).go();
    e.t(1, "NvDriverVersion").t(2, s.driver).go();
    if (!s.host.empty()) e.t(1, "Hostname").t(2, s.host).go();
    std::string cpus = "{\"items\":[";
    for (int c = 0; c < 4 * s.sockets; ++c) cpus += (c ? "," : "") + std::string("{\"cpuid\":") + std::to_string(c) + ",\"socket\":" + std::to_string(c / 4) + "}";
    e.t(1, "CpuInfo").t(2, cpus + "]}").go();
    Ins g(q.db, "INSERT INTO TARGET_INFO_GPU VALUES (0, ?, ?, '0000:00:00.0', 1, 132)");
    Ins cd(q.db, "INSERT INTO TARGET_INFO_CUDA_DEVICE (gpuId, cudaId, pid, uuid, numMultiprocessors) VALUES (?, ?, ?, '', 132)");
    std::map<int, int> seen;
    for (const auto& gpu : s.gpus) {
      const int gpu_id = gpu.device + (late ? kGpuIdOffset2025 : 0);
      if (!seen[gpu.device]++) g.i(1, gpu_id).t(2, s.gpu_name).go();
      if (late) cd.i(1, gpu_id).i(2, gpu.device).i(3, gpu.pid).go();
    }
    // A GPU that no process used, under the CUDA id the profiled GPUs take in the late variant:
    // a reader that takes deviceId for TARGET_INFO_GPU.id names them after it.
    if (late) g.i(1, 0).t(2, "NVIDIA unused GPU 0").go();
  }
  // Launch calls under the names each era's export gives them (the _vNNNN suffix: the CUDA
  // version that introduced the entry point).
  const std::int64_t launch = id(late ? "cudaLaunchKernelExC_v11060" : "cudaLaunchKernel_v7000"), memcpy_api = id("cudaMemcpyAsync_v3020");
  Ins k(q.db, "INSERT INTO CUPTI_ACTIVITY_KIND_KERNEL (start, end, deviceId, contextId, streamId, correlationId, globalPid, demangledName, shortName, gridX, blockX) "
              "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, 1, 128)");
  Ins r(q.db, "INSERT INTO CUPTI_ACTIVITY_KIND_RUNTIME (start, end, eventClass, globalTid, correlationId, nameId, returnValue) VALUES (?, ?, 1, ?, ?, ?, 0)");
  // Copy directions and memory kinds: the numbers and labels of the 3.7.2 export's ENUM_CUDA_MEMCPY_OPER
  // and ENUM_CUDA_MEM_KIND (nsys's memory kinds, not CUPTI's: 0 pageable, 1 pinned, 2 device).
  const std::map<std::string, std::pair<int, const char*>> copy_kinds = {
      {"HtoD", {1, "Host-to-Device"}}, {"DtoH", {2, "Device-to-Host"}}, {"DtoD", {8, "Device-to-Device"}}, {"PtoP", {10, "Peer-to-Peer"}}};
  const std::map<std::string, std::pair<int, const char*>> mem_kinds = {
      {"Pageable", {0, "Pageable"}}, {"Pinned", {1, "Pinned"}}, {"Device", {2, "Device"}}};
  if (!old) {
    Ins eo(q.db, "INSERT INTO ENUM_CUDA_MEMCPY_OPER VALUES (?, ?, ?)");
    for (const auto& [w, v] : copy_kinds) eo.i(1, v.first).t(2, "CUDA_MEMCPY_KIND_" + w).t(3, v.second).go();
    Ins em(q.db, "INSERT INTO ENUM_CUDA_MEM_KIND VALUES (?, ?, ?)");
    for (const auto& [w, v] : mem_kinds) em.i(1, v.first).t(2, "CUDA_MEMOPR_MEMORY_KIND_" + w).t(3, v.second).go();
  }
  Ins c(
      q.db,
      late
          ? "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind, copyCount) "
            "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?, 1)"
          : "INSERT INTO CUPTI_ACTIVITY_KIND_MEMCPY (start, end, deviceId, contextId, streamId, correlationId, globalPid, bytes, copyKind, srcKind, dstKind) "
            "VALUES (?, ?, ?, 1, ?, ?, ?, ?, ?, ?, ?)");
  const std::int64_t graph_api = id("cudaGraphLaunch_v10000");
  Ins ms(q.db, "INSERT INTO CUPTI_ACTIVITY_KIND_MEMSET (start, end, deviceId, contextId, streamId, correlationId, globalPid, value, bytes) VALUES (?, ?, ?, 1, ?, ?, ?, 0, 4096)");
  std::map<std::uint32_t, std::int64_t> corr;  // per process
  for (const auto& gpu : s.gpus) {
    const std::int64_t gpid = static_cast<std::int64_t>(gpu.pid) << 24, gtid = gpid | gpu.pid;
    std::map<std::string, std::pair<std::int64_t, std::int64_t>> names;
    std::map<int, std::int64_t> graph_corr;  // graph number -> the correlation of its one launch
    for (const auto& kn : gpu.kernels) {
      auto& n = names[kn.name];
      if (!n.first) {
        auto p = kn.name.find('(');
        std::string base = kn.name.substr(0, p);
        if (base.rfind("void ", 0) == 0) base = base.substr(5);
        if (auto lt = base.find('<'); lt != std::string::npos) base = base.substr(0, lt);
        // nsys's shortName is the function's own name, its namespaces dropped ("dispatch" for
        // deep_ep::internode::dispatch, as real exports show "vectorized_elementwise_kernel").
        if (auto colons = base.rfind("::"); colons != std::string::npos) base = base.substr(colons + 2);
        n = {id(kn.name), id(base)};
      }
      const bool graph_first = kn.graph >= 0 && !graph_corr.count(kn.graph);
      std::int64_t cid = kn.graph >= 0 && !graph_first ? graph_corr[kn.graph] : ++corr[gpu.pid];
      if (graph_first) graph_corr[kn.graph] = cid;
      k.i(1, kn.start).i(2, kn.end).i(3, gpu.device).i(4, kn.stream).i(5, cid).i(6, gpid).i(7, n.first).i(8, n.second);
      if (!k.go()) return std::string("insert kernel: ") + sqlite3_errmsg(q.db);
      if (kn.api_start >= 0 && (kn.graph < 0 || graph_first))
        r.i(1, kn.api_start).i(2, kn.api_end).i(3, gtid).i(4, cid).i(5, kn.graph >= 0 ? graph_api : launch).go();
    }
    for (const auto& hc : gpu.calls)
      if (!r.i(1, hc.start).i(2, hc.end).i(3, gtid).i(4, ++corr[gpu.pid]).i(5, id(hc.name + "_v3020")).go())
        return std::string("insert runtime call: ") + sqlite3_errmsg(q.db);
    for (const auto& cp : gpu.copies) {
      std::int64_t cid = ++corr[gpu.pid];
      if (cp.memset) ms.i(1, cp.start).i(2, cp.end).i(3, gpu.device).i(4, cp.stream).i(5, cid).i(6, gpid).go();
      else {
        const int kind = copy_kinds.count(cp.kind) ? copy_kinds.at(cp.kind).first : 0;
        const int host = mem_kinds.at(cp.host == "Pageable" ? "Pageable" : "Pinned").first, dev = mem_kinds.at("Device").first;
        const bool h2d = cp.kind == "HtoD", d2h = cp.kind == "DtoH";
        c.i(1, cp.start)
            .i(2, cp.end)
            .i(3, gpu.device)
            .i(4, cp.stream)
            .i(5, cid)
            .i(6, gpid)
            .i(7, cp.bytes)
            .i(8, kind)
            .i(9, h2d ? host : dev)
            .i(10, d2h ? host : dev)
            .go();
      }
      if (cp.api_start >= 0) r.i(1, cp.api_start).i(2, cp.api_end).i(3, gtid).i(4, cid).i(5, memcpy_api).go();
    }
  }
  Ins nv(q.db, "INSERT INTO NVTX_EVENTS (start, end, eventType, text, globalTid, textId) VALUES (?, ?, 59, ?, ?, ?)");
  bool alt = false;
  for (const auto& rg : s.ranges) {
    const std::int64_t gtid = (static_cast<std::int64_t>(rg.pid) << 24) | rg.pid;
    nv.i(1, rg.start).i(2, rg.end).i(4, gtid);
    // Text inline and through StringIds, alternately (exports do both).
    if ((alt = !alt)) nv.t(3, rg.name), sqlite3_bind_null(nv.st, 5);
    else sqlite3_bind_null(nv.st, 3), nv.i(5, id(rg.name));
    nv.go();
  }
  if (!q.exec("COMMIT")) return q.err;
  return {};
}

namespace {

void us(std::string& out, std::int64_t ns) {
  char buf[48];
  std::snprintf(buf, sizeof buf, "%lld.%03lld", static_cast<long long>(ns / 1000), static_cast<long long>(ns % 1000));
  out += buf;
}

void esc(std::string& out, const std::string& s) {
  out += '"';
  for (char ch : s) {
    if (ch == '"' || ch == '\\') out += '\\';
    out += ch;
  }
  out += '"';
}

}  // namespace

std::string kineto_json(const Scenario& s, std::size_t g, int rank) {
  const auto& gpu = s.gpus.at(g);
  std::string o = "{\"schemaVersion\": 1, \"deviceProperties\": [{\"id\": " + std::to_string(gpu.device) + ", \"name\": ";
  esc(o, s.gpu_name);
  o += "}],";
  if (rank >= 0) o += "\"distributedInfo\": {\"backend\": \"nccl\", \"rank\": " + std::to_string(rank) + ", \"world_size\": " + std::to_string(s.world_size > 0 ? s.world_size : s.gpus.size()) + "},";
  o += "\n\"traceEvents\": [\n";
  bool first = true;
  auto ev = [&](const char* cat, const std::string& name, std::int64_t pid, std::int64_t tid, std::int64_t start, std::int64_t end, const std::string& args) {
    o += first ? "  " : ",\n  ";
    first = false;
    o += "{\"ph\": \"X\", \"cat\": \"";
    o += cat;
    o += "\", \"name\": ";
    esc(o, name);
    o += ", \"pid\": " + std::to_string(pid) + ", \"tid\": " + std::to_string(tid) + ", \"ts\": ";
    us(o, start);
    o += ", \"dur\": ";
    us(o, end - start);
    if (!args.empty()) o += ", \"args\": {" + args + "}";
    o += "}";
  };
  std::int64_t corr = 0;
  std::map<int, std::int64_t> graph_corr;  // graph number -> the correlation of its one launch
  for (const auto& kn : gpu.kernels) {
    const bool graph_first = kn.graph >= 0 && !graph_corr.count(kn.graph);
    if (kn.graph < 0 || graph_first) ++corr;
    if (graph_first) graph_corr[kn.graph] = corr;
    const std::int64_t my_corr = corr;
    corr = kn.graph >= 0 ? graph_corr[kn.graph] : corr;
    std::string args = "\"device\": " + std::to_string(gpu.device) + ", \"stream\": " + std::to_string(kn.stream) + ", \"correlation\": " + std::to_string(corr * gpu.corr_stride);
    if (!kn.collective.empty())
      args += ", \"Collective name\": \"" + kn.collective + "\", \"In msg nelems\": " + std::to_string(kn.nelems) + ", \"Out msg nelems\": " +
              std::to_string(kn.nelems) + ", \"Group size\": " + std::to_string(kn.group > 0 ? static_cast<std::size_t>(kn.group) : s.gpus.size()) + ", \"dtype\": \"Float\"";
    if (kn.peer >= 0) args += std::string(kn.collective == "send" ? ", \"Dst Rank\": " : ", \"Src Rank\": ") + std::to_string(kn.peer);
    ev("kernel", kn.name, gpu.device, kn.stream, kn.start, kn.end, args);
    if (kn.api_start >= 0 && (kn.graph < 0 || graph_first))
      ev("cuda_runtime", kn.graph >= 0 ? "cudaGraphLaunch" : "cudaLaunchKernel", gpu.pid, gpu.pid, kn.api_start, kn.api_end,
         "\"correlation\": " + std::to_string(corr * gpu.corr_stride));
    corr = my_corr;
  }
  for (const auto& cp : gpu.copies) {
    ++corr;
    // Kineto's names for copies: CUPTI's direction and the two ends' memory.
    const std::string host = cp.host == "Pageable" ? "Pageable" : "Pinned";
    const std::string ends = cp.kind == "HtoD" ? host + " -> Device" : cp.kind == "DtoH" ? "Device -> " + host : "Device -> Device";
    ev(cp.memset ? "gpu_memset" : "gpu_memcpy", cp.memset ? "Memset (Device)" : "Memcpy " + cp.kind + " (" + ends + ")", gpu.device,
       cp.stream, cp.start, cp.end,
       "\"device\": " + std::to_string(gpu.device) + ", \"stream\": " + std::to_string(cp.stream) +
           ", \"correlation\": " + std::to_string(corr * gpu.corr_stride) + ", \"bytes\": " + std::to_string(cp.bytes));
    if (cp.api_start >= 0)
      ev("cuda_runtime", cp.memset ? "cudaMemsetAsync" : "cudaMemcpyAsync", gpu.pid, gpu.pid, cp.api_start, cp.api_end, "\"correlation\": " + std::to_string(corr * gpu.corr_stride));
  }
  for (const auto& hc : gpu.calls) ev("cuda_runtime", hc.name, gpu.pid, gpu.pid, hc.start, hc.end, "\"correlation\": " + std::to_string(++corr * gpu.corr_stride));
  for (const auto& rg : s.ranges)
    if (rg.pid == gpu.pid) ev("user_annotation", rg.name, gpu.pid, gpu.pid, rg.start, rg.end, "");
  o += "\n],\n\"traceName\": \"generated\"}\n";
  return o;
}

}  // namespace perfgap::gen
