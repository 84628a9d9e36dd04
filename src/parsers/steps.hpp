// Per-step figures from training logs, one record per step line, in file order. A table of
// recognisers, tried on each line in a fixed order (step_layouts()); the first that claims
// a line owns it, so a generic layout (CSV, throughput) never takes a line that a specific
// one reads. The layout with the most records wins (ties: the earlier one):
//
//   megatron    Megatron-LM/NeMo 1 "iteration N/M | ... | elapsed time per iteration (ms): X |"
//               ("number of skipped iterations: K" > 0 marks the record skipped)
//   nemo        NeMo 2 / Lightning "train_step_timing in s: X" and the progress-bar form
//               "train_step_timing in s=X" (seconds), any prefix ("(pretraining, pid=N)", "0:")
//   nanochat    "step 00010/01000 | ... | dt: 989.44ms | ..." (ms or s)
//   hf_dict     Hugging Face Trainer python-dict lines: 'train_step_runtime', 'step_time' or a
//               per-step 'train_runtime' (seconds); the end-of-run summary is not a step
//   torchtitan  "<date> <time>,mmm ... step: N  loss: ... tps: ...": the step time is the time
//               between consecutive step lines' timestamps over the steps between them
//   jsonl       JSON lines with step_time_ms, iteration_time_ms, time_ms, step_time_s, time_s
//   csv         CSV with a header naming one of those columns
//   throughput  throughput only: "X samples/sec", "X tokens/s", "tps: X", "tok/sec: X",
//               "CurrSamplesPerSec=X", ... (higher is better)
//
// Lines are split at '\r' too (progress bars redraw in place) and ANSI colour codes dropped.
#pragma once

#include <memory>
#include <optional>
#include <string>
#include <string_view>
#include <vector>

#include "parsers/line_feed.hpp"
#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

enum class StepLayout { megatron, nemo, nanochat, hf_dict, torchtitan, jsonl, csv, throughput };

// The recognisers in the order they are tried.
const std::vector<StepLayout>& step_layouts();
const char* step_layout_name(StepLayout l);

struct StepRecord {
  double value = 0;     // milliseconds per step, or the throughput (StepLog::throughput)
  long iteration = -1;  // when the log says
  int line = 0;
  bool skipped = false;  // Megatron: a skipped iteration (loss-scale overflow: no optimizer step)
  // The job's global batch size and the samples consumed so far, where the line says them
  // (Megatron "global batch size:", "consumed samples:"; NeMo "global_batch_size:",
  // "consumed_samples:"); -1 where it does not. Logs of different batch sizes are other jobs.
  double global_batch = -1;
  double consumed_samples = -1;
};

struct StepLog {
  StepLayout layout = StepLayout::megatron;
  std::string field;        // what was read ("elapsed time per iteration (ms)", "step_time_ms", "samples/sec")
  bool throughput = false;  // records are a throughput (higher is better), not a time per step
  std::string unit = "ms";  // "ms", or the throughput's: "samples/s", "tokens/s"
  std::vector<StepRecord> records;
  std::vector<ParseError> damaged;  // records that could not be read
};

// Error when no step record is found.
Parsed<StepLog> parse_steps(std::string_view text);
// The same fed a piece at a time (parsers/line_feed.hpp).
using StepsParser = LineParser<StepLog>;
extern template class LineParser<StepLog>;

// One recogniser alone over the text (for tests of the table): what it read, and how many
// lines it claimed (records, damaged lines and lines it only took note of, such as a CSV
// header or a torchtitan step without a predecessor).
struct StepClaims {
  StepLog log;
  int claimed_lines = 0;
};
StepClaims parse_steps_as(std::string_view text, StepLayout layout);

// For each line of the text (index = line - 1), the layout that claimed it in parse_steps,
// or nullopt.
std::vector<std::optional<StepLayout>> step_line_owners(std::string_view text);

// A throughput figure spelled as the logs spell one after its number ("12samples/s", "12 tokens/sec",
// "12 tok/s"): the number and its unit ("samples/s" or "tokens/s"); nullopt for anything else.
std::optional<std::pair<double, std::string>> throughput_figure(std::string_view text);

// steps.gap's evidence line naming a throughput's unit ("samples/s", "tokens/s"), as fleet and
// compare read it: figures of different units are not one scale.
inline constexpr std::string_view kThroughputUnitEvidence = "throughput unit";

// steps.gap's evidence line saying why its median rests on start-up records only (a single
// first step, or skipped iterations only: StepStats::startup_only), as fleet reads it: such a
// log is no steady state and sets no node's pace.
inline constexpr std::string_view kStartupOnlyEvidence = "start-up only";

}  // namespace perfgap::parsers
