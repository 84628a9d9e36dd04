#include "tool_outputs/registry.hpp"

#include <fmt/format.h>

#include <algorithm>

#include "tool_outputs/kinds.hpp"

namespace perfgap::tool_outputs {
namespace {

using report::Format;
const std::vector<Format> kEveryFormat(std::begin(report::kFormats), std::end(report::kFormats));

// The kind-specific options, each with how a request shows it was given.
struct OptionUse {
  std::string_view name;
  bool (*given)(const Request&);
};
const OptionUse kOptionUses[] = {
    {"--rated-mhz", [](const Request& r) { return r.rated_mhz.has_value(); }},
    {"--reference", [](const Request& r) { return !r.reference.empty(); }},
    {"--iteration-range", [](const Request& r) { return !r.iteration_range.empty(); }},
    {"--sizes", [](const Request& r) { return !r.sizes.empty(); }},
    {"--nics", [](const Request& r) { return r.nics.has_value(); }},
    {"--link-gbps", [](const Request& r) { return r.link_gbps.has_value(); }},
    {"--node-report", [](const Request& r) { return !r.node_report.empty(); }},
    {"--nodes", [](const Request& r) { return r.nodes.has_value(); }},
    {"--expect-topo-file", [](const Request& r) { return r.expect_topo_file.has_value(); }},
    {"--expect-net", [](const Request& r) { return !r.expect_net.empty(); }},
    {"--expect-gdr", [](const Request& r) { return r.expect_gdr; }},
    {"--reference-ms", [](const Request& r) { return r.reference_ms.has_value(); }},
    {"--warmup", [](const Request& r) { return r.warmup.has_value(); }},
    {"--kallsyms", [](const Request& r) { return !r.kallsyms.empty(); }},
    {"--kb", [](const Request& r) { return !r.kb_dirs.empty(); }},
};

}  // namespace

const std::vector<Analyzer>& analyzers() {
  static const std::vector<Analyzer> table = {
      {"perf", "virtualization", "perf.smmu_cmdq", "perf report/script text or perf.data", {"--kallsyms"}, kEveryFormat, detail::run_perf},
      {"perf-stat", "virtualization", "perf_stat.events", "perf stat output (text in any locale, -x CSV, -j JSON; -a, -A, --per-socket, -I, -r)",
       {"--reference"}, kEveryFormat, detail::run_perf_stat},
      {"turbostat", "cpu-power", "turbostat.busy_mhz", "turbostat output", {"--rated-mhz"}, kEveryFormat, detail::run_turbostat},
      {"numastat", "placement", "numastat.remote", "numastat / numastat -p output", {}, kEveryFormat, detail::run_numastat},
      {"nccl-tests", "network", "nccl_tests.busbw", "nccl-tests output (text or JSON)",
       {"--reference", "--sizes", "--nics", "--link-gbps", "--node-report", "--nodes"}, kEveryFormat, detail::run_nccl_tests},
      {"nccl-log", "network", "nccl_log.net", "NCCL_DEBUG=INFO logs, one per rank",
       {"--expect-topo-file", "--expect-net", "--expect-gdr"}, kEveryFormat, detail::run_nccl_log},
      {"nccl-inspector", "network", "nccl_inspector.summary", "the NCCL Inspector plugin's JSON lines (files or dump directories)",
       {"--nics", "--link-gbps", "--node-report"}, kEveryFormat, detail::run_nccl_inspector},
      {"nccl-ras", "network", "nccl_ras.dead", "the NCCL RAS client's status output", {}, kEveryFormat, detail::run_nccl_ras},
      {"steps", "workload", "steps.gap", "training step logs (Megatron, throughput, JSON lines)", {"--reference", "--reference-ms", "--warmup"},
       kEveryFormat, detail::run_steps},
      {"nsys", "workload", "profile.summary", "Nsight Systems SQLite exports or .nsys-rep (a job's ranks: files, directories, globs)",
       {"--reference", "--iteration-range", "--kb"}, kEveryFormat, detail::run_profiles},
      {"kineto", "workload", "profile.summary", "PyTorch profiler (Kineto) traces, .json or .json.gz (a job's ranks: files, directories, globs)",
       {"--reference", "--iteration-range", "--kb"}, kEveryFormat, detail::run_profiles},
      {"nvidia-smi", "gpu", "gpu.persistence", "nvidia-smi -q -x and topo -m captures", {}, kEveryFormat, detail::run_nvidia_smi},
  };
  return table;
}

const Analyzer* find(std::string_view kind) {
  for (const auto& a : analyzers())
    if (kind == a.kind) return &a;
  return nullptr;
}

std::string kind_list(std::string_view separator) {
  std::string s;
  for (const auto& a : analyzers()) s += (s.empty() ? "" : std::string(separator)) + a.kind;
  return s;
}

std::vector<std::string_view> given_options(const Request& request) {
  std::vector<std::string_view> out;
  for (const auto& o : kOptionUses)
    if (o.given(request)) out.push_back(o.name);
  return out;
}

std::string kinds_accepting(std::string_view option) {
  std::string list;
  for (const auto& a : analyzers())
    if (std::find(a.options.begin(), a.options.end(), option) != a.options.end()) list += (list.empty() ? "" : " or ") + fmt::format("analyze {}", a.kind);
  return list;
}

tl::expected<Result, std::string> run(const Analyzer& analyzer, const Request& request) {
  for (auto option : given_options(request))
    if (std::find(analyzer.options.begin(), analyzer.options.end(), option) == analyzer.options.end())
      return tl::unexpected(fmt::format("{} applies to {}, not analyze {}", option, kinds_accepting(option), analyzer.kind));
  if (request.nics.has_value() != request.link_gbps.has_value())
    return tl::unexpected(std::string("--nics and --link-gbps go together (NICs per node and each one's Gb/s)"));
  if (request.nics && !request.node_report.empty()) return tl::unexpected(std::string("give --nics/--link-gbps or --node-report, not both"));
  if (request.reference_ms && !request.reference.empty()) return tl::unexpected(std::string("give --reference-ms or --reference, not both"));
  return analyzer.run(analyzer, request);
}

}  // namespace perfgap::tool_outputs
