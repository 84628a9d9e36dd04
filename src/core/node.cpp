#include "core/node.hpp"


#include "facts/platform.hpp"
#include "facts/nccl.hpp"
#include "facts/reads.hpp"
#include "report/redact.hpp"
#include "sys/text.hpp"

namespace perfgap::core {

report::Node describe_node(facts::Facts& f) {
  report::Node n;
  const auto& id = f.identity();
  n.hostname = id.hostname;
  n.kernel = id.kernel;
  n.arch = id.arch;
  const auto& env = f.audited_env();
  n.name = n.hostname;
  for (const auto& [k, v] : env)
    if (k == "SLURMD_NODENAME" && !v.empty()) n.name = v;
  const auto& hyp = f.hypervisor();
  if (hyp) n.virtualized = hyp->virtualized;
  n.container = f.container();
  n.environment = report::audited_environment(env);

  auto& s = n.settings;
  if (!id.cpu_model.empty()) s["cpu_model"] = id.cpu_model;
  if (const auto& d = facts::nvidia_driver(f); d && d->version) s["nvidia_driver"] = *d->version;
  const auto& idle = f.cpuidle();
  if (!idle.driver.empty()) s["idle_driver"] = idle.driver;
  if (auto d = facts::deepest_enabled_state(idle)) s["deepest_idle_state"] = d->name;
  const auto& freq = f.cpufreq();
  if (auto g = facts::governor_summary(freq); !g.empty()) s["governor"] = g;
  if (auto t = facts::turbo_enabled(freq)) s["turbo"] = *t ? "on" : "off";
  if (const auto& ps = facts::page_size(f)) s["page_size_kb"] = std::to_string(ps->kb);
  if (const auto& nb = facts::sysctl(f, "kernel.numa_balancing")) s["numa_balancing"] = *nb;
  // "unset" only where the audited environment was read: unread, NCCL_TOPO_FILE may be set
  // there, so the setting stays unknown (and expect learn does not learn "unset").
  if (auto t = facts::nccl_topo_file_state(f); t != "unset" || f.audited_env_error().empty()) s["nccl_topo_file"] = t;
  // What NCCL reads from its config files (NCCL_CONF_FILE or ~/.nccl.conf, then
  // /etc/nccl.conf; first setting wins), redacted like the environment.
  for (const auto& [k, v] : facts::nccl_config(f).conf)
    n.nccl_conf[k] = report::redact(k, v.value);
  if (auto m = facts::iommu_mode_summary(f)) s["iommu_mode"] = *m;
  // The contract's keys are always there, so a script or a fleet reads "not read here" as
  // such instead of a key it cannot tell from an older report's.
  for (const char* key : report::kNodeSettingKeys) s.try_emplace(key, report::kSettingUnknown);
  return n;
}

const std::vector<std::string_view>& node_reads() {
  namespace reads = facts::reads;
  // iommu_mode_summary reads the PCI devices and their IOMMU groups; the hypervisor list holds
  // identity's and cpuinfo's.
  static const auto list = reads::of({reads::identity(), reads::hypervisor(), reads::audited_env(), reads::container(),
                                      reads::nvidia_driver_version(), reads::cpuidle(), reads::cpufreq(), reads::page_size(),
                                      reads::numa_balancing(), reads::nccl_topo_file(), reads::nccl_config(), reads::pci(),
                                      reads::iommu_groups()});
  return list;
}

}  // namespace perfgap::core
