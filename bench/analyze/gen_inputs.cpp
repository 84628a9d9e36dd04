// perfgap-bench-gen-analyze: writes large, realistic tool outputs for timing `perfgap analyze`.
//
//   perfgap-bench-gen-analyze KIND OUTFILE [--mb N] [--seed S]
//
// KIND: perf-script (`perf script` text of a `perf record -e cpu-clock -g` recording: sample
// headers and call chains, kernel and user frames, some SMMU command-queue leaves),
// nccl-tests (repeated all_reduce_perf sweeps 8 B .. 16 GiB with their headers and trailers,
// NCCL INFO lines between runs), nccl-log (NCCL_DEBUG=INFO lines of many ranks interleaved:
// init, NET/IB, channels, rings/trees, connections), steps (a Megatron-LM training log:
// one iteration line per step with its timers and memory lines, now and then a skipped
// iteration and a validation block). Standard library only; deterministic.
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>
#include <vector>

namespace {

struct Rng {
  std::uint64_t s;
  std::uint64_t next() {
    s ^= s << 13;
    s ^= s >> 7;
    s ^= s << 17;
    return s;
  }
  std::uint64_t below(std::uint64_t n) { return next() % n; }
};

const char* const kKernel[] = {
    "arm_smmu_cmdq_issue_cmdlist", "__arm_smmu_tlb_inv_range", "arm_smmu_tlb_inv_range_domain",
    "__iommu_unmap", "iommu_unmap_fast", "iommu_dma_unmap_page", "dma_unmap_page_attrs",
    "native_queued_spin_lock_slowpath", "_raw_spin_lock_irqsave", "clear_page_erms",
    "copy_user_enhanced_fast_string", "do_syscall_64", "entry_SYSCALL_64_after_hwframe",
    "__x64_sys_ioctl", "nvidia_ioctl", "os_acquire_spinlock", "smp_call_function_many_cond",
    "flush_tlb_mm_range", "handle_mm_fault", "__handle_mm_fault", "exc_page_fault",
    "asm_exc_page_fault", "schedule", "__schedule", "finish_task_switch.isra.0",
    "pick_next_task_fair", "update_load_avg", "ktime_get", "read_tsc", "tick_sched_timer",
    "__hrtimer_run_queues", "hrtimer_interrupt", "__sysvec_apic_timer_interrupt",
    "asm_sysvec_apic_timer_interrupt", "mod_zone_state.llvm.8525150236079521930",
    "bio_release_pages.part.42", "arm_smmu_atc_inv_domain.constprop.49", "memset_orig",
    "futex_wait", "futex_wake", "__x64_sys_futex", "do_futex", "ep_poll", "do_epoll_wait"};
const char* const kUser[] = {
    "memcpy", "__memmove_avx_unaligned_erms", "pthread_mutex_lock", "pthread_cond_wait",
    "_PyEval_EvalFrameDefault", "PyObject_Call", "_PyFunction_Vectorcall", "PyObject_GetAttr",
    "cuLaunchKernel", "cudaStreamSynchronize", "ncclGroupEnd", "ncclProxyProgress",
    "at::native::add_kernel", "c10::impl::OperatorEntry::call", "torch::autograd::Engine::thread_main",
    "std::_Function_handler<void (), std::thread>::_M_invoke", "start_thread", "clone3",
    "__libc_start_call_main", "__libc_start_main_impl", "_start", "malloc", "free",
    "ioctl", "__GI___ioctl", "syscall", "sched_yield", "epoll_wait", "recvmsg", "sendmsg"};
const char* const kUserDso[] = {
    "/usr/lib/x86_64-linux-gnu/libc.so.6", "/usr/bin/python3.11",
    "/usr/lib/x86_64-linux-gnu/libcuda.so.550.90.07", "/opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cuda.so",
    "/opt/conda/lib/python3.11/site-packages/nvidia/nccl/lib/libnccl.so.2", "/opt/conda/lib/python3.11/site-packages/torch/lib/libtorch_cpu.so"};
const char* const kComm[] = {"python3", "pt_autograd_0", "pt_main_thread", "nccl_proxy", "kworker/u512:3", "swapper", "cuda-EvtHandlr", "dcgm-exporter"};

template <std::size_t N>
std::size_t count(const char* const (&)[N]) { return N; }

struct Out {
  std::FILE* f;
  std::string buf;
  std::uint64_t written = 0;
  void flush() {
    std::fwrite(buf.data(), 1, buf.size(), f);
    written += buf.size();
    buf.clear();
  }
  void put(const char* s, int n) {
    buf.append(s, static_cast<std::size_t>(n));
    if (buf.size() > (1u << 20)) flush();
  }
  std::uint64_t size() const { return written + buf.size(); }
};

#define EMIT(o, ...)                                         \
  do {                                                       \
    char line_[1024];                                        \
    int n_ = std::snprintf(line_, sizeof line_, __VA_ARGS__); \
    (o).put(line_, n_ < 0 ? 0 : (n_ >= 1024 ? 1023 : n_));   \
  } while (0)

void perf_script(Out& o, std::uint64_t limit, Rng& r) {
  double t = 81234.000000;
  while (o.size() < limit) {
    unsigned comm = static_cast<unsigned>(r.below(count(kComm)));
    unsigned pid = 4242 + comm * 17, tid = pid + static_cast<unsigned>(r.below(8));
    t += 0.000250 + static_cast<double>(r.below(100)) * 1e-6;
    EMIT(o, "%16s %6u/%-6u [%03u] %.6f:     250000 cpu-clock: \n", kComm[comm], pid, tid,
         static_cast<unsigned>(r.below(192)), t);
    // Kernel part of the chain (about 60% of samples enter the kernel), then user frames.
    int kdepth = r.below(10) < 6 ? 2 + static_cast<int>(r.below(12)) : 0;
    int udepth = 3 + static_cast<int>(r.below(22));
    for (int i = 0; i < kdepth; ++i) {
      // Leaf: now and then an SMMU command-queue frame.
      const char* sym = i == 0 && r.below(20) == 0 ? kKernel[0] : kKernel[r.below(count(kKernel))];
      EMIT(o, "\tffffffff%08llx %s+0x%llx ([kernel.kallsyms])\n",
           static_cast<unsigned long long>(0x81000000 + r.below(0x1000000)), sym,
           static_cast<unsigned long long>(r.below(0x400)));
    }
    for (int i = 0; i < udepth; ++i) {
      if (r.below(25) == 0) {
        EMIT(o, "\t%16llx [unknown] ([unknown])\n", static_cast<unsigned long long>(0x7f0000000000ull + r.below(1ull << 36)));
        continue;
      }
      EMIT(o, "\t%16llx %s+0x%llx (%s)\n", static_cast<unsigned long long>(0x7f0000000000ull + r.below(1ull << 36)),
           kUser[r.below(count(kUser))], static_cast<unsigned long long>(r.below(0x2000)), kUserDso[r.below(count(kUserDso))]);
    }
    o.put("\n", 1);
  }
}

void nccl_tests(Out& o, std::uint64_t limit, Rng& r) {
  int run = 0;
  while (o.size() < limit) {
    ++run;
    EMIT(o, "# nThread 1 nGpus 1 minBytes 8 maxBytes 17179869184 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n#\n# Using devices\n");
    for (int rank = 0; rank < 8; ++rank)
      EMIT(o, "#  Rank %2d Group  0 Pid %7d on gpu%03d device  %d [0000:%02x:00] NVIDIA H100 80GB HBM3\n", rank, 100000 + run * 8 + rank, run % 512, rank, 0x19 + rank * 0x14);
    EMIT(o, "gpu%03d:%d:%d [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n", run % 512, 100000 + run * 8, 100000 + run * 8);
    EMIT(o, "#\n#                                                              out-of-place                       in-place          \n");
    EMIT(o, "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n");
    EMIT(o, "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n");
    double sum = 0;
    int n = 0;
    for (std::uint64_t size = 8; size <= (16ull << 30); size *= 2) {
      double bw_peak = 480.0 * (0.95 + static_cast<double>(r.below(100)) / 1000.0);
      double lat = 13.0 + static_cast<double>(r.below(300)) / 100.0;
      double time = lat + static_cast<double>(size) / (bw_peak / 1.75 * 1e3);
      double alg = static_cast<double>(size) / time / 1e3, bus = alg * 1.75;
      double time2 = time * (0.98 + static_cast<double>(r.below(40)) / 1000.0);
      double alg2 = static_cast<double>(size) / time2 / 1e3, bus2 = alg2 * 1.75;
      char t1[32], t2[32];
      std::snprintf(t1, sizeof t1, time < 1e4 ? "%.2f" : "%.0f", time);
      std::snprintf(t2, sizeof t2, time2 < 1e4 ? "%.2f" : "%.0f", time2);
      EMIT(o, "%12llu  %12llu     float     sum      -1  %7s  %6.2f  %6.2f      0  %7s  %6.2f  %6.2f      0\n",
           static_cast<unsigned long long>(size), static_cast<unsigned long long>(size / 4), t1, alg, bus, t2, alg2, bus2);
      sum += bus;
      ++n;
    }
    EMIT(o, "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : %.3f \n#\n\n", sum / n);
  }
}

void nccl_log(Out& o, std::uint64_t limit, Rng& r) {
  const int hosts = 128, gpus = 8;
  int round = 0;
  while (o.size() < limit) {
    ++round;
    int h = static_cast<int>(r.below(hosts)), g = static_cast<int>(r.below(gpus));
    int pid = 20000 + h * 8 + g, tid = pid + 57 + static_cast<int>(r.below(4));
    int rank = h * gpus + g, nranks = hosts * gpus;
    char pre[96];
    std::snprintf(pre, sizeof pre, "gpu%03d:%d:%d [%d] NCCL INFO ", h, pid, tid, g);
    switch (r.below(16)) {
      case 0: EMIT(o, "%sNCCL version 2.21.5+cuda12.4\n", pre); break;
      case 1: EMIT(o, "%sNET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB [2]mlx5_2:1/IB [3]mlx5_3:1/IB ; OOB ib0:10.%d.%d.%d<0>\n", pre, h / 64, h % 64, g + 1); break;
      case 2: EMIT(o, "%sUsing network IB\n", pre); break;
      case 3: EMIT(o, "%sNET/IB : GPU Direct RDMA Enabled for HCA %d 'mlx5_%d'\n", pre, g / 2, g / 2); break;
      case 4: EMIT(o, "%sNCCL_IB_HCA set by environment to mlx5_0,mlx5_1,mlx5_2,mlx5_3\n", pre); break;
      case 5: EMIT(o, "%s32 coll channels, 32 collnet channels, 16 nvls channels, 32 p2p channels, 32 p2p channels per peer\n", pre); break;
      case 6: EMIT(o, "%sTrees [0] %d/-1/-1->%d->%d [1] %d/-1/-1->%d->%d\n", pre, (rank + 1) % nranks, rank, (rank + nranks - 1) % nranks, (rank + 2) % nranks, rank, (rank + nranks - 2) % nranks); break;
      case 7: EMIT(o, "%sRing %02d : %d -> %d -> %d\n", pre, static_cast<int>(r.below(32)), (rank + nranks - 1) % nranks, rank, (rank + 1) % nranks); break;
      case 8: case 9: case 10:
        EMIT(o, "%sChannel %02d/0 : %d[%d] -> %d[%d] via P2P/CUMEM/read\n", pre, static_cast<int>(r.below(32)), rank, g, h * gpus + (g + 1) % gpus, (g + 1) % gpus); break;
      case 11: case 12:
        EMIT(o, "%sChannel %02d/0 : %d[%d] -> %d[%d] [send] via NET/IB/%d/GDRDMA\n", pre, static_cast<int>(r.below(32)), rank, g, (rank + gpus) % nranks, g, g / 2); break;
      case 13:
        EMIT(o, "%sChannel %02d/0 : %d[%d] -> %d[%d] [receive] via NET/IB/%d/GDRDMA\n", pre, static_cast<int>(r.below(32)), (rank + nranks - gpus) % nranks, g, rank, g, g / 2); break;
      case 14: EMIT(o, "%sConnected all rings\n", pre); break;
      default: EMIT(o, "%scomm 0x%llx rank %d nRanks %d nNodes %d localRanks %d localRank %d MNNVL 0 - Init COMPLETE\n", pre,
                    static_cast<unsigned long long>(0x55d0a0000000ull + r.below(1ull << 28)), rank, nranks, hosts, gpus, g); break;
    }
  }
}

void steps(Out& o, std::uint64_t limit, Rng& r) {
  long it = 0;
  long samples = 0;
  while (o.size() < limit) {
    ++it;
    samples += 1024;
    double ms = 1230.0 + static_cast<double>(r.below(4000)) / 100.0;
    int skipped = r.below(2000) == 0 ? 1 : 0;
    EMIT(o, " [2025-03-%02ld %02ld:%02ld:%02ld] iteration %8ld/ 5000000 | consumed samples: %12ld | elapsed time per iteration (ms): %.1f | "
            "throughput per GPU (TFLOP/s/GPU): %.1f | learning rate: %.6E | global batch size:  1024 | lm loss: %.6E | loss scale: 1.0 | "
            "grad norm: %.3f | number of skipped iterations: %3d | number of nan iterations:   0 |\n",
         1 + (it / 86400) % 28, (it / 3600) % 24, (it / 60) % 60, it % 60, it, samples, ms, 455.0 * 1250.0 / ms, 1.5e-4 * (1.0 - static_cast<double>(it) / 5e6),
         2.0 + static_cast<double>(r.below(100000)) / 1e5, static_cast<double>(r.below(1000)) / 1000.0, skipped);
    if (it % 10 == 0)
      EMIT(o, "[Rank 0] (after %ld iterations) memory (MB) | allocated: %.1f | max allocated: %.1f | reserved: 61234.0 | max reserved: 61234.0\n", it,
           40000.0 + static_cast<double>(r.below(1000)), 52000.0 + static_cast<double>(r.below(1000)));
    if (it % 10 == 0)
      EMIT(o, "(min, max) time across ranks (ms):\n    forward-backward ...............................: (%.2f, %.2f)\n    optimizer ......................................: (%.2f, %.2f)\n",
           ms * 0.9, ms * 0.92, ms * 0.05, ms * 0.06);
    if (it % 1000 == 0)
      EMIT(o, "-----------------------------------------------------------------------------------------------\n validation loss at iteration %ld | lm loss value: %.6E | lm loss PPL: %.6E | \n"
              "-----------------------------------------------------------------------------------------------\n",
           it, 2.1, 8.2);
  }
}

}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s perf-script|nccl-tests|nccl-log|steps OUTFILE [--mb N] [--seed S]\n", argv[0]);
    return 2;
  }
  std::string kind = argv[1];
  double mb = kind == "perf-script" ? 200 : 100;
  std::uint64_t seed = 0x9e3779b97f4a7c15ull;
  for (int i = 3; i + 1 < argc; i += 2) {
    if (!std::strcmp(argv[i], "--mb")) mb = std::atof(argv[i + 1]);
    else if (!std::strcmp(argv[i], "--seed")) seed = std::strtoull(argv[i + 1], nullptr, 0) | 1;
    else {
      std::fprintf(stderr, "unknown option %s\n", argv[i]);
      return 2;
    }
  }
  std::FILE* f = std::fopen(argv[2], "wb");
  if (!f) {
    std::perror(argv[2]);
    return 2;
  }
  Out o{f, {}, 0};
  Rng r{seed};
  auto limit = static_cast<std::uint64_t>(mb * 1e6);
  if (kind == "perf-script") perf_script(o, limit, r);
  else if (kind == "nccl-tests") nccl_tests(o, limit, r);
  else if (kind == "nccl-log") nccl_log(o, limit, r);
  else if (kind == "steps") steps(o, limit, r);
  else {
    std::fprintf(stderr, "unknown KIND %s\n", kind.c_str());
    std::fclose(f);
    return 2;
  }
  o.flush();
  std::fclose(f);
  std::printf("%s: %s, %llu bytes\n", argv[2], kind.c_str(), static_cast<unsigned long long>(o.written));
  return 0;
}
