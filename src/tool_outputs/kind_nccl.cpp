// analyze nccl-tests, nccl-log, nccl-inspector and nccl-ras: NCCL's benchmarks, logs and
// production signals.
#include <fmt/format.h>

#include <algorithm>

#include "tool_outputs/inputs.hpp"
#include "tool_outputs/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "fleet/inputs.hpp"

namespace perfgap::tool_outputs::detail {

tl::expected<Result, std::string> run_nccl_tests(const Analyzer& an, const Request& r) {
  if (auto ok = reference_is_a_file(an, r, "run's output"); !ok) return tl::unexpected(ok.error());
  analyzers::NcclTestsOptions o;
  parsers::NcclTestsRun reference;
  if (!r.sizes.empty()) {
    auto s = parsers::parse_sizes(r.sizes);
    if (!s) return tl::unexpected("--sizes " + r.sizes + ": " + s.error().describe());
    o.sizes = *s;
  }
  if (!r.reference.empty()) {
    auto ref = parse_input<parsers::NcclTestsParser>(r.reference);
    if (!ref) return tl::unexpected("--reference " + r.reference + ": " + ref.error());
    reference = std::move(*ref);
    o.reference = &reference;
    o.reference_source = r.reference;
  }
  auto basis = nic_basis(r);
  if (!basis) return tl::unexpected(basis.error());
  o.nic_gbps_total = basis->gbps_total;
  o.nic_basis = basis->basis;
  o.nic_basis_node = basis->node;
  o.nodes = r.nodes;
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto run = parse_input<parsers::NcclTestsParser>(file);
    if (!run) return run.error();
    c.append(analyzers::analyze_nccl_tests(*run, file, o));
    return std::nullopt;
  });
}

tl::expected<Result, std::string> run_nccl_ras(const Analyzer& an, const Request& r) {
  return each_input(an, r, [&](const std::string& file, Collected& c) -> std::optional<std::string> {
    auto ras = parse_input<parsers::NcclRasParser>(file);
    if (!ras) return ras.error();
    c.append(analyzers::analyze_nccl_ras(*ras, file));
    return std::nullopt;
  });
}

// Read together: NCCL versions and settings are compared across the ranks' logs.
tl::expected<Result, std::string> run_nccl_log(const Analyzer& an, const Request& r) {
  auto kept = keep_inputs<parsers::NcclLogParser>(an, r, sys::kMaxInputBytes);
  if (!kept) return tl::unexpected(kept.error());
  std::vector<analyzers::NcclLogInput> in;
  for (std::size_t i = 0; i < kept->models.size(); ++i) in.push_back({kept->sources[i], &kept->models[i]});
  analyzers::NcclLogOptions o;
  o.expect_topo_file = r.expect_topo_file;
  if (!r.expect_net.empty()) o.expect_net = r.expect_net;
  o.expect_gdr = r.expect_gdr;
  for (auto& f : analyzers::analyze_nccl_logs(in, o)) kept->result.findings.push_back(std::move(f));
  return std::move(kept->result);
}

// One file per process (HOST-pidPID.log in the plugin's dump directory, or the Prometheus
// text nccl_inspector_metrics_UUID.prom), judged together; a directory stands for its
// Inspector files (the names the plugin and NVIDIA's exporters read, .gz inflated), a quoted
// glob for its matches.
tl::expected<Result, std::string> run_nccl_inspector(const Analyzer& an, const Request& r) {
  auto basis = nic_basis(r);
  if (!basis) return tl::unexpected(basis.error());
  Collected c{an, {}, {}, 0};
  auto inspector_name = [](std::string_view n) {
    if (n.ends_with(".gz")) n.remove_suffix(3);
    return n.ends_with(".log") || n.ends_with(".jsonl") || n.ends_with(".prom");
  };
  auto expanded = fleet::expand_inputs(r.files, inspector_name,
                                       "Inspector files (.log, .jsonl, .prom, or .gz of them: the plugin writes HOST-pidPID.log into NCCL_INSPECTOR_DUMP_DIR)");
  for (const auto& p : expanded.problems) c.bad(p.file, p.why);
  const auto& files = expanded.files;
  std::vector<parsers::NcclInspector> runs;
  std::vector<std::string> sources;
  runs.reserve(files.size());
  for (const auto& file : files) {
    auto run = parse_input<parsers::NcclInspectorParser>(file);
    if (!run) {
      c.bad(file, run.error());
      continue;
    }
    runs.push_back(std::move(*run));
    sources.push_back(file);
    ++c.usable;
  }
  if (runs.empty()) return tl::unexpected(c.no_usable_input());
  std::vector<analyzers::NcclInspectorInput> in;
  for (std::size_t i = 0; i < runs.size(); ++i) in.push_back({sources[i], &runs[i]});
  analyzers::NcclInspectorOptions o;
  o.nic_gbps_total = basis->gbps_total;
  o.nic_basis = basis->basis;
  c.append(analyzers::analyze_nccl_inspector(in, o));
  return c.finish(files);
}

}  // namespace perfgap::tool_outputs::detail
