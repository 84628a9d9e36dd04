// The live sample window (cpu.steal, placement.shared_cores): its default length from the
// CPU count, the sample_ms setting, and the runner starting it first and running its checks
// last while the report keeps the registry order.
#include <gtest/gtest.h>

#include <atomic>
#include <cmath>
#include <mutex>
#include <thread>

#include "core/config.hpp"
#include "checks/util.hpp"
#include "core/runner.hpp"
#include "slurm/health_config.hpp"

using namespace perfgap;
using namespace std::chrono_literals;
using report::Status;

TEST(SampleWindow, TheDefaultStartsAtOneHundredMillisecondsWithinItsCap) {
  EXPECT_EQ(facts::first_sample_window(1000ms), 100ms);
  EXPECT_EQ(facts::first_sample_window(250ms), 100ms);  // health's cap (a prolog before every job)
  EXPECT_EQ(facts::first_sample_window(60ms), 60ms);
}

// The margin shrinks as 1/window: a steal-free node at 2% needs about 610 ms / sqrt(CPUs).
TEST(SampleWindow, WindowToDecideScalesTheWindowByMarginOverDistance) {
  using checks::window_to_decide;
  auto margin_at = [](double cpus, double seconds) { return 100.0 * 1.22 * std::sqrt(cpus) / (cpus * seconds * 100.0); };
  // 2 CPUs, 100 ms, no steal: margin 8.6%, distance 2 -> 0.1 x 8.6 / 2 x 1.15 = 0.50 s.
  EXPECT_EQ(window_to_decide(0.1, margin_at(2, 0.1), 0, 2), 500ms);
  // 64 CPUs: the first 100 ms already decide (margin 1.5% < 2).
  EXPECT_LT(window_to_decide(0.1, margin_at(64, 0.1), 0, 2), 100ms);
  // Near the limit the distance is small: at 1.9% the 0.1 floor holds, and 60 s is the most.
  EXPECT_EQ(window_to_decide(0.1, 1.0, 1.9, 2), 1150ms);
  EXPECT_EQ(window_to_decide(10, 50.0, 2.0, 2), 60000ms);
  // The answer is enough: over the window it names, the margin is under the distance.
  for (double cpus : {1.0, 2.0, 8.0, 16.0, 48.0}) {
    const double share = 0.5;
    const auto w = window_to_decide(0.1, margin_at(cpus, 0.1), share, 2);
    EXPECT_LT(margin_at(cpus, w.count() / 1000.0), 2 - share) << cpus;
  }
}

// Live, an extension keeps the first sample and takes a second one later: the earlier
// window stays as it was, and asking again for no more than was taken reuses it.
TEST(SampleWindow, ExtendedWindowsGoOnFromTheFirstSample) {
  facts::Options opts;
  opts.sample_max = 400ms;
  facts::Facts f(sys::Sysroot::live(), opts);
  const auto& first = f.window();
  ASSERT_TRUE(first.live);
  ASSERT_TRUE(first.first && first.second) << first.stat_error;
  EXPECT_TRUE(first.extendable);
  EXPECT_EQ(first.length, 100ms);
  EXPECT_GE(first.seconds, 0.099);
  const double first_seconds = first.seconds;
  const auto& longer = f.window_extended(250ms);
  ASSERT_NE(&longer, &first);
  EXPECT_EQ(longer.length, 250ms);
  EXPECT_GE(longer.seconds, 0.249);
  EXPECT_EQ(first.seconds, first_seconds);  // untouched
  ASSERT_TRUE(longer.first);
  EXPECT_EQ(longer.first->cpus.size(), first.first->cpus.size());
  for (std::size_t i = 0; i < first.first->cpus.size(); ++i)
    EXPECT_EQ(longer.first->cpus[i].total(), first.first->cpus[i].total());  // the same first sample
  EXPECT_FALSE(longer.threads.empty()) << longer.threads_error;  // threads are sampled again
  EXPECT_EQ(&f.window_extended(200ms), &longer);
  EXPECT_EQ(&f.window_extended(50ms), &first);  // already that long
  const auto& capped = f.window_extended(5000ms);  // at most the limit
  EXPECT_EQ(capped.length, 400ms);
  EXPECT_LT(capped.seconds, 2.0);
}

// A window the user fixed (--sample-ms, config sample_ms) is never taken on.
TEST(SampleWindow, AFixedWindowIsNotExtended) {
  facts::Options opts;
  opts.sample = 120ms;
  facts::Facts f(sys::Sysroot::live(), opts);
  const auto& w = f.window();
  EXPECT_FALSE(w.extendable);
  EXPECT_EQ(w.length, 120ms);
  EXPECT_EQ(&f.window_extended(900ms), &w);
}

TEST(SampleWindow, SampleMsIsAWholeNumberOfMillisecondsInRange) {
  EXPECT_EQ(core::parse_sample_ms("10"), 10);
  EXPECT_EQ(core::parse_sample_ms("60000"), 60000);
  for (const char* bad : {"", "9", "0", "-5", "60001", "1.5", "100ms", " 100", "abc"}) {
    auto r = core::parse_sample_ms(bad);
    ASSERT_FALSE(r) << bad;
    EXPECT_NE(r.error().find("from 10 to 60000"), std::string::npos) << r.error();
  }
}

TEST(SampleWindow, ConfigKeysOfCheckAndHealth) {
  const auto& reg = core::builtin_registry();
  auto c = core::parse_config("sample_ms: 300\n", "c.yaml", reg);
  ASSERT_TRUE(c) << c.error();
  EXPECT_EQ(c->sample_ms, 300);
  auto bad = core::parse_config("only: [cpu.steal]\nsample_ms: fast\n", "c.yaml", reg);
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().rfind("c.yaml:2:", 0), 0u) << bad.error();
  auto h = slurm::parse_health_config("sample_ms: 120\n", "h.yaml", reg);
  ASSERT_TRUE(h) << h.error();
  EXPECT_EQ(h->sample_ms, 120);
  auto hbad = slurm::parse_health_config("sample_ms: 70000\n", "h.yaml", reg);
  ASSERT_FALSE(hbad);
  EXPECT_EQ(hbad.error().rfind("h.yaml:1:", 0), 0u) << hbad.error();
}

TEST(SampleWindow, OnlyTheSteppingChecksAreSampled) {
  std::vector<std::string> sampled;
  for (const auto& c : core::builtin_registry().all())
    if (c.sampled) sampled.emplace_back(c.id);
  EXPECT_EQ(sampled, (std::vector<std::string>{"cpu.steal", "placement.shared_cores", "net.ib.counters"}));
}

namespace {

core::CheckInfo check_of(std::string_view id, bool sampled, core::CheckFn fn) {
  return core::CheckInfo{.id = id, .layer = "cpu-power", .summary = "s", .rule = "r", .fix = "f", .reads = {"/x"},
                         .params = {}, .run = std::move(fn), .sampled = sampled};
}

}  // namespace

// Live: the window is taken while the other checks run, its checks wait for that window
// only, and the findings come out in the order the checks were given.
TEST(SampleWindow, RunnerStartsTheWindowFirstAndKeepsTheOrder) {
  facts::Options opts;
  opts.sample = 300ms;
  auto facts = std::make_shared<facts::Facts>(sys::Sysroot::live(), opts);
  std::mutex m;
  std::vector<std::string> ran;
  auto note = [&](const char* id) {
    std::lock_guard lock(m);
    ran.emplace_back(id);
  };
  std::chrono::steady_clock::time_point window_seen;
  auto steal_like = check_of("t.sampled", true, [&](facts::Facts& f, const core::Thresholds&) {
    note("t.sampled");
    const auto& w = f.window();
    window_seen = std::chrono::steady_clock::now();
    return std::vector<report::Finding>{core::finding("t.sampled", "cpu-power", Status::pass, w.live ? "live" : "tree")};
  });
  auto slow = check_of("t.slow", false, [&](facts::Facts&, const core::Thresholds&) {
    note("t.slow");
    std::this_thread::sleep_for(250ms);  // work the window's wait overlaps
    return std::vector<report::Finding>{core::finding("t.slow", "cpu-power", Status::pass, "done")};
  });
  const auto start = std::chrono::steady_clock::now();
  auto out = core::run_checks({&steal_like, &slow}, facts, core::Config{}, core::RunOptions{});
  ASSERT_EQ(out.size(), 2u);
  EXPECT_EQ(out[0].id, "t.sampled");
  EXPECT_EQ(out[0].title, "live");
  EXPECT_EQ(out[1].id, "t.slow");
  EXPECT_EQ(ran, (std::vector<std::string>{"t.slow", "t.sampled"}));
  // The window (300 ms) began before the slow check, so it was over within well under the
  // sum of both (550 ms); the bound is loose so a loaded machine cannot fail it.
  EXPECT_GE(facts->window().seconds, 0.29);
  EXPECT_LT(window_seen - start, 2s);
}

// A tree's counters are read once, since boot: no window is started and none is waited for.
TEST(SampleWindow, TreeRootsNeverWait) {
  facts::Options opts;
  opts.sample = 5000ms;
  auto root = sys::Sysroot::at(PERFGAP_SOURCE_DIR);
  ASSERT_TRUE(root) << root.error();
  auto facts = std::make_shared<facts::Facts>(*root, opts);
  auto sampled = check_of("t.sampled", true, [](facts::Facts& f, const core::Thresholds&) {
    return std::vector<report::Finding>{core::finding("t.sampled", "cpu-power", Status::pass, f.window().live ? "live" : "tree")};
  });
  const auto start = std::chrono::steady_clock::now();
  auto out = core::run_checks({&sampled}, facts, core::Config{}, core::RunOptions{});
  EXPECT_LT(std::chrono::steady_clock::now() - start, 3s);
  ASSERT_EQ(out.size(), 1u);
  EXPECT_EQ(out[0].title, "tree");
}

// cpu.steal's verdict with the counters' margin (live) and without it (a tree since boot).
TEST(SampleWindow, LimitVerdictWithinAndBeyondTheMargin) {
  using checks::limit_verdict;
  EXPECT_EQ(limit_verdict(5.0, 1.0, 2.0), Status::fail);  // above by more than the margin
  EXPECT_EQ(limit_verdict(2.5, 1.0, 2.0), Status::warn);  // above, within the margin
  EXPECT_EQ(limit_verdict(0.0, 9.1, 2.0), Status::skip);  // below, within it: too short a window
  EXPECT_EQ(limit_verdict(0.0, 0.85, 2.0), Status::pass);  // below by more than the margin
  EXPECT_EQ(limit_verdict(2.0, 0.0, 2.0), Status::pass);   // a tree: no margin, the limit passes
  EXPECT_EQ(limit_verdict(2.01, 0.0, 2.0), Status::fail);
}
