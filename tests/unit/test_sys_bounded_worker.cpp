// sys::BoundedWorker: many calls on one thread, each bounded by its own timeout; a call that
// hangs is left behind and the next one gets a fresh worker (the /proc reads of a check).
// sys::run_batch_bounded: the same for a batch on a small pool (snapshot's reads).
#include <gtest/gtest.h>

#include <atomic>
#include <set>
#include <thread>

#include "sys/bounded.hpp"

using namespace std::chrono_literals;
using perfgap::sys::BoundedWorker;

TEST(BoundedWorker, ManyCallsShareOneThread) {
  BoundedWorker w;
  std::set<std::thread::id> seen;
  for (int i = 0; i < 1000; ++i) {
    auto r = w.run<std::thread::id>([] { return std::this_thread::get_id(); }, 2s);
    ASSERT_TRUE(r) << i;
    seen.insert(*r);
  }
  EXPECT_EQ(seen.size(), 1u);
  EXPECT_EQ(w.workers_started(), 1);
  EXPECT_NE(*seen.begin(), std::this_thread::get_id());
}

TEST(BoundedWorker, AHangingCallIsAbandonedAndTheNextGetsAFreshWorker) {
  BoundedWorker w;
  const int abandoned_before = perfgap::sys::abandoned_workers();
  auto release = std::make_shared<std::atomic<bool>>(false);
  const auto t0 = std::chrono::steady_clock::now();
  auto stuck = w.run<int>(
      [release] {
        while (!release->load()) std::this_thread::sleep_for(5ms);  // a read stuck in the kernel
        return 1;
      },
      100ms);
  EXPECT_FALSE(stuck);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  EXPECT_EQ(perfgap::sys::abandoned_workers(), abandoned_before + 1);
  auto next = w.run<int>([] { return 7; }, 2s);
  ASSERT_TRUE(next);
  EXPECT_EQ(*next, 7);
  EXPECT_EQ(w.workers_started(), 2);
  release->store(true);  // the abandoned worker finishes into its own result slot and leaves
  std::this_thread::sleep_for(50ms);
  auto again = w.run<int>([] { return 8; }, 2s);
  EXPECT_EQ(again, 8);
  EXPECT_EQ(w.workers_started(), 2);
}

TEST(BoundedWorker, AThrowingCallIsAnEmptyResultAndTheWorkerGoesOn) {
  BoundedWorker w;
  auto bad = w.run<int>([]() -> int { throw std::runtime_error("read failed"); }, 2s);
  EXPECT_FALSE(bad);
  EXPECT_EQ(w.run<int>([] { return 3; }, 2s), 3);
  EXPECT_EQ(w.workers_started(), 1);
}

TEST(BoundedWorker, ConcurrentCallersAreServedOneAtATime) {
  BoundedWorker w;
  std::atomic<int> inside{0}, most{0};
  std::vector<std::thread> callers;
  for (int c = 0; c < 4; ++c)
    callers.emplace_back([&] {
      for (int i = 0; i < 50; ++i) {
        auto r = w.run<int>(
            [&] {
              int now = ++inside;
              int m = most.load();
              while (now > m && !most.compare_exchange_weak(m, now)) {}
              --inside;
              return now;
            },
            2s);
        EXPECT_TRUE(r);
      }
    });
  for (auto& t : callers) t.join();
  EXPECT_EQ(most.load(), 1);
  EXPECT_EQ(w.workers_started(), 1);
}

// sys::run_batch_bounded: snapshot's per-process reads on a small pool, each job bounded from
// its own start, a stuck one abandoned with its thread while the others go on.
TEST(BoundedBatch, EveryJobRunsInOrderOnAtMostThePoolsThreads) {
  std::vector<std::pair<std::function<std::thread::id()>, std::chrono::milliseconds>> jobs;
  for (int i = 0; i < 40; ++i) jobs.emplace_back([] { return std::this_thread::get_id(); }, 2s);
  auto out = perfgap::sys::run_batch_bounded(std::move(jobs), 3);
  ASSERT_EQ(out.size(), 40u);
  std::set<std::thread::id> seen;
  for (const auto& r : out) {
    ASSERT_TRUE(r);
    seen.insert(*r);
  }
  EXPECT_LE(seen.size(), 3u);
  EXPECT_EQ(seen.count(std::this_thread::get_id()), 0u);
  EXPECT_TRUE(perfgap::sys::run_batch_bounded(std::vector<std::pair<std::function<int()>, std::chrono::milliseconds>>{}, 4).empty());
}

TEST(BoundedBatch, AStuckJobIsAbandonedAtItsOwnDeadlineAndTheRestFinish) {
  const int abandoned_before = perfgap::sys::abandoned_workers();
  auto release = std::make_shared<std::atomic<bool>>(false);
  auto stuck = [release] {
    while (!release->load()) std::this_thread::sleep_for(5ms);  // a read stuck in the kernel
    return -1;
  };
  std::vector<std::pair<std::function<int()>, std::chrono::milliseconds>> jobs;
  jobs.emplace_back(stuck, 100ms);
  for (int i = 1; i < 10; ++i) jobs.emplace_back([i] { return i; }, 5s);
  jobs.emplace_back(stuck, 150ms);  // started late, by whichever thread is free: bounded from then
  const auto t0 = std::chrono::steady_clock::now();
  auto out = perfgap::sys::run_batch_bounded(std::move(jobs), 2);
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 3s);
  ASSERT_EQ(out.size(), 11u);
  EXPECT_FALSE(out[0]);
  EXPECT_FALSE(out[10]);
  for (int i = 1; i < 10; ++i) EXPECT_EQ(out[i], i);
  EXPECT_EQ(perfgap::sys::abandoned_workers(), abandoned_before + 2);
  release->store(true);  // the abandoned threads finish and leave without touching the results
  std::this_thread::sleep_for(50ms);
}

TEST(BoundedBatch, EveryJobStuckStillEndsByTheDeadlines) {
  auto release = std::make_shared<std::atomic<bool>>(false);
  std::vector<std::pair<std::function<int()>, std::chrono::milliseconds>> jobs;
  for (int i = 0; i < 4; ++i)
    jobs.emplace_back([release] {
      while (!release->load()) std::this_thread::sleep_for(5ms);
      return 0;
    }, 80ms);
  const auto t0 = std::chrono::steady_clock::now();
  auto out = perfgap::sys::run_batch_bounded(std::move(jobs), 2);
  // Two rounds of two: each job from its own start, so about 160 ms, well under a second.
  EXPECT_LT(std::chrono::steady_clock::now() - t0, 2s);
  for (const auto& r : out) EXPECT_FALSE(r);
  release->store(true);
  std::this_thread::sleep_for(50ms);
}
