// Times the perf.data reader in-process: parse_perf_data (every record, call chains walked past,
// leaves aggregated) and perf_data_profile (symbolization), on one file read into memory first.
//   perfgap-bench-perf-data FILE.data [KALLSYMS] [REPS]
// Prints, per phase, the best wall and thread-CPU time of REPS runs and MB/s of the file.
#include <time.h>

#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <sstream>
#include <string>

#include "parsers/perf_data.hpp"

namespace {
double now(clockid_t c) {
  timespec t{};
  clock_gettime(c, &t);
  return static_cast<double>(t.tv_sec) + static_cast<double>(t.tv_nsec) * 1e-9;
}
std::string slurp(const char* p) {
  std::ifstream in(p, std::ios::binary);
  std::stringstream ss;
  ss << in.rdbuf();
  return ss.str();
}
}  // namespace

int main(int argc, char** argv) {
  if (argc < 2) {
    std::fprintf(stderr, "usage: %s FILE.data [KALLSYMS] [REPS]\n", argv[0]);
    return 2;
  }
  const std::string bytes = slurp(argv[1]);
  std::optional<perfgap::parsers::Kallsyms> ks;
  if (argc > 2) {
    auto k = perfgap::parsers::parse_kallsyms(slurp(argv[2]));
    if (!k) {
      std::fprintf(stderr, "%s: %s\n", argv[2], k.error().describe().c_str());
      return 2;
    }
    ks = std::move(*k);
  }
  const int reps = argc > 3 ? std::atoi(argv[3]) : 5;
  double best_wall = 1e9, best_cpu = 1e9, best_sym = 1e9;
  std::uint64_t samples = 0, frames = 0;
  for (int i = 0; i < reps; ++i) {
    double w0 = now(CLOCK_MONOTONIC), c0 = now(CLOCK_THREAD_CPUTIME_ID);
    auto d = perfgap::parsers::parse_perf_data(bytes);
    double w1 = now(CLOCK_MONOTONIC), c1 = now(CLOCK_THREAD_CPUTIME_ID);
    if (!d) {
      std::fprintf(stderr, "%s: %s\n", argv[1], d.error().describe().c_str());
      return 2;
    }
    auto p = perfgap::parsers::perf_data_profile(*d, ks ? &*ks : nullptr, "bench");
    double c2 = now(CLOCK_THREAD_CPUTIME_ID);
    best_wall = std::min(best_wall, w1 - w0);
    best_cpu = std::min(best_cpu, c1 - c0);
    best_sym = std::min(best_sym, c2 - c1);
    samples = d->samples;
    frames = d->callchain_frames;
  }
  const double mb = static_cast<double>(bytes.size()) / 1e6;
  std::printf("perf.data %.1f MB, %llu samples, %llu call-chain entries\n", mb, static_cast<unsigned long long>(samples),
              static_cast<unsigned long long>(frames));
  std::printf("parse_perf_data: best wall %.3f s (%.0f MB/s), best CPU %.3f s (%.0f MB/s); perf_data_profile %.4f s CPU\n", best_wall,
              mb / best_wall, best_cpu, mb / best_cpu, best_sym);
  return 0;
}
