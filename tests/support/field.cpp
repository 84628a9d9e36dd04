#include "field.hpp"

#include <sys/wait.h>
#include <unistd.h>

#include <algorithm>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace perfgap::fixture {

namespace {

bool starts_with(std::string_view s, std::string_view p) { return s.substr(0, p.size()) == p; }

// Paths of an archive stay inside `dest`: no absolute names, no "..".
bool safe_relative(std::string_view p) {
  if (p.empty() || p.front() == '/') return false;
  std::string_view rest = p;
  while (!rest.empty()) {
    auto slash = rest.find('/');
    auto part = rest.substr(0, slash);
    if (part == "..") return false;
    if (slash == std::string_view::npos) break;
    rest.remove_prefix(slash + 1);
  }
  return true;
}

std::string replace_all(std::string s, std::string_view from, std::string_view to) {
  for (std::size_t at = 0; (at = s.find(from, at)) != std::string::npos; at += to.size()) s.replace(at, from.size(), to);
  return s;
}

tl::expected<void, std::string> run_tar(const std::string& archive, const std::string& dest) {
  pid_t pid = ::fork();
  if (pid < 0) return tl::unexpected(archive + ": fork failed");
  if (pid == 0) {
    // --no-same-owner/permissions: what the archive says about owners does not matter here.
    ::execlp("tar", "tar", "-xf", archive.c_str(), "-C", dest.c_str(), "--no-same-owner", "--no-same-permissions",
             static_cast<char*>(nullptr));
    ::_exit(127);
  }
  int status = 0;
  while (::waitpid(pid, &status, 0) < 0) {
  }
  if (!WIFEXITED(status) || WEXITSTATUS(status) != 0)
    return tl::unexpected(archive + ": tar -xf failed (status " + std::to_string(status) + ")");
  return {};
}

// Directories below `dir` that hold proc/ or sys/; a found root is not searched further.
void find_roots(const fs::path& dir, std::vector<fs::path>& out) {
  std::error_code ec;
  if (fs::is_directory(dir / "proc", ec) || fs::is_directory(dir / "sys", ec)) {
    out.push_back(dir);
    return;
  }
  std::vector<fs::path> subdirs;
  for (const auto& e : fs::directory_iterator(dir, ec)) {
    if (e.is_directory(ec) && !e.is_symlink(ec)) subdirs.push_back(e.path());
  }
  std::sort(subdirs.begin(), subdirs.end());
  for (const auto& d : subdirs) find_roots(d, out);
}

}  // namespace

tl::expected<void, std::string> unpack_ttar(std::string_view text, const std::string& name, const std::string& dest) {
  std::vector<std::string_view> lines;
  for (std::size_t at = 0; at < text.size();) {
    auto nl = text.find('\n', at);
    if (nl == std::string_view::npos) nl = text.size();
    lines.push_back(text.substr(at, nl - at));
    at = nl + 1;
  }
  auto err = [&](std::size_t i, const std::string& what) {
    return tl::unexpected(name + ":" + std::to_string(i + 1) + ": " + what);
  };
  std::error_code ec;
  for (std::size_t i = 0; i < lines.size(); ++i) {
    auto line = lines[i];
    if (line.empty() || line.front() == '#' || starts_with(line, "Mode: ")) continue;
    if (starts_with(line, "Directory: ")) {
      auto path = std::string(line.substr(11));
      if (!safe_relative(path)) return err(i, "unsafe path " + path);
      fs::create_directories(fs::path(dest) / path, ec);
      if (ec) return err(i, ec.message());
      continue;
    }
    if (!starts_with(line, "Path: ")) return err(i, "expected Directory:, Path: or Mode:");
    auto path = std::string(line.substr(6));
    if (!safe_relative(path)) return err(i, "unsafe path " + path);
    if (i + 1 >= lines.size()) return err(i, "Path: without Lines: or SymlinkTo:");
    auto next = lines[++i];
    fs::path target = fs::path(dest) / path;
    fs::create_directories(target.parent_path(), ec);
    if (starts_with(next, "SymlinkTo: ")) {
      fs::create_symlink(std::string(next.substr(11)), target, ec);
      if (ec) return err(i, path + ": " + ec.message());
      continue;
    }
    if (!starts_with(next, "Lines: ")) return err(i, "expected Lines: or SymlinkTo:");
    std::size_t count = 0;
    try {
      count = std::stoul(std::string(next.substr(7)));
    } catch (...) {
      return err(i, "bad line count");
    }
    if (i + count >= lines.size()) return err(i, "archive ends inside " + path);
    std::string content;
    for (std::size_t k = 1; k <= count; ++k) {
      auto body = replace_all(std::string(lines[i + k]), "NULLBYTE", std::string(1, '\0'));
      bool last = k == count;
      if (last && body.size() >= 3 && body.compare(body.size() - 3, 3, "EOF") == 0) {
        content += body.substr(0, body.size() - 3);  // ttar's mark for "no final newline"
      } else {
        content += body;
        content += '\n';
      }
    }
    i += count;
    std::ofstream out(target, std::ios::binary | std::ios::trunc);
    out << content;
    if (!out) return err(i, path + ": cannot write");
  }
  return {};
}

tl::expected<std::vector<FieldTree>, std::string> unpack_field_trees(const std::string& trees_dir,
                                                                     const std::string& dest) {
  std::vector<FieldTree> out;
  std::error_code ec;
  std::vector<fs::path> folders;
  for (const auto& e : fs::directory_iterator(trees_dir, ec))
    if (e.is_directory()) folders.push_back(e.path());
  if (ec) return tl::unexpected(trees_dir + ": " + ec.message());
  std::sort(folders.begin(), folders.end());
  for (const auto& folder : folders) {
    std::vector<fs::path> archives;
    for (const auto& e : fs::directory_iterator(folder, ec)) {
      auto n = e.path().filename().string();
      if (n.find(".tar") != std::string::npos || e.path().extension() == ".ttar") archives.push_back(e.path());
    }
    std::sort(archives.begin(), archives.end());
    struct Found {
      std::string label;
      fs::path root;
    };
    std::vector<Found> found;
    for (const auto& a : archives) {
      fs::path into = fs::path(dest) / folder.filename() / a.filename();
      fs::create_directories(into, ec);
      if (a.extension() == ".ttar") {
        std::ifstream in(a, std::ios::binary);
        std::stringstream ss;
        ss << in.rdbuf();
        auto r = unpack_ttar(ss.str(), a.string(), into.string());
        if (!r) return tl::unexpected(r.error());
      } else {
        auto r = run_tar(a.string(), into.string());
        if (!r) return tl::unexpected(r.error());
      }
      std::vector<fs::path> roots;
      find_roots(into, roots);
      for (auto& r : roots) {
        auto inside = fs::relative(r, into).string();
        found.push_back({folder.filename().string() + "/" + a.filename().string() + (inside == "." ? "" : ":" + inside), r});
      }
    }
    // node_exporter publishes one node as a proc tarball and a sys text archive: when a folder
    // yields exactly one proc-only and one sys-only root, they are that one node.
    if (found.size() == 2) {
      auto only = [](const fs::path& r, const char* d) {
        std::error_code e;
        return fs::is_directory(r / d, e) && !fs::exists(r / (std::string(d) == "proc" ? "sys" : "proc"), e);
      };
      int p = only(found[0].root, "proc") ? 0 : only(found[1].root, "proc") ? 1 : -1;
      if (p >= 0 && only(found[1 - p].root, "sys")) {
        fs::rename(found[1 - p].root / "sys", found[p].root / "sys", ec);
        if (ec) return tl::unexpected(found[p].root.string() + ": " + ec.message());
        found = {{found[p].label + " + " + found[1 - p].label, found[p].root}};
      }
    }
    for (auto& f : found) out.push_back({f.label, f.root.string()});
  }
  return out;
}

}  // namespace perfgap::fixture
