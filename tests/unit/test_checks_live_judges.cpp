// The live.* judges of `perfgap profile` on recorded samples (the counter deltas of a window as
// the collector stores them), every status of each; the perf.* findings of a live window; the
// small /proc parsers the collector uses; the analyzer's minimum sample count.
#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "checks/live/live.hpp"
#include "parsers/live.hpp"
#include "profile/collector.hpp"

using namespace perfgap;
using profile::LiveWindow;
using report::Status;

namespace {

double metric_of(const report::Finding& f, const std::string& name) {
  for (const auto& [k, v] : f.metrics)
    if (k == name) return v;
  ADD_FAILURE() << f.id << ": no metric " << name;
  return -1;
}

const report::Finding& only(const std::vector<report::Finding>& v) {
  EXPECT_EQ(v.size(), 1u);
  return v.front();
}

// A 2-socket x86 node's window over 10 s: CPUs 0-3 busy at 97-99%, 4-7 idle at 1-3%.
LiveWindow busy_window() {
  LiveWindow w;
  w.seconds = 10;
  for (int c = 0; c < 4; ++c) w.busy_pct[c] = 97 + c % 3;
  for (int c = 4; c < 8; ++c) w.busy_pct[c] = 1 + c % 3;
  return w;
}

// APERF/MPERF deltas as the msr PMU reports them: TSC at 2.1 GHz, busy CPUs at `ratio` of it.
void aperf_mperf(LiveWindow& w, double ratio) {
  w.freq.source = "aperf_mperf";
  for (const auto& [c, pct] : w.busy_pct) {
    profile::CpuCounters k;
    k.tsc = 21'000'000'000ULL;                                                // 2100 MHz x 10 s
    k.mperf = static_cast<std::uint64_t>(static_cast<double>(k.tsc) * pct / 100);  // C0 share of the TSC
    k.aperf = static_cast<std::uint64_t>(static_cast<double>(k.mperf) * ratio);
    w.freq.cpus[c] = k;
  }
}

// Intel SPR cpuidle: POLL, C1, C1E, C6 (exit latencies 0, 2, 10, 170 us), deltas over 10 s.
std::vector<profile::IdleStateDelta> spr_idle(std::uint64_t poll, std::uint64_t c1, std::uint64_t c1e, std::uint64_t c6) {
  return {{0, "POLL", 0, false, poll, 10}, {1, "C1", 2, false, c1, 4000}, {2, "C1E", 10, false, c1e, 900}, {3, "C6", 170, false, c6, 300}};
}

}  // namespace

TEST(ChecksLive, BusyMhzFromEachSource) {
  profile::Frequency f;
  f.source = "aperf_mperf";
  f.cpus[0] = {.aperf = 30'000'000'000ULL, .mperf = 20'000'000'000ULL, .tsc = 21'000'000'000ULL, .cycles = 0, .cur_khz = {}};
  EXPECT_NEAR(*checks::live::cpu_busy_mhz(f, 0, 95, 10), 2100 * 1.5, 1e-6);
  f.cpus[1] = {};  // MPERF 0: a CPU idle all along says nothing
  EXPECT_FALSE(checks::live::cpu_busy_mhz(f, 1, 0, 10));
  f.source = "cycles";
  f.cpus[0] = {.aperf = 0, .mperf = 0, .tsc = 0, .cycles = 15'000'000'000ULL, .cur_khz = {}};
  EXPECT_NEAR(*checks::live::cpu_busy_mhz(f, 0, 50, 10), 3000, 1e-6);  // 15 G cycles in 5 busy s
  EXPECT_FALSE(checks::live::cpu_busy_mhz(f, 0, 0, 10));
  f.source = "scaling_cur_freq";
  f.cpus[0] = {.aperf = 0, .mperf = 0, .tsc = 0, .cycles = 0, .cur_khz = {3'000'000, 3'200'000, 3'100'000}};
  EXPECT_NEAR(*checks::live::cpu_busy_mhz(f, 0, 99, 10), 3100, 1e-6);
  EXPECT_FALSE(checks::live::cpu_busy_mhz(f, 7, 99, 10));  // no samples of that CPU
}

TEST(ChecksLive, BusyMhzEveryStatus) {
  const auto th = checks::live::defaults("live.busy_mhz");
  // The seeds' x86 case: busy cores at 3.0 GHz on a 3.8 GHz part.
  auto w = busy_window();
  aperf_mperf(w, 3000.0 / 2100.0);
  w.rated_mhz = 3800;
  w.rated_source = "--rated-mhz";
  auto f = only(checks::live::judge_busy_mhz(w, th));
  EXPECT_EQ(f.status, Status::fail) << f.title;
  EXPECT_NEAR(metric_of(f, "busy_mhz"), 3000, 1);
  EXPECT_EQ(metric_of(f, "rated_mhz"), 3800);
  EXPECT_EQ(metric_of(f, "busy_cpus"), 4);
  bool source = false;
  for (const auto& e : f.evidence) source = source || e.source == "source: aperf_mperf";
  EXPECT_TRUE(source);
  // At 3.5 GHz: 92% of 3.8 GHz.
  aperf_mperf(w, 3500.0 / 2100.0);
  f = only(checks::live::judge_busy_mhz(w, th));
  EXPECT_EQ(f.status, Status::pass) << f.title;
  // No rated maximum known.
  w.rated_mhz.reset();
  w.rated_source = "no cpufreq";
  f = only(checks::live::judge_busy_mhz(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("--rated-mhz"), std::string::npos);
  // No frequency source at all (a VM without msr PMU, cycles or cpufreq).
  w.rated_mhz = 3800;
  w.freq = {};
  w.freq.unavailable = "msr PMU: not present; cycles: ENOENT; scaling_cur_freq: not present";
  f = only(checks::live::judge_busy_mhz(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("scaling_cur_freq: not present"), std::string::npos);
  // Nothing busy.
  w = busy_window();
  for (auto& [c, p] : w.busy_pct) p = 5;
  aperf_mperf(w, 1.0);
  f = only(checks::live::judge_busy_mhz(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("no CPU was at least 50% busy"), std::string::npos);
  // /proc/stat unread.
  w = {};
  w.stat_error = "/proc/stat: permission denied";
  EXPECT_EQ(only(checks::live::judge_busy_mhz(w, th)).status, Status::skip);
}

TEST(ChecksLive, IdleResidencyEveryStatus) {
  const auto th = checks::live::defaults("live.idle_residency");
  auto w = busy_window();
  // Idle CPUs in C1 (idle=poll-like tuning or a latency request): 9.7 s of 10 in C1, 0 in C6.
  for (int c = 4; c < 8; ++c) w.idle[c] = spr_idle(1000, 9'700'000, 100'000, 0);
  auto f = only(checks::live::judge_idle_residency(w, th));
  EXPECT_EQ(f.status, Status::fail) << f.title;
  EXPECT_EQ(metric_of(f, "idle_cpus"), 4);
  EXPECT_NEAR(metric_of(f, "shallow_pct"), 98.01, 1e-6);
  EXPECT_EQ(metric_of(f, "deep_pct"), 0);
  EXPECT_NE(f.title.find("C6"), std::string::npos);
  // Healthy: 9.5 s in C6.
  for (int c = 4; c < 8; ++c) w.idle[c] = spr_idle(0, 300'000, 100'000, 9'500'000);
  f = only(checks::live::judge_idle_residency(w, th));
  EXPECT_EQ(f.status, Status::pass) << f.title;
  EXPECT_NEAR(metric_of(f, "deep_pct"), 95, 1e-6);
  // C6 disabled: C1E is then the deepest enabled state, and reached.
  for (int c = 4; c < 8; ++c) {
    w.idle[c] = spr_idle(0, 300'000, 9'500'000, 0);
    w.idle[c][3].disabled = true;
  }
  f = only(checks::live::judge_idle_residency(w, th));
  EXPECT_EQ(f.status, Status::pass) << f.title;
  EXPECT_NE(f.title.find("C1E"), std::string::npos);
  // A single enabled state (a VM's haltpoll with only POLL): nothing deeper to reach.
  for (int c = 4; c < 8; ++c) w.idle[c] = {{0, "POLL", 0, false, 9'000'000, 10}};
  f = only(checks::live::judge_idle_residency(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("single enabled idle state"), std::string::npos);
  // No cpuidle at all.
  w.idle.clear();
  w.idle_error = "no CPU has a cpuidle directory (driver none)";
  f = only(checks::live::judge_idle_residency(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("driver none"), std::string::npos);
  // Every CPU busy: no idle CPU to judge.
  w = busy_window();
  for (auto& [c, p] : w.busy_pct) p = 90;
  for (int c = 0; c < 8; ++c) w.idle[c] = spr_idle(0, 100, 100, 100);
  EXPECT_EQ(only(checks::live::judge_idle_residency(w, th)).status, Status::skip);
}

TEST(ChecksLive, SchedStallsEveryStatus) {
  const auto th = checks::live::defaults("live.sched_stalls");
  LiveWindow w = busy_window();
  w.steal_pct = 0.4;
  w.numa_hint_faults = 1200;
  profile::TrainingSample t;
  t.pid = 4242;
  t.comm = "python";
  // schedstat deltas over 10 s: the main thread ran 9.8 s and waited 20 ms; a loader waited 80 ms.
  t.threads = {{4242, "python", 9'800'000'000ULL, 20'000'000ULL, 3, 2}, {4250, "pt_data_worker", 4'000'000'000ULL, 80'000'000ULL, 0, 3}};
  parsers::NumaMaps start, end;
  start.bytes_per_node = {{0, 900}, {1, 100}};
  end.bytes_per_node = {{0, 820}, {1, 180}};
  t.numa_start = start;
  t.numa_end = end;
  w.training.push_back(t);
  // A busy rsyslogd on CPU 3, where the loader ran (but was never switched out involuntarily).
  w.busy_threads.push_back({811, 811, "rsyslogd", 3, 0.6});
  auto f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::pass) << f.title;
  EXPECT_EQ(f.subject, "pid:4242");
  EXPECT_NEAR(metric_of(f, "max_wait_pct"), 0.8, 1e-9);
  EXPECT_NEAR(metric_of(f, "remote_pct_start"), 10, 1e-9);
  EXPECT_NEAR(metric_of(f, "remote_pct_end"), 18, 1e-9);
  EXPECT_EQ(metric_of(f, "numa_hint_faults"), 1200);
  EXPECT_NEAR(metric_of(f, "steal_pct"), 0.4, 1e-9);
  // The loader switched out 40 times on CPU 3 where rsyslogd was busy: named.
  w.training[0].threads[1].nonvoluntary = 40;
  f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::warn) << f.title;
  EXPECT_NE(f.title.find("rsyslogd"), std::string::npos);
  EXPECT_EQ(metric_of(f, "competing_threads"), 1);
  // Pinned to CPUs 0-3, preempted on CPU 3: a busy thread last seen on CPU 1 competes too.
  w.busy_threads = {{812, 812, "kworker/1:2", 1, 0.5}, {813, 813, "irqbalance", 6, 0.9}};
  EXPECT_EQ(only(checks::live::judge_sched_stalls(w, th)).status, Status::pass);  // not pinned: only CPU 3 counts
  w.training[0].pinned_cpus = {0, 1, 2, 3};
  f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::warn);
  EXPECT_NE(f.title.find("kworker/1:2"), std::string::npos) << f.title;
  EXPECT_EQ(metric_of(f, "competing_threads"), 1);  // irqbalance ran on CPU 6, outside the pinning
  w.training[0].pinned_cpus.clear();
  // A training process is never its own rival; a thread below busy_share is no rival.
  w.busy_threads = {{4242, 4243, "python", 3, 0.9}, {900, 900, "sshd", 3, 0.05}};
  EXPECT_EQ(only(checks::live::judge_sched_stalls(w, th)).status, Status::pass);
  // The loader waited 700 ms of 10 s for a CPU: 7% > 5%.
  w.training[0].threads[1].wait_ns = 700'000'000ULL;
  f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::warn);
  EXPECT_NE(f.title.find("pt_data_worker (tid 4250) waited 7.0%"), std::string::npos) << f.title;
  // schedstat unreadable (kernel without CONFIG_SCHED_INFO, or another user's process).
  w.training[0].threads.clear();
  w.training[0].sched_error = "/proc/4242/task/4242/schedstat: permission denied";
  f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("permission denied"), std::string::npos);
  // No training process.
  w.training.clear();
  w.training_note = "";
  f = only(checks::live::judge_sched_stalls(w, th));
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("--pid"), std::string::npos);
}

TEST(ChecksLive, RemoteShareIsOffTheMainNode) {
  parsers::NumaMaps m;
  EXPECT_FALSE(checks::live::remote_pct(m));
  m.bytes_per_node = {{0, 100}, {1, 300}, {2, 100}};
  EXPECT_NEAR(*checks::live::remote_pct(m), 40, 1e-9);
}

TEST(ChecksLive, KernelFramesSkipNamingTheMissingRight) {
  LiveWindow w = busy_window();
  w.perf_unavailable = profile::missing_right("EACCES (Permission denied)", "2", std::uint64_t{0});
  auto f = checks::live::judge_kernel_frames(w);
  ASSERT_EQ(f.size(), 3u);
  for (const auto& x : f) {
    EXPECT_EQ(x.status, Status::skip) << x.id;
    EXPECT_NE(x.title.find("CAP_PERFMON"), std::string::npos) << x.title;
    EXPECT_NE(x.title.find("perf_event_paranoid is 2"), std::string::npos) << x.title;
  }
  EXPECT_NE(profile::missing_right("EPERM", "-1", std::uint64_t{1} << 38).find("perfgap has CAP_PERFMON"), std::string::npos);
  EXPECT_NE(profile::missing_right("EPERM", "3", std::nullopt).find("capabilities unknown"), std::string::npos);
}

TEST(ChecksLive, KernelFramesJudgedByTheAnalyzersRules) {
  LiveWindow w = busy_window();
  parsers::PerfProfile p;
  p.layout = parsers::PerfProfile::Layout::data;
  p.samples = 4000;
  p.symbols = {{.symbol = "native_queued_spin_lock_slowpath", .dso = "[kernel.kallsyms]", .comm = "python", .kernel = true, .self_pct = 12, .line = 0},
               {.symbol = "[user]", .dso = "[user]", .comm = "python", .kernel = false, .self_pct = 88, .line = 0}};
  w.perf = p;
  w.perf_event = "cpu-clock at 99 Hz";
  w.self_cpu_s = 0.05;
  w.training_samples[4242] = {.kernel = 30, .total = 40};
  auto f = checks::live::judge_kernel_frames(w);
  ASSERT_EQ(f.size(), 3u);
  EXPECT_EQ(f[0].id, "perf.smmu_cmdq");
  EXPECT_EQ(f[0].status, Status::pass);
  EXPECT_EQ(f[1].status, Status::warn);
  EXPECT_EQ(f[2].id, "perf.summary");
  EXPECT_NEAR(metric_of(f[2], "kernel_pct"), 12, 1e-9);
  EXPECT_NEAR(metric_of(f[2], "self_cpu_pct"), 0.5, 1e-9);
  EXPECT_NEAR(metric_of(f[2], "kernel_pct.pid:4242"), 75, 1e-9);
  EXPECT_EQ(metric_of(f[2], "samples.pid:4242"), 40);
  // 40 samples: too few to judge a 5% share.
  w.perf->samples = 40;
  f = checks::live::judge_kernel_frames(w);
  EXPECT_EQ(f[0].status, Status::skip);
  EXPECT_EQ(f[1].status, Status::skip);
  EXPECT_NE(f[1].title.find("too few samples (40"), std::string::npos) << f[1].title;
  EXPECT_EQ(f[2].status, Status::pass);
}

TEST(ChecksLive, CatalogueHasEveryLiveIdWithItsParams) {
  std::vector<std::string> ids;
  for (const auto& c : checks::live::catalogue()) {
    ids.emplace_back(c.id);
    EXPECT_FALSE(c.rule.empty());
    EXPECT_FALSE(c.fix.empty());
    EXPECT_FALSE(c.params.empty());
    EXPECT_TRUE(core::builtin_registry().find(c.id) == nullptr) << c.id << " is also a node check";
  }
  EXPECT_EQ(ids, (std::vector<std::string>{"live.busy_mhz", "live.idle_residency", "live.sched_stalls"}));
  EXPECT_THROW(checks::live::defaults("live.nope"), std::out_of_range);
}

TEST(ParsersLive, SchedstatStatusAndVmstat) {
  auto s = parsers::parse_schedstat("9800123456 20000000 3121\n");
  ASSERT_TRUE(s);
  EXPECT_EQ(s->run_ns, 9800123456ULL);
  EXPECT_EQ(s->wait_ns, 20000000ULL);
  EXPECT_EQ(s->slices, 3121ULL);
  EXPECT_FALSE(parsers::parse_schedstat("12 x 3"));
  EXPECT_FALSE(parsers::parse_schedstat(""));
  auto n = parsers::parse_nonvoluntary_switches("Name:\tpython\nvoluntary_ctxt_switches:\t150\nnonvoluntary_ctxt_switches:\t545\n");
  ASSERT_TRUE(n);
  EXPECT_EQ(*n, 545u);
  EXPECT_FALSE(parsers::parse_nonvoluntary_switches("Name:\tpython\n"));
  auto v = parsers::parse_vmstat("nr_free_pages 1234\nnuma_hint_faults 77\nnuma_hint_faults_local 70\n");
  ASSERT_TRUE(v);
  EXPECT_EQ(v->at("numa_hint_faults"), 77u);
  auto bad = parsers::parse_vmstat("nr_free_pages 1234\nbroken\n");
  ASSERT_FALSE(bad);
  EXPECT_EQ(bad.error().line, 2);
}
