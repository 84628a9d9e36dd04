// The read floor of a plain trace two ways (issue 45 item 1, "mmap instead of read"): read(2)
// into one 256 KiB block, as sys::BlockReader does, against mmap(2) of the file in windows (the
// whole file with a window larger than it), each byte's cache line touched once. Prints the wall
// time; run it under /usr/bin/time for the CPU (user + sys), which is the figure to compare.
//   perfgap-bench-read-mmap read FILE...
//   perfgap-bench-read-mmap mmap WINDOW_BYTES POPULATE(0|1) FILE...
#include <fcntl.h>
#include <sys/mman.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <chrono>
#include <cstdint>
#include <cstdio>
#include <cstdlib>
#include <string>
#include <vector>

namespace {
std::uint64_t touch(const char* p, std::size_t n) {
  std::uint64_t s = 0;
  for (std::size_t i = 0; i < n; i += 64) s += static_cast<unsigned char>(p[i]);
  return s;
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 3) return 2;
  const std::string mode = argv[1];
  const bool mapped = mode == "mmap";
  if (!mapped && mode != "read") return 2;
  if (mapped && argc < 5) return 2;
  const std::size_t window = mapped ? std::strtoull(argv[2], nullptr, 0) : 0;
  const bool populate = mapped && std::atoi(argv[3]) != 0;
  const int first = mapped ? 4 : 2;
  const std::size_t block = 256u << 10;
  std::vector<char> buf(block);
  std::uint64_t sum = 0, bytes = 0;
  const auto t0 = std::chrono::steady_clock::now();
  for (int i = first; i < argc; ++i) {
    const int fd = ::open(argv[i], O_RDONLY | O_CLOEXEC);
    if (fd < 0) return 1;
    struct stat st {};
    if (::fstat(fd, &st) != 0) return 1;
    const auto size = static_cast<std::size_t>(st.st_size);
    if (!mapped) {
      for (ssize_t n; (n = ::read(fd, buf.data(), block)) > 0;) sum += touch(buf.data(), static_cast<std::size_t>(n)), bytes += static_cast<std::size_t>(n);
    } else {
      for (std::size_t off = 0; off < size; off += window) {
        const std::size_t len = std::min(window, size - off);
        void* m = ::mmap(nullptr, len, PROT_READ, MAP_SHARED | (populate ? MAP_POPULATE : 0), fd, static_cast<off_t>(off));
        if (m == MAP_FAILED) return 1;
        ::madvise(m, len, MADV_SEQUENTIAL);
        sum += touch(static_cast<const char*>(m), len), bytes += len;
        ::munmap(m, len);
      }
    }
    ::close(fd);
  }
  const double ms = std::chrono::duration<double, std::milli>(std::chrono::steady_clock::now() - t0).count();
  std::printf("%s: %llu bytes in %.1f ms (checksum %llu)\n", mode.c_str(), static_cast<unsigned long long>(bytes), ms, static_cast<unsigned long long>(sum));
  return 0;
}
