#include "tree.hpp"

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>

namespace fs = std::filesystem;

namespace perfgap::fixture {
namespace {

std::string unescape(const std::string& s) {
  std::string out;
  for (std::size_t i = 0; i < s.size(); ++i) {
    if (s[i] != '\\' || i + 1 >= s.size()) {
      out.push_back(s[i]);
      continue;
    }
    char c = s[++i];
    switch (c) {
      case '0': out.push_back('\0'); break;
      case 'n': out.push_back('\n'); break;
      case 't': out.push_back('\t'); break;
      case '\\': out.push_back('\\'); break;
      case 'x':
        if (i + 2 < s.size()) {
          out.push_back(static_cast<char>(std::stoi(s.substr(i + 1, 2), nullptr, 16)));
          i += 2;
        }
        break;
      default: out.push_back('\\'); out.push_back(c);
    }
  }
  return out;
}

struct Pending {
  std::vector<std::string> paths;
  std::string content;
  bool noeol = false, esc = false;
  int mode = -1;
  bool active = false;
};

tl::expected<void, std::string> flush(Pending& p, const fs::path& dest) {
  if (!p.active) return {};
  // Drop trailing blank lines: they separate entries.
  std::string c = p.content;
  while (c.size() >= 2 && c[c.size() - 1] == '\n' && c[c.size() - 2] == '\n') c.pop_back();
  if (c == "\n") c.clear();
  if (p.noeol && !c.empty() && c.back() == '\n') c.pop_back();
  if (p.esc) c = unescape(c);
  for (const auto& rel : p.paths) {
    fs::path target = dest / rel;
    fs::create_directories(target.parent_path());
    if (fs::is_symlink(target) || fs::exists(target)) fs::remove(target);
    std::ofstream out(target, std::ios::binary);
    out.write(c.data(), static_cast<std::streamsize>(c.size()));
    if (!out) return tl::unexpected("cannot write " + target.string());
    out.close();
    if (p.mode >= 0) ::chmod(target.c_str(), static_cast<mode_t>(p.mode));
  }
  p = Pending{};
  return {};
}

tl::expected<void, std::string> unpack_into(const fs::path& file, const fs::path& dest, TreeSpec& spec, int depth) {
  if (depth > 8) return tl::unexpected(file.string() + ": includes nested too deeply");
  std::ifstream in(file, std::ios::binary);
  if (!in) return tl::unexpected(file.string() + ": cannot open");
  std::string line;
  int lineno = 0;
  Pending pending;
  auto where = [&] { return file.string() + ":" + std::to_string(lineno) + ": "; };
  while (std::getline(in, line)) {
    ++lineno;
    if (line.rfind("== ", 0) != 0 && line.rfind("==#", 0) != 0) {
      if (!pending.active) {
        if (line.empty()) continue;
        return tl::unexpected(where() + "content outside a file entry");
      }
      pending.content += line + "\n";
      continue;
    }
    if (auto r = flush(pending, dest); !r) return r;
    if (line.rfind("==#", 0) == 0) continue;
    std::istringstream ss(line.substr(3));
    std::string kind, path;
    ss >> kind;
    if (kind == "file") {
      ss >> path;
      if (path.empty()) return tl::unexpected(where() + "file without a path");
      pending.active = true;
      pending.paths = expand_braces(path);
      std::string flag;
      while (ss >> flag) {
        if (flag == "noeol") pending.noeol = true;
        else if (flag == "esc") pending.esc = true;
        else if (flag.rfind("mode=", 0) == 0) pending.mode = std::stoi(flag.substr(5), nullptr, 8);
        else return tl::unexpected(where() + "unknown flag '" + flag + "'");
      }
    } else if (kind == "dir") {
      ss >> path;
      for (const auto& p : expand_braces(path)) fs::create_directories(dest / p);
    } else if (kind == "link") {
      std::string arrow, target;
      ss >> path >> arrow >> target;
      if (arrow != "->" || target.empty()) return tl::unexpected(where() + "expected: == link PATH -> TARGET");
      // Braces in the target expand in step with the path's: cpu{0-1}/cpufreq -> ../cpufreq/policy{0-1}.
      auto paths = expand_braces(path);
      auto targets = expand_braces(target);
      if (targets.size() != 1 && targets.size() != paths.size())
        return tl::unexpected(where() + "link target expands to a different count than its path");
      for (std::size_t i = 0; i < paths.size(); ++i) {
        fs::path l = dest / paths[i];
        fs::create_directories(l.parent_path());
        std::error_code ec;
        fs::remove(l, ec);
        fs::create_symlink(targets.size() == 1 ? targets[0] : targets[i], l);
      }
    } else if (kind == "remove") {
      ss >> path;
      std::error_code ec;
      for (const auto& p : expand_braces(path)) fs::remove_all(dest / p, ec);
    } else if (kind == "include") {
      ss >> path;
      if (auto r = unpack_into(file.parent_path() / path, dest, spec, depth + 1); !r) return r;
    } else if (kind == "expect") {
      Expectation e;
      std::string id_subject;
      ss >> id_subject >> e.status;
      auto at = id_subject.find('@');
      e.id = id_subject.substr(0, at);
      if (at != std::string::npos) e.subject = id_subject.substr(at + 1);
      std::getline(ss, e.title_contains);
      while (!e.title_contains.empty() && e.title_contains.front() == ' ') e.title_contains.erase(0, 1);
      e.line = lineno;
      if (e.id.empty() || e.status.empty()) return tl::unexpected(where() + "expected: == expect ID[@SUBJECT] STATUS [TEXT]");
      spec.expect.push_back(e);
    } else if (kind == "option") {
      std::string kv;
      ss >> kv;
      auto eq = kv.find('=');
      if (eq == std::string::npos) return tl::unexpected(where() + "expected: == option NAME=VALUE");
      spec.options.emplace_back(kv.substr(0, eq), kv.substr(eq + 1));
    } else {
      return tl::unexpected(where() + "unknown directive '" + kind + "'");
    }
  }
  return flush(pending, dest);
}

}  // namespace

std::vector<std::string> expand_braces(const std::string& pattern) {
  auto open = pattern.find('{');
  if (open == std::string::npos) return {pattern};
  auto close = pattern.find('}', open);
  if (close == std::string::npos) return {pattern};
  std::string body = pattern.substr(open + 1, close - open - 1);
  std::vector<std::string> alts;
  auto dash = body.find('-');
  if (body.find(',') == std::string::npos && dash != std::string::npos &&
      body.find_first_not_of("0123456789-") == std::string::npos) {
    int a = std::stoi(body.substr(0, dash)), b = std::stoi(body.substr(dash + 1));
    for (int i = a; i <= b; ++i) alts.push_back(std::to_string(i));
  } else {
    std::stringstream ss(body);
    std::string item;
    while (std::getline(ss, item, ',')) alts.push_back(item);
  }
  std::vector<std::string> out;
  for (const auto& alt : alts)
    for (auto& rest : expand_braces(pattern.substr(close + 1)))
      out.push_back(pattern.substr(0, open) + alt + rest);
  return out;
}

tl::expected<TreeSpec, std::string> unpack_tree(const std::string& tree_file, const std::string& dest) {
  TreeSpec spec;
  std::error_code ec;
  fs::create_directories(dest, ec);
  try {
    if (auto r = unpack_into(tree_file, dest, spec, 0); !r) return tl::unexpected(r.error());
  } catch (const std::exception& e) {
    return tl::unexpected(tree_file + ": " + e.what());
  }
  return spec;
}

TempDir::TempDir() {
  const char* base = std::getenv("TMPDIR");
  std::string tmpl = std::string(base && *base ? base : "/tmp") + "/perfgap-test-XXXXXX";
  if (::mkdtemp(tmpl.data()) == nullptr) throw std::runtime_error("mkdtemp failed");
  path_ = tmpl;
}

TempDir::~TempDir() {
  std::error_code ec;
  // Restore permissions that tests removed, so that removal works.
  for (auto it = fs::recursive_directory_iterator(path_, fs::directory_options::skip_permission_denied, ec);
       it != fs::recursive_directory_iterator(); it.increment(ec))
    if (!it->is_symlink()) ::chmod(it->path().c_str(), it->is_directory() ? 0755 : 0644);
  fs::remove_all(path_, ec);
}

}  // namespace perfgap::fixture
