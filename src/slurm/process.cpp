#include "slurm/process.hpp"

#include <fcntl.h>
#include <poll.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): kill() is POSIX, not in <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <cerrno>
#include <algorithm>
#include <cctype>
#include <cstring>
#include <optional>
#include <thread>

#include "sys/spawn.hpp"

extern char** environ;

namespace perfgap::slurm {
namespace {

using Clock = std::chrono::steady_clock;

std::vector<std::string> child_environment(const std::vector<std::pair<std::string, std::string>>& overrides) {
  std::vector<std::string> env;
  for (char** e = environ; e && *e; ++e) {
    std::string_view kv(*e);
    bool replaced = false;
    for (const auto& [k, v] : overrides)
      replaced = replaced || (kv.size() > k.size() && kv.substr(0, k.size()) == k && kv[k.size()] == '=');
    if (!replaced) env.emplace_back(kv);
  }
  for (const auto& [k, v] : overrides)
    if (!v.empty()) env.push_back(k + "=" + v);
  return env;
}

int decode_status(int st) { return WIFEXITED(st) ? WEXITSTATUS(st) : WIFSIGNALED(st) ? 128 + WTERMSIG(st) : -1; }

// Stops the child's whole process group: TERM first when a grace period is asked for.
void stop_group(pid_t pid, std::chrono::milliseconds grace) {
  if (grace.count() > 0) {
    ::kill(-pid, SIGTERM);
    auto until = Clock::now() + grace;
    while (Clock::now() < until) {
      int st;
      if (::waitpid(pid, &st, WNOHANG) == pid) {
        // Reaped early: put the status back for the caller by killing nothing more.
        ::kill(-pid, SIGKILL);  // stragglers of the group
        errno = 0;
        return;
      }
      std::this_thread::sleep_for(std::chrono::milliseconds(20));
    }
  }
  ::kill(-pid, SIGKILL);
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options) {
  CommandResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if (options.capture_output && (::pipe2(out_pipe, O_CLOEXEC) != 0 || ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    for (int fd : {out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]})
      if (fd >= 0) ::close(fd);
    return r;
  }
  auto spawned = sys::spawn_in_own_group(argv, child_environment(options.env), options.capture_output ? out_pipe[1] : 2,
                                         options.capture_output ? err_pipe[1] : -1);  // else our stdout stays for the report
  if (options.capture_output) {
    ::close(out_pipe[1]);
    ::close(err_pipe[1]);
  }
  if (!spawned) {
    if (options.capture_output) {
      ::close(out_pipe[0]);
      ::close(err_pipe[0]);
    }
    r.error = spawned.error();
    return r;
  }
  const pid_t pid = *spawned;
  r.started = true;
  auto deadline = Clock::now() + options.timeout;
  auto stop_asked = [&] {
    if (!options.stop || !*options.stop || r.stopped) return false;
    r.stopped = true;
    deadline = Clock::now();  // handled as the deadline: the group is stopped
    return true;
  };
  auto remaining_ms = [&] {
    auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
    return static_cast<int>(std::max<long long>(0, std::min<long long>(left, options.stop ? 100 : 1000)));
  };

  if (options.capture_output) {
    pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
    int open_fds = 2;
    char buf[65536];
    // After a kill, descendants that left the group may still hold the pipes: read a little
    // longer, then give up on them.
    std::optional<Clock::time_point> drain_until;
    while (open_fds > 0) {
      stop_asked();
      if (!r.timed_out && Clock::now() >= deadline) {
        r.timed_out = true;
        stop_group(pid, options.term_grace);
        drain_until = Clock::now() + std::chrono::seconds(1);
      }
      if (drain_until && Clock::now() >= *drain_until) break;
      int n = ::poll(fds, 2, r.timed_out ? 100 : std::max(1, remaining_ms()));
      if (n < 0 && errno != EINTR) break;
      for (auto& p : fds) {
        if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
        ssize_t got = ::read(p.fd, buf, sizeof buf);
        if (got <= 0) {
          ::close(p.fd);
          p.fd = -1;
          --open_fds;
        } else {
          (&p == &fds[0] ? r.out : r.err).append(buf, static_cast<std::size_t>(got));
        }
      }
    }
    for (auto& p : fds)
      if (p.fd >= 0) ::close(p.fd);
  }
  // Output closed (or not captured): wait for the exit within what is left of the time.
  int st = 0;
  for (;;) {
    pid_t w = ::waitpid(pid, &st, WNOHANG);
    if (w == pid) {
      r.status = decode_status(st);
      break;
    }
    if (w < 0 && errno != EINTR) break;
    stop_asked();
    if (!r.timed_out && Clock::now() >= deadline) {
      r.timed_out = true;
      stop_group(pid, options.term_grace);
    } else if (r.timed_out) {
      ::kill(-pid, SIGKILL);
      if (::waitpid(pid, &st, 0) == pid) r.status = decode_status(st);
      break;
    }
    std::this_thread::sleep_for(std::chrono::milliseconds(10));
  }
  if (r.timed_out) ::kill(-pid, SIGKILL);  // anything of the group still there
  return r;
}

}  // namespace perfgap::slurm
