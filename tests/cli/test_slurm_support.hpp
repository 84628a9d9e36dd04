// Helpers of the Slurm tests (health check, fan-out): node trees made from fixture cases,
// small files, and where commands are.
#pragma once

#include <sys/stat.h>
#include <unistd.h>

#include <cstdlib>
#include <filesystem>
#include <fstream>
#include <sstream>
#include <string>

#include "files.hpp"
#include "run.hpp"
#include "tree.hpp"

namespace perfgap::slurmtest {

namespace fs = std::filesystem;

using fixture::find_on_path;
using fixture::read_file;
using fixture::source_path;
using fixture::write_file;
using fixture::write_script;

// The two fixture cases the Slurm tests use for a passing and a failing node.
inline const std::string kCheck = "cpu.cstate.deep_idle";
inline std::string passing_case() { return source_path("tests/fixtures/cases/cpu.cstate.deep_idle/pass.tree"); }
inline std::string failing_case() { return source_path("tests/fixtures/cases/cpu.cstate.deep_idle/fail-cmdline-cap.tree"); }

// DIR/<node>: a node tree from a fixture case, its hostname set to the node's name (a fleet
// keys nodes on it; every case tree has the same one).
inline std::string make_node_tree(const std::string& dir, const std::string& node, bool failing) {
  const std::string dest = dir + "/" + node;
  std::error_code ec;
  fs::remove_all(dest, ec);
  auto r = fixture::unpack_tree(failing ? failing_case() : passing_case(), dest);
  if (!r) return "unpack: " + r.error();
  write_file(dest + "/proc/sys/kernel/hostname", node + "\n");
  return "";
}

}  // namespace perfgap::slurmtest
