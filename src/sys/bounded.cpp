#include "sys/bounded.hpp"

#include <atomic>
#include <cstdint>

namespace perfgap::sys {
namespace {
std::atomic<int> abandoned{0};
}
int abandoned_workers() { return abandoned.load(); }
void note_abandoned_worker() { abandoned.fetch_add(1); }

struct BoundedWorker::Shared {
  std::mutex m;
  std::condition_variable cv;
  std::function<void()> job;
  bool has_job = false;
  bool stop = false;
  std::uint64_t posted = 0, finished = 0;
};

namespace {

void serve(const std::shared_ptr<BoundedWorker::Shared>& s);

}  // namespace

BoundedWorker::~BoundedWorker() {
  if (!current_) return;
  {
    std::lock_guard lock(current_->m);
    current_->stop = true;
  }
  current_->cv.notify_all();
  // Idle (every call finished in time): it leaves at once.
  if (thread_.joinable()) thread_.join();
}

int BoundedWorker::workers_started() const { return started_; }

bool BoundedWorker::run_job(std::function<void()> job, std::chrono::milliseconds timeout) {
  std::lock_guard call(call_mutex_);
  if (!current_) {
    current_ = std::make_shared<Shared>();
    thread_ = std::thread([s = current_] { serve(s); });
    ++started_;
  }
  auto s = current_;
  std::unique_lock lock(s->m);
  s->job = std::move(job);
  s->has_job = true;
  const std::uint64_t mine = ++s->posted;
  s->cv.notify_all();
  if (s->cv.wait_for(lock, timeout, [&] { return s->finished >= mine; })) return true;
  // Stuck in the kernel: this worker finishes (or not) on its own and then leaves.
  s->stop = true;
  lock.unlock();
  thread_.detach();
  current_.reset();
  note_abandoned_worker();
  return false;
}

namespace {

void serve(const std::shared_ptr<BoundedWorker::Shared>& s) {
  std::unique_lock lock(s->m);
  for (;;) {
    s->cv.wait(lock, [&] { return s->has_job || s->stop; });
    if (!s->has_job) return;
    auto job = std::move(s->job);
    s->has_job = false;
    lock.unlock();
    job();
    job = nullptr;  // what the job captured goes before the caller is told
    lock.lock();
    ++s->finished;
    s->cv.notify_all();
    if (s->stop) return;
  }
}

}  // namespace
}  // namespace perfgap::sys
