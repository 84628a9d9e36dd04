// Runs work that may block inside the kernel (a read of /proc/<pid>/... of a stuck process)
// on a worker that can be abandoned: no thread can interrupt such a read, so the caller
// stops waiting and the worker is left to finish or die with the process.
#pragma once

#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>

namespace perfgap::sys {

// Counts workers left behind, so main can leave with _exit instead of running destructors
// under them.
int abandoned_workers();
void note_abandoned_worker();

template <class T>
std::optional<T> run_bounded(std::function<T()> work, std::chrono::milliseconds timeout) {
  struct State {
    std::mutex m;
    std::condition_variable cv;
    std::optional<T> value;
    bool done = false;
  };
  auto state = std::make_shared<State>();
  std::thread([state, work = std::move(work)]() mutable {
    std::optional<T> v;
    try {
      v.emplace(work());
    } catch (...) {
      // The caller learns of the failure as an empty result; the message is lost, so work
      // should catch what it wants to report.
    }
    std::lock_guard lock(state->m);
    state->value = std::move(v);
    state->done = true;
    state->cv.notify_all();
  }).detach();
  std::unique_lock lock(state->m);
  if (!state->cv.wait_for(lock, timeout, [&] { return state->done; })) {
    note_abandoned_worker();
    return std::nullopt;
  }
  return std::move(state->value);
}

// One long-lived worker for many short calls that may block in the kernel (every /proc/<pid>
// read of a check run): each call waits at most its own timeout. A call that overruns
// leaves the worker behind (counted, as run_bounded does) and the next call starts a fresh
// one, so a stuck process costs one thread and a thousand reads cost one, not a thousand.
// Calls are served one at a time, in the order they come.
class BoundedWorker {
 public:
  BoundedWorker() = default;
  BoundedWorker(const BoundedWorker&) = delete;
  BoundedWorker& operator=(const BoundedWorker&) = delete;
  ~BoundedWorker();

  template <class T>
  std::optional<T> run(std::function<T()> work, std::chrono::milliseconds timeout) {
    // The result lives with the job, not in this frame: an abandoned job may finish later.
    auto slot = std::make_shared<std::optional<T>>();
    const bool finished = run_job(
        [slot, work = std::move(work)]() mutable {
          try {
            slot->emplace(work());
          } catch (...) {
            // An empty result, as run_bounded gives.
          }
        },
        timeout);
    if (!finished) return std::nullopt;
    return std::move(*slot);
  }

  // Workers started so far (1 for any number of calls that finished in time).
  int workers_started() const;

  struct Shared;  // the queue a worker serves (bounded.cpp)

 private:
  bool run_job(std::function<void()> job, std::chrono::milliseconds timeout);

  std::mutex call_mutex_;  // one call at a time
  std::shared_ptr<Shared> current_;
  std::thread thread_;
  int started_ = 0;
};

}  // namespace perfgap::sys
