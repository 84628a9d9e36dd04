#include "parsers/host_files.hpp"

#include <cctype>

#include "sys/text.hpp"

namespace perfgap::parsers {

std::optional<std::string> passwd_home(std::string_view passwd, std::string_view uid) {
  for (auto line : sys::split_lines(passwd)) {
    auto cols = sys::split(line, ':');
    if (cols.size() >= 6 && cols[2] == uid) return std::string(cols[5]);
  }
  return std::nullopt;
}

std::string containerenv_engine(std::string_view text) {
  std::string engine;
  for (auto line : sys::split_lines(text))
    if (sys::starts_with(line, "engine=")) engine = std::string(line.substr(7));
  return engine;
}

std::vector<std::pair<int, std::string>> config_lines(std::string_view text) {
  std::vector<std::pair<int, std::string>> out;
  int n = 0;
  for (auto line : sys::split_lines(text)) {
    ++n;
    auto t = sys::trim_ws(line);
    if (t.empty() || t[0] == '#') continue;
    out.emplace_back(n, std::string(t));
  }
  return out;
}

std::string enroot_environ_name(std::string_view line) {
  auto t = sys::trim_ws(line);
  if (t.empty() || t[0] == '#') return "";
  if (sys::starts_with(t, "export ")) t = sys::trim_ws(t.substr(7));
  auto eq = t.find('=');
  auto name = eq == std::string_view::npos ? t : t.substr(0, eq);
  if (name.empty() || !(std::isalpha(static_cast<unsigned char>(name[0])) || name[0] == '_')) return "";
  for (char c : name)
    if (!(std::isalnum(static_cast<unsigned char>(c)) || c == '_')) return "";
  return std::string(name);
}

namespace {

std::string_view strip_slashes(std::string_view p) {
  while (p.size() > 1 && p.back() == '/') p.remove_suffix(1);
  return p;
}

}  // namespace

bool enroot_mount_carries(std::string_view line, std::string_view path) {
  auto t = sys::trim_ws(line);
  if (t.empty() || t[0] == '#') return false;
  auto fields = sys::split_ws(t);
  if (fields.size() < 2) return false;
  auto src = strip_slashes(fields[0]);
  std::string dst(strip_slashes(fields[1]));
  if (dst.empty() || dst[0] != '/') dst = "/" + dst;  // enroot's targets are inside the rootfs
  path = strip_slashes(path);
  if (src.empty() || src[0] != '/') return false;
  std::string_view rest;
  if (path == src) rest = "";
  else if (sys::starts_with(path, src) && (src == "/" || path[src.size()] == '/')) rest = path.substr(src == "/" ? 0 : src.size());
  else return false;
  std::string in_container = (dst == "/" ? std::string() : dst) + std::string(rest);
  return in_container == path;
}

}  // namespace perfgap::parsers
