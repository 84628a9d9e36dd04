// Processes: training-process detection, the sampling window (steal, busy threads,
// interrupts) and numa_maps, read with time bounds because /proc/<pid> reads of a stuck
// process can block and numa_maps makes the kernel walk every page.
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cmath>
#include <cstring>
#include <thread>

#include "facts/facts.hpp"
#include "facts/rdma_counters.hpp"
#include "sys/bounded.hpp"
#include "sys/text.hpp"

namespace perfgap::facts {
namespace {

using Clock = std::chrono::steady_clock;

bool is_pid_name(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

bool has_rank_variable(const parsers::EnvList& env) {
  for (const auto& [k, v] : env)
    if (k == "LOCAL_RANK" || k == "SLURM_LOCALID" || k == "OMPI_COMM_WORLD_LOCAL_RANK") return true;
  return false;
}

// The pid that /proc/self names in a tree (a link to the pid directory), or ours when live.
std::optional<int> self_pid(const sys::Sysroot& root) {
  if (root.is_live()) return static_cast<int>(::getpid());
  auto target = root.readlink("/proc/self");
  if (!target) return std::nullopt;
  std::string_view t = *target;
  if (auto slash = t.rfind('/'); slash != std::string_view::npos) t.remove_prefix(slash + 1);
  return sys::to_int<int>(t);
}

bool fill_status(Facts& f, Process& p, std::string& why) {
  auto path = "/proc/" + std::to_string(p.pid) + "/status";
  auto text = f.read_proc(path);
  if (!text) {
    why = describe(text.error());
    return false;
  }
  auto kv = parsers::parse_key_values(*text);
  if (auto it = kv.find("Name"); it != kv.end()) p.comm = it->second;
  if (auto it = kv.find("PPid"); it != kv.end()) p.ppid = sys::to_int<int>(it->second).value_or(0);
  // A readable but damaged status keeps the process: per-process checks report it as error.
  if (auto it = kv.find("Cpus_allowed_list"); it != kv.end()) {
    p.allowed_text = it->second;
    auto set = parsers::parse_cpulist(it->second);
    if (set) p.allowed = *set;
    else p.allowed_error = path + ": Cpus_allowed_list: " + set.error().describe();
  } else {
    p.allowed_error = path + ": no Cpus_allowed_list";
  }
  return true;
}

}  // namespace

Training detect_training(Facts& f) {
  Training t;
  const auto& root = f.root();
  auto add = [&](int pid, parsers::EnvList env, std::string how) {
    Process p;
    p.pid = pid;
    p.env = std::move(env);
    p.how = std::move(how);
    std::string why;
    if (!fill_status(f, p, why)) {
      t.problems.push_back("pid " + std::to_string(pid) + ": " + why);
      return;
    }
    t.procs.push_back(std::move(p));
  };

  if (!f.options().pids.empty()) {
    t.explicit_pids = true;
    for (int pid : f.options().pids) {
      auto env = f.read_proc("/proc/" + std::to_string(pid) + "/environ");
      if (!env) {
        t.problems.push_back("pid " + std::to_string(pid) + ": " + describe(env.error()));
        continue;
      }
      add(pid, parsers::parse_environ(*env), "--pid");
    }
    return t;
  }

  auto entries = root.list("/proc");
  if (!entries) {
    t.problems.push_back(describe(entries.error()));
    return t;
  }
  auto self = self_pid(root);
  int unreadable = 0;
  for (const auto& name : *entries) {
    if (!is_pid_name(name)) continue;
    auto pid = sys::to_int<int>(name);
    if (!pid || (self && *pid == *self)) continue;
    auto base = "/proc/" + name;
    auto env_text = f.read_proc(base + "/environ");
    if (!env_text) {
      if (env_text.error().kind != sys::ReadError::unavailable || env_text.error().err == EACCES) ++unreadable;
      continue;
    }
    auto env = parsers::parse_environ(*env_text);
    if (!has_rank_variable(env)) continue;
    auto maps = f.read_proc(base + "/maps", 64u << 20);
    if (!maps) {
      t.problems.push_back("pid " + name + ": " + describe(maps.error()));
      continue;
    }
    if (!parsers::maps_mention(*maps, {"libcuda", "libnccl"})) continue;
    add(*pid, std::move(env), "rank variable in environ and libcuda/libnccl in maps");
  }
  for (auto& p : t.procs) {
    for (const auto& parent : t.procs)
      if (parent.pid == p.ppid && parent.local_rank() == p.local_rank()) p.helper = true;
  }
  if (unreadable > 0)
    t.problems.push_back(std::to_string(unreadable) + " processes' environ could not be read" + (root.is_live() && ::geteuid() != 0 ? " (run as root to see every process)" : ""));
  return t;
}

namespace {

struct TaskSample {
  std::map<std::pair<int, int>, parsers::TaskStat> tasks;  // (pid, tid)
  std::string error;
};

TaskSample read_tasks(const sys::Sysroot& root) {
  TaskSample s;
  auto pids = root.list("/proc");
  if (!pids) {
    s.error = describe(pids.error());
    return s;
  }
  for (const auto& p : *pids) {
    if (!is_pid_name(p)) continue;
    int pid = *sys::to_int<int>(p);
    auto tids = root.list("/proc/" + p + "/task");
    if (!tids) continue;  // exited, or a tree that kept only some files
    for (const auto& t : *tids) {
      if (!is_pid_name(t)) continue;
      auto text = root.read("/proc/" + p + "/task/" + t + "/stat", 4096);
      if (!text) continue;
      auto st = parsers::parse_task_stat(*text);
      if (!st) continue;
      s.tasks.emplace(std::make_pair(pid, st->pid), std::move(*st));
    }
  }
  return s;
}

}  // namespace

std::chrono::milliseconds first_sample_window(std::chrono::milliseconds max) { return std::min(kFirstSampleWindow, max); }

namespace {

double user_hz(const Window& w) { return w.live ? static_cast<double>(::sysconf(_SC_CLK_TCK)) : 100.0; }

// Every thread's counters, on the window's own worker: one thread for the window's walks,
// abandoned with its walk when a process hangs the kernel.
TaskSample tasks_bounded(const sys::Sysroot& root, sys::BoundedWorker& reader) {
  auto r = reader.run<TaskSample>([root] { return read_tasks(root); }, std::chrono::seconds(10));
  if (!r) return TaskSample{{}, "reading /proc/*/task/*/stat timed out"};
  return std::move(*r);
}

// The second sample at `end`: /proc/stat, interrupts and every thread, against the first.
void finish_window(Facts& f, sys::BoundedWorker& reader, Window& w, Clock::time_point end) {
  const auto& root = f.root();
  std::this_thread::sleep_until(end);
  const auto t1 = Clock::now();
  w.second = read_parsed(root, "/proc/stat", parsers::parse_proc_stat, w.stat_error);
  w.irq_second = read_parsed(root, "/proc/interrupts", parsers::parse_interrupts, w.irq_error, 16u << 20);
  w.rdma_second = std::make_shared<const RdmaCounterSample>(read_rdma_counters(root));
  auto tasks1 = tasks_bounded(root, reader);
  w.seconds = std::chrono::duration<double>(t1 - w.start).count();
  if (w.threads_error.empty()) w.threads_error = tasks1.error;
  const double hz = user_hz(w);
  w.threads.clear();
  if (!w.first_task_ticks) return;
  for (const auto& [key, st] : tasks1.tasks) {
    auto it = w.first_task_ticks->find(key);
    if (it == w.first_task_ticks->end()) continue;
    const double ticks = static_cast<double>((st.utime + st.stime) - std::min<unsigned long long>(st.utime + st.stime, it->second));
    w.threads.push_back({key.first, key.second, st.comm, st.processor, ticks / hz / w.seconds});
  }
}

}  // namespace

Window sample_window(Facts& f, sys::BoundedWorker& reader) {
  Window w;
  const auto& root = f.root();
  w.live = root.is_live();
  auto read_stat = [&] { return read_parsed(root, "/proc/stat", parsers::parse_proc_stat, w.stat_error); };
  auto read_irq = [&] { return read_parsed(root, "/proc/interrupts", parsers::parse_interrupts, w.irq_error, 16u << 20); };

  const double hz = user_hz(w);  // USER_HZ
  if (!w.live) {
    w.first = read_stat();
    w.second = w.first;
    w.irq_first = read_irq();
    w.irq_second = std::nullopt;
    w.rdma_first = std::make_shared<const RdmaCounterSample>(read_rdma_counters(root));
    w.rdma_second = w.rdma_first;
    auto tasks = tasks_bounded(root, reader);
    w.threads_error = tasks.error;
    auto up = root.read_value("/proc/uptime");
    std::optional<double> uptime;
    if (up) {
      auto fields = sys::split_ws(*up);
      if (!fields.empty()) uptime = sys::to_double(fields[0]);
    }
    if (!uptime) {
      if (w.threads_error.empty()) w.threads_error = "/proc/uptime: not readable, thread CPU shares unknown";
    } else {
      for (const auto& [key, st] : tasks.tasks) {
        double alive = *uptime - static_cast<double>(st.starttime) / hz;
        if (alive <= 0) continue;
        ThreadUse u{key.first, key.second, st.comm, st.processor,
                    static_cast<double>(st.utime + st.stime) / hz / alive};
        w.threads.push_back(std::move(u));
      }
    }
    return w;
  }

  w.start = Clock::now();
  w.first = read_stat();
  w.irq_first = read_irq();
  w.rdma_first = std::make_shared<const RdmaCounterSample>(read_rdma_counters(root));
  auto tasks0 = tasks_bounded(root, reader);
  w.threads_error = tasks0.error;
  auto first = std::make_shared<std::map<std::pair<int, int>, unsigned long long>>();
  for (const auto& [key, st] : tasks0.tasks) first->emplace(key, st.utime + st.stime);
  w.first_task_ticks = std::move(first);
  w.limit = std::max(f.options().sample, f.options().sample_max);
  w.extendable = f.options().sample.count() <= 0;
  w.length = w.extendable ? first_sample_window(f.options().sample_max) : f.options().sample;
  finish_window(f, reader, w, w.start + w.length);
  return w;
}

Window extend_window(Facts& f, sys::BoundedWorker& reader, const Window& base, std::chrono::milliseconds length) {
  Window w;
  w.live = base.live;
  w.start = base.start;
  w.first = base.first;
  w.irq_first = base.irq_first;
  w.rdma_first = base.rdma_first;
  w.stat_error = base.stat_error;
  w.irq_error = base.irq_error;
  w.threads_error = base.first_task_ticks ? std::string() : base.threads_error;
  w.first_task_ticks = base.first_task_ticks;
  w.extendable = base.extendable;
  w.limit = base.limit;
  w.length = length;
  if (!w.first) {  // nothing to go on from: the first sample failed, and so stays the window
    w.second = base.second;
    w.rdma_second = base.rdma_second;
    w.seconds = base.seconds;
    return w;
  }
  finish_window(f, reader, w, w.start + length);
  return w;
}

std::optional<parsers::CpuSet> irq_affinity(const Facts& f, std::string_view irq) {
  std::string dir = "/proc/irq/";  // appended, not "literal" + string: GCC 12 -Warray-bounds misfires on that
  dir += irq;
  auto aff = f.root().read(dir + "/effective_affinity_list");
  if (!aff || sys::trim_ws(*aff).empty()) aff = f.root().read(dir + "/smp_affinity_list");
  if (!aff) return std::nullopt;
  auto set = parsers::parse_cpulist(*aff);
  if (!set) return std::nullopt;
  return *set;
}

NumaMapsRead read_numa_maps(Facts& f, sys::BoundedWorker& reader, int pid, std::chrono::milliseconds budget) {
  const auto& root = f.root();  // copied into the work, which may outlive this call
  const std::string path = "/proc/" + std::to_string(pid) + "/numa_maps";
  auto work = [root, path, budget]() -> NumaMapsRead {
    NumaMapsRead out;
    auto start = Clock::now();
    auto fd = root.open_read(path);
    if (!fd) {
      out.error = describe(fd.error());
      return out;
    }
    // The kernel produces numa_maps a few mappings per read(); stopping between reads bounds
    // the page walk on processes with hundreds of GiB resident.
    std::string text;
    char buf[65536];
    for (;;) {
      ssize_t n = ::read(*fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        out.error = path + ": " + std::strerror(errno);
        break;
      }
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      // A captured tree is finite and static: only a live page walk needs the time budget,
      // and replays must not depend on how busy the machine is.
      if (root.is_live() && Clock::now() - start > budget) {
        out.truncated = true;
        break;
      }
    }
    ::close(*fd);
    out.read_ms = std::chrono::duration<double, std::milli>(Clock::now() - start).count();
    if (!out.error.empty()) return out;
    if (out.truncated) text.erase(text.rfind('\n') == std::string::npos ? 0 : text.rfind('\n') + 1);
    auto parsed = parsers::parse_numa_maps(text);
    if (!parsed) out.error = path + ": " + parsed.error().describe();
    else out.maps = std::move(*parsed);
    return out;
  };
  if (!root.is_live()) return work();
  auto r = reader.run<NumaMapsRead>(work, budget + f.options().proc_read_timeout);
  if (!r) {
    NumaMapsRead out;
    out.error = path + ": read timed out";
    return out;
  }
  return std::move(*r);
}

}  // namespace perfgap::facts
