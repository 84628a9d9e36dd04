// perfgap whatif TRACES...: a job's own traces (Kineto or nsys, one per rank) replayed with one
// thing changed at a time, and what each change would save per step (docs/WHATIF.md).
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "tool_outputs/registry.hpp"
#include "analyzers/profile_job.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"

namespace perfgap::cli {
namespace {

// --busbw's range: CLI11's Range lets NaN through (every comparison with it is false), and a
// NaN bandwidth replayed nothing and said nothing. Refused as Range refuses inf, in its words.
CLI::Validator busbw_range(double lo, double hi) {
  return CLI::Validator(
      [lo, hi](std::string& input) {
        double v = 0;
        if (CLI::detail::lexical_cast(input, v) && v >= lo && v <= hi) return std::string();
        return "Value " + input + " not in range " + std::to_string(lo) + " to " + std::to_string(hi);
      },
      fmt::format("FLOAT in [{:g} - {:g}]", lo, hi));
}

struct WhatifArgs {
  std::string kind;  // nsys|kineto; empty: from the inputs
  tool_outputs::Request request;
  analyzers::WhatifOptions options;
  std::string format, output;
  bool verbose = false;
};

int run_whatif(const WhatifArgs& a) {
  const std::string kind = a.kind.empty() ? tool_outputs::profile_kind_of(a.request.files) : a.kind;
  const auto* analyzer = tool_outputs::find(kind);
  if (!analyzer) throw UsageError(fmt::format("whatif: unknown --kind '{}' (kineto or nsys)", kind));
  auto result = tool_outputs::whatif(*analyzer, a.request, a.options);
  if (!result) throw UsageError("whatif: " + result.error());
  // As analyze: an unusable rank (an error finding) leaves the answer partial, exit 1.
  const bool unusable = std::any_of(result->findings.begin(), result->findings.end(), [](const report::Finding& f) { return f.status == report::Status::error; });
  // No change replayed (one rank of a pipeline, a missing rank, no NCCL kernels): the headline
  // says so and why, never OK (the contract's exit status stays 0: it has none for "could not decide").
  const std::string undecided = analyzers::whatif_undecided(result->findings);
  // The changes are listed by what they save, largest first: their order is the answer.
  const int rc = emit_report("whatif", result->inputs, std::move(result->findings), chosen_format(a.format), a.output, a.verbose, true, undecided);
  return unusable ? 1 : rc;
}

}  // namespace

CommandRunner add_whatif_command(CLI::App& app) {
  auto a = std::make_shared<WhatifArgs>();
  auto* cmd = app.add_subcommand("whatif",
                                 "Replay a job's own traces (Kineto or nsys, one per rank) with one thing changed: each late rank, the ranks late "
                                 "together, each node, launches, a bus bandwidth; what each would save per step, largest first");
  cmd->add_option("files", a->request.files,
                  "The job's traces: files, directories, quoted globs, .json.gz, .nsys-rep (as analyze kineto|nsys), or the digests --digest wrote (.pgdigest)")
      ->required();
  cmd->add_option("--kind", a->kind, "kineto or nsys (default: from the inputs' names)")->check(one_of({"kineto", "nsys"}));
  cmd->add_option("--busbw", a->options.busbw_gbps, "Also replay every collective of known size at this bus bandwidth (GB/s, as nccl-tests' busbw)")
      ->check(busbw_range(0.001, 1e6));
  cmd->add_option("--nccl-tests", a->request.nccl_tests,
                  "Also replay every collective of known size at the bus bandwidth a healthy nccl-tests run reached at its size (its output, one "
                  "file per collective, repeatable; COLL=FILE, e.g. all_reduce=run.txt, where the output does not name its collective)")
      ->allow_extra_args(false);
  cmd->add_option("--digest", a->request.digest_dir,
                  "Write each trace's digest (DIR/NAME.pgdigest, ~1/80 of a Kineto trace) instead of replaying: run it where the traces are (on every "
                  "node, e.g. srun --ntasks-per-node=1) and whatif over the digests gives the same answers without moving the traces")
      ->type_name("DIR");
  cmd->add_option("--iteration-range", a->request.iteration_range, "The NVTX/annotation range that is one iteration (as analyze kineto|nsys)");
  cmd->add_option("--kb", a->request.kb_dirs, "A directory of knowledge-base files naming more communication kernels (as analyze kineto|nsys); repeatable")
      ->allow_extra_args(false);
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit: each change a testcase; prometheus: the savings for graphs");
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_whatif(*a); };
}

}  // namespace perfgap::cli
