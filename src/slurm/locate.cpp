#include "slurm/locate.hpp"

#include <unistd.h>

#include <cstdlib>
#include <utility>

#include "sys/executable.hpp"
#include "sys/paths.hpp"

namespace perfgap::slurm {
namespace {

bool is_file(const std::string& path) { return !path.empty() && sys::can_access(path, R_OK); }
bool is_executable(const std::string& path) { return !path.empty() && sys::can_access(path, X_OK); }

std::string read_small(const std::string& path) { return sys::read_file_head(path, 1 << 20); }

std::vector<std::string> split_nul(const std::string& text) {
  std::vector<std::string> out;
  std::size_t start = 0;
  for (std::size_t i = 0; i <= text.size(); ++i)
    if (i == text.size() || text[i] == '\0') {
      if (i > start) out.push_back(text.substr(start, i - start));
      start = i + 1;
    }
  return out;
}

// The parent process when it is slurmd (or slurmstepd): the one that started us.
struct ParentSlurmd {
  std::vector<std::string> argv, environ;
  std::string exe;
};

std::optional<ParentSlurmd> parent_slurmd() {
  const std::string proc = "/proc/" + std::to_string(::getppid());
  auto comm = read_small(proc + "/comm");
  while (!comm.empty() && comm.back() == '\n') comm.pop_back();
  if (comm != "slurmd" && comm != "slurmstepd") return std::nullopt;
  ParentSlurmd p;
  p.argv = split_nul(read_small(proc + "/cmdline"));
  p.environ = split_nul(read_small(proc + "/environ"));
  if (auto exe = sys::read_link(proc + "/exe")) p.exe = std::move(*exe);
  return p;
}

std::string env_or_empty(const char* name) {
  const char* v = std::getenv(name);
  return v ? v : "";
}

}  // namespace

std::string self_node_name() {
  if (auto v = env_or_empty("SLURMD_NODENAME"); !v.empty()) return v;
  char host[256] = {};
  if (::gethostname(host, sizeof host - 1) != 0) return "";
  std::string name(host);
  return name.substr(0, name.find('.'));
}

std::optional<std::string> conf_from_slurmd_args(const std::vector<std::string>& argv) {
  for (std::size_t i = 1; i < argv.size(); ++i) {
    const auto& a = argv[i];
    if (a == "-f" && i + 1 < argv.size()) return argv[i + 1];
    if (a.size() > 2 && a.rfind("-f", 0) == 0) return a.substr(2);
  }
  return std::nullopt;
}

std::string expand_node(std::string_view text, std::string_view node) {
  std::string out;
  constexpr std::string_view key = "{node}";
  for (;;) {
    auto at = text.find(key);
    out += text.substr(0, at);
    if (at == std::string_view::npos) break;
    out += node;
    text.remove_prefix(at + key.size());
  }
  return out;
}

const std::vector<std::string>& default_slurm_conf_paths() {
  static const std::vector<std::string> paths = {
      "/etc/slurm/slurm.conf",
      "/etc/slurm-llnl/slurm.conf",       // older Debian/Ubuntu packages
      "/usr/local/etc/slurm.conf",        // source builds with the default prefix
      "/run/slurm/conf/slurm.conf",       // configless: slurmd's runtime copy (23.02+)
      "/var/spool/slurmd/conf-cache/slurm.conf",    // configless cache, Debian's SlurmdSpoolDir
      "/var/spool/slurm/d/conf-cache/slurm.conf",   // configless cache, common RPM layout
      "/var/spool/slurm/slurmd/conf-cache/slurm.conf",
  };
  return paths;
}

std::optional<Found> find_slurm_conf(const std::string& configured) {
  if (!configured.empty()) return Found{configured, "health config"};
  if (auto v = env_or_empty("SLURM_CONF"); !v.empty()) return Found{v, "SLURM_CONF"};
  if (auto p = parent_slurmd()) {
    if (auto f = conf_from_slurmd_args(p->argv); f && is_file(*f)) return Found{*f, "slurmd -f (parent)"};
    for (const auto& kv : p->environ)
      if (kv.rfind("SLURM_CONF=", 0) == 0 && is_file(kv.substr(11))) return Found{kv.substr(11), "SLURM_CONF of slurmd (parent)"};
  }
  for (const auto& path : default_slurm_conf_paths())
    if (is_file(path)) return Found{path, "default path"};
  return std::nullopt;
}

std::optional<Found> find_slurm_command(const std::string& name, const std::string& configured) {
  if (!configured.empty()) return Found{configured, "health config"};
  if (!env_or_empty("PATH").empty())
    if (auto on_path = sys::find_executable(name); !on_path.empty()) return Found{on_path, "PATH"};
  if (auto p = parent_slurmd(); p && !p->exe.empty()) {
    // /usr/sbin/slurmd -> /usr/bin/NAME; /opt/slurm/sbin/slurmd -> /opt/slurm/bin/NAME
    auto sbin = p->exe.substr(0, p->exe.rfind('/'));
    auto prefix = sbin.substr(0, sbin.rfind('/'));
    if (is_executable(prefix + "/bin/" + name)) return Found{prefix + "/bin/" + name, "next to slurmd (parent)"};
  }
  for (const char* d : {"/usr/bin", "/usr/local/bin", "/opt/slurm/bin"})
    if (is_executable(std::string(d) + "/" + name)) return Found{std::string(d) + "/" + name, "default path"};
  return std::nullopt;
}

}  // namespace perfgap::slurm
