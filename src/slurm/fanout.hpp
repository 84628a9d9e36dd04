// The srun command line of `perfgap fanout`: one task per node of the allocation, each
// running `perfgap fanout --node-task` which runs `check` on its node and writes
// REPORT_DIR/<node>.json. With a container image the step runs inside it through pyxis
// (--container-image/--container-mounts), with the perfgap binary and the report directory
// mounted at the same paths.
#pragma once

#include <string>
#include <vector>

#include <tl/expected.hpp>

namespace perfgap::slurm {

struct FanoutPlan {
  std::string srun = "srun";
  std::string perfgap;                 // the binary the nodes run (absolute)
  std::string report_dir;              // absolute, shared by the nodes
  std::vector<std::string> nodes;      // expanded node names, in allocation order
  std::string nodelist;                // as given to srun (hostlist syntax)
  std::string container_image;         // pyxis --container-image; empty: no container
  std::string container_mounts;        // more pyxis mounts (SRC:DST[:FLAGS],...)
  std::string container_perfgap;       // perfgap inside the image; empty: mount the host's
  std::vector<std::string> srun_args;  // passed to srun before the command
  std::vector<std::string> check_args; // passed to check on each node ({node} expanded there)
};

// Options of `check` that fanout sets itself, or that make no sense per node.
tl::expected<void, std::string> validate_check_args(const std::vector<std::string>& check_args);

std::vector<std::string> build_srun_command(const FanoutPlan& plan);

// REPORT_DIR/<node>.json
std::string report_path(const std::string& report_dir, const std::string& node);

}  // namespace perfgap::slurm
