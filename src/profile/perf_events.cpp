#include "profile/perf_events.hpp"

#include <sys/ioctl.h>
#include <sys/mman.h>
#include <sys/syscall.h>
#include <unistd.h>

#include <cerrno>
#include <cstring>

#include <fmt/format.h>

namespace perfgap::profile {

PerfFd& PerfFd::operator=(PerfFd&& o) noexcept {
  if (this != &o) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = o.fd_;
    o.fd_ = -1;
  }
  return *this;
}

PerfFd::~PerfFd() {
  if (fd_ >= 0) ::close(fd_);
}

bool OpenError::permission() const { return err == EACCES || err == EPERM; }

std::string OpenError::describe() const {
  const char* name = err == EACCES ? "EACCES" : err == EPERM ? "EPERM" : err == ENOENT ? "ENOENT" : err == ENODEV ? "ENODEV"
                   : err == EOPNOTSUPP ? "EOPNOTSUPP" : err == EINVAL ? "EINVAL" : err == ENOMEM ? "ENOMEM" : err == EMFILE ? "EMFILE"
                   : err == ENOSYS ? "ENOSYS" : "errno";
  return fmt::format("{} ({})", name, std::strerror(err));
}

tl::expected<PerfFd, OpenError> open_cpu_event(perf_event_attr attr, int cpu) {
  attr.size = sizeof(attr);
  long fd = ::syscall(SYS_perf_event_open, &attr, -1, cpu, -1, PERF_FLAG_FD_CLOEXEC);
  if (fd < 0) return tl::unexpected(OpenError{errno});
  return PerfFd(static_cast<int>(fd));
}

std::optional<CounterReading> read_counter_times(const PerfFd& fd) {
  std::uint64_t v[3] = {0, 0, 0};  // value, time enabled, time running
  if (::read(fd.get(), v, sizeof(v)) != static_cast<ssize_t>(sizeof(v))) return std::nullopt;
  return CounterReading{v[0], v[1], v[2]};
}

std::optional<std::uint64_t> read_counter(const PerfFd& fd) {
  auto r = read_counter_times(fd);
  if (!r) return std::nullopt;
  if (r->running == 0) return std::uint64_t{0};
  if (r->running >= r->enabled) return r->value;
  return static_cast<std::uint64_t>(static_cast<long double>(r->value) * r->enabled / r->running);
}

tl::expected<Ring, OpenError> Ring::map(const PerfFd& fd) {
  const auto page = static_cast<std::size_t>(::sysconf(_SC_PAGESIZE));
  int err = 0;
  // 8 data pages hold about a second of 99 Hz samples with kernel call chains; a node whose
  // perf_event_mlock_kb is spent gets smaller rings (drained every 100 ms).
  for (std::size_t pages : {8u, 2u, 1u}) {
    const std::size_t len = (1 + pages) * page;
    void* p = ::mmap(nullptr, len, PROT_READ | PROT_WRITE, MAP_SHARED, fd.get(), 0);
    if (p != MAP_FAILED) return Ring(p, len, page);
    err = errno;
    if (err != EPERM && err != ENOMEM) break;
  }
  return tl::unexpected(OpenError{err});
}

Ring::Ring(Ring&& o) noexcept : base_(o.base_), len_(o.len_), page_(o.page_) {
  o.base_ = nullptr;
  o.len_ = 0;
}

Ring::~Ring() {
  if (base_) ::munmap(base_, len_);
}

std::size_t Ring::drain(std::string& out, std::size_t cap, std::uint64_t& dropped) {
  auto* meta = static_cast<perf_event_mmap_page*>(base_);
  const std::uint64_t head = __atomic_load_n(&meta->data_head, __ATOMIC_ACQUIRE);
  const std::uint64_t tail = meta->data_tail;
  const std::size_t size = len_ - page_;
  const char* data = static_cast<const char*>(base_) + page_;
  std::size_t n = static_cast<std::size_t>(head - tail);
  std::size_t appended = 0;
  if (n > size) n = size;  // cannot happen with the tail kept: the kernel does not overwrite
  if (out.size() + n > cap) {
    dropped += n;
  } else if (n > 0) {
    const std::size_t at = static_cast<std::size_t>(tail % size);
    const std::size_t first = std::min(n, size - at);
    out.append(data + at, first);
    out.append(data, n - first);
    appended = n;
  }
  __atomic_store_n(&meta->data_tail, head, __ATOMIC_RELEASE);
  return appended;
}

void enable_event(const PerfFd& fd) { ::ioctl(fd.get(), PERF_EVENT_IOC_ENABLE, 0); }
void disable_event(const PerfFd& fd) { ::ioctl(fd.get(), PERF_EVENT_IOC_DISABLE, 0); }

}  // namespace perfgap::profile
