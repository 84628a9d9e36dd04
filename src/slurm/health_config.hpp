// The health check's configuration (/etc/perfgap/health.yaml, or PERFGAP_HEALTH_CONFIG):
//
//   checks: [cpu.cstate.deep_idle, "numa.*"]   # what runs (ids or globs); default: every check
//   skip: [cpu.steal]                          # taken out of `checks`
//   drain_on: [cpu.cstate.deep_idle]           # failing ids that drain; default: all that run
//   drain_on_timeout: true                     # checks overrunning time_limit_s drain (NHC does)
//   drain_on_xids: [48, 64, 79, 95]            # these NVIDIA Xids in the kernel log drain, whatever their severity
//   drain_on_counters:                         # net.ib.counters metrics of a port at or above these drain
//     symbol_error: 1000
//     link_downed: 5
//   time_limit_s: 30                           # the whole run, scontrol included
//   sample_ms: 250                             # a fixed live sample window; default 100 ms, taken on to 250 when undecided
//   log_file: /var/log/perfgap-health.log      # one line per run (also on stderr)
//   state_dir: /var/lib/perfgap-health         # last report (last.json) and the run lock
//   slurm_conf: /etc/slurm/slurm.conf          # default: found (see slurm/locate.hpp)
//   scontrol: /usr/bin/scontrol                # default: found
//   check:                                     # as `perfgap check` options; {node} = this node
//     root: /captures/{node}
//     config: /etc/perfgap/config.yaml
//     dmesg: /var/log/dmesg.txt
//     baseline: /etc/perfgap/host.json
//     expect: /etc/perfgap/expect.yaml         # perfgap expect learn's file (check --expect)
//
// Errors name the file and line, like the check configuration's.
#pragma once

#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "core/check.hpp"

namespace perfgap::slurm {

struct HealthCheckOptions {
  std::string root, config, dmesg, baseline, expect;
};

struct HealthConfig {
  std::vector<std::string> checks, skip, drain_on;
  std::vector<long> drain_on_xids;                  // gpu.xid/gpu.nvlink_xid/gpu.fallen_off_bus metrics xid_<N>
  std::vector<std::pair<std::string, double>> drain_on_counters;  // net.ib.counters metric -> threshold
  bool drain_on_timeout = true;
  double time_limit_s = 30;
  long sample_ms = 0;  // 0: facts::first_sample_window, extended by checks up to kHealthSampleMaxMs
  std::string log_file, state_dir, slurm_conf, scontrol;
  HealthCheckOptions check;
  std::string source;
};

inline constexpr const char* kDefaultHealthConfig = "/etc/perfgap/health.yaml";
inline constexpr double kMaxHealthTimeLimit = 3600;
// A prolog runs before every job: health's default window is at most a quarter second.
inline constexpr long kHealthSampleMaxMs = 250;

tl::expected<HealthConfig, std::string> parse_health_config(const std::string& text, const std::string& file,
                                                            const core::Registry& registry);
// The drains drain_on_xids and drain_on_counters ask for, over a node report's findings whatever
// their status: "gpu.xid@0000:18:00.0:xid_48", "net.ib.counters@mlx5_0:1:symbol_error>=1000".
std::vector<std::string> hardware_drain_reasons(const HealthConfig& cfg, const std::vector<report::Finding>& findings);

tl::expected<HealthConfig, std::string> load_health_config(const std::string& path, const core::Registry& registry);

}  // namespace perfgap::slurm
