// perfgap-collbench's command line: the collective, then nccl-tests' flags (-b -e -i -f -n -w
// -c -g, short or long, "-b 8", "-b8", "--minbytes=8") and --backend. Pure: argv in, Options or
// a one-line error out. Header-only so that perfgap_tests and the fuzz target can use it.
#pragma once

#include <cstdint>
#include <limits>
#include <optional>
#include <span>
#include <string>
#include <string_view>
#include <vector>

#include <tl/expected.hpp>

#include "collbench/collectives.hpp"

namespace perfgap::collbench {

// auto: NCCL when GPUs are asked for (-g), else MPI. Never a silent switch between them: a
// figure measured on CPUs must not pass for a GPU figure or the other way round.
enum class BackendChoice { automatic, mpi, nccl };

struct Options {
  Collective collective = Collective::all_reduce;
  std::uint64_t min_bytes = 32ull << 20, max_bytes = 32ull << 20;  // nccl-tests' defaults
  std::uint64_t step_bytes = 1ull << 20, step_factor = 1;           // factor > 1 wins over bytes
  int iters = 20, warmup = 5, check = 1;
  int gpus = 0;  // -g; 0 when not given
  BackendChoice backend = BackendChoice::automatic;
  bool help = false, version = false;
};

inline constexpr std::size_t kMaxSizes = 10000;  // a typo like "-i 1" must not run for days

// nccl-tests' size syntax: bytes with an optional K, M or G suffix (powers of 1024).
inline std::optional<std::uint64_t> parse_bytes(std::string_view s) {
  if (s.empty()) return std::nullopt;
  std::uint64_t mult = 1;
  switch (s.back()) {
    case 'K': case 'k': mult = 1ull << 10; break;
    case 'M': case 'm': mult = 1ull << 20; break;
    case 'G': case 'g': mult = 1ull << 30; break;
    default: break;
  }
  if (mult != 1) s.remove_suffix(1);
  if (s.empty()) return std::nullopt;
  std::uint64_t v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    auto digit = static_cast<std::uint64_t>(c - '0');
    if (v > (std::numeric_limits<std::uint64_t>::max() - digit) / 10) return std::nullopt;
    v = v * 10 + digit;
  }
  if (v > std::numeric_limits<std::uint64_t>::max() / mult) return std::nullopt;
  return v * mult;
}

inline std::optional<int> parse_count(std::string_view s, int min) {
  if (s.empty() || s.size() > 9) return std::nullopt;
  int v = 0;
  for (char c : s) {
    if (c < '0' || c > '9') return std::nullopt;
    v = v * 10 + (c - '0');
  }
  if (v < min) return std::nullopt;
  return v;
}

// The sizes of the run, in order, as nccl-tests steps them (before per-collective rounding).
inline std::vector<std::uint64_t> size_steps(const Options& o) {
  std::vector<std::uint64_t> out;
  for (std::uint64_t size = o.min_bytes; size <= o.max_bytes && out.size() <= kMaxSizes;) {
    out.push_back(size);
    std::uint64_t next = o.step_factor > 1 ? size * o.step_factor : size + o.step_bytes;
    if (next <= size || (o.step_factor > 1 && next / o.step_factor != size)) break;  // overflow or no progress
    size = next;
  }
  return out;
}

inline std::string usage() {
  return "usage: perfgap-collbench COLLECTIVE [-b MIN] [-e MAX] [-f FACTOR | -i STEP] [-n ITERS] [-w WARMUP]\n"
         "                         [-c CHECK] [-g GPUS] [--backend auto|mpi|nccl]\n"
         "Times a collective over a range of message sizes and prints the nccl-tests table.\n"
         "  COLLECTIVE        all_reduce, all_gather, reduce_scatter or alltoall (float, sum)\n"
         "  -b, --minbytes    smallest size (bytes, K/M/G suffixes in powers of 1024; default 32M)\n"
         "  -e, --maxbytes    largest size (default 32M)\n"
         "  -f, --stepfactor  multiply the size by this factor between rows\n"
         "  -i, --stepbytes   or add this many bytes between rows (default 1M, when no -f)\n"
         "  -n, --iters       timed iterations per size (default 20)\n"
         "  -w, --warmup_iters  untimed iterations before them (default 5)\n"
         "  -c, --check       1: check every result element (#wrong), 0: do not (N/A)\n"
         "  -g, --ngpus       GPUs driven by this process (NCCL backend)\n"
         "  --backend B       mpi: one rank per process on CPUs (run under mpirun or srun --mpi=pmix);\n"
         "                    nccl: one process driving -g GPUs, libraries loaded at run time;\n"
         "                    auto (default): nccl when -g is given, else mpi\n"
         "Exit status: 0 ran, 1 wrong results, 2 bad arguments or backend unavailable.\n";
}

// argv without the program name.
inline tl::expected<Options, std::string> parse_options(std::span<const std::string_view> args) {
  using Err = tl::unexpected<std::string>;
  Options o;
  bool have_collective = false, have_factor = false, have_step = false;
  auto quote = [](std::string_view s) { return "'" + std::string(s) + "'"; };
  for (std::size_t i = 0; i < args.size(); ++i) {
    std::string_view a = args[i];
    if (a == "-h" || a == "--help") {
      o.help = true;
      return o;
    }
    if (a == "--version") {
      o.version = true;
      return o;
    }
    if (a.empty() || a[0] != '-' || a == "-") {
      if (have_collective) return Err("unexpected argument " + quote(a) + " (one collective per run)");
      auto c = collective_named(a);
      if (!c) return Err("unknown collective " + quote(a) + " (all_reduce, all_gather, reduce_scatter, alltoall)");
      o.collective = *c;
      have_collective = true;
      continue;
    }
    // Split "-b8", "--minbytes=8" and "-b 8" into flag and value.
    std::string flag;
    std::optional<std::string_view> value;
    if (a.starts_with("--")) {
      auto eq = a.find('=');
      flag = std::string(a.substr(0, eq));
      if (eq != std::string_view::npos) value = a.substr(eq + 1);
    } else {
      flag = std::string(a.substr(0, 2));
      if (a.size() > 2) value = a.substr(2);
    }
    static constexpr std::string_view kLong[][2] = {
        {"--minbytes", "-b"}, {"--maxbytes", "-e"}, {"--stepfactor", "-f"}, {"--stepbytes", "-i"},
        {"--iters", "-n"},    {"--warmup_iters", "-w"}, {"--check", "-c"}, {"--ngpus", "-g"}, {"--backend", "--backend"}};
    std::string key;
    for (const auto& [l, s] : kLong)
      if (flag == l || flag == s) key = std::string(s);
    if (key.empty()) {
      static constexpr std::string_view kUnsupported = "-t-d-o-r-m-p-z-G-a-C-T-J-R-M-u-x-N-D-I-S-y-s-P-j-L";
      if (flag.size() == 2 && kUnsupported.find(flag) != std::string_view::npos)
        return Err("nccl-tests option " + flag + " is not supported (float sum, one thread, no CUDA graphs)");
      return Err("unknown option " + quote(a));
    }
    if (!value) {
      if (i + 1 >= args.size()) return Err("option " + flag + " needs a value");
      value = args[++i];
    }
    auto bad = [&](std::string_view what) { return Err("bad value " + quote(*value) + " for " + flag + " (" + std::string(what) + ")"); };
    if (key == "-b" || key == "-e" || key == "-i") {
      auto v = parse_bytes(*value);
      if (!v) return bad("bytes with an optional K, M or G suffix");
      (key == "-b" ? o.min_bytes : key == "-e" ? o.max_bytes : o.step_bytes) = *v;
      if (key == "-i") {
        if (*v == 0) return bad("a step of at least 1 byte");
        have_step = true;
      }
    } else if (key == "-f") {
      auto v = parse_count(*value, 1);
      if (!v) return bad("an integer factor of at least 1");
      o.step_factor = static_cast<std::uint64_t>(*v);
      have_factor = true;
    } else if (key == "-n") {
      auto v = parse_count(*value, 1);
      if (!v) return bad("at least 1 iteration");
      o.iters = *v;
    } else if (key == "-w") {
      auto v = parse_count(*value, 0);
      if (!v) return bad("0 or more iterations");
      o.warmup = *v;
    } else if (key == "-c") {
      auto v = parse_count(*value, 0);
      if (!v || *v > 1) return bad("0 or 1");
      o.check = *v;
    } else if (key == "-g") {
      auto v = parse_count(*value, 1);
      if (!v) return bad("at least 1 GPU");
      o.gpus = *v;
    } else {  // --backend
      if (*value == "auto") o.backend = BackendChoice::automatic;
      else if (*value == "mpi") o.backend = BackendChoice::mpi;
      else if (*value == "nccl") o.backend = BackendChoice::nccl;
      else return bad("auto, mpi or nccl");
    }
  }
  if (!have_collective) return Err("no collective given (all_reduce, all_gather, reduce_scatter, alltoall)");
  if (have_factor && have_step && o.step_factor > 1) return Err("-f and -i both given: step by a factor or by bytes, not both");
  if (o.min_bytes > o.max_bytes) return Err("-b " + std::to_string(o.min_bytes) + " is larger than -e " + std::to_string(o.max_bytes));
  if (o.step_factor > 1 && o.min_bytes == 0) return Err("-b 0 with -f: a size of 0 never grows");
  if (o.gpus > 0 && o.backend == BackendChoice::mpi) return Err("-g needs the NCCL backend (the MPI backend runs one rank per process on CPUs)");
  if (size_steps(o).size() > kMaxSizes) return Err("more than " + std::to_string(kMaxSizes) + " sizes between -b and -e: use a larger -i or -f");
  return o;
}

}  // namespace perfgap::collbench
