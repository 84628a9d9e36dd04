// probe --memory: a STREAM-like triad for every (CPU node, memory node) pair. Threads are
// pinned to the CPU node's allowed CPUs, the arrays bound to the memory node with mbind
// (raw syscalls: no libnuma) and first-touched by the threads that use them. Only this
// process's own memory is bound and it is unmapped on every path.
#include <fmt/format.h>
#include <sched.h>
#include <time.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>

#include "parsers/cpuset.hpp"
#include "probe/probe.hpp"
#include "probe/threads.hpp"
#include "sys/text.hpp"

namespace perfgap::probe {
namespace {

// CPU time this thread has run: with the wall time it tells whether the thread had its CPU.
double thread_cpu_seconds() {
  timespec ts{};
  if (::clock_gettime(CLOCK_THREAD_CPUTIME_ID, &ts) != 0) return 0;
  return static_cast<double>(ts.tv_sec) + static_cast<double>(ts.tv_nsec) * 1e-9;
}

constexpr int kMpolBind = 2;            // MPOL_BIND
constexpr unsigned kMpolFNode = 1;      // MPOL_F_NODE
constexpr unsigned kMpolFAddr = 2;      // MPOL_F_ADDR
constexpr std::size_t kMinArrayBytes = 64u << 20;
constexpr std::size_t kChunkElems = 1u << 16;  // a thread checks the stop flag after each chunk
constexpr std::chrono::milliseconds kMemoryProbeBudget{30000};
constexpr std::chrono::milliseconds kMinPairCap{200};

// An anonymous mapping, unmapped when it goes out of scope.
class ProbeMapping {
 public:
  explicit ProbeMapping(std::size_t bytes) : bytes_(bytes) {
    void* p = ::mmap(nullptr, bytes, PROT_READ | PROT_WRITE, MAP_PRIVATE | MAP_ANONYMOUS | MAP_NORESERVE, -1, 0);
    if (p != MAP_FAILED) addr_ = p;
  }
  ProbeMapping(const ProbeMapping&) = delete;
  ProbeMapping& operator=(const ProbeMapping&) = delete;
  ~ProbeMapping() {
    if (addr_) ::munmap(addr_, bytes_);
  }
  double* data() const { return static_cast<double*>(addr_); }
  bool ok() const { return addr_ != nullptr; }

 private:
  void* addr_ = nullptr;
  std::size_t bytes_;
};

// Binds [addr, addr+bytes) to `node`; the errno text when the kernel refuses.
std::string bind_to_node(void* addr, std::size_t bytes, int node) {
  std::vector<unsigned long> mask(static_cast<std::size_t>(node) / (8 * sizeof(unsigned long)) + 1, 0);
  mask[static_cast<std::size_t>(node) / (8 * sizeof(unsigned long))] |= 1ul << (static_cast<unsigned>(node) % (8 * sizeof(unsigned long)));
  if (::syscall(SYS_mbind, addr, bytes, kMpolBind, mask.data(), mask.size() * 8 * sizeof(unsigned long) + 1, 0) != 0)
    return std::string("mbind: ") + std::strerror(errno);
  return {};
}

// The node of the page at `addr` (after it was touched); -1 when the kernel does not say.
int node_of_page(void* addr) {
  int node = -1;
  if (::syscall(SYS_get_mempolicy, &node, nullptr, 0, addr, kMpolFNode | kMpolFAddr) != 0) return -1;
  return node;
}

std::optional<std::size_t> llc_bytes(const sys::Sysroot& root) {
  std::optional<std::size_t> best;
  for (int i = 0; i < 8; ++i) {
    auto v = root.read_value(fmt::format("/sys/devices/system/cpu/cpu0/cache/index{}/size", i));
    if (!v) continue;
    std::string_view s = *v;
    std::size_t mult = 1;
    if (!s.empty() && (s.back() == 'K' || s.back() == 'M')) mult = s.back() == 'K' ? 1024 : 1024 * 1024, s.remove_suffix(1);
    if (auto n = sys::to_int<std::size_t>(s)) best = std::max(best.value_or(0), *n * mult);
  }
  return best;
}

// "Node 0 MemFree:  12345 kB" in /sys/devices/system/node/nodeN/meminfo.
std::optional<std::size_t> node_free_bytes(const sys::Sysroot& root, int node) {
  auto text = root.read(fmt::format("/sys/devices/system/node/node{}/meminfo", node), 64 << 10);
  if (!text) return std::nullopt;
  auto at = text->find("MemFree:");
  if (at == std::string::npos) return std::nullopt;
  std::string_view rest = std::string_view(*text).substr(at + 8);
  rest = rest.substr(0, rest.find('\n'));
  if (auto kb = rest.find("kB"); kb != std::string_view::npos) rest = rest.substr(0, kb);
  auto n = sys::to_int<std::size_t>(rest);
  return n ? std::optional<std::size_t>(*n * 1024) : std::nullopt;
}

MemoryPair run_pair(int cpu_node, int mem_node, const std::vector<int>& cpus, std::size_t bytes, std::chrono::milliseconds cap) {
  MemoryPair p;
  p.cpu_node = cpu_node;
  p.mem_node = mem_node;
  p.bytes_per_array = bytes;
  p.threads = static_cast<int>(cpus.size());
  const std::size_t n = bytes / sizeof(double);
  ProbeMapping a(bytes), b(bytes), c(bytes);
  if (!a.ok() || !b.ok() || !c.ok()) {
    p.error = std::string("mmap: ") + std::strerror(errno);
    return p;
  }
  for (const auto* m : {&a, &b, &c})
    if (auto e = bind_to_node(m->data(), bytes, mem_node); !e.empty()) {
      p.error = e;
      return p;
    }
  const auto t = cpus.size();
  std::atomic<bool> stop{false};
  std::atomic<std::size_t> ready{0};
  std::atomic<bool> go{false};
  std::vector<std::uint64_t> chunks(t, 0);
  std::vector<double> cpu_secs(t, 0.0);
  std::vector<std::string> errors(t);
  const auto hard_end = std::chrono::steady_clock::now() + cap + cap + std::chrono::seconds(2);
  std::chrono::steady_clock::time_point t0, t1;
  {
    JoinedThreads threads(stop);
    for (std::size_t i = 0; i < t; ++i) {
      threads.add([&, i] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(cpus[i], &one);
        if (::sched_setaffinity(0, sizeof one, &one) != 0) errors[i] = std::string("sched_setaffinity: ") + std::strerror(errno);
        const std::size_t lo = n * i / t, hi = n * (i + 1) / t;
        double *pa = a.data(), *pb = b.data(), *pc = c.data();
        // First touch by the thread that will use the slice: the pages land on mem_node (the
        // binding) next to this thread's caches.
        for (std::size_t k = lo; k < hi; ++k) pa[k] = 0.0, pb[k] = 1.0, pc[k] = 2.0;
        ++ready;
        while (!go.load() && !stop.load() && std::chrono::steady_clock::now() < hard_end) std::this_thread::yield();
        const double s = 3.0;
        std::uint64_t done = 0;
        const double cpu0 = thread_cpu_seconds();
        for (std::size_t k = lo;;) {
          const std::size_t end = std::min(hi, k + kChunkElems);
          for (std::size_t j = k; j < end; ++j) pa[j] = pb[j] + s * pc[j];
          ++done;
          k = end >= hi ? lo : end;
          if (stop.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= hard_end) break;
        }
        chunks[i] = done;
        cpu_secs[i] = thread_cpu_seconds() - cpu0;
      });
    }
    while (ready.load() < threads.size() && std::chrono::steady_clock::now() < hard_end) std::this_thread::sleep_for(std::chrono::milliseconds(1));
    t0 = std::chrono::steady_clock::now();
    go = true;
    std::this_thread::sleep_until(std::min(hard_end, t0 + cap));
    stop = true;
    threads.join_all();
    t1 = std::chrono::steady_clock::now();
  }
  for (const auto& e : errors)
    if (!e.empty()) {
      p.error = e;
      return p;
    }
  if (int landed = node_of_page(a.data()); landed >= 0 && landed != mem_node) {
    p.error = fmt::format("the pages landed on node {}, not {} (the binding was not honoured)", landed, mem_node);
    return p;
  }
  // Each chunk moves 24 bytes per element (read b and c, write a); the last chunk of a slice
  // may be shorter, so bytes are counted per chunk by its real length on average.
  double bytes_moved = 0, cpu_total = 0;
  std::optional<double> min_passes;
  for (std::size_t i = 0; i < t; ++i) {
    const std::size_t slice = n * (i + 1) / t - n * i / t;
    const std::size_t per_pass = (slice + kChunkElems - 1) / kChunkElems;
    const double avg_chunk = per_pass ? static_cast<double>(slice) / static_cast<double>(per_pass) : 0;
    bytes_moved += static_cast<double>(chunks[i]) * avg_chunk * 24.0;
    if (per_pass) {
      const double passes = static_cast<double>(chunks[i]) / static_cast<double>(per_pass);
      min_passes = min_passes ? std::min(*min_passes, passes) : passes;
    }
    cpu_total += cpu_secs[i];
  }
  const double secs = std::chrono::duration<double>(t1 - t0).count();
  if (secs > 0) {
    p.gbps = bytes_moved / secs / 1e9;
    p.cpu_share = cpu_total / (secs * static_cast<double>(t));
    p.min_passes = min_passes;
  } else {
    p.error = "no time elapsed";
  }
  return p;
}

}  // namespace

MemoryMeasurement measure_memory(facts::Facts& f, const MemoryOptions& o) {
  MemoryMeasurement m;
  const auto& topo = f.topology();
  if (!topo) {
    m.no_run_why = "CPU topology unreadable: " + topo.error();
    return m;
  }
  if (topo->node_cpus.empty()) {
    m.no_run_why = "no NUMA nodes listed" + (topo->nodes_error.empty() ? std::string() : ": " + topo->nodes_error);
    return m;
  }
  parsers::CpuSet allowed;
  for (int c : probe_allowed_cpus()) allowed.insert(c);
  std::vector<int> mem_nodes;
  if (auto hm = f.root().read_value("/sys/devices/system/node/has_memory")) {
    if (auto set = parsers::parse_cpulist(*hm)) mem_nodes = set->members();
  }
  if (mem_nodes.empty())
    for (const auto& [node, cpus] : topo->node_cpus) mem_nodes.push_back(node);
  const std::size_t llc = llc_bytes(f.root()).value_or(32u << 20);
  // The whole matrix stays within kMemoryProbeBudget: with many nodes (8 on a two-socket
  // NPS4 machine: 64 pairs) each pair gets a shorter cap, never under kMinPairCap.
  std::size_t cpu_nodes = 0;
  for (const auto& [node, cpus] : topo->node_cpus) cpu_nodes += cpus.intersect(allowed).empty() ? 0 : 1;
  const std::size_t pairs = std::max<std::size_t>(1, cpu_nodes * mem_nodes.size());
  const auto share = std::chrono::duration_cast<std::chrono::milliseconds>(kMemoryProbeBudget / pairs);
  const auto cap = std::min(o.per_pair, std::max(kMinPairCap, share));
  for (const auto& [cpu_node, cpus] : topo->node_cpus) {
    auto use = cpus.intersect(allowed).members();
    if (use.empty()) continue;  // a CPU-less node, or none of its CPUs is ours
    for (int mem_node : mem_nodes) {
      std::size_t bytes = std::max(kMinArrayBytes, 4 * llc);
      bytes = std::min(bytes, o.max_bytes_per_array);
      if (auto free = node_free_bytes(f.root(), mem_node)) bytes = std::min(bytes, *free / 8);
      bytes &= ~static_cast<std::size_t>(4095);
      if (bytes < (8u << 20)) {
        MemoryPair p;
        p.cpu_node = cpu_node;
        p.mem_node = mem_node;
        p.error = fmt::format("node {} has too little free memory for the arrays", mem_node);
        m.pairs.push_back(p);
        continue;
      }
      auto p = run_pair(cpu_node, mem_node, use, bytes, cap);
      m.pairs.push_back(std::move(p));
    }
  }
  if (m.pairs.empty()) m.no_run_why = "none of the NUMA nodes' CPUs is in this process's affinity mask";
  return m;
}

}  // namespace perfgap::probe
