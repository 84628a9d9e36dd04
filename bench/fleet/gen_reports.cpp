// Writes N node reports (as `perfgap check --format json` prints them, ~40 findings each)
// into DIR for bench/fleet/run.sh, with a realistic amount of trouble: a few nodes on another
// kernel, one with a different NCCL variable, some failing checks, one outlier metric.
//   perfgap-bench-gen-fleet DIR [N]   (default N = 10000)
#include <sys/stat.h>

#include <cerrno>
#include <cstdio>
#include <cstdlib>
#include <cstring>
#include <string>

#include "fleet_gen.hpp"

int main(int argc, char** argv) {
  if (argc < 2 || argc > 3) {
    std::fprintf(stderr, "usage: %s DIR [N]\n", argv[0]);
    return 2;
  }
  const std::string dir = argv[1];
  const long n = argc == 3 ? std::strtol(argv[2], nullptr, 10) : 10000;
  if (n < 1) {
    std::fprintf(stderr, "N must be a positive number\n");
    return 2;
  }
  if (::mkdir(dir.c_str(), 0755) != 0 && errno != EEXIST) {
    std::fprintf(stderr, "%s: %s\n", dir.c_str(), std::strerror(errno));
    return 2;
  }
  std::size_t bytes = 0;
  const int width = n >= 10000 ? 5 : 4;
  for (long i = 1; i <= n; ++i) {
    perfgap::fleetgen::NodeSpec s;
    s.name = perfgap::fleetgen::node_name(static_cast<std::size_t>(i), width);
    s.seed = static_cast<std::uint64_t>(i);
    if (i % 997 == 0) s.kernel = "6.8.0-47-generic";
    if (i == 42) s.environment["NCCL_IB_QPS_PER_CONNECTION"] = "1";
    if (i % 331 == 0) s.status["cpu.governor"] = "fail", s.settings["governor"] = "powersave";
    if (i % 1009 == 0) s.status["net.ib.ports"] = "fail";
    if (i == 77) s.metrics["pcie.link.link_width@0000:18:00.0"] = 8;
    const std::string text = perfgap::fleetgen::report_json(s);
    bytes += text.size();
    const std::string path = dir + "/" + s.name + ".json";
    std::FILE* f = std::fopen(path.c_str(), "wb");
    if (!f || std::fwrite(text.data(), 1, text.size(), f) != text.size() || std::fclose(f) != 0) {
      std::fprintf(stderr, "%s: cannot write\n", path.c_str());
      return 2;
    }
  }
  std::printf("%ld reports, %.1f MiB, in %s\n", n, static_cast<double>(bytes) / (1 << 20), dir.c_str());
  return 0;
}
