// `perfgap sweep`: run a benchmark once per setting of a grid of environment variables,
// several times, interleaved, and recommend a setting only when it beats the baseline beyond
// run-to-run noise. This header holds the pure parts (grid, environment, launcher arguments,
// judging one run, statistics, findings); process.hpp runs the benchmark, manifest.hpp keeps
// the run directory's record. docs/SWEEP.md explains the rules.
#pragma once

#include <cstdint>
#include <map>
#include <optional>
#include <string>
#include <string_view>
#include <utility>
#include <vector>

#include <tl/expected.hpp>

#include "report/model.hpp"

namespace perfgap::sweep {

// The value that removes the variable from the benchmark's environment.
inline constexpr std::string_view kUnset = "unset";

// One `--env NAME=v1,v2,...` (`\,` is a comma inside a value): the first value is the baseline.
struct Axis {
  std::string name;
  std::vector<std::string> values;
};

// "NAME=v1,v2,..." -> Axis; the error says what is wrong with the spec.
tl::expected<Axis, std::string> parse_axis(std::string_view spec);
// Every --env given; a name given twice is an error.
tl::expected<std::vector<Axis>, std::string> parse_axes(const std::vector<std::string>& specs);

// One point of the grid: a value (or kUnset) per axis, in the order of the --env options.
struct Setting {
  std::vector<std::pair<std::string, std::string>> values;

  std::string label() const;      // "NAME=v", or "A=1 B=x" for a grid
  std::string file_part() const;  // the label made safe for a file name
  report::StringMap as_map() const;
};

// The grid, baseline first (every axis at its first value); the first axis varies slowest.
std::vector<Setting> expand_grid(const std::vector<Axis>& axes);

// Runs in order: repeat after repeat, every setting once per repeat (A B C A B C ...), so
// that drift over time hits every setting alike.
struct PlannedRun {
  std::size_t setting = 0;
  int repeat = 0;  // 1-based
};
std::vector<PlannedRun> plan_runs(std::size_t settings, int repeat);

// `base` ("NAME=value" entries) with the setting applied: each swept variable replaced, or
// removed when its value is kUnset.
std::vector<std::string> build_environment(const std::vector<std::string>& base, const Setting& s);

// How the benchmark is launched, from its first word. Open MPI's mpirun/mpiexec only export
// to remote ranks what `-x NAME` names; srun and MPICH's Hydra pass the whole environment.
enum class Launcher { direct, open_mpi };
// `resolved` is the launcher's real path (links followed) where known, `version_text` the
// output of `LAUNCHER --version` where it was asked (empty otherwise).
bool is_mpi_launcher_name(std::string_view argv0);
Launcher classify_launcher(std::string_view argv0, std::string_view resolved, std::string_view version_text);
// The command as run for this setting: with Open MPI, `-x NAME` after the launcher for each
// swept variable the setting sets (an unset one is not exported) and the command does not
// already export.
std::vector<std::string> launch_argv(const std::vector<std::string>& command, const Setting& s, Launcher l);

// Where the output has NCCL's "NAME set by environment to VALUE" lines for a swept variable,
// the value must be the setting's (numbers compare as numbers; an unset variable must not
// appear). Returns what did not match, or nullopt.
std::optional<std::string> env_echo_mismatch(std::string_view output, const Setting& s);

// How the benchmark process ended (process.cpp fills it; judge_run reads it).
struct ProcessResult {
  std::string spawn_error;        // non-empty: it never started
  std::optional<int> exit_code;   // exited normally
  std::optional<int> signal;      // killed by a signal (ours after a timeout, or its own crash)
  bool timed_out = false;
  bool interrupted = false;       // perfgap was interrupted (SIGINT/SIGTERM) while it ran
  double duration_s = 0;
  std::uint64_t output_bytes = 0;  // everything it wrote
  bool truncated = false;          // the middle of the output was dropped (size bound)
};

// One finished run, judged: ok with out-of-place busbw (GB/s) per message size, or failed
// with the reason.
struct RunOutcome {
  bool ok = false;
  std::string problem;                    // why it failed; empty when ok
  std::map<std::uint64_t, double> busbw;  // size (bytes) -> out-of-place busbw
  std::size_t unreadable_rows = 0;
  std::string file;                       // its raw output in the run directory
};

// A crash, a timeout, a non-zero exit, empty output, no readable nccl-tests table, #wrong
// > 0, or a setting that did not reach the ranks fail the run. The out-of-place busbw is
// used (in-place is a second measurement of the same thing; out-of-place is what nccl-tests
// reports first and what frameworks mostly do); the last row of a size wins.
RunOutcome judge_run(const ProcessResult& p, std::string_view output, const Setting& s, double timeout_s);

// ---- statistics (pure) -----------------------------------------------------------------

struct SizeStats {
  double median = 0, min = 0, max = 0;
  std::size_t n = 0;
};
std::map<std::uint64_t, SizeStats> size_stats(const std::vector<RunOutcome>& runs);

// Every finished run of one setting (failed ones included).
struct SettingRuns {
  Setting setting;
  std::vector<RunOutcome> runs;
};

struct CandidateVerdict {
  std::size_t setting = 0;
  bool judged = false;        // enough data to compare with the baseline
  bool significant = false;   // beats the baseline beyond noise
  bool has_gain = false;      // it measured every size compared
  double gain_pct = 0;        // on medians, over the sizes compared
  std::string why;            // one line: the evidence for the verdict
};

struct Decision {
  enum class Kind { winner, no_difference, cannot_judge };
  Kind kind = Kind::cannot_judge;
  std::vector<std::uint64_t> sizes;          // the sizes that matter, compared
  std::vector<std::uint64_t> sizes_missing;  // --sizes the baseline never measured
  std::optional<std::size_t> winner;
  double gain_pct = 0;
  bool noise_unjudged = false;  // too few repeats to judge run-to-run noise
  std::vector<CandidateVerdict> candidates;
  std::string reason;           // cannot_judge: why
};

// data[0] is the baseline. wanted_sizes: --sizes (empty: every size >= 1 MiB the baseline
// measured). A candidate wins when, over the sizes that matter, the score of each of its
// runs (mean over the sizes of busbw / the baseline's median busbw) is above the score of
// every baseline run, with at least two complete runs on each side, and it is not slower
// beyond noise at any single size (all its runs below all baseline runs there). The winner
// is the one with the largest gain on medians.
Decision decide(const std::vector<SettingRuns>& data, const std::vector<std::uint64_t>& wanted_sizes);

// sweep.result per setting and sweep.recommendation, plus the report's recommendation.
// `not_run` settings (an interrupted sweep) get a skip result. `interrupted` names what
// stopped the sweep, for the titles.
struct SweepFindings {
  std::vector<report::Finding> findings;
  std::optional<report::Recommendation> recommendation;
};
SweepFindings make_findings(const std::vector<SettingRuns>& data, const Decision& d, const std::string& run_dir,
                            const std::string& interrupted = {});

// The text report: a line naming the sweep, one table (rows: settings; columns: the sizes
// that matter, median busbw with min-max), the recommendation, then what failed.
struct TextContext {
  std::string command;  // as the user gave it, for the header
  std::string run_dir;
  bool verbose = false;
  bool color = false;
};
std::string render_text(const report::Report& rep, const std::vector<SettingRuns>& data, const Decision& d, const TextContext& ctx);

// For the HTML report: busbw against message size, one line per setting (its median over the
// runs) in a band from the slowest to the fastest run.
report::Chart busbw_chart(const std::vector<SettingRuns>& data);

}  // namespace perfgap::sweep
