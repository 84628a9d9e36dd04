// analyze nccl-tests, nccl-log, nccl-inspector and nccl-ras: NCCL's benchmarks, logs and
// production signals.
#include <fmt/format.h>

#include <algorithm>
#include <filesystem>

#include "analyze/inputs.hpp"
#include "analyze/kinds.hpp"
#include "analyzers/analyzers.hpp"

namespace perfgap::analyze::detail {

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

// One file per process (HOST-pidPID.log in the plugin's dump directory), judged together; a
// directory stands for its .log files.
tl::expected<Result, std::string> run_nccl_inspector(const Analyzer& an, const Request& r) {
  auto basis = nic_basis(r);
  if (!basis) return tl::unexpected(basis.error());
  Collected c{an, {}, {}, 0};
  std::vector<std::string> files;
  for (const auto& arg : r.files) {
    std::error_code ec;
    if (arg != "-" && std::filesystem::is_directory(arg, ec)) {
      std::vector<std::string> in_dir;
      for (const auto& e : std::filesystem::directory_iterator(arg, ec))
        if (e.path().extension() == ".log" && e.is_regular_file(ec)) in_dir.push_back(e.path().string());
      if (ec) {
        c.bad(arg, "cannot list the directory: " + ec.message());
        continue;
      }
      if (in_dir.empty()) {
        c.bad(arg, "a directory without .log files (the Inspector writes HOST-pidPID.log into NCCL_INSPECTOR_DUMP_DIR)");
        continue;
      }
      std::sort(in_dir.begin(), in_dir.end());
      files.insert(files.end(), in_dir.begin(), in_dir.end());
    } else {
      files.push_back(arg);
    }
  }
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
  return c.finish(r.files);
}

}  // namespace perfgap::analyze::detail
