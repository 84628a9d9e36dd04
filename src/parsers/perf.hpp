// perf text outputs: `perf report --stdio` (Overhead, or Children + Self columns, with or
// without call graphs, any --sort), `perf top` snapshots (the last refresh frame counts),
// the legacy "samples pcnt function DSO" layout, and `perf script` text (one sample per
// blank-line-separated block; its first stack line is the leaf). Lines quoted for mail
// ('>' marks) are read as their unquoted text. A symbol can have several rows (one per
// command or thread with `--sort comm,sym`); they are kept as rows, with the command when
// the header or the row names it.
#pragma once

#include <cstdint>
#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct PerfSymbol {
  std::string symbol;    // as printed, suffixes kept (".constprop.49")
  std::string dso;       // "[kernel.kallsyms]", "[kernel]", "libc.so.6", "" when not printed
  std::string comm;      // the Command column ("python", "pt_data_worker"), "" when not printed
  bool kernel = false;   // "[k]" marker or a kernel DSO
  double self_pct = 0;   // share of samples as self time (leaf), percent
  int line = 0;          // where it was read
};

struct PerfProfile {
  enum class Layout { report, top, legacy, script, data, live } layout = Layout::report;  // live: perfgap profile's samples
  bool children_column = false;   // report had Children + Self (self_pct is the Self column)
  bool command_column = false;    // report had a Command column (--sort comm,...): a symbol may
                                  // have one row per command
  double samples = 0;             // perf script, perf.data: sample count; others: 0 (not printed reliably)
  std::vector<PerfSymbol> symbols;  // by appearance (script: by count, descending)
  std::vector<ParseError> damaged;  // lines that looked like rows but could not be read
  // perf.data only (parsers/perf_data.hpp):
  struct Recording {
    std::string hostname, osrelease, arch;
    std::uint32_t nr_cpus = 0;       // online CPUs of the recording node
    bool pipe = false, compressed = false, big_endian = false;
    std::uint64_t unmatched_samples = 0;  // samples whose id named no event (not counted)
  };
  std::optional<Recording> recording;
  std::optional<double> lost;         // LOST/LOST_SAMPLES records' count; absent for text
  double unresolved_kernel_pct = 0;   // kernel self share whose addresses no symbol table named
  std::string symbol_source;          // perf.data: where kernel names came from, or why there are none
  // Several events sampled (perf record -e a,b, or a group): samples of different events are not
  // added up, one is counted (perf_pick_event) and named here ("cycles"), the others' sample
  // counts kept, left out. Empty: one event (or the text does not say).
  std::string event;
  std::vector<std::pair<std::string, double>> other_events;
  // The CPUs sampled where the capture says they were limited (the command line a `perf top -C 0`
  // capture starts with): "0", "0-3"; empty: all CPUs, or not said. Its shares are of those CPUs.
  std::string cpu_list;
};

// Of several sampled events (name, samples), the one a profile counts: cycles (any modifiers or
// PMU: "cycles:pp", "cpu/cycles/"), then cpu-clock, then task-clock, else the one with most samples.
std::size_t perf_pick_event(const std::vector<std::pair<std::string, double>>& events);

// Error when no sample row or perf-script sample is found.
Parsed<PerfProfile> parse_perf(std::string_view text);
// The same fed a piece at a time (parsers/line_feed.hpp).
using PerfParser = LineParser<PerfProfile>;
extern template class LineParser<PerfProfile>;

// "arm_smmu_atc_inv_domain.constprop.49" -> "arm_smmu_atc_inv_domain" (drops .constprop.N,
// .isra.N, .part.N, .cold, .llvm.N and "+0x.." offsets).
std::string perf_base_symbol(std::string_view sym);

}  // namespace perfgap::parsers
