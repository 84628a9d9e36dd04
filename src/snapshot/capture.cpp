#include "snapshot/capture.hpp"

#include <fnmatch.h>
#include <sys/stat.h>
#include <sys/utsname.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cmath>
#include <ctime>
#include <functional>
#include <memory>
#include <optional>
#include <set>
#include <unordered_map>

#include <nlohmann/json.hpp>

#include "core/node.hpp"
#include "core/check.hpp"
#include "facts/facts.hpp"
#include "facts/gpu.hpp"
#include "facts/nccl.hpp"
#include "facts/reads.hpp"
#include "report/redact.hpp"
#include "sys/bounded.hpp"
#include "sys/text.hpp"

namespace perfgap::snapshot {
namespace {

using Clock = std::chrono::steady_clock;

constexpr int kMaxLinkHops = 40;  // the kernel's MAXSYMLINKS: a cycle ends here
constexpr std::size_t kMaxSkippedListed = 1000;

bool is_glob(std::string_view c) { return c.find_first_of("*?[") != std::string_view::npos; }

bool is_pid_name(std::string_view s) {
  return !s.empty() && s.find_first_not_of("0123456789") == std::string_view::npos;
}

std::vector<std::string> components(std::string_view path) {
  std::vector<std::string> out;
  for (auto part : sys::split(path, '/'))
    if (!part.empty()) out.emplace_back(part);
  return out;
}

std::string parent_of(const std::string& path) {
  auto slash = path.rfind('/');
  return slash == 0 || slash == std::string::npos ? std::string("/") : path.substr(0, slash);
}

std::string mib(std::size_t bytes) { return std::to_string(bytes >> 20) + " MiB"; }

// "/proc/<digits>/<name>" or "/proc/self/<name>": the file name, else "".
std::string_view proc_file(std::string_view path) {
  if (!sys::starts_with(path, "/proc/")) return {};
  auto rest = path.substr(6);
  auto slash = rest.find('/');
  if (slash == std::string_view::npos) return {};
  auto owner = rest.substr(0, slash);
  if (owner != "self" && !is_pid_name(owner)) return {};
  return rest.substr(slash + 1);
}

struct Part {
  std::string text;
  bool pattern = false;
};

std::vector<Part> parts_of(std::string_view path, bool literal) {
  std::vector<Part> out;
  for (auto& c : components(path)) out.push_back({c, !literal && is_glob(c)});
  return out;
}

// What one walk collected; merged into the Capture by the caller.
struct Haul {
  std::map<std::string, Entry> entries;
  std::vector<Skipped> skipped;
  void skip(std::string path, std::string reason) { skipped.push_back({std::move(path), std::move(reason)}); }
};

struct WalkConfig {
  bool live = false;
  std::size_t max_file_bytes = 4u << 20;
  std::chrono::milliseconds numa_maps_budget{500};
  // The names the "/proc/<glob>" level may take (processes to capture); nullopt: a listing.
  std::optional<std::vector<std::string>> proc_names;
};

// Follows declared patterns through a Sysroot: globs expand against directory listings,
// links are recorded and resolved one component at a time, so only what the pattern needs
// behind a link is captured and a cycle ends after kMaxLinkHops.
class Walker {
 public:
  Walker(sys::Sysroot source, WalkConfig config, Haul& haul)
      : source_(std::move(source)), config_(std::move(config)), haul_(haul) {}

  // Captures what `pattern` names; returns how many objects it matched. `cap`: the largest
  // file kept (0: the default for the path).
  std::size_t expand(std::string_view pattern, bool literal = false, std::size_t cap = 0) {
    cap_ = cap;
    std::size_t count = 0;
    walk("/", parts_of(pattern, literal), 0, 0, count);
    return count;
  }

 private:
  struct Node {
    enum Kind { absent, link, dir, file, device, other, unreadable } kind = absent;
    std::string target;  // link
    std::string reason;  // unreadable
    bool char_device = false;
  };

  const Node& probe(const std::string& path) {
    auto it = probed_.find(path);
    if (it != probed_.end()) return it->second;
    Node n;
    // Live, /proc/self is a link to our own pid; the contract wants the audited process's
    // files as real files under proc/self, so it is walked as the directory it names.
    if (config_.live && path == "/proc/self") {
      n.kind = Node::dir;
      return probed_.emplace(path, n).first->second;
    }
    auto target = source_.readlink(path);
    if (target && target->empty()) {
      n.kind = Node::absent;  // no kernel makes one; a foreign tree could
    } else if (target) {
      n.kind = Node::link;
      n.target = *target;
    } else if (target.error().err == ENOENT || target.error().err == ENOTDIR) {
      n.kind = Node::absent;
    } else {
      auto st = source_.stat(path);
      if (!st) {
        n.kind = st.error().err == ENOENT || st.error().err == ENOTDIR ? Node::absent : Node::unreadable;
        n.reason = st.error().reason();
      } else if (S_ISDIR(st->st_mode)) {
        n.kind = Node::dir;
      } else if (S_ISREG(st->st_mode)) {
        n.kind = Node::file;
      } else if (S_ISCHR(st->st_mode) || S_ISBLK(st->st_mode)) {
        n.kind = Node::device;
        n.char_device = S_ISCHR(st->st_mode);
      } else {
        n.kind = Node::other;
      }
    }
    return probed_.emplace(path, std::move(n)).first->second;
  }

  const std::vector<std::string>* list(const std::string& dir) {
    auto it = listed_.find(dir);
    if (it != listed_.end()) return &it->second;
    std::vector<std::string> names;
    if (dir == "/proc" && config_.proc_names) {
      names = *config_.proc_names;
    } else {
      auto r = source_.list(dir);
      if (!r) {
        if (r.error().err != ENOENT && r.error().err != ENOTDIR) haul_.skip(dir, "cannot list: " + r.error().reason());
        return nullptr;
      }
      names = std::move(*r);
      // Live, our own threads are not the node's: check leaves its own process out too.
      if (config_.live && dir == "/proc") std::erase(names, std::to_string(::getpid()));
    }
    return &listed_.emplace(dir, std::move(names)).first->second;
  }

  void walk(const std::string& dir, const std::vector<Part>& parts, std::size_t i, int hops, std::size_t& count) {
    if (i == parts.size()) {
      record_dir(dir);
      ++count;
      return;
    }
    const auto& part = parts[i];
    if (part.pattern) {
      const auto* names = list(dir);
      if (!names) return;
      record_dir(dir);  // an empty directory is an answer too ("no RDMA devices")
      for (const auto& name : *names)
        if (component_matches(part.text, name)) step(dir, name, parts, i, hops, count);
      return;
    }
    if (part.text == ".") return walk(dir, parts, i + 1, hops, count);
    if (part.text == "..") return walk(parent_of(dir), parts, i + 1, hops, count);
    step(dir, part.text, parts, i, hops, count);
  }

  void step(const std::string& dir, const std::string& name, const std::vector<Part>& parts, std::size_t i, int hops,
            std::size_t& count) {
    const std::string path = sys::join(dir, name);
    const Node& node = probe(path);
    const bool last = i + 1 == parts.size();
    switch (node.kind) {
      case Node::absent:
        return;
      case Node::unreadable:
        haul_.skip(path, node.reason);
        return;
      case Node::link: {
        haul_.entries.emplace(path, Entry{Entry::link, node.target});
        if (hops >= kMaxLinkHops) {
          haul_.skip(path, "too many levels of symbolic links (a cycle): links kept, not followed further");
          return;
        }
        // The rest of the walk goes on from the link's target, whose own components are
        // names, never patterns. Absolute targets start at the root of the source (a tree's
        // absolute links resolve inside it, as check --root resolves them).
        std::vector<Part> next = parts_of(node.target, true);
        next.insert(next.end(), parts.begin() + static_cast<std::ptrdiff_t>(i) + 1, parts.end());
        if (next.empty()) {
          ++count;  // a link to "/" (or to "."): the link is what there is to keep
          return;
        }
        walk(node.target.front() == '/' ? std::string("/") : dir, next, 0, hops + 1, count);
        return;
      }
      case Node::dir:
        return walk(path, parts, i + 1, hops, count);
      case Node::file:
      case Node::device:
      case Node::other:
        // A file where the pattern wants a directory is kept too: the replay then fails to
        // list it as the live run does ("not a directory", not "not present").
        if (last) ++count;
        capture_leaf(path, node);
        return;
    }
  }

  void record_dir(const std::string& dir) {
    if (dir != "/") haul_.entries.emplace(dir, Entry{Entry::dir, {}});
  }

  std::size_t cap_for(const std::string& path) const {
    if (cap_ != 0) return cap_;
    auto pf = proc_file(path);
    if (pf == "maps") return 64u << 20;  // what process detection accepts
    if (path == "/proc/interrupts" || sys::starts_with(path, "/boot/config-")) return 16u << 20;
    if (path == "/proc/config.gz") return 8u << 20;
    if (path == "/.perfgap/dmesg.txt") return 64u << 20;
    return config_.max_file_bytes;
  }

  void capture_leaf(const std::string& path, const Node& node) {
    if (haul_.entries.count(path)) return;
    if (node.kind == Node::other) {
      haul_.skip(path, "not a regular file, directory, link or device node (a FIFO or socket)");
      return;
    }
    if (node.kind == Node::device) {
      // Device nodes are never opened (a GPU would initialise), except the PM QoS one,
      // whose read returns the current limit as 4 bytes.
      std::string content;
      if (path == "/dev/cpu_dma_latency" && node.char_device) {
        auto v = source_.read(path, 64);
        if (v && v->size() == 4) content = *v;
        else haul_.skip(path, v ? "read " + std::to_string(v->size()) + " bytes, expected 4: kept empty (unknown)"
                                : v.error().reason() + ": kept empty (unknown)");
      }
      haul_.entries.emplace(path, Entry{Entry::file, std::move(content)});
      return;
    }
    const auto file = proc_file(path);
    if (file == "numa_maps") return capture_numa_maps(path);
    const auto cap = cap_for(path);
    auto text = source_.read(path, cap);
    if (!text) {
      const auto& e = text.error();
      if (e.err == ENOENT) return;  // gone since it was listed (an exited thread)
      haul_.skip(path, e.kind == sys::ReadError::too_large ? "larger than " + mib(cap) : e.reason());
      return;
    }
    if (file == "environ") *text = report::redact_environ(*text);
    haul_.entries.emplace(path, Entry{Entry::file, std::move(*text)});
  }

  // numa_maps makes the kernel walk every page of the process: read it as the check does,
  // for at most the check's time budget, keeping whole lines.
  void capture_numa_maps(const std::string& path) {
    auto fd = source_.open_read(path);
    if (!fd) {
      if (fd.error().err != ENOENT) haul_.skip(path, fd.error().reason());
      return;
    }
    const auto start = Clock::now();
    std::string text;
    char buf[65536];
    bool cut = false;
    for (;;) {
      ssize_t n = ::read(*fd, buf, sizeof buf);
      if (n < 0 && errno == EINTR) continue;
      if (n < 0) {
        int err = errno;
        ::close(*fd);
        haul_.skip(path, sys::ReadError{sys::ReadError::failed, err, path}.reason());
        return;
      }
      if (n == 0) break;
      text.append(buf, static_cast<std::size_t>(n));
      if (text.size() > config_.max_file_bytes * 16 || Clock::now() - start > config_.numa_maps_budget) {
        cut = true;
        break;
      }
    }
    ::close(*fd);
    if (cut) {
      auto nl = text.rfind('\n');
      text.erase(nl == std::string::npos ? 0 : nl + 1);
      haul_.skip(path, "partial: reading stopped after " + std::to_string(config_.numa_maps_budget.count()) +
                           " ms, as numa.remote_memory stops (" + std::to_string(text.size()) + " bytes kept)");
    }
    haul_.entries.emplace(path, Entry{Entry::file, std::move(text)});
  }

  sys::Sysroot source_;
  WalkConfig config_;
  Haul& haul_;
  std::size_t cap_ = 0;
  std::unordered_map<std::string, Node> probed_;
  std::unordered_map<std::string, std::vector<std::string>> listed_;
};

void merge(Capture& c, Haul&& h) {
  for (auto& [path, e] : h.entries) c.entries.emplace(path, std::move(e));
  for (auto& s : h.skipped) c.skipped.push_back(std::move(s));
}

// /dev/kmsg without blocking, one record per read until EAGAIN, keeping the last `max`
// bytes. EPIPE means the ring overwrote the next record: reading goes on after it.
sys::ReadResult<std::string> kernel_log_tail(const sys::Sysroot& live, std::size_t max) {
  auto fd = live.open_read("/dev/kmsg");
  if (!fd) return tl::unexpected(fd.error());
  std::string text;
  char buf[8192];
  const auto deadline = Clock::now() + std::chrono::seconds(2);  // a flood of new records ends too
  for (;;) {
    ssize_t n = ::read(*fd, buf, sizeof buf);
    if (n < 0 && (errno == EINTR || errno == EPIPE)) continue;
    if (n < 0 && errno == EAGAIN) break;
    if (n < 0) {
      int err = errno;
      ::close(*fd);
      return tl::unexpected(sys::ReadError{sys::ReadError::failed, err, "/dev/kmsg"});
    }
    if (n == 0 || Clock::now() > deadline) break;
    text.append(buf, static_cast<std::size_t>(n));
    if (text.size() > 2 * max) text.erase(0, text.find('\n', text.size() - max) + 1);
  }
  ::close(*fd);
  if (text.size() > max) text.erase(0, text.find('\n', text.size() - max) + 1);
  return text;
}

bool is_process_pattern(std::string_view pattern) {
  auto parts = components(pattern);
  return parts.size() > 2 && parts[0] == "proc" && is_glob(parts[1]);
}

}  // namespace

bool component_matches(std::string_view pattern, std::string_view name) {
  return ::fnmatch(std::string(pattern).c_str(), std::string(name).c_str(), 0) == 0;
}

std::uint64_t Capture::file_bytes() const {
  std::uint64_t n = 0;
  for (const auto& [path, e] : entries)
    if (e.kind == Entry::file) n += e.content.size();
  return n;
}

std::size_t Capture::count(Entry::Kind kind) const {
  return static_cast<std::size_t>(std::count_if(entries.begin(), entries.end(), [&](const auto& e) { return e.second.kind == kind; }));
}

std::vector<Matched> declared_patterns() {
  std::map<std::string, std::vector<std::string>> by_pattern;
  for (const auto& c : core::builtin_registry().all())
    for (auto r : c.reads) {
      auto& ids = by_pattern[std::string(r)];
      if (std::find(ids.begin(), ids.end(), c.id) == ids.end()) ids.emplace_back(c.id);
    }
  // What the report's node section reads (core::describe_node), declared like a check's, so
  // that a replay names the node as the live run does.
  for (std::string_view r : core::node_reads()) {
    auto& ids = by_pattern[std::string(r)];
    if (std::find(ids.begin(), ids.end(), "report.node") == ids.end()) ids.emplace_back("report.node");
  }
  std::vector<Matched> out;
  for (const auto& [pattern, ids] : by_pattern) {
    std::string why = "declared by ";
    for (std::size_t i = 0; i < ids.size(); ++i) why += (i ? ", " : "") + ids[i];
    out.push_back({pattern, why, 0});
  }
  return out;
}

namespace {

// Per-process files of the training processes, each process on a worker that is left
// behind when the process is stuck in the kernel. Every process's thread statistics
// (task/*/stat: names and CPU counters, no secrets) are kept too: placement.shared_cores
// looks for other busy threads on the training cores, and a replay without them would
// see none and pass.
void capture_processes(const sys::Sysroot& source, const Options& opts, const WalkConfig& config, const std::vector<std::string>& pid_names,
                       const std::vector<Matched*>& process_patterns, Capture& c) {
  using Result = std::pair<Haul, std::vector<std::size_t>>;
  std::vector<std::pair<std::function<Result()>, std::chrono::milliseconds>> jobs;
  const auto per_process = opts.proc_read_timeout + opts.numa_maps_budget;
  std::vector<std::string> job_names;
  std::vector<std::string> process_pattern_text;
  process_pattern_text.reserve(process_patterns.size());
  for (auto* m : process_patterns) process_pattern_text.push_back(m->pattern);
  for (const auto& pid : pid_names) {
    WalkConfig one = config;
    one.proc_names = std::vector<std::string>{pid};
    jobs.emplace_back(
        [source, one, process_pattern_text]() {
          Result r;
          Walker w(source, one, r.first);
          for (const auto& p : process_pattern_text) r.second.push_back(w.expand(p));
          return r;
        },
        per_process);
    job_names.push_back("/proc/" + pid);
  }
  const std::string thread_stats = "/proc/[0-9]*/task/[0-9]*/stat";
  {
    WalkConfig every = config;
    every.proc_names.reset();
    // As long as check gives the same walk (facts: 10 s), for nodes with many threads.
    jobs.emplace_back(
        [source, every, thread_stats]() {
          Result r;
          Walker w(source, every, r.first);
          r.second.push_back(w.expand(thread_stats));
          return r;
        },
        std::chrono::milliseconds(10000));
    job_names.push_back(thread_stats + " (every process)");
  }
  std::vector<std::chrono::milliseconds> bounds;
  bounds.reserve(jobs.size());
  for (const auto& j : jobs) bounds.push_back(j.second);
  // A small pool, not a thread per process: a node's dozens of ranks and loader workers are
  // read in turn by a few threads, and a stuck one costs only its own thread and slot.
  auto results = sys::run_batch_bounded(std::move(jobs), 4);
  std::size_t thread_stat_count = 0;
  for (std::size_t j = 0; j < results.size(); ++j) {
    auto& r = results[j];
    if (!r) {
      c.skipped.push_back({job_names[j], "read timed out after " + std::to_string(bounds[j].count()) +
                                             " ms (a process stuck in the kernel): not captured"});
      continue;
    }
    const bool every_process = j + 1 == results.size();
    if (every_process) {
      thread_stat_count = r->second.front();
    } else {
      for (std::size_t k = 0; k < process_patterns.size(); ++k) process_patterns[k]->count += r->second[k];
    }
    merge(c, std::move(r->first));
  }
  for (auto* m : process_patterns)
    if (m->pattern == thread_stats) m->count = thread_stat_count;
}

// What only a live node has: the machine's architecture, the kernel log tail and perfgap-gpu's
// NVML documents, each added to the patterns with its count.
void capture_live_extras(const sys::Sysroot& source, const Options& opts, facts::Facts& facts, std::vector<Matched>& patterns, Capture& c) {
  // The machine's own architecture name, for kernels without the kernel.arch sysctl: a
  // replay must not have to guess it from cpuinfo.
  struct utsname u {};
  if (::uname(&u) == 0) {
    c.entries.insert_or_assign("/.perfgap/uname-machine", Entry{Entry::file, std::string(u.machine) + "\n"});
    patterns.push_back({"/.perfgap/uname-machine", "the machine's architecture (uname -m)", 1});
  }
  auto log = kernel_log_tail(source, opts.max_kernel_log_bytes);
  Matched m{"/.perfgap/dmesg.txt", "the kernel log tail (/dev/kmsg, last " + mib(opts.max_kernel_log_bytes) + ")", 0};
  if (log) {
    c.entries.insert_or_assign("/.perfgap/dmesg.txt", Entry{Entry::file, std::move(*log)});
    m.count = 1;
  } else {
    std::string why = log.error().reason();
    if (log.error().err == EPERM || log.error().err == EACCES) why += " (kernel.dmesg_restrict: run as root)";
    c.skipped.push_back({"/dev/kmsg", why + ": no kernel log captured"});
  }
  patterns.push_back(std::move(m));
  // perfgap-gpu's documents (facts/gpu.hpp, both runs), which gpu.* replays under --root,
  // or why there are none, so the replay says why rather than "not captured".
  const auto& nvml = facts::nvml_samples(facts);
  Matched n{facts::kNvmlFirstPath, std::string("perfgap-gpu's NVML documents (two runs") + (opts.nvml ? ", --nvml)" : ")"), 0};
  if (nvml) {
    c.entries.insert_or_assign(facts::kNvmlFirstPath, Entry{Entry::file, nvml->first.json});
    n.count = 1;
    if (nvml->second) {
      c.entries.insert_or_assign(facts::kNvmlSecondPath, Entry{Entry::file, nvml->second->json});
      ++n.count;
    } else {
      c.skipped.push_back({facts::kNvmlSecondPath, nvml->second_why});
    }
  } else {
    c.entries.insert_or_assign(facts::kNvmlWhyPath, Entry{Entry::file, nvml.error() + "\n"});
    c.skipped.push_back({facts::kNvmlFirstPath, nvml.error()});
  }
  patterns.push_back(std::move(n));
}

}  // namespace

Capture capture(const sys::Sysroot& source, const Options& opts) {
  const auto t0 = Clock::now();
  Capture c;
  c.live = source.is_live();
  c.source_root = source.root();
  c.started_at = sys::rfc3339_utc(std::time(nullptr));
  if (auto h = source.read_value("/proc/sys/kernel/hostname"); h && !h->empty()) {
    c.hostname = *h;
  } else if (c.live) {
    struct utsname u {};
    if (::uname(&u) == 0) c.hostname = u.nodename;
  }

  // The training processes, found as check finds them (same facts layer, same bounds).
  facts::Options fopts;
  fopts.pids = opts.pids;
  fopts.proc_read_timeout = opts.proc_read_timeout;
  fopts.nvml = opts.nvml;
  facts::Facts facts(source, fopts);
  const auto& training = facts.training();
  std::vector<std::string> pid_names;
  for (const auto& p : training.procs) {
    c.training_pids.push_back(p.pid);
    pid_names.push_back(std::to_string(p.pid));
  }
  c.process_problems = training.problems;

  WalkConfig config;
  config.live = c.live;
  config.max_file_bytes = opts.max_file_bytes;
  config.numa_maps_budget = opts.numa_maps_budget;
  config.proc_names = pid_names;

  auto patterns = declared_patterns();
  std::vector<Matched*> process_patterns;
  {
    Haul haul;
    Walker walker(source, config, haul);
    for (auto& m : patterns) {
      if (facts::is_named_read(m.pattern)) continue;  // resolved below, with the node's settings
      if (is_process_pattern(m.pattern)) process_patterns.push_back(&m);
      else m.count = walker.expand(m.pattern);
    }
    merge(c, std::move(haul));
  }

  capture_processes(source, opts, config, pid_names, process_patterns, c);

  // Files no check can declare: the kernel log and the machine's architecture; then the
  // files the checks declare by placeholder.
  Haul extra;
  Walker walker(source, config, extra);
  if (c.live) capture_live_extras(source, opts, facts, patterns, c);
  // Files declared by a placeholder (facts/reads.hpp: $NCCL_CONF_FILE, ~/.nccl.conf,
  // $NCCL_TOPO_FILE): the paths they name here, as check resolves them, each listed as a
  // pattern of its own after the placeholder (whose count is theirs together).
  std::vector<Matched> named;
  for (auto& m : patterns) {
    if (!facts::is_named_read(m.pattern)) continue;
    for (const auto& path : facts::named_read_paths(facts, m.pattern)) {
      const std::string why = m.pattern + " (" + m.why + ")";
      if (path.front() != '/') {
        c.skipped.push_back({path, why + ": a relative path, unknown outside the job's working directory"});
        continue;
      }
      named.push_back({path, why, walker.expand(path, true, facts::kMaxTopoBytes)});
      m.count += named.back().count;
    }
  }
  for (auto& m : named) patterns.push_back(std::move(m));
  merge(c, std::move(extra));

  c.matched = std::move(patterns);
  c.duration_ms = std::chrono::duration<double, std::milli>(Clock::now() - t0).count();
  return c;
}

std::string manifest_json(const Capture& c, const std::string& tool_version) {
  nlohmann::ordered_json j;
  j["schema"] = "perfgap.snapshot/1";
  j["tool"] = {{"name", "perfgap"}, {"version", tool_version}};
  j["created_at"] = c.started_at;
  j["hostname"] = c.hostname;
  j["source"] = {{"kind", c.live ? "live" : "root"}, {"root", c.live ? nlohmann::ordered_json(nullptr) : nlohmann::ordered_json(c.source_root)}};
  j["duration_ms"] = std::llround(c.duration_ms);
  j["training_pids"] = c.training_pids;
  j["process_problems"] = c.process_problems;
  j["counts"] = {{"files", c.count(Entry::file)}, {"dirs", c.count(Entry::dir)}, {"links", c.count(Entry::link)},
                 {"file_bytes", c.file_bytes()}, {"skipped", c.skipped.size()}};
  auto captured = nlohmann::ordered_json::array();
  for (const auto& m : c.matched) captured.push_back({{"pattern", m.pattern}, {"matched", m.count}, {"why", m.why}});
  j["captured"] = std::move(captured);
  auto skipped = nlohmann::ordered_json::array();
  for (std::size_t i = 0; i < c.skipped.size() && i < kMaxSkippedListed; ++i)
    skipped.push_back({{"path", c.skipped[i].path}, {"reason", c.skipped[i].reason}});
  j["skipped"] = std::move(skipped);
  j["skipped_not_listed"] = c.skipped.size() > kMaxSkippedListed ? c.skipped.size() - kMaxSkippedListed : 0;
  // Invalid UTF-8 (a hostname, a root or a path of the tree) becomes U+FFFD, as in check's JSON report.
  return j.dump(2, ' ', false, nlohmann::ordered_json::error_handler_t::replace) + "\n";
}

}  // namespace perfgap::snapshot
