// The two backends of perfgap-collbench and what they share. The MPI backend is a plugin
// (perfgap-collbench-mpi.so, dlopen'ed) so that the executable itself needs no libmpi and runs
// on a GPU node without MPI; the NCCL backend is compiled in but loads libcudart and libnccl at
// run time, so it needs no CUDA on the build or run node until it is used.
#pragma once

#include <sched.h>
#include <cctype>
#include <unistd.h>

#include <algorithm>
#include <cstdio>
#include <fstream>
#include <string>
#include <string_view>
#include <vector>

#include "collbench/options.hpp"
#include "report/redact.hpp"

namespace perfgap::collbench {

inline constexpr int kExitOk = 0, kExitWrong = 1, kExitUnusable = 2;

// The plugin's entry point; the version and the Options size guard against a plugin left over
// from another build.
inline constexpr const char* kMpiPluginFile = "perfgap-collbench-mpi.so";
inline constexpr const char* kMpiEntryPoint = "perfgap_collbench_mpi_run";
using MpiEntryPoint = int (*)(const Options* options, const char* version, std::size_t options_size);

// Implemented in nccl_backend.cpp when the CUDA and NCCL headers were found at build time.
int run_nccl(const Options& options);

inline void print_error(const std::string& message) { std::fprintf(stderr, "perfgap-collbench: %s\n", message.c_str()); }

inline std::string host_name() {
  char buf[256] = {};
  if (::gethostname(buf, sizeof buf - 1) != 0) return "unknown";
  return buf;
}

inline std::string cpu_model() {
  std::ifstream in("/proc/cpuinfo");
  std::string line;
  while (std::getline(in, line))
    if (line.rfind("model name", 0) == 0 || line.rfind("Model", 0) == 0) {
      auto colon = line.find(':');
      if (colon != std::string::npos && colon + 2 <= line.size()) return line.substr(colon + 2);
    }
  return "CPU";
}

// "0-3,8" for the CPUs this process may run on: a rank's placement is part of its figures.
inline std::string affinity_list() {
  cpu_set_t set;
  CPU_ZERO(&set);
  if (::sched_getaffinity(0, sizeof set, &set) != 0) return "?";
  std::string out;
  for (int c = 0; c < CPU_SETSIZE; ++c) {
    if (!CPU_ISSET(c, &set)) continue;
    int end = c;
    while (end + 1 < CPU_SETSIZE && CPU_ISSET(end + 1, &set)) ++end;
    if (!out.empty()) out += ',';
    out += end == c ? std::to_string(c) : std::to_string(c) + "-" + std::to_string(end);
    c = end;
  }
  return out;
}

// The environment settings that change how collectives run (what `perfgap sweep` varies),
// "NAME=value" sorted; secrets redacted by perfgap's one rule (report::redact).
inline std::string tunable_settings(char** env) {
  static constexpr std::string_view kPrefixes[] = {"NCCL_", "UCX_", "UCC_", "OMPI_MCA_coll", "OMPI_MCA_btl", "OMPI_MCA_pml", "OMPI_MCA_mtl"};
  std::vector<std::string> picked;
  for (char** e = env; e && *e; ++e) {
    std::string_view kv(*e);
    auto eq = kv.find('=');
    if (eq == std::string_view::npos) continue;
    std::string_view key = kv.substr(0, eq);
    if (std::none_of(std::begin(kPrefixes), std::end(kPrefixes), [&](auto p) { return key.starts_with(p); })) continue;
    picked.push_back(std::string(key) + "=" + report::redact(key, kv.substr(eq + 1)));
  }
  std::sort(picked.begin(), picked.end());
  std::string out;
  for (const auto& p : picked) out += (out.empty() ? "" : " ") + p;
  return out;
}

}  // namespace perfgap::collbench
