// Per-iteration step times from training logs: Megatron-LM/NeMo lines ("iteration N/...
// | elapsed time per iteration (ms): X | ..."), CSV with a header naming a step-time column,
// or JSON lines with one of step_time_ms, iteration_time_ms, time_ms (milliseconds) or
// step_time_s, time_s (seconds). One record per log line, in file order.
#pragma once

#include <string>
#include <string_view>
#include <vector>

#include "parsers/parse_error.hpp"

namespace perfgap::parsers {

struct StepRecord {
  double ms = 0;
  long iteration = -1;  // when the log says
  int line = 0;
};

struct StepLog {
  enum class Layout { megatron, csv, jsonl } layout = Layout::megatron;
  std::string field;  // the column/key read ("elapsed time per iteration (ms)", "step_time_ms", ...)
  std::vector<StepRecord> records;
  std::vector<ParseError> damaged;  // records that could not be read
};

// Error when no step-time record is found.
Parsed<StepLog> parse_steps(std::string_view text);

}  // namespace perfgap::parsers
