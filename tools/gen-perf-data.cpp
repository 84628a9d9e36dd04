// Writes a synthetic perf.data (tests/support/perf_data_gen.hpp) and its kallsyms, for manual
// runs, the fuzz seeds and bench/analyze:
//   perfgap-gen-perf-data SCENARIO OUT.data [OUT.kallsyms] [flags...]
// SCENARIO: smmu (arm_smmu_cmdq_issue_cmdlist 30%), hot (native_queued_spin_lock_slowpath 20%),
// clean (no known-costly frame), large:MB (about MB megabytes of samples with call chains).
// flags: be (big-endian), pipe, z81, z83 (zstd COMPRESSED / COMPRESSED2), v0 (64-byte attr), v7 (128),
// two (two events matched by identifier), read, raw, noperiod, lost.
#include <algorithm>
#include <cstdio>
#include <cstdlib>
#include <fstream>
#include <string>
#include <vector>

#include "perf_data_gen.hpp"

int main(int argc, char** argv) {
  using namespace perfgap::gen;
  if (argc < 3) {
    std::fprintf(stderr, "usage: %s smmu|hot|clean|large:MB OUT.data [OUT.kallsyms] [be|pipe|z81|z83|v0|v7|two|read|raw|noperiod|lost]...\n", argv[0]);
    return 2;
  }
  std::string sc = argv[1];
  std::vector<std::pair<std::string, int>> k;
  int user = 40;
  std::size_t mb = 0;
  if (sc == "smmu") k = {{"arm_smmu_cmdq_issue_cmdlist", 30}, {"do_syscall_64", 10}};
  else if (sc == "hot") k = {{"native_queued_spin_lock_slowpath", 20}, {"do_syscall_64", 10}};
  else if (sc == "clean") k = {{"do_syscall_64", 10}, {"schedule", 5}};
  else if (sc.rfind("large:", 0) == 0) {
    mb = std::strtoull(sc.c_str() + 6, nullptr, 10);
    k = {{"arm_smmu_cmdq_issue_cmdlist", 15}, {"native_queued_spin_lock_slowpath", 10}, {"do_syscall_64", 20}, {"schedule", 15}};
  } else {
    std::fprintf(stderr, "unknown scenario %s\n", sc.c_str());
    return 2;
  }
  PerfDataSpec s = demo_spec(k, user);
  int first_flag = 3;
  std::string ks_out;
  const std::vector<std::string> flags = {"be", "pipe", "z81", "z83", "v0", "v7", "two", "read", "raw", "noperiod", "lost"};
  if (argc > 3 && std::find(flags.begin(), flags.end(), std::string(argv[3])) == flags.end()) {
    ks_out = argv[3];
    first_flag = 4;
  }
  for (int i = first_flag; i < argc; ++i) {
    std::string f = argv[i];
    if (f == "be") s.big_endian = true;
    else if (f == "pipe") s.pipe = true;
    else if (f == "z81") s.compressed = 81;
    else if (f == "z83") s.compressed = 83;
    else if (f == "v0") s.attr_size = 64;
    else if (f == "v7") s.attr_size = 128;  // perf_event_attr before config3: what perf 6.1 reads
    else if (f == "two") s.two_events = true;
    else if (f == "read") s.read = true;
    else if (f == "raw") s.raw = true;
    else if (f == "noperiod") s.with_period = false;
    else if (f == "lost") s.lost = 7;
    else {
      std::fprintf(stderr, "unknown flag %s\n", f.c_str());
      return 2;
    }
  }
  if (mb > 0) {
    // Call chains of 16 frames, as a deep Python/CUDA stack gives (a sample is ~200 bytes).
    s.callchains = true;
    for (auto& g : s.samples)
      while (g.callchain.size() < 14) g.callchain.push_back(0x7f0000003000ULL + 0x40 * g.callchain.size());
    s.repeat = mb * 1000000 / (s.samples.size() * 200) + 1;
    s.compress_chunk = 1 << 20;
  } else {
    s.callchains = true;
  }
  std::ofstream(argv[2], std::ios::binary) << write_perf_data(s);
  if (!ks_out.empty()) std::ofstream(ks_out) << demo_kallsyms(k);
  return 0;
}
