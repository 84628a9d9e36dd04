#include "fleet/inputs.hpp"

#include <dirent.h>
#include <fcntl.h>
#include <fnmatch.h>
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

// A directory's files that `accept` takes (not recursive), sorted; hidden files are skipped.
std::optional<std::vector<std::string>> files_in(const std::string& dir, const std::function<bool(std::string_view)>& accept, std::string& why) {
  DIR* d = ::opendir(dir.c_str());
  if (!d) {
    why = fmt::format("cannot open directory: {}", std::strerror(errno));
    return std::nullopt;
  }
  std::vector<std::string> out;
  std::string base = dir.ends_with('/') ? dir : dir + "/";
  while (auto* e = ::readdir(d)) {
    std::string_view name = e->d_name;
    if (name.starts_with('.') || !accept(name)) continue;
    std::string path = base + std::string(name);
    struct stat st{};
    if (::stat(path.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) continue;
    out.push_back(std::move(path));
  }
  ::closedir(d);
  std::sort(out.begin(), out.end());
  return out;
}

// A literal path component: glob's backslash escapes removed.
std::string unescaped(std::string_view c) {
  std::string out;
  for (std::size_t i = 0; i < c.size(); ++i) {
    if (c[i] == '\\' && i + 1 < c.size()) ++i;
    out += c[i];
  }
  return out;
}

// The paths matching `pattern`, sorted, as glob(3) with no flags finds them: component by
// component, wildcards never matching a leading '.', unreadable directories passed over.
// Not glob(3) itself: glibc's glob links the NSS user lookups (for `~user`) into the static
// binary, and fleet patterns never need them.
std::vector<std::string> expand_glob(const std::string& pattern) {
  std::vector<std::string> parts;
  std::size_t start = 0;
  while (start <= pattern.size()) {
    auto slash = pattern.find('/', start);
    if (slash == std::string::npos) slash = pattern.size();
    if (slash > start) parts.push_back(pattern.substr(start, slash - start));
    start = slash + 1;
  }
  std::vector<std::string> current{pattern.starts_with('/') ? "/" : ""};
  for (const auto& part : parts) {
    std::vector<std::string> next;
    for (const auto& base : current) {
      const std::string prefix = base.empty() ? "" : (base.ends_with('/') ? base : base + "/");
      if (!has_glob_chars(part)) {
        next.push_back(prefix + unescaped(part));
        continue;
      }
      DIR* d = ::opendir(base.empty() ? "." : base.c_str());
      if (!d) continue;
      std::vector<std::string> names;
      while (auto* e = ::readdir(d)) {
        std::string_view name = e->d_name;
        if (name == "." || name == "..") continue;
        if (::fnmatch(part.c_str(), e->d_name, FNM_PERIOD) == 0) names.emplace_back(name);
      }
      ::closedir(d);
      std::sort(names.begin(), names.end());
      for (auto& n : names) next.push_back(prefix + n);
    }
    current = std::move(next);
  }
  std::vector<std::string> out;
  for (auto& p : current) {
    struct stat st{};
    if (!p.empty() && ::lstat(p.c_str(), &st) == 0) out.push_back(std::move(p));
  }
  std::sort(out.begin(), out.end());  // glob(3) sorts the whole list, not each directory
  return out;
}

}  // namespace

ExpandedInputs expand_inputs(const std::vector<std::string>& args) { return expand_inputs(args, ends_with_json, ".json report"); }

ExpandedInputs expand_inputs(const std::vector<std::string>& args, const std::function<bool(std::string_view)>& accept, const std::string& what) {
  ExpandedInputs in;
  std::unordered_set<std::string> seen;
  auto add = [&](std::string path) {
    if (seen.insert(path).second) in.files.push_back(std::move(path));
  };
  auto add_path = [&](const std::string& arg) {
    struct stat st{};
    if (::stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::string why;
      auto files = files_in(arg, accept, why);
      if (!files) in.problems.push_back({arg, why});
      else if (files->empty()) in.problems.push_back({arg, "directory holds no " + what});
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
    auto matches = expand_glob(arg);
    if (matches.empty()) in.problems.push_back({arg, "no file matches this pattern"});
    for (const auto& m : matches) add_path(m);
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

// "reports/gpu017.json" -> "gpu017": the name of a node report that records none.
std::string node_name_from_file(std::string_view path) {
  if (auto slash = path.rfind('/'); slash != std::string_view::npos) path.remove_prefix(slash + 1);
  for (std::string_view suffix : {".json", ".JSON"})
    if (path.size() > suffix.size() && path.substr(path.size() - suffix.size()) == suffix) {
      path.remove_suffix(suffix.size());
      break;
    }
  return std::string(path);
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
          if (r->name.empty() && r->kind != "analyze") {
            r->name = node_name_from_file(files[i]);
            r->name_from_file = true;
          }
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
