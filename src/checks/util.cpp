#include "checks/util.hpp"

#include <algorithm>
#include <cmath>

#include "report/redact.hpp"

#include <fmt/format.h>

namespace perfgap::checks {

std::string pid_subject(int pid) { return "pid:" + std::to_string(pid); }

std::string proc_path(int pid, std::string_view file) { return fmt::format("/proc/{}/{}", pid, file); }

std::string pct(double v) { return fmt::format("{:.1f}", v); }

std::string cpus_text(const parsers::CpuSet& s) {
  auto list = s.to_list();
  return list.empty() ? "(none)" : list;
}

parsers::CpuSet workload_cpus(facts::Facts& f, std::string* how) {
  parsers::CpuSet cpus;
  const auto& t = f.training();
  for (const auto& p : t.procs)
    if (p.allowed) cpus = cpus.unite(*p.allowed);
  if (!cpus.empty()) {
    if (how) *how = fmt::format("CPUs allowed to {} training process(es)", t.procs.size());
    return cpus;
  }
  const auto& topo = f.topology();
  if (topo) cpus = topo->online;
  if (how) *how = "all online CPUs (no training process found)";
  return cpus;
}

std::optional<Finding> topology_skip(facts::Facts& f, std::string_view id, std::string_view layer) {
  const auto& topo = f.topology();
  if (topo) return std::nullopt;
  return core::finding(id, layer, Status::skip, "online CPUs unknown: " + topo.error());
}

Finding no_training_skip(std::string_view id, std::string_view layer, const facts::Training& t) {
  auto f = core::finding(id, layer, Status::skip,
                         t.explicit_pids ? "none of the --pid processes could be read"
                                         : "no training process found (none with LOCAL_RANK/SLURM_LOCALID/OMPI_COMM_WORLD_LOCAL_RANK that loads libcuda or libnccl); name one with --pid");
  for (const auto& p : t.problems) f.add("/proc", p);
  return f;
}

tl::expected<std::string, Finding> sysctl_or_skip(facts::Facts& f, std::string_view name, std::string_view id, std::string_view layer,
                                                  std::string_view what) {
  const auto& v = facts::sysctl(f, name);
  if (v) return *v;
  return tl::unexpected(core::finding(id, layer, Status::skip, std::string(what) + " not available: " + v.error()));
}

std::string unset_text(facts::Facts& f, std::string_view names, std::string_view suffix) {
  const auto& err = f.audited_env_error();
  if (err.empty()) return std::string(names) + " unset" + std::string(suffix);
  return std::string(names) + " unknown: the audited environment is not readable (" + err + ")";
}

std::vector<Finding> unless_env_unread(facts::Facts& f, std::vector<Finding> found) {
  const auto& err = f.audited_env_error();
  if (err.empty()) return found;
  for (auto& x : found) {
    if (x.status == Status::pass) {
      x.status = Status::skip;
      x.add("NCCL config files alone", x.title);
      x.title = "NCCL's settings are unknown: the audited environment is not readable (" + err + ")";
    } else {
      x.add(f.audited_env_source(), "not readable: " + err + " (it may override what the config files say)");
    }
  }
  return found;
}

Status limit_verdict(double share, double margin, double limit) {
  if (share - margin > limit) return Status::fail;
  if (share + margin <= limit) return Status::pass;
  return share > limit ? Status::warn : Status::skip;
}

std::chrono::milliseconds window_to_decide(double seconds, double margin, double share, double limit) {
  const double distance = std::max(0.1, std::fabs(limit - share));
  const double ms = std::ceil(seconds * 1000.0 * margin / distance * 1.15 / 10.0) * 10.0;
  return std::chrono::milliseconds(static_cast<long>(std::clamp(ms, 10.0, 60000.0)));
}

std::string shown(std::string_view name, const std::string& value) { return report::redact(name, value); }

}  // namespace perfgap::checks
