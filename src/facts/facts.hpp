// Typed facts about one node, read through a Sysroot. Each fact is read once, on first use,
// and kept; a fact that could not be read carries the reason (Avail<T>). Checks only look
// at facts; they never read files themselves.
#pragma once

#include <chrono>
#include <cstdint>
#include <functional>
#include <list>
#include <map>
#include <memory>
#include <mutex>
#include <optional>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "parsers/cpuset.hpp"
#include "parsers/procfs.hpp"
#include "sys/bounded.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::facts {

// A fact, or why it is not available here ("/sys/...: not present").
template <class T>
using Avail = tl::expected<T, std::string>;

inline tl::unexpected<std::string> missing(std::string why) { return tl::unexpected(std::move(why)); }
std::string describe(const sys::ReadError& e);  // "<path>: <reason>"

// Reads `path` and parses it; on failure `error` says which of the two went wrong and where.
template <class Parse>
auto read_parsed(const sys::Sysroot& root, const std::string& path, Parse parse, std::string& error,
                 std::size_t max_bytes = 4u << 20) -> std::optional<typename decltype(parse(std::string_view()))::value_type> {
  auto text = root.read(path, max_bytes);
  if (!text) {
    error = describe(text.error());
    return std::nullopt;
  }
  auto parsed = parse(*text);
  if (!parsed) {
    error = path + ": " + parsed.error().describe();
    return std::nullopt;
  }
  return std::move(*parsed);
}

using parsers::CpuSet;

struct Identity {
  std::string hostname, kernel, cpu_model;
  std::string arch;         // uname -m spelling, or "unknown"
  std::string arch_source;  // where it came from (empty live: uname)
};

struct Hypervisor {
  bool virtualized = false;
  std::string name;  // "KVM", "QEMU", "Xen", ... or "bare metal"
  std::vector<std::pair<std::string, std::string>> evidence;  // (source, observed)
};

struct Topology {
  CpuSet online;
  std::string online_source;
  std::map<int, CpuSet> node_cpus;  // every NUMA node, CPU-less ones with an empty set
  std::string nodes_error;          // why node_cpus could not be read ("" when it was)
  CpuSet nodes_with_cpus() const;
  int node_of_cpu(int cpu) const;   // -1 when unknown
};

struct IdleState {
  int index = 0;
  std::string name;
  std::optional<std::uint64_t> latency_us;
  std::optional<bool> disabled;
};

struct CpuIdle {
  std::string driver;              // current_driver; "" when absent
  std::string driver_reason;       // why it is empty
  std::map<int, std::vector<IdleState>> per_cpu;  // online CPUs with a cpuidle directory
  CpuSet unread;                                   // online CPUs whose cpuidle directory is not readable
  std::string unread_reason;                       // why, for the first of them
  std::optional<int> intel_max_cstate;            // /sys/module/intel_idle/parameters/max_cstate
  std::optional<std::int32_t> pm_qos_us;          // /dev/cpu_dma_latency
  std::string pm_qos_reason;                      // why pm_qos_us is unknown
  std::optional<std::string> tuned_profile;
};

struct CpuFreqCpu {
  int cpu = 0;
  std::string dir;  // /sys/devices/system/cpu/cpuN/cpufreq
  std::optional<std::string> driver, governor, epp;
  std::optional<std::uint64_t> scaling_max_khz, cpuinfo_max_khz;
  std::optional<int> policy_boost;  // per-policy boost (amd-pstate, newer kernels)
  // ACPI CPPC's performance levels (cpuN/acpi_cppc), read only where boost is off: what boost
  // would unlock is highest_perf over nominal_perf (none where they are equal).
  std::optional<std::uint64_t> cppc_highest, cppc_nominal;
};

struct CpuFreq {
  std::vector<CpuFreqCpu> cpus;
  CpuSet online;        // the CPUs asked about
  CpuSet unread;        // online CPUs without readable cpufreq (scaling_driver and scaling_governor)
  std::string unread_reason;
  std::optional<int> no_turbo, max_perf_pct;
  std::optional<std::string> pstate_status;
  std::optional<int> boost;  // /sys/devices/system/cpu/cpufreq/boost
};

struct PciDevice {
  std::string bdf;  // "0000:18:00.0"
  std::uint32_t vendor = 0, device = 0, class_code = 0;
  std::optional<int> numa_node;
  std::optional<CpuSet> local_cpus;
  std::string local_cpus_text;
  // The bridges above it and itself, from its /sys/bus/pci/devices link: {"pci0000:ad",
  // "0000:ad:01.0", ..., bdf}; empty when unread. Devices sharing a bridge below the host
  // bridge sit under the same root port or PCIe switch (NCCL's PIX/PXB).
  std::vector<std::string> pci_path;
  bool is_gpu() const {
    auto base = class_code >> 8;
    return vendor == 0x10de && (base == 0x0300 || base == 0x0302);
  }
};

struct Gpu {
  int index = 0;  // among visible GPUs, PCI bus order
  std::string bdf;
  const PciDevice* pci = nullptr;  // null when the driver lists it but its PCI entry is unreadable
  std::optional<std::string> uuid;
  std::optional<int> minor;
};

struct Process {
  int pid = 0;
  int ppid = 0;
  std::string comm;
  // A child of another training process with the same local rank (a data-loader worker):
  // it shares its parent's GPU, so per-rank checks look at the parent only.
  bool helper = false;
  parsers::EnvList env;        // unredacted; reports redact
  std::optional<CpuSet> allowed;
  std::string allowed_text;    // as the kernel printed it
  std::string allowed_error;   // why `allowed` is empty (a damaged status file)
  std::string how;             // why it counts as a training process
  std::optional<std::string> env_value(std::string_view key) const;
  std::optional<int> local_rank() const;
};

struct Training {
  std::vector<Process> procs;
  std::vector<std::string> problems;  // pids that could not be read, with reasons
  bool explicit_pids = false;
};

struct NumaMapsRead {
  std::optional<parsers::NumaMaps> maps;
  std::string error;     // parse or read error, with line
  bool truncated = false;  // the read budget ran out; maps covers what was read
  double read_ms = 0;
};

struct RdmaCounterSample;  // facts/rdma_counters.hpp

// A thread seen over the sampling window: live, CPU time in the window; root, since start.
struct ThreadUse {
  int pid = 0, tid = 0;
  std::string comm;
  int last_cpu = -1;
  double cpu_share = 0;  // fraction of one CPU
};

struct Window {
  bool live = false;            // true: deltas over `seconds`; false: since-boot counters
  double seconds = 0;
  // Live: the length asked for, and whether the length was the default (not --sample-ms or
  // config sample_ms), so a check may ask for it to go on (Facts::window_extended) up to
  // `limit` when its counters could not decide over it.
  std::chrono::milliseconds length{0};
  bool extendable = false;
  std::chrono::milliseconds limit{0};
  std::chrono::steady_clock::time_point start{};
  // Each thread's utime+stime at the first sample, for an extension's second one.
  std::shared_ptr<const std::map<std::pair<int, int>, unsigned long long>> first_task_ticks;
  std::optional<parsers::ProcStat> first, second;  // second == first in root mode
  std::string stat_error;
  std::vector<ThreadUse> threads;
  std::string threads_error;
  std::optional<parsers::Interrupts> irq_first, irq_second;
  std::string irq_error;
  // RDMA port counters at both ends (second == first in root mode); null when not taken.
  std::shared_ptr<const RdmaCounterSample> rdma_first, rdma_second;
};

// What a report taken elsewhere (--baseline HOST.json) says about its node.
struct Baseline {
  std::string file;
  std::string node_name;
  std::map<std::string, std::string> environment, nccl_conf, settings;
  // The baseline's audited environment was not read where it was taken: its node.environment is
  // empty and its settings.nccl_topo_file `unknown` (written `unset` wherever it was read).
  bool environment_unread = false;
};

struct Options {
  std::vector<int> pids;          // --pid; empty: detect
  std::optional<std::string> dmesg_path;  // --dmesg FILE (a saved kernel log), read as given
  std::optional<Baseline> baseline;       // --baseline HOST.json
  // The live sample window of cpu.steal and placement.shared_cores: `sample` when set (fixed);
  // else kFirstSampleWindow, which a check may extend up to sample_max (check: 1 s; health, a
  // prolog: 250 ms) when the counters could not decide over it.
  std::chrono::milliseconds sample{0};
  std::chrono::milliseconds sample_max{1000};
  std::chrono::milliseconds proc_read_timeout{2000};
  // perfgap-gpu (facts/gpu.hpp): --nvml queries GPUs out of persistence mode too; both runs
  // of the helper fit in this budget (a check's deadline).
  bool nvml = false;
  std::chrono::milliseconds gpu_helper_budget{30000};
};

// The default window starts at 100 ms (or `max` when smaller): enough for /proc/stat's 10 ms
// tick on a node with many CPUs. A check whose tick margin is wider than its distance to the
// limit extends it (cpu.steal: about 610 ms / sqrt(CPUs) for a steal-free node at 2%), so a
// small node waits longer only when it must.
inline constexpr std::chrono::milliseconds kFirstSampleWindow{100};
std::chrono::milliseconds first_sample_window(std::chrono::milliseconds max);
inline constexpr std::chrono::milliseconds kMinSampleWindow{10};
inline constexpr std::chrono::milliseconds kMaxSampleWindow{60000};

class Facts {
 public:
  Facts(sys::Sysroot root, Options opts);
  Facts(const Facts&) = delete;
  Facts& operator=(const Facts&) = delete;

  // The node's files: for src/facts only; checks look at facts (tests/lint/checks_are_pure.sh).
  const sys::Sysroot& root() const { return root_; }
  // Whether this is the live system (not --root DIR).
  bool live() const { return root_.is_live(); }
  // perfgap's own pid live (its threads are no one else's load), -1 under --root.
  int own_pid() const;
  // Whether a file missing here is missing on the node: live, or a tree written by perfgap
  // snapshot (.perfgap/snapshot.json), which captures every declared path that exists. In a
  // tree from elsewhere a missing area may just not have been captured.
  bool absence_is_real() const;
  const Options& options() const { return opts_; }

  const Identity& identity();
  const Avail<parsers::CpuInfo>& cpuinfo();
  const Avail<Hypervisor>& hypervisor();
  const Avail<parsers::KernelCmdline>& cmdline();
  const Avail<Topology>& topology();
  const CpuIdle& cpuidle();
  const CpuFreq& cpufreq();
  const Avail<std::vector<PciDevice>>& pci();
  const Avail<std::vector<Gpu>>& visible_gpus();
  const parsers::EnvList& audited_env();   // /proc/self/environ
  std::string audited_env_source() const;
  // Why the audited environment could not be read ("" when it was): then "unset" is unknown.
  const std::string& audited_env_error();
  const Training& training();
  const Window& window();
  // The same window taken on from its first sample to at least `length` (capped at its
  // limit): a second sample at start + length. window() when it is not extendable or already
  // that long. Earlier windows stay valid; extensions are kept, so a longer ask reuses none.
  const Window& window_extended(std::chrono::milliseconds length);
  const NumaMapsRead& numa_maps(int pid, std::chrono::milliseconds budget);
  std::string container();  // none|docker|enroot|podman|unknown

  // Reads a /proc/<pid>/... file with the per-process time bound when live.
  sys::ReadResult<std::string> read_proc(const std::string& path, std::size_t max = 4u << 20);

  // A fact defined outside this class (facts/<area>.cpp), read once under `key` and kept.
  // Layers add facts this way without touching this header:
  //   const auto& ports = f.memo<Avail<std::vector<IbPort>>>("infiniband", [&] { return read_ib(f.root()); });
  template <class T>
  const T& memo(const std::string& key, const std::function<T()>& make) {
    std::shared_ptr<Slot> slot;
    {
      std::lock_guard lock(memo_mutex_);
      auto& s = memo_[key];
      if (!s) s = std::make_shared<Slot>();
      slot = s;
    }
    std::call_once(slot->once, [&] { slot->value = std::make_shared<T>(make()); });
    return *static_cast<const T*>(slot->value.get());
  }

 private:
  template <class T, class F>
  const T& once(std::once_flag& flag, std::optional<T>& slot, F make) {
    std::call_once(flag, [&] { slot.emplace(make()); });
    return *slot;
  }

  sys::Sysroot root_;
  Options opts_;

#define PERFGAP_FACT(T, name) std::once_flag name##_once_; std::optional<T> name##_;
  PERFGAP_FACT(Identity, identity)
  PERFGAP_FACT(Avail<parsers::CpuInfo>, cpuinfo)
  PERFGAP_FACT(Avail<Hypervisor>, hypervisor)
  PERFGAP_FACT(Avail<parsers::KernelCmdline>, cmdline)
  PERFGAP_FACT(Avail<Topology>, topology)
  PERFGAP_FACT(CpuIdle, cpuidle)
  PERFGAP_FACT(CpuFreq, cpufreq)
  PERFGAP_FACT(Avail<std::vector<PciDevice>>, pci)
  PERFGAP_FACT(Avail<std::vector<Gpu>>, gpus)
  PERFGAP_FACT(parsers::EnvList, env)
  PERFGAP_FACT(Training, training)
  PERFGAP_FACT(Window, window)
#undef PERFGAP_FACT

  struct Slot {
    std::once_flag once;
    std::shared_ptr<void> value;
  };
  sys::BoundedWorker proc_reader_;  // every read_proc and numa_maps: one thread, not one per read
  sys::BoundedWorker window_reader_;  // the window's walks of every thread, beside proc_reader_
  std::mutex window_mutex_;
  std::list<Window> extended_windows_;
  std::mutex memo_mutex_;
  std::map<std::string, std::shared_ptr<Slot>> memo_;

  std::string env_error_;
  std::mutex numa_mutex_;
  std::map<int, std::shared_ptr<NumaMapsRead>> numa_maps_;
};

// A kernel setting by its sysctl name ("kernel.numa_balancing" is
// /proc/sys/kernel/numa_balancing), read once per Facts: the value without surrounding
// blanks (possibly ""), or why it could not be read. Every /proc/sys reader goes through it.
const Avail<std::string>& sysctl(Facts& f, std::string_view name);
// "kernel.numa_balancing" -> "/proc/sys/kernel/numa_balancing".
std::string sysctl_path(std::string_view name);

// Readers, exposed for the facts implementation files and their tests.
Identity read_identity(Facts& f);
Avail<Hypervisor> read_hypervisor(Facts& f);
Avail<Topology> read_topology(const sys::Sysroot& root);
CpuIdle read_cpuidle(const sys::Sysroot& root, const CpuSet& online);
CpuFreq read_cpufreq(const sys::Sysroot& root, const CpuSet& online);
Avail<std::vector<PciDevice>> read_pci(const sys::Sysroot& root);
Avail<std::vector<Gpu>> read_visible_gpus(const sys::Sysroot& root, const std::vector<PciDevice>& pci);
Training detect_training(Facts& f);
Window sample_window(Facts& f, sys::BoundedWorker& reader);
Window extend_window(Facts& f, sys::BoundedWorker& reader, const Window& base, std::chrono::milliseconds length);
NumaMapsRead read_numa_maps(Facts& f, sys::BoundedWorker& reader, int pid, std::chrono::milliseconds budget);
// The CPUs an interrupt is routed to now: effective_affinity_list, else smp_affinity_list
// (older kernels, or an empty effective list); nullopt when neither reads as a cpulist.
std::optional<parsers::CpuSet> irq_affinity(const Facts& f, std::string_view irq);

// Summaries shared by the checks and the report's node.settings.
// The deepest state (largest exit latency) that is enabled on at least one online CPU.
std::optional<IdleState> deepest_enabled_state(const CpuIdle& idle);
// "performance", "powersave", "mixed" or "" when no CPU has cpufreq.
std::string governor_summary(const CpuFreq& freq);
// true/false when a turbo/boost control is visible, nullopt otherwise.
std::optional<bool> turbo_enabled(const CpuFreq& freq);

// Resolves CUDA_VISIBLE_DEVICES entries (indices or GPU-<uuid> prefixes) to visible GPUs.
// Returns the GPUs in the order listed, or why not.
Avail<std::vector<const Gpu*>> resolve_cuda_visible(std::string_view value, const std::vector<Gpu>& gpus);

}  // namespace perfgap::facts
