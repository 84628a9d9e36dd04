// probe --cpu: one busy thread pinned to each allowed CPU for a bounded time; each thread's
// cycles over the time it ran (perf_event_open, per thread) is its busy MHz. Nothing on the
// node is changed: the counters are the caller's own, closed on every path.
#include <fmt/format.h>
#include <linux/perf_event.h>
#include <sched.h>
#include <sys/ioctl.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <atomic>
#include <cerrno>
#include <cstring>
#include <thread>

#include "probe/probe.hpp"
#include "probe/threads.hpp"
#include "sys/text.hpp"

namespace perfgap::probe {
namespace {

constexpr auto kMaxCpuLoad = std::chrono::seconds(10);

struct CounterSpec {
  std::uint32_t type = 0;
  std::uint64_t config = 0;
  bool exclude_kernel = false;
  std::string name;
};

int cpu_probe_open(const CounterSpec& s) {
  perf_event_attr a{};
  a.size = sizeof a;
  a.type = s.type;
  a.config = s.config;
  a.disabled = 1;
  a.exclude_kernel = s.exclude_kernel ? 1 : 0;
  a.exclude_hv = s.exclude_kernel ? 1 : 0;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  // This thread, any CPU: the count follows the pinned thread.
  return static_cast<int>(::syscall(SYS_perf_event_open, &a, 0, -1, -1, 0));
}

// "event=0x01" (the msr PMU's events/aperf) -> 1.
std::optional<std::uint64_t> cpu_probe_event_config(std::string_view text) {
  text = sys::trim_ws(text);
  if (text.substr(0, 6) != "event=") return std::nullopt;
  text.remove_prefix(6);
  std::uint64_t v = 0;
  const bool hex = text.substr(0, 2) == "0x";
  if (hex) text.remove_prefix(2);
  if (text.empty()) return std::nullopt;
  for (char c : text) {
    int d = c >= '0' && c <= '9' ? c - '0' : hex && c >= 'a' && c <= 'f' ? c - 'a' + 10 : -1;
    if (d < 0 || v > (1ull << 40)) return std::nullopt;
    v = v * (hex ? 16 : 10) + static_cast<unsigned>(d);
  }
  return v;
}

// The first counter this process may open, trying each source in turn; why each failed.
std::optional<CounterSpec> pick_counter(const sys::Sysroot& root, std::string& why) {
  std::vector<CounterSpec> tries;
  auto type = root.read_value("/sys/bus/event_source/devices/msr/type");
  auto ev = root.read_value("/sys/bus/event_source/devices/msr/events/aperf");
  if (type && ev) {
    auto t = sys::to_int<std::uint32_t>(*type);
    auto cfg = cpu_probe_event_config(*ev);
    if (t && cfg) tries.push_back({*t, *cfg, false, "perf msr/aperf/ (per thread)"});
  } else {
    why += "no msr PMU aperf event (/sys/bus/event_source/devices/msr/events/aperf); ";
  }
  tries.push_back({PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES, true, "perf cycles:u (per thread)"});
  for (const auto& t : tries) {
    int fd = cpu_probe_open(t);
    if (fd >= 0) {
      ::close(fd);
      return t;
    }
    why += fmt::format("{}: perf_event_open: {}; ", t.name, std::strerror(errno));
  }
  return std::nullopt;
}

struct ThreadResult {
  std::optional<double> mhz;
  std::string error;
};

std::vector<int> allowed_cpus() {
  cpu_set_t set;
  CPU_ZERO(&set);
  std::vector<int> out;
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return out;
  for (int c = 0; c < CPU_SETSIZE; ++c)
    if (CPU_ISSET(c, &set)) out.push_back(c);
  return out;
}

// Busy work the compiler cannot drop.
void spin_until(const std::atomic<bool>& stop, std::chrono::steady_clock::time_point hard_end) {
  volatile std::uint64_t x = 1;
  for (std::uint64_t i = 0;; ++i) {
    x = x * 6364136223846793005ull + 1442695040888963407ull;
    if ((i & 0xffff) == 0 && (stop.load(std::memory_order_relaxed) || std::chrono::steady_clock::now() >= hard_end)) return;
  }
}

}  // namespace

std::vector<int> probe_allowed_cpus() { return allowed_cpus(); }

CpuMeasurement measure_cpu(facts::Facts& f, const CpuOptions& o) {
  CpuMeasurement m;
  m.cpus = allowed_cpus();
  m.rated_mhz = o.rated_mhz;
  if (o.rated_mhz) m.rated_from = "--rated-mhz";
  for (const auto& c : f.cpufreq().cpus)
    if (c.cpuinfo_max_khz && (!m.max_freq_mhz || *c.cpuinfo_max_khz / 1000.0 > *m.max_freq_mhz)) m.max_freq_mhz = *c.cpuinfo_max_khz / 1000.0;
  if (m.cpus.empty()) {
    m.no_source_why = "sched_getaffinity failed";
    return m;
  }
  std::string why;
  auto counter = pick_counter(f.root(), why);
  // Without a counter, scaling_cur_freq sampled during the load (the kernel's estimate of the
  // frequency, from APERF/MPERF on x86) is the last source.
  std::vector<std::string> cur_freq_paths;
  if (!counter) {
    for (int c : m.cpus) {
      std::string p = fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", c);
      if (f.root().read_value(p)) cur_freq_paths.push_back(p);
      else cur_freq_paths.emplace_back();
    }
    bool any = false;
    for (const auto& p : cur_freq_paths) any = any || !p.empty();
    if (!any) {
      m.no_source_why = why + "no scaling_cur_freq (/sys/devices/system/cpu/cpu*/cpufreq)";
      return m;
    }
  }
  const auto duration = std::min<std::chrono::milliseconds>(o.duration, kMaxCpuLoad);
  const auto warmup = duration / 10;
  const auto start = std::chrono::steady_clock::now();
  const auto hard_end = start + duration + std::chrono::seconds(1);
  std::atomic<bool> stop{false};
  std::vector<ThreadResult> results(m.cpus.size());
  {
    JoinedThreads threads(stop);
    for (std::size_t i = 0; i < m.cpus.size(); ++i) {
      threads.add([&, i] {
        cpu_set_t one;
        CPU_ZERO(&one);
        CPU_SET(m.cpus[i], &one);
        if (::sched_setaffinity(0, sizeof one, &one) != 0) {
          results[i].error = std::string("sched_setaffinity: ") + std::strerror(errno);
          return;
        }
        int fd = counter ? cpu_probe_open(*counter) : -1;
        if (counter && fd < 0) results[i].error = std::string("perf_event_open: ") + std::strerror(errno);
        spin_until(stop, std::min(hard_end, start + warmup));
        if (fd >= 0) ::ioctl(fd, PERF_EVENT_IOC_ENABLE, 0);
        spin_until(stop, hard_end);
        if (fd >= 0) {
          ::ioctl(fd, PERF_EVENT_IOC_DISABLE, 0);
          std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running (ns)
          if (::read(fd, v, sizeof v) == static_cast<ssize_t>(sizeof v) && v[2] > 0 && v[0] > 0)
            results[i].mhz = static_cast<double>(v[0]) / static_cast<double>(v[2]) * 1000.0;
          else if (results[i].error.empty())
            results[i].error = "the counter did not count";
          ::close(fd);
        }
      });
    }
    // scaling_cur_freq every 100 ms after the warm-up; the stop flag ends the load either way.
    std::vector<double> sums(m.cpus.size(), 0.0);
    std::vector<int> counts(m.cpus.size(), 0);
    std::this_thread::sleep_until(start + warmup);
    while (std::chrono::steady_clock::now() < start + duration) {
      for (std::size_t i = 0; i < cur_freq_paths.size(); ++i) {
        if (cur_freq_paths[i].empty()) continue;
        if (auto v = f.root().read_value(cur_freq_paths[i]))
          if (auto khz = sys::to_int<std::uint64_t>(*v); khz && *khz > 0) sums[i] += static_cast<double>(*khz) / 1000.0, ++counts[i];
      }
      std::this_thread::sleep_for(std::min<std::chrono::milliseconds>(std::chrono::milliseconds(100), duration));
    }
    stop = true;
    threads.join_all();
    if (!counter)
      for (std::size_t i = 0; i < m.cpus.size(); ++i)
        if (counts[i] > 0) results[i].mhz = sums[i] / counts[i];
  }
  m.seconds = std::chrono::duration<double>(std::chrono::steady_clock::now() - start - warmup).count();
  m.deadline_hit = std::chrono::steady_clock::now() >= hard_end;
  m.source = counter ? counter->name : "scaling_cur_freq sampled every 100 ms";
  std::string first_error;
  for (std::size_t i = 0; i < m.cpus.size(); ++i) {
    if (results[i].mhz) m.busy.push_back({m.cpus[i], *results[i].mhz});
    else if (first_error.empty()) first_error = fmt::format("cpu{}: {}", m.cpus[i], results[i].error.empty() ? "no figure" : results[i].error);
  }
  if (m.busy.empty()) {
    m.no_source_why = m.source + " gave no figure (" + first_error + ")";
    m.source.clear();
  }
  return m;
}

}  // namespace perfgap::probe
