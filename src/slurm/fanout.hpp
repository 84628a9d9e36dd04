// The srun command line of `perfgap fanout`: one task per node of the allocation, each
// running `perfgap fanout --node-task` which runs `check` on its node and writes
// REPORT_DIR/<node>.json. With a container image the step runs inside it through pyxis
// (--container-image/--container-mounts), with the perfgap binary and the report directory
// mounted at the same paths; without pyxis, through a wrapper command (--container-wrap).
#pragma once

#include <string>
#include <string_view>
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
  // Without pyxis: a command each task runs the node task through (bwrap, runc, enroot
  // start, apptainer exec, ...), already split into words; the wrapper must make perfgap
  // and the report directory visible at the same paths inside.
  std::vector<std::string> container_wrap;
  std::vector<std::string> srun_args;  // passed to srun before the command
  std::vector<std::string> check_args; // passed to check on each node ({node} expanded there)
};

// Options of `check` that fanout sets itself, or that make no sense per node.
tl::expected<void, std::string> validate_check_args(const std::vector<std::string>& check_args);

std::vector<std::string> build_srun_command(const FanoutPlan& plan);

// --container-wrap's text as words, the way a POSIX shell splits a simple command: blanks
// separate, '...' is literal, "..." keeps blanks (\ escapes \, ", $, `), \ escapes one character
// outside quotes. No expansion of any kind. Error for an unterminated quote or no words.
tl::expected<std::vector<std::string>, std::string> split_command_words(std::string_view text);

// REPORT_DIR/<node>.json
std::string report_path(const std::string& report_dir, const std::string& node);

}  // namespace perfgap::slurm
