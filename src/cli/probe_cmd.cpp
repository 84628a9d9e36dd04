// perfgap probe --cpu --memory --gpu: opt-in active measurements of this machine (docs/PROBE.md).
// Each probe runs bounded work and writes nothing to the system; its judge (probe/judge.cpp)
// turns the figures into probe.* findings (probe/run.cpp), reported like `analyze`'s.
#include <fmt/format.h>

#include <cmath>
#include <memory>

#include "cli/commands.hpp"
#include "cli/errors.hpp"
#include "cli/format_option.hpp"
#include "cli/output.hpp"
#include "core/node.hpp"
#include "facts/facts.hpp"
#include "probe/probe.hpp"
#include "sys/output.hpp"
#include "sys/sysroot.hpp"

namespace perfgap::cli {
namespace {

struct ProbeArgs {
  bool cpu = false, memory = false, gpu = false;
  double seconds = 1.5;
  std::optional<double> rated_mhz;
  std::string root;
  std::string format, output;
  bool verbose = false;
};

int run_probe(const ProbeArgs& a) {
  if (!a.root.empty())
    throw UsageError(fmt::format("probe: --root {}: probes measure the live machine, not a tree (check --root reads a tree)", a.root));
  if (!a.cpu && !a.memory && !a.gpu) throw UsageError("probe: say what to measure: --cpu, --memory, --gpu (one or more)");
  // CLI11's range check lets NaN through.
  if (!(a.seconds >= 0.1 && a.seconds <= 10)) throw UsageError("probe: --seconds-per-probe takes 0.1 to 10 seconds");
  if (a.rated_mhz && !(*a.rated_mhz >= 1 && *a.rated_mhz <= 100000)) throw UsageError("probe: --rated-mhz takes 1 to 100000 MHz");
  if (a.rated_mhz && !a.cpu) throw UsageError("probe: --rated-mhz is for --cpu");
  // Checked before anything runs: a bad --output must not cost the probes' time.
  if (auto w = sys::check_output(a.output); !w) throw UsageError(w.error());
  probe::ProbeRequest request;
  request.cpu = a.cpu;
  request.memory = a.memory;
  request.gpu = a.gpu;
  request.per_probe = std::chrono::milliseconds(static_cast<long long>(std::llround(a.seconds * 1000)));
  request.rated_mhz = a.rated_mhz;
  auto findings = probe::run_probes(request);
  // The machine measured, named as check names it, so that fleet --expect and expect learn join
  // the figures to the node's check report (docs/EXPECT.md).
  facts::Facts live(sys::Sysroot::live(), facts::Options{});
  return emit_report("probe", {}, std::move(findings), chosen_format(a.format), a.output, a.verbose, false, {}, core::describe_node(live));
}

}  // namespace

CommandRunner add_probe_command(CLI::App& app) {
  auto a = std::make_shared<ProbeArgs>();
  auto* cmd = app.add_subcommand("probe", "Measure this machine actively (opt-in, bounded, read-only; never part of check): --cpu busy MHz under load, --memory NUMA bandwidth matrix, --gpu host<->GPU copies and launch latency");
  cmd->add_flag("--cpu", a->cpu, "All-core busy MHz under a short load vs the rated turbo (probe.cpu_busy_mhz)");
  cmd->add_flag("--memory", a->memory, "Triad bandwidth for every (CPU node, memory node) pair (probe.memory_bw)");
  cmd->add_flag("--gpu", a->gpu, "H2D/D2H GB/s per GPU from each NUMA node and launch latency, through perfgap-gpu --probe (probe.h2d, probe.launch_latency)");
  cmd->add_option("--seconds-per-probe", a->seconds, "How long each CPU load and each NUMA pair runs (0.1-10, default 1.5)")->check(CLI::Range(0.1, 10.0));
  cmd->add_option("--rated-mhz", a->rated_mhz, "--cpu: the processor's rated all-core turbo MHz (its specification) to judge against")
      ->check(CLI::Range(1.0, 100000.0));
  cmd->add_option("--root", a->root, "Not accepted: probes measure the live machine (exit 2)");
  using report::Format;
  add_format_option(cmd, a->format, {Format::text, Format::json, Format::html, Format::junit, Format::prometheus},
                    "html: one self-contained page; junit: each probe finding a testcase (a new node's acceptance)");
  cmd->add_option("--output", a->output, "Write the report to FILE instead of stdout (a file atomically; - is stdout; a FIFO or device directly)");
  cmd->add_flag("-v,--verbose", a->verbose, "Show all evidence, metrics and passing details");
  return [a] { return run_probe(*a); };
}

}  // namespace perfgap::cli
