// Where this node's Slurm pieces are, found the way a health check must: slurmd starts
// HealthCheckProgram and Prolog with almost no environment (SLURMD_NODENAME and PWD, no PATH
// and no SLURM_CONF), so the config and scontrol are looked for where slurmd keeps them.
#pragma once

#include <optional>
#include <string>
#include <string_view>
#include <vector>

namespace perfgap::slurm {

struct Found {
  std::string path;
  std::string how;  // "SLURM_CONF", "slurmd -f (parent)", "default path", ... for the log
};

// SLURMD_NODENAME where set (Slurm's name for this node), else the short hostname.
std::string self_node_name();

// The slurm.conf given to slurmd on its command line (-f FILE or -fFILE), if any.
std::optional<std::string> conf_from_slurmd_args(const std::vector<std::string>& argv);

// Replaces every "{node}" in text with node.
std::string expand_node(std::string_view text, std::string_view node);

// slurm.conf: `configured` (the health config's slurm_conf) if given; else SLURM_CONF; else
// what the parent slurmd was started with (-f, or SLURM_CONF in its environment); else the
// usual places, configless caches included. nullopt: none exists (scontrol may still find
// its configuration itself, e.g. configless through DNS).
std::optional<Found> find_slurm_conf(const std::string& configured);

// scontrol (or another Slurm command): `configured` if given; else PATH; else next to the
// parent slurmd (../bin of its sbin); else /usr/bin, /usr/local/bin, /opt/slurm/bin.
std::optional<Found> find_slurm_command(const std::string& name, const std::string& configured);

// The usual slurm.conf places, in the order they are tried.
const std::vector<std::string>& default_slurm_conf_paths();

}  // namespace perfgap::slurm
