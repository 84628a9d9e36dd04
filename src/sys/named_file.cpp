#include "sys/named_file.hpp"

#include "sys/fd_read.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <memory>
#include <utility>

namespace perfgap::sys {
namespace {

std::string why(int err) { return "cannot open: " + std::string(std::strerror(err)); }

std::string mib(std::size_t bytes) { return bytes >= (1u << 20) ? std::to_string(bytes >> 20) + " MiB" : std::to_string(bytes) + " bytes"; }

// An open descriptor ready for blocking reads, or why not.
tl::expected<int, std::string> open_named(const std::string& path, std::size_t max_bytes) {
  int fd = path == "-" ? ::fcntl(STDIN_FILENO, F_DUPFD_CLOEXEC, 0) : ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(why(errno));
  struct stat st {};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return tl::unexpected(why(err));
  }
  std::string bad = refused_kind(st, path == "-");
  if (bad.empty() && S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes) bad = "larger than " + mib(max_bytes);
  if (!bad.empty()) {
    ::close(fd);
    return tl::unexpected(bad);
  }
  // The open did not wait; the reads may (a pipe's writer is still writing). A FIFO that
  // never had a writer reads as empty.
  int flags = ::fcntl(fd, F_GETFL);
  if (flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  return fd;
}

}  // namespace

std::string refused_kind(const struct ::stat& st, bool is_stdin) {
  if (S_ISDIR(st.st_mode)) return "is a directory";
  if (S_ISBLK(st.st_mode)) return "is a block device";
  if (S_ISSOCK(st.st_mode)) return "is a socket";
  // A device streams forever (/dev/zero, /dev/urandom) or is a terminal: refused at once
  // rather than read up to the size limit. Standard input is taken as given ("-").
  if (S_ISCHR(st.st_mode) && !is_stdin) return "is a character device (a regular file, a pipe or - expected)";
  return "";
}

tl::expected<std::string, std::string> read_named_file(const std::string& path, std::size_t max_bytes) {
  auto fd = open_named(path, max_bytes);
  if (!fd) return tl::unexpected(fd.error());
  std::string out;
  // A regular file's size is known: one allocation instead of doublings (profiles are 100s of MB).
  struct stat st {};
  if (::fstat(*fd, &st) == 0 && S_ISREG(st.st_mode) && st.st_size > 0)
    out.reserve(std::min<std::size_t>(static_cast<std::size_t>(st.st_size), max_bytes) + 1);
  int err = 0;
  switch (read_fd_to_end(*fd, max_bytes, out, err)) {
    case FdRead::ok: return out;
    case FdRead::too_large: return tl::unexpected("larger than " + mib(max_bytes));
    case FdRead::error: break;
  }
  return tl::unexpected("read error: " + std::string(std::strerror(err)));
}

tl::expected<std::string, std::string> read_config_file(const std::string& path) {
  // Decided on the descriptor that is read (no window between a stat and the open).
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return tl::unexpected(why(errno));
  struct stat st {};
  const bool regular = ::fstat(fd, &st) == 0 && S_ISREG(st.st_mode);
  std::string kind = regular ? "" : refused_kind(st, false);
  if (!regular && kind.empty()) kind = S_ISFIFO(st.st_mode) ? "is a FIFO" : "is not a regular file";
  if (!regular) {
    ::close(fd);
    return tl::unexpected(kind + " (a configuration must be a regular file)");
  }
  if (static_cast<std::size_t>(st.st_size) > kMaxConfigBytes) {
    ::close(fd);
    return tl::unexpected("larger than " + mib(kMaxConfigBytes));
  }
  std::string out;
  int err = 0;
  switch (read_fd_to_end(fd, kMaxConfigBytes, out, err)) {  // closes fd
    case FdRead::ok: return out;
    case FdRead::too_large: return tl::unexpected("larger than " + mib(kMaxConfigBytes));
    case FdRead::error: break;
  }
  return tl::unexpected("read error: " + std::string(std::strerror(err)));
}

tl::expected<void, std::string> stream_named_file(const std::string& path, std::size_t max_bytes,
                                                  const std::function<bool(std::string_view)>& sink, std::size_t block_bytes) {
  auto fd = open_named(path, max_bytes);
  if (!fd) return tl::unexpected(fd.error());
  block_bytes = std::max<std::size_t>(block_bytes, 2);
  // One spare byte: a cut line gets its '\n' there.
  std::unique_ptr<char[]> buf(new char[block_bytes + 1]);
  std::size_t have = 0, total = 0;
  bool skipping = false;  // dropping the rest of a line longer than a block
  tl::expected<void, std::string> result;
  // Lines are handed over once a quarter block is read, not a whole block: they are then
  // parsed while they are still in the core's cache (1 MiB is past an L2; 100 MB of
  // nccl-tests took ~10% longer so). When a line that long, or whole lines of less than
  // kMinHandOver, are all a quarter holds, the whole block is read first, as it always was:
  // the lines and their cuts are the same, and the first block holds at least the head that
  // looks_binary reads of it.
  constexpr std::size_t kMinHandOver = 64u << 10;
  const std::size_t quarter = block_bytes / 4 >= kMinHandOver ? block_bytes / 4 : block_bytes;
  for (bool eof = false; !eof;) {
    std::size_t want = quarter;
    for (;;) {
      // Fill up to `want` (a pipe hands over 64 KiB at a time).
      while (have < want) {
        ssize_t n = ::read(*fd, buf.get() + have, want - have);
        if (n < 0) {
          if (errno == EINTR) continue;
          if (errno == EAGAIN) {  // a non-blocking device with nothing queued: the end, as read_fd_to_end
            eof = true;
            break;
          }
          result = tl::unexpected("read error: " + std::string(std::strerror(errno)));
          ::close(*fd);
          return result;
        }
        if (n == 0) {
          eof = true;
          break;
        }
        total += static_cast<std::size_t>(n);
        if (total > max_bytes) {
          ::close(*fd);
          return tl::unexpected("larger than " + mib(max_bytes));
        }
        if (skipping) {
          auto* nl = static_cast<char*>(std::memchr(buf.get() + have, '\n', static_cast<std::size_t>(n)));
          if (!nl) continue;  // still inside the long line: drop what came
          std::size_t keep = static_cast<std::size_t>(buf.get() + have + n - (nl + 1));
          std::memmove(buf.get(), nl + 1, keep);
          have = keep;
          skipping = false;
          continue;
        }
        have += static_cast<std::size_t>(n);
      }
      if (eof || want == block_bytes) break;
      const auto* last = static_cast<const char*>(::memrchr(buf.get(), '\n', have));
      if (last != nullptr && static_cast<std::size_t>(last - buf.get()) + 1 >= kMinHandOver) break;
      want = block_bytes;
    }
    if (have == 0) continue;
    std::size_t upto = have;  // hand over whole lines; keep a partial last line for the next block
    if (!eof) {
      auto* last = static_cast<char*>(::memrchr(buf.get(), '\n', have));
      if (last) {
        upto = static_cast<std::size_t>(last - buf.get()) + 1;
      } else {  // one line fills the block: cut it
        buf[have] = '\n';
        upto = have + 1;
        skipping = true;
      }
    }
    bool more = sink(std::string_view(buf.get(), upto));
    if (!more) break;
    std::size_t rest = upto > have ? 0 : have - upto;
    std::memmove(buf.get(), buf.get() + upto, rest);
    have = rest;
  }
  ::close(*fd);
  return result;
}

tl::expected<BlockReader, std::string> BlockReader::open(const std::string& path, std::size_t max_bytes, std::size_t block_bytes) {
  auto fd = open_named(path, max_bytes);
  if (!fd) return tl::unexpected(fd.error());
  return BlockReader(*fd, max_bytes, std::max<std::size_t>(block_bytes, 16));
}

BlockReader::BlockReader(int fd, std::size_t max_bytes, std::size_t block_bytes)
    : fd_(fd), max_(max_bytes), block_(block_bytes), buf_(new char[block_bytes]) {}

BlockReader::BlockReader(BlockReader&& other) noexcept
    : fd_(std::exchange(other.fd_, -1)), max_(other.max_), block_(other.block_), total_(other.total_), buf_(std::move(other.buf_)) {}

BlockReader& BlockReader::operator=(BlockReader&& other) noexcept {
  if (this != &other) {
    if (fd_ >= 0) ::close(fd_);
    fd_ = std::exchange(other.fd_, -1);
    max_ = other.max_, block_ = other.block_, total_ = other.total_;
    buf_ = std::move(other.buf_);
  }
  return *this;
}

BlockReader::~BlockReader() {
  if (fd_ >= 0) ::close(fd_);
}

tl::expected<std::string_view, std::string> BlockReader::next() {
  if (fd_ < 0) return std::string_view();
  std::size_t have = 0;
  // Fill the block (a pipe hands over 64 KiB at a time).
  while (have < block_) {
    ssize_t n = ::read(fd_, buf_.get() + have, block_ - have);
    if (n < 0) {
      if (errno == EINTR) continue;
      if (errno == EAGAIN) break;  // a non-blocking device with nothing queued: the end, as read_fd_to_end
      std::string err = "read error: " + std::string(std::strerror(errno));
      ::close(std::exchange(fd_, -1));
      return tl::unexpected(err);
    }
    if (n == 0) break;
    total_ += static_cast<std::size_t>(n);
    if (total_ > max_) {
      ::close(std::exchange(fd_, -1));
      return tl::unexpected("larger than " + mib(max_));
    }
    have += static_cast<std::size_t>(n);
  }
  if (have < block_) ::close(std::exchange(fd_, -1));  // the end: the next call says so
  return std::string_view(buf_.get(), have);
}

tl::expected<void, std::string> probe_named_file(const std::string& path) {
  auto fd = open_named(path, static_cast<std::size_t>(-1));
  if (!fd) return tl::unexpected(fd.error());
  ::close(*fd);
  return {};
}

tl::expected<std::vector<std::string>, std::string> named_dir_files(const std::string& dir, std::string_view suffix, bool* missing) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    if (missing) *missing = errno == ENOENT;
    return tl::unexpected("cannot open directory: " + std::string(std::strerror(errno)));
  }
  std::vector<std::string> out;
  const std::string base = dir.ends_with('/') ? dir : dir + "/";
  while (auto* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.starts_with('.') || name.size() <= suffix.size() || !name.ends_with(suffix)) continue;
    std::string path = base + std::string(name);
    struct stat st {};
    if (::stat(path.c_str(), &st) != 0 || !S_ISREG(st.st_mode)) continue;
    out.push_back(std::move(path));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

std::optional<std::string> read_padded_file(const std::string& path, std::size_t max_bytes, std::size_t padding,
                                            std::string& buf, std::size_t& size,
                                            const std::function<std::string(std::optional<std::uint64_t>)>& too_large) {
  // Not waiting in open() (a FIFO without a writer); the reads of a pipe may wait.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return "cannot open: " + std::string(std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return "cannot stat: " + std::string(std::strerror(err));
  }
  if (int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (auto bad = refused_kind(st, false); !bad.empty()) {
    ::close(fd);
    return bad;
  }
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > max_bytes) {
    ::close(fd);
    return too_large(static_cast<std::uint64_t>(st.st_size));
  }
  // Regular files are read at their size; anything else (a pipe) until EOF, within the limit.
  std::size_t cap = S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) + 1 : 1u << 16;
  size = 0;
  for (;;) {
    if (buf.size() < cap + padding) buf.resize(cap + padding);
    ssize_t n = ::read(fd, buf.data() + size, cap - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return "read error: " + std::string(std::strerror(err));
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
    if (size == cap) {
      if (cap > max_bytes) {
        ::close(fd);
        return too_large(std::nullopt);
      }
      cap *= 2;
    }
  }
  ::close(fd);
  std::memset(buf.data() + size, 0, padding);
  return std::nullopt;
}

}  // namespace perfgap::sys
