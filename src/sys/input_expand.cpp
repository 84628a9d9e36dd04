#include "sys/input_expand.hpp"

#include <dirent.h>
#include <fnmatch.h>
#include <sys/stat.h>

#include <algorithm>
#include <cerrno>
#include <cstring>
#include <optional>
#include <unordered_set>

#include <fmt/format.h>

namespace perfgap::sys {
namespace {

bool has_glob_chars(const std::string& s) { return s.find_first_of("*?[") != std::string::npos; }

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
// binary, and input patterns never need them.
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

ExpandedInputs expand_inputs(const std::vector<std::string>& args, const std::function<bool(std::string_view)>& accept, const std::string& what) {
  ExpandedInputs in;
  std::unordered_set<std::string> seen;
  auto add = [&](std::string path, bool listed) {
    if (!seen.insert(path).second) return;
    if (listed) in.listed.insert(path);
    in.files.push_back(std::move(path));
  };
  auto add_path = [&](const std::string& arg, bool listed) {
    struct stat st{};
    if (::stat(arg.c_str(), &st) == 0 && S_ISDIR(st.st_mode)) {
      std::string why;
      auto files = files_in(arg, accept, why);
      if (!files) in.problems.push_back({arg, why});
      else if (files->empty()) in.problems.push_back({arg, "directory holds no " + what});
      else
        for (auto& f : *files) add(std::move(f), true);
      return;
    }
    add(arg, listed);  // a missing or unreadable file is reported when it is read
  };
  for (const auto& arg : args) {
    struct stat st{};
    // A name that exists is taken literally, even with glob characters in it.
    if (!has_glob_chars(arg) || ::stat(arg.c_str(), &st) == 0) {
      add_path(arg, false);
      continue;
    }
    auto matches = expand_glob(arg);
    if (matches.empty()) in.problems.push_back({arg, "no file matches this pattern"});
    for (const auto& m : matches) add_path(m, true);
  }
  return in;
}

}  // namespace perfgap::sys
