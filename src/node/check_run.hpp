// One node's check run as `perfgap check` and `perfgap health` run it: config, selection,
// sysroot (a directory or a snapshot archive), facts, runner, node description, and the
// --expect verdict. Errors are bad input, one line naming the file (and line), which the CLI
// turns into exit status 2.
#pragma once

#include <chrono>
#include <ctime>
#include <string>
#include <vector>

#include <tl/expected.hpp>

#include "core/check.hpp"
#include "core/config.hpp"
#include "report/model.hpp"

namespace perfgap::node {

inline constexpr const char* kDefaultCheckConfig = "/etc/perfgap/config.yaml";

struct NodeCheckRequest {
  std::string root;                      // empty: the live system; a directory or a .tar.gz
  std::string config;                    // empty: kDefaultCheckConfig when present
  std::string dmesg, baseline;
  std::string expect;                    // --expect FILE (perfgap expect learn): expect.* findings
  std::vector<std::string> only, skip;   // ids or globs; win over the config's lists
  std::vector<int> pids;                 // empty: auto-detect training processes
  std::chrono::milliseconds check_timeout{0};  // 0: the config's, else the runner's default
  std::chrono::milliseconds sample{0};         // --sample-ms; 0: the config's, else the default
  std::chrono::milliseconds sample_max{1000};  // the default window's cap (health: 250 ms)
  std::time_t started = 0;               // generated_at; 0: now
  bool nvml = false;                     // --nvml (facts::Options::nvml)
  std::string node_name;                 // --node-name; empty: describe_node's, else the tree's name
};

struct NodeSelection {
  core::Config config;
  std::vector<const core::CheckInfo*> checks;
};

// The name a captured tree gives its node when it records none: its directory's or archive's
// name without the archive suffix ("trees/gpu017/" and "gpu017.tar.gz": "gpu017"); empty
// when the path names nothing ("/", ".").
std::string node_name_from_root(const std::string& root);

tl::expected<NodeSelection, std::string> select_node_checks(const NodeCheckRequest& request);
// Selects (config, --only/--skip), then runs; the second form runs a selection already made,
// so that a caller that needs the config too reads it once.
tl::expected<report::Report, std::string> run_node_checks(const NodeCheckRequest& request);
tl::expected<report::Report, std::string> run_node_checks(const NodeCheckRequest& request, const NodeSelection& selection);

}  // namespace perfgap::node
