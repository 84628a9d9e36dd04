// The live dTLB counting of `perfgap profile` (issue 47 item 3) without a PMU: a fake
// perf_event_open (profile::EventOps) hands out /dev/null descriptors and the counts each event
// should read back, and the window's perf_stat.dtlb is judged by analyze perf-stat's rules.
#include <fcntl.h>
#include <unistd.h>

#include <cerrno>
#include <map>
#include <optional>
#include <string>
#include <vector>

#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "parsers/perf_stat.hpp"
#include "checks/live/live.hpp"
#include "compare/tlb_parity.hpp"
#include "profile/tlb_counters.hpp"
#include "findings.hpp"

using namespace perfgap;
using report::Status;

namespace {

// A PMU that counts what the test says: per event name, one reading per CPU.
struct FakeTlbPmu {
  std::map<std::string, std::vector<profile::CounterReading>> readings;
  std::map<std::uint32_t, int> refuse;  // perf_event_open errno per event type
  std::map<int, std::pair<std::string, int>> open_fds;  // descriptor -> event, CPU
  std::vector<perf_event_attr> opened;
  int enables = 0, disables = 0;

  static std::string event_of(const perf_event_attr& a) {
    for (const auto& e : profile::tlb_events())
      if (e.type == a.type && e.config == a.config) return e.name;
    return "?";
  }

  profile::EventOps ops() {
    profile::EventOps o;
    o.open = [this](const perf_event_attr& a, int cpu) -> tl::expected<profile::PerfFd, profile::OpenError> {
      if (auto r = refuse.find(a.type); r != refuse.end()) return tl::unexpected(profile::OpenError{r->second});
      const int fd = ::open("/dev/null", O_RDONLY | O_CLOEXEC);
      if (fd < 0) return tl::unexpected(profile::OpenError{errno});
      opened.push_back(a);
      open_fds[fd] = {event_of(a), cpu};
      return profile::PerfFd(fd);
    };
    o.read = [this](const profile::PerfFd& fd) -> std::optional<profile::CounterReading> {
      auto it = open_fds.find(fd.get());
      if (it == open_fds.end()) return std::nullopt;
      const auto& v = readings[it->second.first];
      const auto cpu = static_cast<std::size_t>(it->second.second);
      if (cpu >= v.size()) return std::nullopt;
      return v[cpu];
    };
    o.enable = [this](const profile::PerfFd&) { ++enables; };
    o.disable = [this](const profile::PerfFd&) { ++disables; };
    return o;
  }
};

// 1,000,000 dTLB loads, 2,000 misses and 10,000,000 instructions over two CPUs, each event on a
// counter `share` of the 10 s it was enabled (its counts that share of the whole).
void tlb_counts(FakeTlbPmu& pmu, double share) {
  const std::uint64_t enabled = 10'000'000'000ULL;
  const auto running = static_cast<std::uint64_t>(static_cast<double>(enabled) * share);
  auto part = [&](double n) { return static_cast<std::uint64_t>(n * share); };
  pmu.readings["dTLB-loads"] = {{part(600'000), enabled, running}, {part(400'000), enabled, running}};
  pmu.readings["dTLB-load-misses"] = {{part(1'500), enabled, running}, {part(500), enabled, running}};
  pmu.readings["instructions"] = {{part(6'000'000), enabled, running}, {part(4'000'000), enabled, running}};
}

// The window's perf_stat.dtlb after counting with `pmu` on CPUs 0 and 1.
report::Finding tlb_window_finding(FakeTlbPmu& pmu, const std::string& paranoid = "2") {
  profile::LiveWindow w;
  w.seconds = 10;
  {
    profile::TlbCounting c({0, 1}, pmu.ops(), paranoid, std::uint64_t{0});
    c.start();
    c.stop();
    w.tlb = c.counts();
  }
  auto out = checks::live::judge_dtlb(w);
  EXPECT_EQ(out.size(), 1u);
  return out.at(0);
}

bool tlb_says(const report::Finding& f, const std::string& text) {
  if (f.title.find(text) != std::string::npos) return true;
  for (const auto& e : f.evidence)
    if (e.observed.find(text) != std::string::npos) return true;
  return false;
}

}  // namespace

TEST(ProfileTlbCounters, KnownCountsGiveTheMissRatioAndMpki) {
  FakeTlbPmu pmu;
  tlb_counts(pmu, 1.0);
  auto f = tlb_window_finding(pmu);
  EXPECT_EQ(f.id, "perf_stat.dtlb");
  EXPECT_EQ(f.subject, "live");
  EXPECT_EQ(f.layer, "virtualization");
  // No reference in a live window: analyze perf-stat's skip with the figures.
  EXPECT_EQ(f.status, Status::skip) << f.title;
  EXPECT_NEAR(fixture::metric(f, "dtlb_load_miss_pct"), 0.2, 1e-12);
  EXPECT_NEAR(fixture::metric(f, "dtlb_mpki"), 0.2, 1e-12);
  EXPECT_NE(f.title.find("0.20% of loads miss, 0.200 misses per 1k instructions"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("perfgap compare"), std::string::npos) << f.title;
  EXPECT_FALSE(tlb_says(f, "scaled")) << f.title;
  EXPECT_TRUE(tlb_says(f, "system-wide (pid -1, as perf stat -a) on 2 CPUs")) << f.title;
  EXPECT_TRUE(tlb_says(f, "dTLB-loads 1000000 (100.00% of the time on a counter)"));
  // Three events on each CPU, disabled until the window starts; each enabled and disabled once.
  ASSERT_EQ(pmu.opened.size(), 6u);
  for (const auto& a : pmu.opened) {
    EXPECT_EQ(static_cast<unsigned>(a.disabled), 1u);
    EXPECT_EQ(a.read_format, std::uint64_t{PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING});
  }
  EXPECT_EQ(pmu.opened[0].type, std::uint32_t{PERF_TYPE_HW_CACHE});
  EXPECT_EQ(pmu.opened[0].config, std::uint64_t{PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_ACCESS << 16)});
  EXPECT_EQ(pmu.opened[2].config, std::uint64_t{PERF_COUNT_HW_CACHE_DTLB | (PERF_COUNT_HW_CACHE_OP_READ << 8) | (PERF_COUNT_HW_CACHE_RESULT_MISS << 16)});
  EXPECT_EQ(pmu.opened[4].type, std::uint32_t{PERF_TYPE_HARDWARE});
  EXPECT_EQ(pmu.opened[4].config, std::uint64_t{PERF_COUNT_HW_INSTRUCTIONS});
  EXPECT_EQ(pmu.enables, 6);
  EXPECT_EQ(pmu.disables, 6);
}

TEST(ProfileTlbCounters, MultiplexedCountsAreScaledByTimeRunning) {
  FakeTlbPmu pmu;
  tlb_counts(pmu, 0.25);  // each event on a counter a quarter of the time
  auto f = tlb_window_finding(pmu);
  EXPECT_NEAR(fixture::metric(f, "dtlb_load_miss_pct"), 0.2, 1e-9);
  EXPECT_NEAR(fixture::metric(f, "dtlb_mpki"), 0.2, 1e-9);
  EXPECT_TRUE(tlb_says(f, "(scaled: counted 25.00% of the time)")) << f.title;
  EXPECT_TRUE(tlb_says(f, "instructions 10000000 (25.00% of the time on a counter)"));
}

TEST(ProfileTlbCounters, GuestWithoutPmuSkipsNamingTheVirtualPmu) {
  FakeTlbPmu pmu;
  pmu.refuse[PERF_TYPE_HW_CACHE] = ENOENT;
  pmu.refuse[PERF_TYPE_HARDWARE] = ENOENT;
  auto f = tlb_window_finding(pmu);
  EXPECT_EQ(f.id, "perf_stat.dtlb");
  EXPECT_EQ(f.subject, "live");
  EXPECT_EQ(f.status, Status::skip);
  for (const char* words : {"this guest exposes no PMU counters for dTLB events", "ENOENT", "virtual PMU", "-cpu host,pmu=on", "<pmu state='on'/>",
                            "cloud instance type"})
    EXPECT_NE(f.title.find(words), std::string::npos) << words << ": " << f.title;
  EXPECT_TRUE(f.metrics.empty());
  EXPECT_TRUE(pmu.opened.empty());
  // EOPNOTSUPP says the same.
  FakeTlbPmu other;
  other.refuse[PERF_TYPE_HW_CACHE] = EOPNOTSUPP;
  other.refuse[PERF_TYPE_HARDWARE] = EOPNOTSUPP;
  EXPECT_NE(tlb_window_finding(other).title.find("exposes no PMU counters"), std::string::npos);
  // Instructions count but the dTLB event does not open: a PMU without it, not a missing PMU.
  FakeTlbPmu partial;
  partial.refuse[PERF_TYPE_HW_CACHE] = ENOENT;
  const auto p = tlb_window_finding(partial);
  EXPECT_EQ(p.status, Status::skip);
  EXPECT_EQ(p.title.find("exposes no PMU counters"), std::string::npos) << p.title;
  for (const char* words : {"counts instructions but offers no dTLB read-miss event", "ENOENT", "instructions opened", "-cpu host"})
    EXPECT_NE(p.title.find(words), std::string::npos) << words << ": " << p.title;
}

TEST(ProfileTlbCounters, CountersThatNeverRanSkipAsWithoutPmu) {
  FakeTlbPmu pmu;
  tlb_counts(pmu, 0.0);  // opened, enabled 10 s, on a counter never
  auto f = tlb_window_finding(pmu);
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find("never ran"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("-cpu host,pmu=on"), std::string::npos) << f.title;
  EXPECT_TRUE(tlb_says(f, "dTLB-load-misses never on a counter (time running 0 on 2 CPUs)"));
  EXPECT_TRUE(f.metrics.empty());
}

TEST(ProfileTlbCounters, PermissionRefusalNamesParanoidAndCapPerfmon) {
  for (int err : {EACCES, EPERM}) {
    FakeTlbPmu pmu;
    pmu.refuse[PERF_TYPE_HW_CACHE] = err;
    auto f = tlb_window_finding(pmu, "2");
    EXPECT_EQ(f.status, Status::skip);
    for (const char* words : {"CAP_PERFMON", "kernel.perf_event_paranoid is 2", "perfgap has neither CAP_PERFMON nor CAP_SYS_ADMIN"})
      EXPECT_NE(f.title.find(words), std::string::npos) << words << ": " << f.title;
    EXPECT_EQ(f.title.find("vPMU"), std::string::npos) << "a refused right is not a missing PMU: " << f.title;
  }
}

TEST(ProfileTlbCounters, WithoutLoadsTheMpkiStillJudges) {
  // A PMU without a generic dTLB read-access event (EINVAL for it alone): misses per 1k
  // instructions remain, and dTLB-loads is <not supported> as perf stat would print it.
  FakeTlbPmu pmu;
  tlb_counts(pmu, 1.0);
  profile::EventOps ops = pmu.ops();
  auto open = ops.open;
  ops.open = [open](const perf_event_attr& a, int cpu) -> tl::expected<profile::PerfFd, profile::OpenError> {
    if (a.type == PERF_TYPE_HW_CACHE && (a.config >> 16) == PERF_COUNT_HW_CACHE_RESULT_ACCESS) return tl::unexpected(profile::OpenError{EINVAL});
    return open(a, cpu);
  };
  profile::LiveWindow w;
  {
    profile::TlbCounting c({0, 1}, ops, "0", std::nullopt);
    w.tlb = c.counts();
  }
  ASSERT_TRUE(w.tlb.stat);
  EXPECT_EQ(w.tlb.stat->find("dTLB-loads")->not_supported, 1);
  auto f = checks::live::judge_dtlb(w).at(0);
  EXPECT_NEAR(fixture::metric(f, "dtlb_mpki"), 0.2, 1e-12);
  EXPECT_THROW(fixture::metric(f, "dtlb_load_miss_pct"), std::runtime_error);
  EXPECT_TRUE(tlb_says(f, "dTLB-loads refused on CPU 0: EINVAL"));
}

TEST(ProfileTlbCounters, PerfStatFilesWithoutPmuGiveTheSameAdvice) {
  // One wording for both paths: a perf stat file's <not supported> rows and the live refusal.
  auto s = *parsers::parse_perf_stat("<not supported>      dTLB-loads\n<not supported>      dTLB-load-misses\n");
  const auto findings = analyzers::analyze_perf_stat(s, "guest.txt", {});
  const auto& f = fixture::find(findings, "perf_stat.dtlb");
  EXPECT_EQ(f.status, Status::skip);
  EXPECT_NE(f.title.find(analyzers::kNoPmuAdvice), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("-cpu host,pmu=on"), std::string::npos) << f.title;
}

TEST(ProfileTlbCounters, TwoLiveWindowsCompareAsTlbParity) {
  // The verdict a live window leaves to compare: bare metal's 0.22% against a VM's 0.61% of
  // loads missing, each as perf_stat.dtlb [live] of a profile report.
  auto live_report = [](double misses) {
    FakeTlbPmu pmu;
    const std::uint64_t t = 1'000'000'000ULL;
    pmu.readings["dTLB-loads"] = {{1'000'000, t, t}};
    pmu.readings["dTLB-load-misses"] = {{static_cast<std::uint64_t>(misses), t, t}};
    pmu.readings["instructions"] = {{10'000'000, t, t}};
    profile::LiveWindow w;
    {
      profile::TlbCounting c({0}, pmu.ops(), "0", std::nullopt);
      w.tlb = c.counts();
    }
    const auto f = checks::live::judge_dtlb(w).at(0);
    compare::ReportView v;
    v.kind = "live";
    v.findings.push_back({f.id, f.layer, f.subject, f.title, f.status, f.metrics, {}});
    return v;
  };
  auto parity = compare::tlb_parity(live_report(2'200), "bm.json", live_report(6'100), "vm.json", {});
  ASSERT_TRUE(parity);
  EXPECT_EQ(parity->status, Status::fail);
  EXPECT_NE(parity->title.find("2.77x, not at parity"), std::string::npos) << parity->title;
}
