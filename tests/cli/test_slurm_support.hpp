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

#include "tree.hpp"

namespace perfgap::slurmtest {

namespace fs = std::filesystem;

inline std::string source_path(const std::string& rel) { return (fs::path(PERFGAP_SOURCE_DIR) / rel).string(); }

// The two fixture cases the Slurm tests use for a passing and a failing node.
inline const std::string kCheck = "cpu.cstate.deep_idle";
inline std::string passing_case() { return source_path("tests/fixtures/cases/cpu.cstate.deep_idle/pass.tree"); }
inline std::string failing_case() { return source_path("tests/fixtures/cases/cpu.cstate.deep_idle/fail-cmdline-cap.tree"); }

inline void write_file(const std::string& path, const std::string& text, mode_t mode = 0644) {
  fs::create_directories(fs::path(path).parent_path());
  std::ofstream(path, std::ios::binary | std::ios::trunc) << text;
  ::chmod(path.c_str(), mode);
}

inline std::string read_file(const std::string& path) {
  std::ifstream in(path, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}

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

inline std::string find_on_path(const std::string& name) {
  const char* path = std::getenv("PATH");
  std::stringstream ss(path ? path : "/usr/bin:/bin");
  std::string dir;
  while (std::getline(ss, dir, ':'))
    if (!dir.empty() && ::access((dir + "/" + name).c_str(), X_OK) == 0) return dir + "/" + name;
  return "";
}

}  // namespace perfgap::slurmtest
