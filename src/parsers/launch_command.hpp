// The launcher command line a benchmark's output quotes ("mpirun -n 256 -npernode 16 ...
// all_reduce_perf -b 8 -e 1G -g 1", "srun -N 2 --ntasks-per-node=8 ... all_gather_perf", with a
// shell prompt or a mail quote before it and '\' continuation lines): how many processes it
// started, on how many nodes, and the GPUs each drives (nccl-tests' -g and -t), as far as the
// options say it exactly. Only a line that starts a known launcher (mpirun, mpiexec, orterun,
// prterun, srun) and names an nccl-tests binary (`*_perf`, `*_perf_mpi`) counts: the options
// before the binary are the launcher's, those after it the benchmark's.
#pragma once

#include <optional>
#include <span>
#include <string>
#include <string_view>

namespace perfgap::parsers {

struct LaunchCommand {
  std::string launcher;           // "mpirun", "srun", ...
  std::optional<long> processes;  // -n/-np (mpirun), -n/--ntasks (srun)
  std::optional<long> per_node;   // -npernode/-N/--map-by ppr:N:node/-ppn (mpirun), --ntasks-per-node (srun)
  std::optional<long> nodes;      // -N/--nodes N (srun; a range "2-4" is not a count)
  long gpus = 1, threads = 1;     // the benchmark's -g and -t (nccl-tests: GPUs per thread, threads per process)
  std::string said;               // the options that told it, as written: "-n 256 -npernode 16 ... -g 1"
  int line = 0;                   // where the command starts

  // Processes x threads x GPUs where the processes are known (or nodes x per node).
  std::optional<long> ranks() const;
  // The nodes given, or the processes over the processes per node where that divides.
  std::optional<long> node_count() const;
};

// Reads lines one at a time (their cells, launcher prefixes gone) and keeps the last launcher
// command that names a benchmark binary; two commands that disagree leave none (which one ran
// the table is not said).
class LaunchCommandReader {
 public:
  // True when the line was (part of) a launcher command (the caller may read it for more).
  bool line(std::span<const std::string_view> cells, int lineno);
  // At the end of the input: a command still open (its last line ended in '\\') ends there.
  void end();
  const std::optional<LaunchCommand>& command() const { return done_; }
  bool conflicting() const { return conflict_; }

 private:
  void launch_cells(std::span<const std::string_view> cells);
  void finish_command();
  std::optional<LaunchCommand> open_;  // a command whose line ended in '\'
  bool after_binary_ = false;          // the benchmark binary was seen: its options follow
  std::string pending_;                // an option waiting for its value on the next cell
  std::optional<LaunchCommand> done_;
  bool conflict_ = false;
  bool saw_binary_ = false;
};

}  // namespace perfgap::parsers
