// A writer of small (or, for bench/analyze, large) perf.data recordings with chosen events,
// symbols, periods, call chains, endianness, file or pipe mode and zstd compression, and the
// kallsyms text that names their kernel addresses: what the perf.data reader's tests, its fuzz
// seeds and its benchmark read. Written from the perf.data format (tools/perf/Documentation/
// perf.data-file-format.txt, include/uapi/linux/perf_event.h), not from perf's code.
#pragma once

#include <cstdint>
#include <string>
#include <utility>
#include <vector>

namespace perfgap::gen {

struct GenSample {
  std::uint64_t ip = 0;
  std::uint32_t pid = 1, tid = 1;
  std::uint64_t period = 1;
  bool kernel = true;                     // misc cpumode: kernel or user
  std::vector<std::uint64_t> callchain;   // written after a PERF_CONTEXT_KERNEL/USER marker
  int event = 0;                          // which attr (two_events)
};

struct GenComm {
  std::uint32_t pid, tid;
  std::string name;
};
struct GenMmap {
  std::uint32_t pid;
  std::uint64_t addr, len, pgoff;
  std::string name;
  bool mmap2 = false;
};

struct PerfDataSpec {
  bool big_endian = false;
  bool pipe = false;
  int compressed = 0;                 // 0, 81 (PERF_RECORD_COMPRESSED) or 83 (COMPRESSED2)
  std::size_t compress_chunk = 4096;  // uncompressed bytes per compressed record (cut anywhere)
  std::uint32_t attr_size = 136;      // perf_event_attr.size written (64 = v0 ... 136 = v8)
  bool with_period = true;            // PERF_SAMPLE_PERIOD; else attr.sample_period weighs
  std::uint64_t sample_period = 1;
  bool callchains = false;            // PERF_SAMPLE_CALLCHAIN
  bool raw = false;                   // PERF_SAMPLE_RAW (4 bytes of payload per sample)
  bool read = false;                  // PERF_SAMPLE_READ, group with ids and lost
  bool two_events = false;            // two attrs, samples matched by PERF_SAMPLE_IDENTIFIER
  std::string hostname = "gen-node", osrelease = "6.1.0-gen", arch = "x86_64";
  std::uint32_t nr_cpus = 4;
  std::uint64_t kernel_text = 0xffffffff81000000ULL;  // the [kernel.kallsyms]_text MMAP's pgoff
  std::vector<GenComm> comms;
  std::vector<GenMmap> mmaps;
  std::vector<GenSample> samples;
  std::size_t repeat = 1;             // the samples written this many times (benchmarks)
  std::uint64_t lost = 0;             // one PERF_RECORD_LOST of this count (and one LOST_SAMPLES of 1)
};

std::string write_perf_data(const PerfDataSpec& spec);

// "ADDR T NAME" lines, _text first at `text`.
std::string kallsyms_text(const std::vector<std::pair<std::uint64_t, std::string>>& symbols, std::uint64_t text = 0xffffffff81000000ULL);

// A small recording with known shares, used by the tests, the fuzz seeds and the benchmark:
// kernel symbols named in `kernel` (address, name, self share in samples of 100), user samples
// in libc.so.6 / python for the rest.
PerfDataSpec demo_spec(const std::vector<std::pair<std::string, int>>& kernel_shares, int user_share);
// The kallsyms that names demo_spec's kernel symbols (each symbol 0x1000 bytes, from _text + 0x1000).
std::string demo_kallsyms(const std::vector<std::pair<std::string, int>>& kernel_shares, std::uint64_t text = 0xffffffff81000000ULL);

}  // namespace perfgap::gen
