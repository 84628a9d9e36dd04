// The nccl-tests text output (the layout of nccl-tests' src/util.cu: run header, "Using
// devices" rank lines, two-line column header, one row per size with out-of-place and in-place
// figures, footer), so that `perfgap analyze nccl-tests` and `perfgap sweep` read
// perfgap-collbench's output exactly as they read nccl-tests'. Header-only: pure formatting.
#pragma once

#include <cmath>
#include <cstdint>
#include <cstdio>
#include <optional>
#include <string>
#include <string_view>

#include "collbench/collectives.hpp"
#include "collbench/options.hpp"

namespace perfgap::collbench {

// nccl-tests' getFloatStr: two decimals while they fit in `width`, then one, then none, then
// an exponent, so the columns stay aligned for any magnitude.
inline std::string format_figure(double value, int width) {
  int power = 0;
  for (std::uint64_t v = 1; value >= static_cast<double>(v) && power < 20; v *= 10) power++;
  char buf[64];
  if (!std::isfinite(value)) std::snprintf(buf, sizeof buf, "%*s", width, "nan");
  else if (power < width - 2) std::snprintf(buf, sizeof buf, "%*.2f", width, value);
  else if (power < width - 1) std::snprintf(buf, sizeof buf, "%*.1f", width, value);
  else if (power < width + 1) std::snprintf(buf, sizeof buf, "%*.0f", width, value);
  else std::snprintf(buf, sizeof buf, "%*.1e", width, value);
  return buf;
}

// "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 ..."
inline std::string run_header_line(const Options& o, int gpus_per_process) {
  char buf[512];
  bool factor = o.step_factor > 1;
  std::snprintf(buf, sizeof buf,
                "# nThread 1 nGpus %d minBytes %llu maxBytes %llu step: %llu(%s) warmup iters: %d iters: %d agg iters: 1 "
                "validation: %d graph: 0\n",
                gpus_per_process, static_cast<unsigned long long>(o.min_bytes), static_cast<unsigned long long>(o.max_bytes),
                static_cast<unsigned long long>(factor ? o.step_factor : o.step_bytes), factor ? "factor" : "bytes", o.warmup,
                o.iters, o.check);
  return buf;
}

// The nccl-tests program name for this collective ("all_reduce_perf"): analyzers key on it.
inline std::string program_name(Collective c) { return std::string(name(c)) + "_perf"; }

// "#  Rank  0 Group  0 Pid  12345 on     host01 device  0 [0000:19:00] NVIDIA H100 80GB HBM3"
inline std::string rank_line(int rank, long pid, std::string_view host, int device, std::string_view where,
                             std::string_view what) {
  char buf[1024];
  std::snprintf(buf, sizeof buf, "#  Rank %2d Group  0 Pid %6ld on %10.*s device %2d [%.*s] %.*s\n", rank, pid,
                static_cast<int>(host.size()), host.data(), device, static_cast<int>(where.size()), where.data(),
                static_cast<int>(what.size()), what.data());
  return buf;
}

inline std::string table_header() {
  char buf[1024];
  int n = std::snprintf(buf, sizeof buf, "#\n# %10s  %12s  %8s  %6s  %6s           out-of-place                       in-place          \n", "", "",
                        "", "", "");
  n += std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "size",
                     "count", "type", "redop", "root", "time", "algbw", "busbw", "#wrong", "time", "algbw", "busbw", "#wrong");
  std::snprintf(buf + n, sizeof buf - static_cast<std::size_t>(n), "# %10s  %12s  %8s  %6s  %6s  %7s  %6s  %6s  %6s  %7s  %6s  %6s  %6s\n", "(B)",
                "(elements)", "", "", "", "(us)", "(GB/s)", "(GB/s)", "", "(us)", "(GB/s)", "(GB/s)", "");
  return buf;
}

// One timed variant of one size: the slowest rank's mean time per iteration, and the number
// of wrong elements summed over ranks (nullopt: not checked).
struct Timing {
  double seconds = 0;
  std::optional<std::uint64_t> wrong;
};

struct Figures {
  double time_us = 0, algbw = 0, busbw = 0;
};

// algbw = bytes / time (GB/s, 1e9), busbw = algbw x the collective's factor.
inline Figures figures(Collective c, const Shape& s, int ranks, double seconds) {
  Figures f;
  f.time_us = seconds * 1e6;
  f.algbw = seconds > 0 ? static_cast<double>(s.bytes()) / 1e9 / seconds : 0;
  f.busbw = f.algbw * bus_factor(c, ranks);
  return f;
}

// Formats the rows and keeps what the footer needs (nccl-tests averages busbw over every
// out-of-place and in-place figure, and sums wrong elements into "Out of bounds values").
class TableWriter {
 public:
  TableWriter(Collective c, int ranks) : c_(c), ranks_(ranks) {}

  std::string row(const Shape& s, const Timing& out_of_place, const Timing& in_place) {
    char buf[512];
    int n = std::snprintf(buf, sizeof buf, "%12llu  %12llu  %8s  %6.*s  %6i", static_cast<unsigned long long>(s.bytes()),
                          static_cast<unsigned long long>(s.per_rank), "float", static_cast<int>(redop(c_).size()), redop(c_).data(), -1);
    std::string line(buf, static_cast<std::size_t>(n));
    for (const Timing* t : {&out_of_place, &in_place}) {
      Figures f = figures(c_, s, ranks_, t->seconds);
      busbw_sum_ += f.busbw;
      ++busbw_count_;
      std::string wrong = "N/A";
      if (t->wrong) {
        wrong_ += *t->wrong;
        wrong = std::to_string(*t->wrong);
      }
      std::snprintf(buf, sizeof buf, "  %7s  %6s  %6s  %6s", format_figure(f.time_us, 7).c_str(), format_figure(f.algbw, 6).c_str(),
                    format_figure(f.busbw, 6).c_str(), wrong.c_str());
      line += buf;
    }
    return line + "\n";
  }

  std::string footer() const {
    char buf[512];
    double avg = busbw_count_ ? busbw_sum_ / static_cast<double>(busbw_count_) : 0;
    std::snprintf(buf, sizeof buf, "# %-20s : %llu %s\n# %-20s : %g \n#\n# Collective test concluded: %s\n", "Out of bounds values",
                  static_cast<unsigned long long>(wrong_), wrong_ ? "FAILED" : "OK", "Avg bus bandwidth", avg, program_name(c_).c_str());
    return buf;
  }

  std::uint64_t wrong() const { return wrong_; }

 private:
  Collective c_;
  int ranks_;
  double busbw_sum_ = 0;
  std::size_t busbw_count_ = 0;
  std::uint64_t wrong_ = 0;
};

}  // namespace perfgap::collbench
