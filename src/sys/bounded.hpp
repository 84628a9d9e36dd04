// Runs work that may block inside the kernel (a read of /proc/<pid>/... of a stuck process)
// on a worker that can be abandoned: no thread can interrupt such a read, so the caller
// stops waiting and the worker is left to finish or die with the process.
#pragma once

#include <algorithm>
#include <chrono>
#include <condition_variable>
#include <functional>
#include <memory>
#include <mutex>
#include <optional>
#include <thread>
#include <utility>
#include <vector>

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

// A batch of jobs that may block in the kernel (snapshot's reads of each training process) on
// a small pool: at most `workers` threads take the jobs in turn, each job bounded by its own
// timeout from the moment it starts. A job still running at its deadline is abandoned with
// its thread (counted), its slot stays empty, and a fresh thread takes its place for the jobs
// not yet started. Returns when every job has finished or been abandoned, results in job
// order. Threads: min(workers, jobs), plus one per abandoned job.
template <class T>
std::vector<std::optional<T>> run_batch_bounded(std::vector<std::pair<std::function<T()>, std::chrono::milliseconds>> jobs,
                                                std::size_t workers) {
  using Clock = std::chrono::steady_clock;
  enum class Phase { queued, running, finished, abandoned };
  struct State {
    std::mutex m;
    std::condition_variable cv;
    std::vector<std::pair<std::function<T()>, std::chrono::milliseconds>> jobs;
    std::vector<std::optional<T>> results;
    std::vector<Phase> phase;
    std::vector<Clock::time_point> started;
    std::size_t next = 0, settled = 0;
  };
  auto state = std::make_shared<State>();
  const std::size_t n = jobs.size();
  state->jobs = std::move(jobs);
  state->results.resize(n);
  state->phase.assign(n, Phase::queued);
  state->started.resize(n);
  auto serve = [](std::shared_ptr<State> s) {
    std::unique_lock lock(s->m);
    while (s->next < s->jobs.size()) {
      const std::size_t i = s->next++;
      s->phase[i] = Phase::running;
      s->started[i] = Clock::now();
      s->cv.notify_all();  // the caller now waits for this job's deadline too
      auto work = std::move(s->jobs[i].first);
      lock.unlock();
      std::optional<T> v;
      try {
        v.emplace(work());
      } catch (...) {
        // An empty slot, as for a job that overran.
      }
      work = nullptr;
      lock.lock();
      if (s->phase[i] == Phase::abandoned) return;  // a fresh thread has taken this one's place
      s->results[i] = std::move(v);
      s->phase[i] = Phase::finished;
      ++s->settled;
      s->cv.notify_all();
    }
  };
  for (std::size_t k = 0; k < std::min(std::max<std::size_t>(workers, 1), n); ++k) std::thread(serve, state).detach();
  std::unique_lock lock(state->m);
  while (state->settled < n) {
    const auto now = Clock::now();
    std::optional<Clock::time_point> soonest;
    for (std::size_t i = 0; i < n; ++i) {
      if (state->phase[i] != Phase::running) continue;
      const auto deadline = state->started[i] + state->jobs[i].second;
      if (now < deadline) {
        soonest = soonest ? std::min(*soonest, deadline) : deadline;
        continue;
      }
      state->phase[i] = Phase::abandoned;
      ++state->settled;
      note_abandoned_worker();
      if (state->next < n) std::thread(serve, state).detach();
    }
    if (state->settled >= n) break;
    if (soonest) state->cv.wait_until(lock, *soonest);
    else state->cv.wait(lock);  // only queued jobs: the thread that starts one says so
  }
  return std::move(state->results);
}

}  // namespace perfgap::sys
