// perf_event_open for `perfgap profile`: per-CPU sampling events with their mmap ring buffers,
// and per-CPU counting events. Everything is RAII: a descriptor is closed and a ring unmapped
// on every way out, so an interrupted profile leaves no counter behind. Nothing here writes to
// the system; the ring's tail pointer is perfgap's own mapping.
#pragma once

#include <cstddef>
#include <cstdint>
#include <functional>
#include <optional>
#include <string>
#include <vector>

#include <linux/perf_event.h>

#include <tl/expected.hpp>

namespace perfgap::profile {

// An open perf event (closed when destroyed).
class PerfFd {
 public:
  PerfFd() = default;
  explicit PerfFd(int fd) : fd_(fd) {}
  PerfFd(PerfFd&& o) noexcept : fd_(o.fd_) { o.fd_ = -1; }
  PerfFd& operator=(PerfFd&& o) noexcept;
  PerfFd(const PerfFd&) = delete;
  PerfFd& operator=(const PerfFd&) = delete;
  ~PerfFd();
  int get() const { return fd_; }

 private:
  int fd_ = -1;
};

// Why perf_event_open failed: the errno and whether it is a missing right (EACCES, EPERM).
struct OpenError {
  int err = 0;
  bool permission() const;
  std::string describe() const;  // "EACCES (Permission denied)"
};

// perf_event_open(attr, pid -1, cpu, no group): one CPU, every task on it.
tl::expected<PerfFd, OpenError> open_cpu_event(perf_event_attr attr, int cpu);

// A counting event's value, scaled by time enabled over time running when it was multiplexed.
// The attr must have read_format PERF_FORMAT_TOTAL_TIME_ENABLED | PERF_FORMAT_TOTAL_TIME_RUNNING.
std::optional<std::uint64_t> read_counter(const PerfFd& fd);

// One read of a counting event (same read_format): its count, and how long it was enabled and
// on a counter. Kept apart so that a caller can tell "never ran" (running 0) from a count of 0.
struct CounterReading {
  std::uint64_t value = 0, enabled = 0, running = 0;
};
std::optional<CounterReading> read_counter_times(const PerfFd& fd);

// The ring buffer of a sampling event: 1 metadata page + 2^n data pages.
class Ring {
 public:
  // Maps the ring; tries smaller rings when the locked-memory limit refuses a large one.
  static tl::expected<Ring, OpenError> map(const PerfFd& fd);
  Ring(Ring&& o) noexcept;
  Ring& operator=(Ring&&) = delete;
  Ring(const Ring&) = delete;
  Ring& operator=(const Ring&) = delete;
  ~Ring();
  // Appends the records written since the last drain to `out` (whole records: the kernel
  // publishes data_head at record boundaries) unless `out` would pass `cap` bytes; then the
  // records are dropped and counted in `dropped`. Returns the bytes appended.
  std::size_t drain(std::string& out, std::size_t cap, std::uint64_t& dropped);

 private:
  Ring(void* base, std::size_t len, std::size_t page) : base_(base), len_(len), page_(page) {}
  void* base_ = nullptr;
  std::size_t len_ = 0, page_ = 0;
};

// ioctl ENABLE / DISABLE of an event (errors ignored: a closed event counts nothing anyway).
void enable_event(const PerfFd& fd);
void disable_event(const PerfFd& fd);

// The perf_event_open calls of the counting code, so that tests count without a PMU (a fake
// opener hands out descriptors of its own and the counts it wants read back); the real ones by
// default.
struct EventOps {
  std::function<tl::expected<PerfFd, OpenError>(const perf_event_attr&, int cpu)> open = open_cpu_event;
  std::function<std::optional<CounterReading>(const PerfFd&)> read = read_counter_times;
  std::function<void(const PerfFd&)> enable = enable_event, disable = disable_event;
};

}  // namespace perfgap::profile
