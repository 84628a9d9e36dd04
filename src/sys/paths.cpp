#include "sys/paths.hpp"

#include <fcntl.h>
#include <limits.h>  // NOLINT(modernize-deprecated-headers): PATH_MAX is POSIX, not in <climits>
#include <stdlib.h>  // NOLINT(modernize-deprecated-headers): mkdtemp, mkstemp and realpath are POSIX, not in <cstdlib>
#include <unistd.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <filesystem>
#include <system_error>

namespace perfgap::sys {

std::string base_name(std::string_view path) {
  const auto slash = path.rfind('/');
  return std::string(slash == std::string_view::npos ? path : path.substr(slash + 1));
}

std::string lexically_normal(const std::string& path) { return std::filesystem::path(path).lexically_normal().string(); }

tl::expected<std::string, std::string> absolute_path(const std::string& path) {
  std::error_code ec;
  auto p = std::filesystem::absolute(path, ec);
  if (ec) return tl::unexpected(ec.message());
  return p.string();
}

std::string in_temp_directory(std::string_view name) {
  std::error_code ec;
  auto dir = std::filesystem::temp_directory_path(ec);
  if (ec) dir = "/tmp";
  return (dir / name).string();
}

bool can_access(const std::string& path, int mode) { return ::access(path.c_str(), mode) == 0; }

bool exists(const std::string& path) { return can_access(path, F_OK); }

tl::expected<struct stat, int> stat_path(const std::string& path) {
  struct stat st {};
  if (::stat(path.c_str(), &st) != 0) return tl::unexpected(errno);
  return st;
}

tl::expected<struct stat, int> lstat_path(const std::string& path) {
  struct stat st {};
  if (::lstat(path.c_str(), &st) != 0) return tl::unexpected(errno);
  return st;
}

bool is_directory(const std::string& path) {
  auto st = stat_path(path);
  return st && S_ISDIR(st->st_mode);
}

bool is_empty_directory(const std::string& path) {
  std::error_code ec;
  return std::filesystem::is_empty(path, ec) && !ec;
}

tl::expected<struct statvfs, int> stat_file_system(const std::string& path) {
  struct statvfs vfs {};
  if (::statvfs(path.c_str(), &vfs) != 0) return tl::unexpected(errno);
  return vfs;
}

tl::expected<std::string, std::string> canonical_path(const std::string& path) {
  std::error_code ec;
  auto real = std::filesystem::canonical(path, ec);
  if (ec) return tl::unexpected(ec.message());
  return real.string();
}

std::optional<std::string> real_path(const std::string& path) {
  char real[PATH_MAX];
  if (::realpath(path.c_str(), real) == nullptr) return std::nullopt;
  return std::string(real);
}

std::optional<std::string> read_link(const std::string& path) {
  char buf[4096];
  const ssize_t n = ::readlink(path.c_str(), buf, sizeof buf - 1);
  if (n <= 0) return std::nullopt;
  return std::string(buf, static_cast<std::size_t>(n));
}

std::string read_file_head(const std::string& path, std::size_t max_bytes) {
  std::string out;
  const int fd = ::open(path.c_str(), O_RDONLY | O_CLOEXEC | O_NONBLOCK);
  if (fd < 0) return out;
  char buf[65536];
  while (out.size() < max_bytes) {
    const ssize_t n = ::read(fd, buf, std::min(sizeof buf, max_bytes - out.size()));
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) break;
    out.append(buf, static_cast<std::size_t>(n));
  }
  ::close(fd);
  return out;
}

DirListing list_directory(const std::string& dir) {
  DirListing out;
  std::error_code ec;
  for (std::filesystem::directory_iterator it(dir, ec), end; !ec && it != end; it.increment(ec)) {
    DirEntry e;
    e.name = it->path().filename().string();
    std::error_code sec;
    e.regular = it->is_regular_file(sec);
    if (e.regular) e.size = static_cast<std::uint64_t>(it->file_size(sec));
    out.entries.push_back(std::move(e));
  }
  if (ec) out.error = ec.message();
  return out;
}

bool make_directory(const std::string& path) { return ::mkdir(path.c_str(), 0755) == 0; }

tl::expected<void, std::string> make_directories(const std::string& path) {
  std::error_code ec;
  std::filesystem::create_directories(path, ec);
  if (ec) return tl::unexpected(ec.message());
  return {};
}

bool make_temp_directory(std::string& tmpl) { return ::mkdtemp(tmpl.data()) != nullptr; }

bool make_temp_file(std::string& tmpl) {
  const int fd = ::mkstemp(tmpl.data());
  if (fd < 0) return false;
  ::close(fd);
  return true;
}

void remove_path(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove(path, ec);
}

void remove_tree(const std::string& path) {
  std::error_code ec;
  std::filesystem::remove_all(path, ec);
}

int create_file(const std::string& path) { return ::open(path.c_str(), O_WRONLY | O_CREAT | O_TRUNC | O_CLOEXEC, 0644); }

bool append_to_file(const std::string& path, const std::string& text) {
  const int fd = ::open(path.c_str(), O_WRONLY | O_APPEND | O_CREAT | O_CLOEXEC, 0644);
  if (fd < 0) return false;
  (void)!::write(fd, text.data(), text.size());
  ::close(fd);
  return true;
}

namespace {

// "dir/.name.tmp-XXXXXX" beside `out`.
std::string temp_template_beside(const std::string& out) {
  std::filesystem::path o(out);
  if (!o.has_filename()) o = o.parent_path();  // "out/" names the directory out
  std::filesystem::path parent = o.parent_path();
  std::string base = o.filename().string();
  return (parent.empty() ? std::filesystem::path(".") : parent).string() + "/." + base + ".tmp-XXXXXX";
}

bool write_all_to(int fd, const std::string& data) {
  std::size_t off = 0;
  while (off < data.size()) {
    ssize_t n = ::write(fd, data.data() + off, data.size() - off);
    if (n < 0 && errno == EINTR) continue;
    if (n <= 0) return false;
    off += static_cast<std::size_t>(n);
  }
  return true;
}

tl::expected<void, std::string> write_items_at(int dirfd, const std::vector<std::pair<std::string, NewItem>>& items) {
  for (const auto& [rel, item] : items) {
    if (item.kind == NewItem::dir) {
      if (::mkdirat(dirfd, rel.c_str(), 0755) != 0 && errno != EEXIST) return tl::unexpected(rel + ": " + std::strerror(errno));
    } else if (item.kind == NewItem::link) {
      if (::symlinkat(item.content->c_str(), dirfd, rel.c_str()) != 0) return tl::unexpected(rel + ": " + std::strerror(errno));
    } else {
      int fd = ::openat(dirfd, rel.c_str(), O_WRONLY | O_CREAT | O_EXCL | O_NOFOLLOW | O_CLOEXEC, 0644);
      if (fd < 0) return tl::unexpected(rel + ": " + std::strerror(errno));
      bool ok = write_all_to(fd, *item.content);
      int err = errno;
      ::close(fd);
      if (!ok) return tl::unexpected(rel + ": " + std::strerror(err));
    }
  }
  return {};
}

}  // namespace

tl::expected<void, std::string> write_new_directory(const std::string& out,
                                                    const std::vector<std::pair<std::string, NewItem>>& items) {
  std::string staging = temp_template_beside(out);
  if (::mkdtemp(staging.data()) == nullptr) return tl::unexpected("cannot create a directory beside it: " + std::string(std::strerror(errno)));
  auto fail = [&](const std::string& why) -> tl::expected<void, std::string> {
    remove_tree(staging);
    return tl::unexpected(why);
  };
  int dirfd = ::open(staging.c_str(), O_PATH | O_DIRECTORY | O_CLOEXEC);
  if (dirfd < 0) return fail(std::strerror(errno));
  auto w = write_items_at(dirfd, items);
  ::close(dirfd);
  if (!w) return fail(w.error());
  if (::rename(staging.c_str(), out.c_str()) != 0) return fail(std::strerror(errno));
  return {};
}

}  // namespace perfgap::sys
