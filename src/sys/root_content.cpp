#include "sys/root_content.hpp"

#include <sys/stat.h>

namespace perfgap::sys {

namespace {

bool nonempty_dir(const Sysroot& root, const std::string& path) {
  auto st = root.stat(path);
  if (!st || !S_ISDIR(st->st_mode)) return false;
  auto entries = root.list(path);
  return entries && !entries->empty();
}

bool looks_like_root(const Sysroot& root, const std::string& dir) {
  return nonempty_dir(root, dir + "/proc") || nonempty_dir(root, dir + "/sys");
}

}  // namespace

tl::expected<void, std::string> check_tree_content(const Sysroot& root, const std::string& shown) {
  if (root.is_live() || looks_like_root(root, "")) return {};
  // Say where the tree is when it is one or two levels down (a directory above the tree,
  // or an archive of "node17/proc/...").
  std::string nested;
  if (auto top = root.list("/")) {
    for (const auto& a : *top) {
      if (looks_like_root(root, "/" + a)) {
        nested = a;
        break;
      }
      auto st = root.stat("/" + a);
      if (!st || !S_ISDIR(st->st_mode)) continue;
      if (auto below = root.list("/" + a))
        for (const auto& b : *below)
          if (nested.empty() && looks_like_root(root, "/" + a + "/" + b)) nested = a + "/" + b;
      if (!nested.empty()) break;
    }
  }
  std::string msg = shown + ": not a node tree: no proc/ or sys/ with content at its top (a sysroot mirrors /, e.g. " +
                    shown + "/proc/cpuinfo and " + shown + "/sys/devices/system/cpu)";
  if (!nested.empty()) msg += "; the tree seems to be inside, at " + nested + "/: give " + shown + "/" + nested;
  return tl::unexpected(msg);
}

}  // namespace perfgap::sys
