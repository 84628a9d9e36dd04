#include "fleet/inputs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <glob.h>
#include <sys/stat.h>
#include <unistd.h>

#include <algorithm>
#include <atomic>
#include <cerrno>
#include <cstring>
#include <optional>
#include <thread>
#include <unordered_set>
#include <variant>

#include <fmt/format.h>

#include "sys/named_file.hpp"

namespace perfgap::fleet {
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

bool ends_with_json(std::string_view name) { return name.size() > 5 && name.ends_with(".json"); }

// A directory's *.json files (not recursive), sorted; hidden files are skipped.
std::optional<std::vector<std::string>> json_files_in(const std::string& dir, std::string& why) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    why = fmt::format("cannot open directory: {}", std::strerror(errno));
    return std::nullopt;
  }
  std::vector<std::string> out;
  std::string base = dir.ends_with('/') ? dir : dir + "/";
  while (auto* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.starts_with('.') || !ends_with_json(name)) continue;
    std::string path = base + std::string(name);
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    out.push_back(std::move(path));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

}  // namespace

ExpandedInputs expand_inputs(const std::vector<std::string>& args) {
  ExpandedInputs in;
  std::unordered_set<std::string> seen;
  auto add = [&](std::string path) {
    if (seen.insert(path).second) in.files.push_back(std::move(path));
  };
  auto add_path = [&](const std::string& arg) {
    struct stat st{};
    if (::stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::string why;
      auto files = json_files_in(arg, why);
      if (!files) in.problems.push_back({arg, why});
      else if (files->empty()) in.problems.push_back({arg, "directory holds no .json report"});
      else
        for (auto& f : *files) add(std::move(f));
      return;
    }
    add(arg);  // a missing or unreadable file is reported when it is read
  };
  for (const auto& arg : args) {
    struct stat st{};
    // A name that exists is taken literally, even with glob characters in it.
    if (!has_glob_chars(arg) || ::stat(arg.c_str(), &st) == 0) {
      add_path(arg);
      continue;
    }
    glob_t g{};
    int rc = ::glob(arg.c_str(), 0, nullptr, &g);
    if (rc == GLOB_NOMATCH) {
      in.problems.push_back({arg, "no file matches this pattern"});
    } else if (rc != 0) {
      in.problems.push_back({arg, "cannot expand this pattern"});
    } else {
      for (std::size_t i = 0; i < g.gl_pathc; ++i) add_path(g.gl_pathv[i]);
    }
    ::globfree(&g);
  }
  return in;
}

namespace {

// Reads a whole file into `buf` followed by the parser's padding; the problem otherwise.
std::optional<std::string> read_padded(const std::string& path, std::string& buf, std::size_t& size) {
  // Not waiting in open() (a FIFO without a writer); the reads of a pipe may wait.
  int fd = ::open(path.c_str(), O_RDONLY | O_NONBLOCK | O_NOCTTY | O_CLOEXEC);
  if (fd < 0) return fmt::format("cannot open: {}", std::strerror(errno));
  struct stat st{};
  if (::fstat(fd, &st) != 0) {
    int err = errno;
    ::close(fd);
    return fmt::format("cannot stat: {}", std::strerror(err));
  }
  if (int flags = ::fcntl(fd, F_GETFL); flags >= 0) ::fcntl(fd, F_SETFL, flags & ~O_NONBLOCK);
  if (auto bad = sys::refused_kind(st, false); !bad.empty()) {
    ::close(fd);
    return bad;
  }
  if (S_ISREG(st.st_mode) && static_cast<std::size_t>(st.st_size) > kMaxReportBytes) {
    ::close(fd);
    return fmt::format("{} bytes: larger than any node report ({} MiB at most)", st.st_size, kMaxReportBytes >> 20);
  }
  // Regular files are read at their size; anything else (a pipe) until EOF, within the limit.
  std::size_t cap = S_ISREG(st.st_mode) ? static_cast<std::size_t>(st.st_size) + 1 : 1u << 16;
  size = 0;
  for (;;) {
    if (buf.size() < cap + required_padding()) buf.resize(cap + required_padding());
    ssize_t n = ::read(fd, buf.data() + size, cap - size);
    if (n < 0) {
      if (errno == EINTR) continue;
      int err = errno;
      ::close(fd);
      return fmt::format("read error: {}", std::strerror(err));
    }
    if (n == 0) break;
    size += static_cast<std::size_t>(n);
    if (size == cap) {
      if (cap > kMaxReportBytes) {
        ::close(fd);
        return fmt::format("larger than any node report ({} MiB at most)", kMaxReportBytes >> 20);
      }
      cap *= 2;
    }
  }
  ::close(fd);
  std::memset(buf.data() + size, 0, required_padding());
  return std::nullopt;
}

}  // namespace

LoadedReports load_reports(const std::vector<std::string>& files, const ReadOptions& opts, unsigned threads) {
  using Result = std::variant<NodeReport, std::string>;
  std::vector<Result> results(files.size());
  if (threads == 0) {
    unsigned cores = std::max(1u, std::thread::hardware_concurrency());
    // A thread pays off only with enough reports to share (about 1 ms of work each 64).
    threads = static_cast<unsigned>(std::clamp<std::size_t>(files.size() / 64, 1, std::min(cores, 8u)));
  }
  std::atomic<std::size_t> next{0};
  auto work = [&] {
    ReportReader reader;
    std::string buf;
    for (std::size_t i = next++; i < files.size(); i = next++) {
      try {
        std::size_t size = 0;
        if (auto problem = read_padded(files[i], buf, size)) {
          results[i] = std::move(*problem);
          continue;
        }
        auto r = reader.parse_padded(buf.data(), size, opts);
        if (r) {
          r->file = files[i];
          results[i] = std::move(*r);
        } else {
          results[i] = std::move(r.error());
        }
      } catch (const std::exception& e) {  // out of memory on a huge report: that report only
        results[i] = fmt::format("cannot read: {}", e.what());
      }
    }
  };
  std::vector<std::thread> pool;
  for (unsigned t = 1; t < threads; ++t) pool.emplace_back(work);
  work();
  for (auto& t : pool) t.join();

  LoadedReports out;
  out.nodes.reserve(files.size());
  for (std::size_t i = 0; i < files.size(); ++i) {
    if (auto* n = std::get_if<NodeReport>(&results[i])) out.nodes.push_back(std::move(*n));
    else out.unreadable.push_back({files[i], std::move(std::get<std::string>(results[i]))});
  }
  return out;
}

}  // namespace perfgap::fleet
