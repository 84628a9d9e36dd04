// perf.data (PERFILE2) read natively, so `analyze perf` needs no perf on the machine: file mode
// (header at 0, attrs with their id lists, data section, feature sections) and pipe mode (16-byte
// header, HEADER_ATTR / HEADER_FEATURE records), either endianness, every perf_event_attr size,
// zstd-compressed records (PERF_RECORD_COMPRESSED 81 and COMPRESSED2 83, one stream across
// chunks). Samples are not kept: each one's leaf (the sample IP) is aggregated by (address or
// DSO, thread) with its weight (the period, as `perf report` weighs by default), so memory is the
// distinct leaves, threads and mappings, not the sample count. Kernel leaves are symbolized
// afterwards from a kallsyms text (`perf_data_symbolize`), relocated by the recording's
// "[kernel.kallsyms]_text" MMAP.
#pragma once

#include <cstdint>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/parse_error.hpp"
#include "parsers/perf.hpp"

namespace perfgap::parsers {

struct PerfDataOptions {
  // Decompressed bytes of all COMPRESSED records together at most this many times the input
  // (plus 64 MiB): a zstd bomb is an error, not a hang.
  std::uint64_t max_inflate_ratio = 256;
};

struct PerfLeaf {
  enum class Kind : std::uint8_t { kernel, user, guest, hypervisor } kind = Kind::user;
  std::uint64_t ip = 0;        // kernel/guest/hypervisor: the address; user: 0
  std::uint32_t dso = 0;       // user: index into dsos (0 = "[unknown]")
  std::uint32_t tid = 0;
  std::uint16_t event = 0;     // index into PerfData::events
  double weight = 0;           // summed periods (1 per sample when the period is not recorded)
  std::uint64_t samples = 0;
};

struct PerfData {
  bool pipe = false;
  bool big_endian = false;
  std::uint32_t attr_size = 0;          // perf_event_attr.size of the first event
  std::vector<std::string> events;      // "type:config" of each attr, in order
  std::vector<std::string> event_names;  // each attr's event as perf names it ("cycles", "task-clock"; else "type:config")
  std::vector<std::uint64_t> event_samples;  // SAMPLE records of each attr
  std::vector<double> event_weight;          // their summed weight (periods)
  // Feature sections (file mode) or HEADER_FEATURE records (pipe mode); empty when absent.
  std::string hostname, osrelease, arch, version, cmdline;
  std::uint32_t nr_cpus_avail = 0, nr_cpus_online = 0;
  std::size_t build_ids = 0, numa_nodes = 0, sibling_threads = 0;
  bool compressed = false;
  std::uint64_t samples = 0;            // SAMPLE records read
  std::uint64_t unmatched_samples = 0;  // samples whose id names no attr (not aggregated)
  std::uint64_t lost = 0;               // LOST.lost + LOST_SAMPLES.lost
  std::uint64_t callchain_frames = 0;   // frames of all call chains (decoded, not kept)
  double total_weight = 0;
  std::optional<std::uint64_t> kernel_text;   // "[kernel.kallsyms]_text" MMAP's pgoff (_text's address)
  std::vector<std::string> dsos{"[unknown]"};
  std::vector<std::pair<std::uint32_t, std::string>> comms;  // tid -> last COMM, sorted by tid
  std::vector<PerfLeaf> leaves;         // aggregated, unordered
  std::uint64_t records = 0;
};

// Whether the bytes start like a perf.data (file or pipe, either endianness).
bool looks_perf_data(std::string_view bytes);

// Errors name the byte offset ("offset 4096: record of type 9 claims 120 bytes, 40 left"); an
// offset inside decompressed data is given as the COMPRESSED record's and the offset in its stream.
Parsed<PerfData> parse_perf_data(std::string_view bytes, const PerfDataOptions& o = {});

// /proc/kallsyms text: text symbols (t/T/w/W) sorted by address; `_text`'s address.
struct Kallsyms {
  std::vector<std::pair<std::uint64_t, std::string>> symbols;
  std::optional<std::uint64_t> text;
  bool zero_addresses = false;   // every address 0 (read without CAP_SYSLOG / kptr_restrict)
};
Parsed<Kallsyms> parse_kallsyms(std::string_view text);

// The leaves as perf report rows: one row per (symbol, command), self_pct of the total weight,
// sorted descending (Layout::data). Kernel leaves are named from `ks` (relocated by the
// recording's _text against kallsyms' _text); without `ks`, or outside it, they are their
// address ("0xffffffff81234567", as perf prints an unresolved address). User leaves are their DSO.
PerfProfile perf_data_profile(const PerfData& d, const Kallsyms* ks, std::string symbol_source);

}  // namespace perfgap::parsers
