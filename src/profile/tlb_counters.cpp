#include "profile/tlb_counters.hpp"

#include <cerrno>

#include <fmt/format.h>

#include "profile/collector.hpp"

namespace perfgap::profile {

namespace {
constexpr std::uint64_t hw_cache(std::uint64_t cache, std::uint64_t op, std::uint64_t result) { return cache | (op << 8) | (result << 16); }
}  // namespace

const std::vector<CountedEvent>& tlb_events() {
  static const std::vector<CountedEvent> events = {
      {"dTLB-loads", PERF_TYPE_HW_CACHE, hw_cache(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_ACCESS)},
      {"dTLB-load-misses", PERF_TYPE_HW_CACHE, hw_cache(PERF_COUNT_HW_CACHE_DTLB, PERF_COUNT_HW_CACHE_OP_READ, PERF_COUNT_HW_CACHE_RESULT_MISS)},
      {"instructions", PERF_TYPE_HARDWARE, PERF_COUNT_HW_INSTRUCTIONS},
  };
  return events;
}

bool no_pmu_errno(int err) { return err == ENOENT || err == EOPNOTSUPP || err == ENODEV; }

TlbCounting::TlbCounting(const std::vector<int>& cpus, EventOps ops, const std::string& paranoid, std::optional<std::uint64_t> caps)
    : ops_(std::move(ops)), cpus_(cpus.size()) {
  if (cpus.empty()) {
    failed_.missing = TlbCounts::Missing::refused;
    failed_.why = "the online CPU list could not be read";
    return;
  }
  for (const auto& spec : tlb_events()) {
    perf_event_attr a{};
    a.type = spec.type;
    a.config = spec.config;
    a.read_format = PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING;
    a.disabled = 1;  // enabled at the window's start, with the sampler
    Event e;
    e.name = spec.name;
    for (int cpu : cpus) {
      auto fd = ops_.open(a, cpu);
      if (!fd) {
        e.refused = fd.error();
        e.refused_cpu = cpu;
        e.fds.clear();
        break;
      }
      e.fds.emplace_back(cpu, std::move(*fd));
    }
    if (e.refused && e.refused->permission()) {
      events_.clear();
      failed_.missing = TlbCounts::Missing::permission;
      failed_.why = missing_right(e.refused->describe(), paranoid, caps);
      return;
    }
    events_.push_back(std::move(e));
  }
  const Event& misses = events_[1];
  if (!misses.refused) return;
  const Event& instructions = events_[2];
  failed_.missing = !no_pmu_errno(misses.refused->err) ? TlbCounts::Missing::refused
                    : instructions.refused                ? TlbCounts::Missing::no_pmu
                                                          : TlbCounts::Missing::no_event;
  failed_.why = fmt::format("perf_event_open of dTLB-load-misses (PERF_TYPE_HW_CACHE) on CPU {}: {}; instructions {}", misses.refused_cpu,
                            misses.refused->describe(), instructions.refused ? "refused too: " + instructions.refused->describe() : std::string("opened"));
  events_.clear();
}

void TlbCounting::start() const {
  for (const auto& e : events_)
    for (const auto& cpu_fd : e.fds) ops_.enable(cpu_fd.second);
}

void TlbCounting::stop() const {
  for (const auto& e : events_)
    for (const auto& cpu_fd : e.fds) ops_.disable(cpu_fd.second);
}

TlbCounts TlbCounting::counts() const {
  if (failed_.missing != TlbCounts::Missing::none) return failed_;
  TlbCounts t;
  parsers::PerfStat s;
  s.format = "live";
  std::vector<std::string> each;
  for (const auto& e : events_) {
    parsers::PerfStatEvent pe;
    pe.name = e.name;
    ++s.rows;
    if (e.refused) {
      pe.not_supported = 1;
      each.push_back(fmt::format("{} refused on CPU {}: {}", e.name, e.refused_cpu, e.refused->describe()));
      s.events.push_back(std::move(pe));
      continue;
    }
    // Summed over CPUs, then scaled: perf stat -a's aggregate, so the figures compare with a
    // reference taken that way.
    long double value = 0, enabled = 0, running = 0;
    std::size_t unread = 0;
    for (const auto& cpu_fd : e.fds) {
      auto r = ops_.read(cpu_fd.second);
      if (!r) {
        ++unread;
        continue;
      }
      value += static_cast<long double>(r->value);
      enabled += static_cast<long double>(r->enabled);
      running += static_cast<long double>(r->running);
    }
    if (running <= 0) {
      pe.not_counted = 1;
      each.push_back(fmt::format("{} never on a counter (time running 0 on {} CPUs{})", e.name, e.fds.size(),
                                 unread ? fmt::format(", {} unreadable", unread) : ""));
      s.events.push_back(std::move(pe));
      continue;
    }
    const double share = running >= enabled ? 100.0 : static_cast<double>(100 * running / enabled);
    pe.value = static_cast<double>(running >= enabled ? value : value * enabled / running);
    pe.counted = 1;
    pe.min_running_pct = share;
    each.push_back(fmt::format("{} {:.0f} ({:.2f}% of the time on a counter{})", e.name, pe.value, share,
                               unread ? fmt::format(", {} CPUs unreadable", unread) : ""));
    s.events.push_back(std::move(pe));
  }
  t.how = fmt::format("counted per CPU system-wide (pid -1, as perf stat -a) on {} CPUs and summed: {}", cpus_, fmt::join(each, ", "));
  if (!s.find("dTLB-load-misses")->counted) {
    // Opened but never scheduled on a counter: a vPMU that advertises events it cannot count,
    // or every counter held by other users.
    t.missing = TlbCounts::Missing::never_ran;
    t.why = t.how;
    return t;
  }
  t.stat = std::move(s);
  return t;
}

}  // namespace perfgap::profile
