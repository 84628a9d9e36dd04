// perfgap analyze KIND FILE...: the registry's KIND (tool_outputs/registry) reads the inputs and calls its analyzer.
#include <fmt/format.h>

#include <algorithm>
#include <memory>

#include "tool_outputs/registry.hpp"
#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "report/render.hpp"

namespace perfgap::cli {
namespace {

struct AnalyzeArgs {
  std::string kind;
  std::string format;  // "" = text
  std::string output;
  bool verbose = false;
  tool_outputs::Request request;  // the inputs and every kind's options (tool_outputs/registry.hpp)
};

int run_analyze(const AnalyzeArgs& a) {
  const auto* analyzer = tool_outputs::find(a.kind);
  if (!analyzer) throw UsageError(fmt::format("unknown analyze KIND '{}' (one of: {})", a.kind, tool_outputs::kind_list()));
  const auto format = chosen_format(a.format);
  if (std::find(analyzer->formats.begin(), analyzer->formats.end(), format) == analyzer->formats.end())
    throw UsageError(fmt::format("analyze {} does not render --format {}", a.kind, report::format_name(format)));
  auto result = tool_outputs::run(*analyzer, a.request);
  if (!result) throw UsageError(result.error());
  // An input that could not be used (an `error` finding naming it): the answer covers only part
  // of what was given (a job's rank missing), which a script must notice as it notices a fail.
  const bool unusable = std::any_of(result->findings.begin(), result->findings.end(), [](const report::Finding& f) { return f.status == report::Status::error; });
  const int rc = emit_report("analyze", result->inputs, std::move(result->findings), format, a.output, a.verbose);
  return unusable ? 1 : rc;
}

}  // namespace

CommandRunner add_analyze_command(CLI::App& app) {
  auto args = std::make_shared<AnalyzeArgs>();
  auto& a = *args;
  // The kinds, their inputs and formats: the registry (tool_outputs/registry.cpp).
  auto* cmd = app.add_subcommand("analyze", fmt::format("Turn profiler or benchmark outputs into findings (KIND: {})", tool_outputs::kind_list()));
  std::string kinds_help;
  for (const auto& k : tool_outputs::analyzers()) kinds_help += fmt::format("{}{}: {}", kinds_help.empty() ? "" : "; ", k.kind, k.reads);
  cmd->add_option("kind", a.kind, kinds_help)->required();
  cmd->add_option("files", a.request.files, "Input files (several: each is read; an unusable one becomes an error finding; nccl-inspector: also directories of the plugin's .log files)")->required();
  std::vector<report::Format> formats;
  for (const auto& k : tool_outputs::analyzers())
    for (auto f : k.formats)
      if (std::find(formats.begin(), formats.end(), f) == formats.end()) formats.push_back(f);
  add_format_option(cmd, a.format, formats,
                    "html: one self-contained page with charts; junit: each finding a testcase; prometheus: node_exporter textfile, busbw and the other metrics for graphs");
  cmd->add_option("--output", a.output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a.verbose, "Show all evidence, metrics and passing details");
  cmd->add_option("--rated-mhz", a.request.rated_mhz, "turbostat: the CPU's rated maximum (turbo) MHz for the busy cores")->check(CLI::PositiveNumber);
  cmd->add_option("--reference", a.request.reference, "nccl-tests: a reference run's output; steps: a reference step log, milliseconds per iteration (830, 830ms) as gap's, or a throughput (12samples/s, 3400tokens/s); nsys, kineto: a reference profile")
      ->type_name("FILE|MS");
  cmd->add_option("--iteration-range", a.request.iteration_range, "nsys, kineto: the NVTX/annotation range that is one iteration (default ProfilerStep#N, step-like ranges, else the timeline's period)");
  cmd->add_option("--sizes", a.request.sizes, "nccl-tests: sizes to judge (1M,64M,1G; K/M/G are powers of 1024); default every size >= 1 MiB");
  cmd->add_option("--nics", a.request.nics, "nccl-tests without --reference, nccl-inspector: RDMA NICs per node the job uses (with --link-gbps: the busbw basis across nodes)")->check(CLI::Range(1, 1024));
  cmd->add_option("--link-gbps", a.request.link_gbps, "nccl-tests without --reference, nccl-inspector: each NIC's link rate in Gb/s (400 for NDR)")->check(CLI::Range(1.0, 100000.0));
  cmd->add_option("--node-report", a.request.node_report, "nccl-tests without --reference, nccl-inspector: a perfgap check report (--format json) of a node of the run: its ACTIVE RDMA ports are the busbw basis");
  cmd->add_option("--nodes", a.request.nodes,
                  "nccl-tests: the nodes the run spanned, where its output does not show them (its Rank lines, NCCL INFO nNodes or hostnames, "
                  "a launcher line); a count the output shows exactly wins")
      ->check(CLI::Range(1L, 100000L));
  cmd->add_option("--expect-topo-file", a.request.expect_topo_file, "nccl-log: the NCCL topology file the job should load");
  cmd->add_option("--expect-net", a.request.expect_net, "nccl-log: IB or Socket (IB is assumed when the log shows RDMA devices)")
      ->check(one_of({"IB", "Socket"}));
  cmd->add_flag("--expect-gdr", a.request.expect_gdr, "nccl-log: inter-node channels should use GPUDirect RDMA");
  // Kept for scripts written before --reference took milliseconds.
  cmd->add_option("--reference-ms", a.request.reference_ms, "steps: deprecated spelling of --reference MS")->type_name("MS")->check(CLI::PositiveNumber);
  cmd->add_option("--kb", a.request.kb_dirs, "nsys, kineto: a directory of knowledge-base files (*.yaml) over the built-in one and /etc/perfgap/kb.d, e.g. comm_kernels entries naming more communication kernels; repeatable, the later wins")
      ->allow_extra_args(false);
  cmd->add_option("--kallsyms", a.request.kallsyms, "perf: kernel symbols (a copy of /proc/kallsyms taken as root on the recording node) to name perf.data's kernel addresses");
  cmd->add_option("--warmup", a.request.warmup, "steps: records to drop at the start (default 10% of the run, at least 1)")->check(CLI::NonNegativeNumber);
  return [args] { return run_analyze(*args); };
}

}  // namespace perfgap::cli
