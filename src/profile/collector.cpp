#include "profile/collector.hpp"

#include <sys/resource.h>

#include <algorithm>
#include <atomic>
#include <cstring>
#include <map>
#include <set>
#include <stop_token>
#include <thread>

#include <fmt/format.h>

#include "parsers/live.hpp"
#include "parsers/perf_data.hpp"
#include "profile/perf_events.hpp"
#include "profile/tlb_counters.hpp"
#include "sys/text.hpp"

namespace perfgap::profile {
namespace {

using Clock = std::chrono::steady_clock;

constexpr std::size_t kMaxSampleBytes = 256u << 20;  // ~1.5 M samples with call chains
constexpr int kCapPerfmon = 38, kCapSysAdmin = 21;

double self_cpu_seconds() {
  rusage u{};
  ::getrusage(RUSAGE_SELF, &u);
  auto s = [](const timeval& t) { return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_usec) / 1e6; };
  return s(u.ru_utime) + s(u.ru_stime);
}

std::optional<std::uint64_t> cap_eff(const sys::Sysroot& root) {
  auto st = root.read("/proc/self/status", 1u << 16);
  if (!st) return std::nullopt;
  auto kv = parsers::parse_key_values(*st);
  auto it = kv.find("CapEff");
  if (it == kv.end()) return std::nullopt;
  return sys::to_int<std::uint64_t>(sys::trim_ws(it->second), 16);
}

// "event=0x01" (a PMU's events/NAME file) -> 1.
std::optional<std::uint64_t> pmu_event_config(const sys::Sysroot& root, const std::string& pmu, const std::string& name) {
  auto v = root.read_value("/sys/bus/event_source/devices/" + pmu + "/events/" + name);
  if (!v) return std::nullopt;
  std::string_view s = *v;
  if (!s.starts_with("event=")) return std::nullopt;
  s.remove_prefix(6);
  if (s.starts_with("0x")) return sys::to_int<std::uint64_t>(s.substr(2), 16);
  return sys::to_int<std::uint64_t>(s);
}

perf_event_attr counting_attr(std::uint32_t type, std::uint64_t config) {
  perf_event_attr a{};
  a.type = type;
  a.config = config;
  a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
  return a;
}

// The frequency counters of every CPU: one set of events per CPU, read at both ends.
struct FreqCounters {
  std::string source, detail;
  std::vector<std::string> refused;         // why each source before it could not be used
  bool permission = false;
  std::map<int, std::vector<PerfFd>> fds;   // per CPU: aperf, mperf, tsc | cycles
  std::map<int, std::vector<std::uint64_t>> start;
};

bool open_counter_set(FreqCounters& fc, const std::vector<int>& cpus, const std::vector<perf_event_attr>& attrs, const std::string& what) {
  fc.fds.clear();
  for (int cpu : cpus) {
    auto& v = fc.fds[cpu];
    for (const auto& a : attrs) {
      auto fd = open_cpu_event(a, cpu);
      if (!fd) {
        fc.refused.push_back(fmt::format("{}: perf_event_open on CPU {}: {}", what, cpu, fd.error().describe()));
        fc.permission = fc.permission || fd.error().permission();
        fc.fds.clear();
        return false;
      }
      v.push_back(std::move(*fd));
    }
  }
  return true;
}

void open_frequency(FreqCounters& fc, const sys::Sysroot& root, const std::vector<int>& cpus) {
  auto type = root.read_value("/sys/bus/event_source/devices/msr/type");
  auto aperf = pmu_event_config(root, "msr", "aperf"), mperf = pmu_event_config(root, "msr", "mperf"), tsc = pmu_event_config(root, "msr", "tsc");
  auto msr_type = type ? sys::to_int<std::uint32_t>(*type) : std::nullopt;
  if (!msr_type || !aperf || !mperf || !tsc) {
    fc.refused.push_back(type ? "msr PMU: no aperf, mperf and tsc events" : "msr PMU: /sys/bus/event_source/devices/msr not present");
  } else if (open_counter_set(fc, cpus, {counting_attr(*msr_type, *aperf), counting_attr(*msr_type, *mperf), counting_attr(*msr_type, *tsc)}, "msr PMU")) {
    fc.source = "aperf_mperf";
    fc.detail = "msr PMU aperf, mperf, tsc";
    return;
  }
  if (open_counter_set(fc, cpus, {counting_attr(PERF_TYPE_HARDWARE, PERF_COUNT_HW_CPU_CYCLES)}, "cycles")) {
    fc.source = "cycles";
    fc.detail = "hardware cycles over /proc/stat busy time";
    return;
  }
}

std::map<int, std::vector<std::uint64_t>> read_counter_sets(const FreqCounters& fc) {
  std::map<int, std::vector<std::uint64_t>> out;
  for (const auto& [cpu, fds] : fc.fds) {
    auto& v = out[cpu];
    for (const auto& fd : fds) v.push_back(read_counter(fd).value_or(0));
  }
  return out;
}

// One sampling event per CPU and its ring.
struct Sampler {
  std::vector<PerfFd> fds;
  std::vector<Ring> rings;
  perf_event_attr attr{};
  std::string event, unavailable;
};

perf_event_attr sampling_attr(bool hardware, bool exclude_idle, int hz) {
  perf_event_attr a{};
  a.type = hardware ? PERF_TYPE_HARDWARE : PERF_TYPE_SOFTWARE;
  a.config = hardware ? std::uint64_t{PERF_COUNT_HW_CPU_CYCLES} : std::uint64_t{PERF_COUNT_SW_CPU_CLOCK};
  a.freq = 1;
  a.sample_freq = static_cast<std::uint64_t>(hz);
  a.sample_type = PERF_SAMPLE_IP | PERF_SAMPLE_TID | PERF_SAMPLE_PERIOD | PERF_SAMPLE_CALLCHAIN;
  a.exclude_callchain_user = 1;  // kernel frames only: user stacks are not unwound live
  a.exclude_idle = exclude_idle ? 1 : 0;
  a.disabled = 1;
  return a;
}

void open_sampler(Sampler& s, const std::vector<int>& cpus, int hz, const std::string& paranoid, std::optional<std::uint64_t> caps) {
  struct Try {
    bool hw, exclude_idle;
    const char* name;
  };
  std::string refused;
  for (const Try& t : {Try{true, true, "cycles"}, Try{false, true, "cpu-clock"}, Try{false, false, "cpu-clock"}}) {
    s.fds.clear();
    s.rings.clear();
    s.attr = sampling_attr(t.hw, t.exclude_idle, hz);
    bool ok = true;
    for (int cpu : cpus) {
      auto fd = open_cpu_event(s.attr, cpu);
      if (!fd) {
        if (fd.error().permission()) {
          s.fds.clear();
          s.unavailable = missing_right(fd.error().describe(), paranoid, caps);
          return;
        }
        refused += fmt::format("{}{} on CPU {}: {}", refused.empty() ? "" : "; ", t.name, cpu, fd.error().describe());
        ok = false;
        break;
      }
      auto ring = Ring::map(*fd);
      if (!ring) {
        s.fds.clear();
        s.rings.clear();
        s.unavailable = fmt::format("mapping the sample ring of CPU {}: {} (perf_event_mlock_kb spent?)", cpu, ring.error().describe());
        return;
      }
      s.fds.push_back(std::move(*fd));
      s.rings.push_back(std::move(*ring));
    }
    if (ok) {
      s.event = fmt::format("{} at {} Hz per CPU on {} CPUs{}, kernel call chains", t.name, hz, cpus.size(), t.exclude_idle ? ", idle excluded" : "");
      return;
    }
  }
  s.fds.clear();
  s.rings.clear();
  s.unavailable = "perf_event_open refused every event: " + refused;
}

// The ring bytes as a pipe-mode perf.data: header, one HEADER_ATTR, then the records as the
// kernel wrote them, so the perf.data reader decodes live samples too.
std::string as_pipe_perf_data(const perf_event_attr& attr, const std::string& records) {
  std::string out("PERFILE2", 8);
  auto put64 = [&](std::uint64_t v) { out.append(reinterpret_cast<const char*>(&v), 8); };
  auto put32 = [&](std::uint32_t v) { out.append(reinterpret_cast<const char*>(&v), 4); };
  auto put16 = [&](std::uint16_t v) { out.append(reinterpret_cast<const char*>(&v), 2); };
  put64(16);
  perf_event_attr a = attr;
  a.size = sizeof(a);
  put32(64);  // PERF_RECORD_HEADER_ATTR
  put16(0);
  put16(static_cast<std::uint16_t>(8 + sizeof(a)));
  out.append(reinterpret_cast<const char*>(&a), sizeof(a));
  out += records;
  return out;
}

std::map<int, std::vector<IdleStateDelta>> read_idle(const sys::Sysroot& root, const facts::CpuIdle& idle) {
  std::map<int, std::vector<IdleStateDelta>> out;
  for (const auto& [cpu, states] : idle.per_cpu) {
    auto& v = out[cpu];
    for (const auto& s : states) {
      const std::string dir = fmt::format("/sys/devices/system/cpu/cpu{}/cpuidle/state{}", cpu, s.index);
      auto t = root.read_value(dir + "/time");
      auto u = root.read_value(dir + "/usage");
      IdleStateDelta d;
      d.index = s.index;
      d.name = s.name;
      d.latency_us = s.latency_us;
      d.disabled = s.disabled.value_or(false);
      d.time_us = t ? sys::to_int<std::uint64_t>(*t).value_or(0) : 0;
      d.usage = u ? sys::to_int<std::uint64_t>(*u).value_or(0) : 0;
      v.push_back(std::move(d));
    }
  }
  return out;
}

std::optional<std::uint64_t> read_hint_faults(const sys::Sysroot& root) {
  auto t = root.read("/proc/vmstat", 1u << 20);
  if (!t) return std::nullopt;
  auto m = parsers::parse_vmstat(*t);
  if (!m) return std::nullopt;
  auto it = m->find("numa_hint_faults");
  if (it == m->end()) return std::nullopt;
  return it->second;
}

struct ThreadEnd {
  std::string comm;
  parsers::SchedStat sched;
  std::uint64_t nonvoluntary = 0;
};

// Every thread of `pid`: its schedstat and involuntary switches; `error` says what failed.
std::map<int, ThreadEnd> read_threads(facts::Facts& f, int pid, std::string& error) {
  std::map<int, ThreadEnd> out;
  const std::string base = fmt::format("/proc/{}/task", pid);
  auto tids = f.root().list(base);
  if (!tids) {
    error = facts::describe(tids.error());
    return out;
  }
  for (const auto& t : *tids) {
    auto tid = sys::to_int<int>(t);
    if (!tid) continue;
    const std::string dir = base + "/" + t;
    auto ss = f.read_proc(dir + "/schedstat", 4096);
    if (!ss) {
      if (ss.error().kind != sys::ReadError::unavailable || ss.error().err != ENOENT) error = facts::describe(ss.error());
      continue;
    }
    auto parsed = parsers::parse_schedstat(*ss);
    if (!parsed) {
      error = dir + "/schedstat: " + parsed.error().describe();
      continue;
    }
    ThreadEnd e;
    e.sched = *parsed;
    if (auto st = f.read_proc(dir + "/status", 1u << 16)) {
      if (auto n = parsers::parse_nonvoluntary_switches(*st)) e.nonvoluntary = *n;
      auto kv = parsers::parse_key_values(*st);
      if (auto it = kv.find("Name"); it != kv.end()) e.comm = it->second;
    }
    out.emplace(*tid, std::move(e));
  }
  if (!out.empty()) error.clear();  // a thread that exited meanwhile is not a failure
  else if (error.empty()) error = base + ": no thread's schedstat could be read";
  return out;
}

// The kernel's symbols, for the samples' kernel frames; `symbol_source` says where from, or why
// there are none.
std::optional<parsers::Kallsyms> collector_kernel_symbols(const sys::Sysroot& root, std::string& symbol_source) {
  std::optional<parsers::Kallsyms> kallsyms;
  if (auto ks = root.read("/proc/kallsyms", 256u << 20)) {
    if (auto parsed = parsers::parse_kallsyms(*ks)) {
      if (parsed->zero_addresses) symbol_source += " (addresses hidden: kernel.kptr_restrict, or perfgap lacks CAP_SYSLOG)";
      kallsyms = std::move(*parsed);
    } else {
      symbol_source += ": " + parsed.error().describe();
    }
  } else {
    symbol_source += ": " + facts::describe(ks.error());
  }
  return kallsyms;
}

// Each CPU's busy share, and the steal share, between the window's two /proc/stat samples.
void collector_busy_and_steal(const facts::Window& win, LiveWindow& w) {
  if (!win.first || !win.second) return;
  std::map<int, const parsers::CpuTimes*> first;
  for (const auto& c : win.first->cpus) first[c.cpu] = &c;
  for (const auto& c : win.second->cpus) {
    auto it = first.find(c.cpu);
    if (it == first.end() || c.fields.size() < 5 || it->second->fields.size() < 5) continue;
    const double total = static_cast<double>(c.total()) - static_cast<double>(it->second->total());
    const double idle = static_cast<double>(c.fields[3] + c.fields[4]) - static_cast<double>(it->second->fields[3] + it->second->fields[4]);
    if (total > 0) w.busy_pct[c.cpu] = std::clamp(100.0 * (total - idle) / total, 0.0, 100.0);
  }
  if (win.first->all && win.second->all && win.second->all->has_steal()) {
    const double total = static_cast<double>(win.second->all->total()) - static_cast<double>(win.first->all->total());
    if (total > 0) w.steal_pct = 100.0 * static_cast<double>(win.second->all->steal() - win.first->all->steal()) / total;
  }
}

// The frequency counters' deltas over the window, per CPU.
void collector_freq_deltas(FreqCounters& fc, LiveWindow& w) {
  auto ends = read_counter_sets(fc);
  for (const auto& end : ends) {
    const int cpu = end.first;
    const auto& v = end.second;  // not a structured binding: clang 14 (fuzz build) cannot capture one
    const auto& s = fc.start[cpu];
    auto d = [&](std::size_t i) -> std::uint64_t { return i < v.size() && i < s.size() && v[i] >= s[i] ? v[i] - s[i] : 0; };
    CpuCounters c;
    if (fc.source == "aperf_mperf") {
      c.aperf = d(0);
      c.mperf = d(1);
      c.tsc = d(2);
    } else {
      c.cycles = d(0);
    }
    w.freq.cpus[cpu] = c;
  }
}

// The idle states' time and usage over the window: the end's counts less the start's.
void collector_idle_deltas(std::map<int, std::vector<IdleStateDelta>>& idle1, std::map<int, std::vector<IdleStateDelta>>& idle0) {
  for (auto& [cpu, states] : idle1) {
    const auto& before = idle0[cpu];
    for (auto& s : states) {
      auto it = std::find_if(before.begin(), before.end(), [&](const IdleStateDelta& b) { return b.index == s.index; });
      if (it == before.end()) continue;
      s.time_us = s.time_us >= it->time_us ? s.time_us - it->time_us : 0;
      s.usage = s.usage >= it->usage ? s.usage - it->usage : 0;
    }
  }
}

// The rated maximum: --rated-mhz, else the highest cpuinfo_max_freq of the busy CPUs.
void collector_rated(const ProfileOptions& o, const facts::CpuFreq& freq_facts, LiveWindow& w) {
  if (o.rated_mhz) {
    w.rated_mhz = o.rated_mhz;
    w.rated_source = "--rated-mhz";
  } else {
    std::uint64_t best = 0;
    for (const auto& c : freq_facts.cpus) {
      auto b = w.busy_pct.find(c.cpu);
      if (b == w.busy_pct.end() || b->second < 50 || !c.cpuinfo_max_khz) continue;
      best = std::max(best, *c.cpuinfo_max_khz);
    }
    if (best > 0) {
      w.rated_mhz = static_cast<double>(best) / 1000.0;
      w.rated_source = "cpufreq cpuinfo_max_freq: the single-core maximum; give --rated-mhz for the all-core turbo";
    } else {
      w.rated_source = freq_facts.cpus.empty() ? "no cpufreq (" + freq_facts.unread_reason + ")" : "cpuinfo_max_freq not readable";
    }
  }
}

// The samples, decoded as the perf.data they are, with the threads' names and the training
// processes' shares.
void collector_decode_samples(facts::Facts& f, const Sampler& sampler, const std::string& records, std::uint64_t dropped,
                              const std::vector<int>& cpus, const std::map<std::uint32_t, int>& training_tid,
                              const std::optional<parsers::Kallsyms>& kallsyms, const std::string& symbol_source, LiveWindow& w) {
  const auto& root = f.root();
  if (sampler.fds.empty()) {
    w.perf_unavailable = sampler.unavailable;
  } else {
    auto data = parsers::parse_perf_data(as_pipe_perf_data(sampler.attr, records));
    if (!data) {
      w.perf_unavailable = "decoding the live samples: " + data.error().describe();
    } else {
      auto& d = *data;
      if (!d.dsos.empty()) d.dsos[0] = "[user]";  // user frames are not resolved live
      std::set<std::uint32_t> tids;
      for (const auto& l : d.leaves) tids.insert(l.tid);
      std::size_t reads = 0;
      for (auto tid : tids) {
        if (tid == 0) {
          d.comms.emplace_back(0, "[idle]");
          continue;
        }
        if (++reads > 4096) break;  // names for the rest stay ":TID"
        if (auto c = root.read_value(fmt::format("/proc/{}/comm", tid))) d.comms.emplace_back(tid, *c);
      }
      std::sort(d.comms.begin(), d.comms.end());
      // The "recording" is this node now.
      const auto& id = f.identity();
      d.hostname = id.hostname;
      d.osrelease = id.kernel;
      d.arch = id.arch;
      d.nr_cpus_online = static_cast<std::uint32_t>(cpus.size());
      d.pipe = false;
      for (const auto& l : d.leaves) {
        auto it = training_tid.find(l.tid);
        if (it == training_tid.end()) continue;
        auto& s = w.training_samples[it->second];
        s.total += l.samples;
        if (l.kind == parsers::PerfLeaf::Kind::kernel) s.kernel += l.samples;
      }
      w.perf = parsers::perf_data_profile(d, kallsyms ? &*kallsyms : nullptr, symbol_source);
      w.perf->layout = parsers::PerfProfile::Layout::live;
      w.perf_event = sampler.event;
      if (dropped > 0) w.perf_event += fmt::format("; {} bytes of samples dropped past {} MiB", dropped, kMaxSampleBytes >> 20);
    }
  }
}

}  // namespace

std::string missing_right(const std::string& errno_text, const std::string& paranoid, std::optional<std::uint64_t> caps) {
  std::string have;
  if (caps) {
    const bool perfmon = (*caps >> kCapPerfmon) & 1, admin = (*caps >> kCapSysAdmin) & 1;
    have = perfmon || admin ? fmt::format("perfgap has {}", perfmon ? "CAP_PERFMON" : "CAP_SYS_ADMIN") : "perfgap has neither CAP_PERFMON nor CAP_SYS_ADMIN";
  } else {
    have = "perfgap's capabilities unknown";
  }
  return fmt::format("perf_event_open: {}: system-wide sampling and counting need CAP_PERFMON (or CAP_SYS_ADMIN) or kernel.perf_event_paranoid <= 0; "
                     "{}, kernel.perf_event_paranoid is {} (a container may also block perf_event_open with seccomp)",
                     errno_text, have, paranoid);
}

LiveWindow collect(facts::Facts& f, const ProfileOptions& o) {
  LiveWindow w;
  w.sample_hz = o.sample_hz;
  const auto& root = f.root();
  const double cpu0 = self_cpu_seconds();
  std::vector<int> cpus;
  if (const auto& topo = f.topology()) cpus = topo->online.members();
  const auto& training = f.training();
  const auto& idle_facts = f.cpuidle();
  const auto& freq_facts = f.cpufreq();
  const auto& par = facts::sysctl(f, "kernel.perf_event_paranoid");
  const std::string paranoid = par ? *par : "unreadable (" + par.error() + ")";
  const auto caps = cap_eff(root);

  // Kernel symbols first: reading them is not part of the window.
  std::string symbol_source = "/proc/kallsyms";
  const std::optional<parsers::Kallsyms> kallsyms = collector_kernel_symbols(root, symbol_source);

  Sampler sampler;
  if (cpus.empty()) sampler.unavailable = "the online CPU list could not be read";
  else open_sampler(sampler, cpus, o.sample_hz, paranoid, caps);
  FreqCounters fc;
  if (!cpus.empty()) open_frequency(fc, root, cpus);
  if (fc.source.empty() && !cpus.empty() && root.exists(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", cpus.front()))) {
    fc.source = "scaling_cur_freq";
    fc.detail = "cpufreq scaling_cur_freq sampled each second";
  }
  if (fc.source.empty()) {
    fc.refused.push_back("scaling_cur_freq: not present");
    std::string why;
    for (const auto& r : fc.refused) why += (why.empty() ? "" : "; ") + r;
    w.freq.unavailable = why;
  }
  w.freq.source = fc.source;
  w.freq.detail = fc.detail;
  // dTLB loads, misses and instructions of every CPU: opened disabled, on with the sampler.
  TlbCounting tlb(cpus, EventOps{}, paranoid, caps);

  // The window's start: counters, idle states, the training threads, their memory placement.
  fc.start = read_counter_sets(fc);
  auto idle0 = read_idle(root, idle_facts);
  auto hints0 = read_hint_faults(root);
  std::map<int, std::map<int, ThreadEnd>> threads0;
  std::map<std::uint32_t, int> training_tid;  // every training thread seen at either end -> its pid
  std::map<int, std::string> thread_errors;
  sys::BoundedWorker numa_reader;
  for (const auto& p : training.procs) {
    threads0[p.pid] = read_threads(f, p.pid, thread_errors[p.pid]);
  }
  std::map<int, facts::NumaMapsRead> numa0;
  for (const auto& p : training.procs) numa0[p.pid] = facts::read_numa_maps(f, numa_reader, p.pid, std::chrono::milliseconds(200));
  for (const auto& fd : sampler.fds) enable_event(fd);
  tlb.start();
  const double cpu_window0 = self_cpu_seconds();

  std::string records;
  std::uint64_t dropped = 0;
  std::map<int, std::vector<std::uint64_t>> cur_khz;
  {
    // Drains the rings every 100 ms and samples scaling_cur_freq each second while the
    // window runs; joined (std::jthread) on every way out of this block.
    std::jthread drainer([&](const std::stop_token& stop) {
      auto next_freq = Clock::now();
      while (!stop.stop_requested()) {
        for (auto& r : sampler.rings) r.drain(records, kMaxSampleBytes, dropped);
        if (fc.source == "scaling_cur_freq" && Clock::now() >= next_freq) {
          for (int cpu : cpus)
            if (auto v = root.read_value(fmt::format("/sys/devices/system/cpu/cpu{}/cpufreq/scaling_cur_freq", cpu)))
              if (auto k = sys::to_int<std::uint64_t>(*v)) cur_khz[cpu].push_back(*k);
          next_freq += std::chrono::seconds(1);
        }
        std::this_thread::sleep_for(std::chrono::milliseconds(100));
      }
    });
    const auto& win = f.window();  // /proc/stat, interrupts and every thread, N seconds apart
    drainer.request_stop();
    drainer.join();
    for (const auto& fd : sampler.fds) disable_event(fd);
    tlb.stop();
    for (auto& r : sampler.rings) r.drain(records, kMaxSampleBytes, dropped);
    w.self_cpu_s = self_cpu_seconds() - cpu_window0;

    w.seconds = win.seconds;
    w.tlb = tlb.counts();
    w.stat_error = win.stat_error;
    collector_busy_and_steal(win, w);
    std::set<int> training_pids;
    for (const auto& p : training.procs) training_pids.insert(p.pid);
    std::map<std::pair<int, int>, int> last_cpu;
    w.threads_error = win.threads_error;
    for (const auto& t : win.threads) {
      last_cpu[{t.pid, t.tid}] = t.last_cpu;
      if (t.pid == f.own_pid() || training_pids.count(t.pid) || t.cpu_share < 0.05) continue;
      w.busy_threads.push_back({t.pid, t.tid, t.comm, t.last_cpu, t.cpu_share});
    }
    // The window's end.
    collector_freq_deltas(fc, w);
    for (auto& [cpu, k] : cur_khz) w.freq.cpus[cpu].cur_khz = std::move(k);
    auto idle1 = read_idle(root, idle_facts);
    collector_idle_deltas(idle1, idle0);
    w.idle = std::move(idle1);
    if (w.idle.empty()) w.idle_error = idle_facts.unread.empty() ? "no CPU has a cpuidle directory (" + (idle_facts.driver.empty() ? idle_facts.driver_reason : "driver " + idle_facts.driver) + ")"
                                                               : idle_facts.unread_reason;
    if (auto h1 = read_hint_faults(root); h1 && hints0) w.numa_hint_faults = *h1 >= *hints0 ? *h1 - *hints0 : 0;
    for (const auto& p : training.procs) {
      TrainingSample t;
      t.pid = p.pid;
      t.comm = p.comm;
      t.how = p.how;
      if (p.allowed && p.allowed->count() < cpus.size()) t.pinned_cpus = p.allowed->members();
      std::string err1;
      auto ends_t = read_threads(f, p.pid, err1);
      for (const auto& e : threads0[p.pid]) training_tid[static_cast<std::uint32_t>(e.first)] = p.pid;
      for (const auto& e : ends_t) training_tid[static_cast<std::uint32_t>(e.first)] = p.pid;
      t.sched_error = thread_errors[p.pid].empty() ? err1 : thread_errors[p.pid];
      for (const auto& [tid, e] : ends_t) {
        auto b = threads0[p.pid].find(tid);
        if (b == threads0[p.pid].end()) continue;
        ThreadSched s;
        s.tid = tid;
        s.comm = e.comm;
        s.run_ns = e.sched.run_ns - std::min(e.sched.run_ns, b->second.sched.run_ns);
        s.wait_ns = e.sched.wait_ns - std::min(e.sched.wait_ns, b->second.sched.wait_ns);
        s.nonvoluntary = e.nonvoluntary - std::min(e.nonvoluntary, b->second.nonvoluntary);
        if (auto lc = last_cpu.find({p.pid, tid}); lc != last_cpu.end()) s.last_cpu = lc->second;
        t.threads.push_back(std::move(s));
      }
      auto& n0 = numa0[p.pid];
      auto n1 = facts::read_numa_maps(f, numa_reader, p.pid, std::chrono::milliseconds(200));
      t.numa_start = n0.maps;
      t.numa_end = n1.maps;
      t.numa_error = !n1.error.empty() ? n1.error : n0.error;
      w.training.push_back(std::move(t));
    }
    if (training.procs.empty())
      for (const auto& pr : training.problems) w.training_note += (w.training_note.empty() ? "" : "; ") + pr;
  }

  collector_rated(o, freq_facts, w);

  collector_decode_samples(f, sampler, records, dropped, cpus, training_tid, kallsyms, symbol_source, w);
  w.setup_cpu_s = self_cpu_seconds() - cpu0 - w.self_cpu_s;
  return w;
}

}  // namespace perfgap::profile
