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

}  // namespace perfgap::sys
