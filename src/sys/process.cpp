#include "sys/process.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <poll.h>
#include <signal.h>  // NOLINT(modernize-deprecated-headers): kill() is POSIX, not in <csignal>
#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>

#include "sys/spawn.hpp"

extern char** environ;

namespace perfgap::sys {
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

void close_all(std::initializer_list<int> fds) {
  for (int fd : fds)
    if (fd >= 0) ::close(fd);
}

}  // namespace

CommandResult run_command(const std::vector<std::string>& argv, const CommandOptions& options) {
  CommandResult r;
  if (argv.empty()) {
    r.error = "empty command";
    return r;
  }
  const bool capture = options.capture_output;
  const bool separate_err = capture && !options.merge_stderr;
  int out_pipe[2] = {-1, -1}, err_pipe[2] = {-1, -1};
  if ((capture && ::pipe2(out_pipe, O_CLOEXEC) != 0) || (separate_err && ::pipe2(err_pipe, O_CLOEXEC) != 0)) {
    r.error = std::string("pipe: ") + std::strerror(errno);
    close_all({out_pipe[0], out_pipe[1], err_pipe[0], err_pipe[1]});
    return r;
  }
  // Not captured: stdout goes to our stderr, so our stdout stays for the report.
  const int child_out = capture ? out_pipe[1] : 2;
  const int child_err = !capture ? -1 : options.merge_stderr ? out_pipe[1] : err_pipe[1];
  const auto start = Clock::now();
  auto spawned = spawn_in_own_group(argv, options.environment ? *options.environment : child_environment(options.env),
                                    child_out, child_err);
  close_all({out_pipe[1], err_pipe[1]});
  if (!spawned) {
    close_all({out_pipe[0], err_pipe[0]});
    r.error = spawned.error();
    return r;
  }
  const pid_t pid = *spawned;
  r.started = true;
  const bool has_deadline = options.timeout.count() > 0;
  const auto deadline = start + options.timeout;

  bool exited = false, stopping = false, killed = false;
  Clock::time_point kill_at{}, exited_at{};
  auto stop_group = [&](bool at_deadline) {
    if (stopping) return;
    stopping = true;
    (at_deadline ? r.timed_out : r.stopped) = true;
    if (options.term_grace.count() > 0) {
      ::kill(-pid, SIGTERM);
      kill_at = Clock::now() + options.term_grace;
    } else {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
  };
  auto reap = [&](int st) {
    exited = true;
    exited_at = Clock::now();
    r.duration_s = std::chrono::duration<double>(exited_at - start).count();
    if (WIFEXITED(st)) {
      r.exit_code = WEXITSTATUS(st);
      r.status = *r.exit_code;
    } else if (WIFSIGNALED(st)) {
      r.signal = WTERMSIG(st);
      r.status = 128 + *r.signal;
    }
  };

  pollfd fds[2] = {{out_pipe[0], POLLIN, 0}, {err_pipe[0], POLLIN, 0}};
  int open_fds = (fds[0].fd >= 0) + (fds[1].fd >= 0);
  char buf[65536];
  for (;;) {
    const auto now = Clock::now();
    if (!exited && options.stop && *options.stop) stop_group(false);
    if (!exited && has_deadline && now >= deadline) stop_group(true);
    if (stopping && !killed && now >= kill_at) {
      ::kill(-pid, SIGKILL);
      killed = true;
    }
    if (!exited) {
      int st = 0;
      const pid_t w = ::waitpid(pid, &st, WNOHANG);
      if (w == pid) reap(st);
      else if (w < 0 && errno != EINTR) {  // not ours to wait for any more
        exited = true;
        exited_at = Clock::now();
      }
    }
    if (exited && open_fds == 0) break;
    if (exited && Clock::now() - exited_at >= options.exit_drain) {
      // Something it started still holds the output: stop the group rather than hang on it.
      ::kill(-pid, SIGKILL);
      break;
    }
    // A child's exit does not wake poll: look again soon while nothing is read.
    int wait_ms = open_fds > 0 ? 100 : 10;
    if (has_deadline && !exited) {
      const auto left = std::chrono::duration_cast<std::chrono::milliseconds>(deadline - Clock::now()).count();
      wait_ms = static_cast<int>(std::clamp<long long>(left, 1, wait_ms));
    }
    const int n = ::poll(fds, 2, wait_ms);
    if (n < 0 && errno != EINTR) break;
    if (n <= 0) continue;
    for (auto& p : fds) {
      if (p.fd < 0 || !(p.revents & (POLLIN | POLLHUP | POLLERR))) continue;
      const ssize_t got = ::read(p.fd, buf, sizeof buf);
      if (got < 0 && errno == EINTR) continue;
      if (got <= 0) {
        ::close(p.fd);
        p.fd = -1;
        --open_fds;
      } else if (&p == &fds[1]) {
        r.err.append(buf, static_cast<std::size_t>(got));
      } else if (options.on_output) {
        options.on_output(std::string_view(buf, static_cast<std::size_t>(got)));
      } else {
        r.out.append(buf, static_cast<std::size_t>(got));
      }
    }
  }
  close_all({fds[0].fd, fds[1].fd});
  if (!exited) {  // poll failed: the group is stopped and the child waited for
    ::kill(-pid, SIGKILL);
    int st = 0;
    if (::waitpid(pid, &st, 0) == pid) reap(st);
  }
  if (r.duration_s == 0) r.duration_s = std::chrono::duration<double>(Clock::now() - start).count();
  if (stopping) ::kill(-pid, SIGKILL);  // anything of the group still there
  return r;
}

std::vector<pid_t> own_children() {
  std::vector<pid_t> out;
  const pid_t self = ::getpid();
  DIR* d = ::opendir("/proc");
  if (d == nullptr) return out;
  while (dirent* e = ::readdir(d)) {
    char* end = nullptr;
    long pid = std::strtol(e->d_name, &end, 10);
    if (pid <= 0 || *end != '\0') continue;
    char path[64];
    std::snprintf(path, sizeof path, "/proc/%ld/stat", pid);
    int fd = ::open(path, O_RDONLY | O_CLOEXEC);
    if (fd < 0) continue;
    char buf[512];
    ssize_t n = ::read(fd, buf, sizeof buf - 1);
    ::close(fd);
    if (n <= 0) continue;
    buf[n] = '\0';
    // "pid (comm) state ppid ...": comm may hold spaces and parentheses; the last ')' ends it.
    const char* close = std::strrchr(buf, ')');
    char state = 0;
    long ppid = 0;
    if (close == nullptr || std::sscanf(close + 1, " %c %ld", &state, &ppid) != 2) continue;
    if (ppid == self) out.push_back(static_cast<pid_t>(pid));
  }
  ::closedir(d);
  return out;
}

}  // namespace perfgap::sys
