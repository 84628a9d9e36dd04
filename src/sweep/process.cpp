#include "sweep/process.hpp"

#include <signal.h>  // NOLINT(modernize-deprecated-headers): sigaction and kill are POSIX, not in <csignal>
#include <sys/prctl.h>
#include <sys/wait.h>
#include <unistd.h>

#include <fmt/format.h>

#include <atomic>
#include <cerrno>
#include <chrono>
#include <cstdlib>
#include <cstdio>
#include <cstring>
#include <string_view>
#include <thread>
#include <vector>

#include "sys/paths.hpp"
#include "sys/process.hpp"
#include "sys/stop_signals.hpp"

extern char** environ;

namespace perfgap::sweep {
namespace {

using Clock = std::chrono::steady_clock;

bool write_all(int fd, const char* p, std::size_t n) {
  while (n > 0) {
    ssize_t w = ::write(fd, p, n);
    if (w < 0) {
      if (errno == EINTR) continue;
      return false;
    }
    p += w;
    n -= static_cast<std::size_t>(w);
  }
  return true;
}

// Keeps the first head_bytes (written to the file as they come, so a killed perfgap still
// leaves them) and the last tail_bytes (written at the end).
class BoundedSink {
 public:
  BoundedSink(int fd, const RunLimits& l) : fd_(fd), head_(l.head_bytes), tail_cap_(l.tail_bytes) {}
  void add(std::string_view text) {
    const char* p = text.data();
    std::size_t n = text.size();
    total_ += n;
    if (written_ < head_) {
      std::size_t k = std::min(n, head_ - written_);
      write_all(fd_, p, k);
      kept_.append(p, k);
      written_ += k;
      p += k;
      n -= k;
    }
    if (n == 0) return;
    tail_.append(p, n);
    if (tail_.size() > 2 * tail_cap_ + 65536) tail_.erase(0, tail_.size() - tail_cap_);
  }
  void finish(std::string& kept, bool& truncated) {
    std::size_t drop = tail_.size() > tail_cap_ ? tail_.size() - tail_cap_ : 0;
    const bool dropping = total_ - written_ > tail_.size() - drop;
    if (dropping) {
      // Restart the tail at a line so the parser sees whole lines.
      auto nl = tail_.find('\n', drop);
      if (nl != std::string::npos) drop = nl + 1;
      std::string note = fmt::format("\n[perfgap: {} bytes of output dropped here]\n", total_ - written_ - (tail_.size() - drop));
      write_all(fd_, note.data(), note.size());
      kept_ += note;
      tail_.erase(0, drop);
      truncated = true;
    }
    write_all(fd_, tail_.data(), tail_.size());
    kept_ += tail_;
    kept = std::move(kept_);
  }
  std::uint64_t total() const { return total_; }

 private:
  int fd_;
  std::size_t head_, tail_cap_, written_ = 0;
  std::uint64_t total_ = 0;
  std::string kept_, tail_;
};

}  // namespace

InterruptGuard::InterruptGuard() {
  // Descendants of a benchmark that leave its process group (setsid, a daemonising double
  // fork) become our children when their parent exits, instead of init's: stop_orphans()
  // finds and stops them after every run.
  ::prctl(PR_SET_CHILD_SUBREAPER, 1, 0, 0, 0);
}

InterruptGuard::~InterruptGuard() {
  ::prctl(PR_SET_CHILD_SUBREAPER, 0, 0, 0, 0);
}

void stop_orphans(double grace_s) {
  auto reap = [] {
    while (::waitpid(-1, nullptr, WNOHANG) > 0) {
    }
  };
  reap();
  auto left = sys::own_children();
  if (left.empty()) return;
  for (pid_t p : left) ::kill(p, SIGTERM);
  const auto until = Clock::now() + std::chrono::milliseconds(static_cast<long>(grace_s * 1000));
  while (Clock::now() < until) {
    reap();
    if (sys::own_children().empty()) return;
    std::this_thread::sleep_for(std::chrono::milliseconds(20));
  }
  for (pid_t p : sys::own_children()) ::kill(p, SIGKILL);
  for (int i = 0; i < 100 && !sys::own_children().empty(); ++i) {
    reap();
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  reap();
}

int interrupt_signal() { return sys::StopSignals::pending(); }

ProcessResult run_process(const std::vector<std::string>& argv, const std::vector<std::string>& env, const std::string& log_path,
                          const RunLimits& limits, std::string& kept) {
  ProcessResult res;
  kept.clear();
  int log_fd = sys::create_file(log_path);
  if (log_fd < 0) {
    res.spawn_error = fmt::format("cannot write {}: {}", log_path, std::strerror(errno));
    return res;
  }
  BoundedSink sink(log_fd, limits);
  sys::CommandOptions o;
  o.timeout = std::chrono::milliseconds(limits.timeout_s > 0 ? std::max(1LL, static_cast<long long>(limits.timeout_s * 1000)) : 0);  // 0: none
  o.environment = env;
  o.merge_stderr = true;
  o.on_output = [&sink](std::string_view text) { sink.add(text); };
  // Ctrl-C stops the launcher and every rank it started, as a timeout does; a terminal's
  // Ctrl-C reaches perfgap only (the benchmark has its own process group).
  o.term_grace = o.exit_drain = std::chrono::milliseconds(static_cast<long long>(limits.grace_s * 1000));
  o.stop = sys::StopSignals::flag();
  auto r = sys::run_command(argv, o);
  if (!r.started) {
    res.spawn_error = r.error;
    ::close(log_fd);
    return res;
  }
  res.exit_code = r.exit_code;
  res.signal = r.signal;
  res.timed_out = r.timed_out;
  res.interrupted = r.stopped;
  res.duration_s = r.duration_s;
  sink.finish(kept, res.truncated);
  res.output_bytes = sink.total();
  ::close(log_fd);
  // Whatever escaped the process group is stopped too, so no run outlives its turn.
  stop_orphans(limits.grace_s);
  return res;
}

std::string launcher_version(const std::string& launcher) {
  std::string tmpl = "/tmp/perfgap-sweep-version-XXXXXX";
  if (!sys::make_temp_file(tmpl)) return {};
  std::vector<std::string> env;
  for (char** e = environ; *e; ++e) env.emplace_back(*e);
  RunLimits l;
  l.timeout_s = 5;
  l.grace_s = 1;
  l.head_bytes = 65536;
  l.tail_bytes = 0;
  std::string text;
  run_process({launcher, "--version"}, env, tmpl, l, text);
  sys::remove_path(tmpl);
  return text;
}

}  // namespace perfgap::sweep
