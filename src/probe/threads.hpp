// The probes' worker threads: every thread is joined on every path (a throw while starting
// them, an early return), after the stop flag tells them to end; they also watch their own
// hard deadline, so a join never waits longer than the probe's bound.
#pragma once

#include <atomic>
#include <functional>
#include <thread>
#include <vector>

namespace perfgap::probe {

class JoinedThreads {
 public:
  explicit JoinedThreads(std::atomic<bool>& stop) : stop_(stop) {}
  JoinedThreads(const JoinedThreads&) = delete;
  JoinedThreads& operator=(const JoinedThreads&) = delete;
  ~JoinedThreads() {
    stop_ = true;
    join_all();
  }
  // A body that throws ends its thread only (its result stays unset), never the process.
  void add(std::function<void()> fn) {
    threads_.emplace_back([body = std::move(fn)] {
      try {
        body();
      } catch (...) {  // NOLINT(bugprone-empty-catch): the missing figure says it
      }
    });
  }
  void join_all() {
    for (auto& t : threads_)
      if (t.joinable()) t.join();
  }
  std::size_t size() const { return threads_.size(); }

 private:
  std::atomic<bool>& stop_;
  std::vector<std::thread> threads_;
};

// The CPUs this process may run on (sched_getaffinity), in order.
std::vector<int> probe_allowed_cpus();

}  // namespace perfgap::probe
