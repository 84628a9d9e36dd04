// Inside the analyze layer: what the kinds' run functions share, and the run functions the
// registry lists (one per kind, each in its own kind_*.cpp).
#pragma once

#include <optional>
#include <string>
#include <vector>

#include "tool_outputs/inputs.hpp"
#include "tool_outputs/registry.hpp"
#include "analyzers/profile_job.hpp"

namespace perfgap::tool_outputs::detail {

// The findings of one run, an `error` finding for each input that could not be used.
struct Collected {
  const Analyzer& analyzer;
  std::vector<report::Finding> findings;
  std::vector<std::string> unusable;  // "FILE: why"
  std::size_t usable = 0;

  void bad(const std::string& file, const std::string& why);
  void append(std::vector<report::Finding> v);
  // "analyze KIND: no usable input: FILE: why; FILE: why" (the run's error when nothing was usable).
  std::string no_usable_input() const;
  // The result with these inputs, or the error when no input was usable.
  tl::expected<Result, std::string> finish(std::vector<std::string> inputs);
};

// The node's RDMA line rate as the busbw basis (nccl-tests, nccl-inspector): --nics x
// --link-gbps, or the ACTIVE ports of --node-report; {0, ""} when neither is given.
struct NicBasis {
  double gbps_total = 0;
  std::string basis;
  std::string node;  // --node-report's node.name; empty for --nics or a report without one
};
// Each input on its own: `judge(file, collected)` reads and judges one file and returns why it
// is unusable, or nullopt when it was used.
template <class Judge>
tl::expected<Result, std::string> each_input(const Analyzer& an, const Request& r, Judge&& judge) {
  Collected c{an, {}, {}, 0};
  for (const auto& file : r.files) {
    if (auto why = judge(file, c)) c.bad(file, *why);
    else ++c.usable;
  }
  return c.finish(r.files);
}

// Inputs judged together (NCCL logs, nvidia-smi captures): every usable one's model kept, with
// its name, next to the findings of the unusable ones.
template <class Model>
struct KeptInputs {
  Result result;
  std::vector<Model> models;
  std::vector<std::string> sources;
};
template <class Parser>
auto keep_inputs(const Analyzer& an, const Request& r, std::size_t max_bytes)
    -> tl::expected<KeptInputs<typename decltype(std::declval<Parser&>().finish())::value_type>, std::string> {
  KeptInputs<typename decltype(std::declval<Parser&>().finish())::value_type> kept;
  auto read = each_input(an, r, [&](const std::string& file, Collected&) -> std::optional<std::string> {
    auto model = parse_input<Parser>(file, max_bytes);
    if (!model) return model.error();
    kept.models.push_back(std::move(*model));
    kept.sources.push_back(file);
    return std::nullopt;
  });
  if (!read) return tl::unexpected(read.error());
  kept.result = std::move(*read);
  return kept;
}

tl::expected<NicBasis, std::string> nic_basis(const Request& r);

// A --reference that is a number to a kind that compares whole runs: said as such, not as
// "cannot open 830". `what`: "run's output", "profile".
tl::expected<void, std::string> reference_is_a_file(const Analyzer& an, const Request& r, const char* what);

tl::expected<Result, std::string> run_perf(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_perf_stat(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_turbostat(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_numastat(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_nccl_tests(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_nccl_log(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_nccl_inspector(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_nccl_ras(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_steps(const Analyzer& an, const Request& r);
tl::expected<Result, std::string> run_profiles(const Analyzer& an, const Request& r);  // nsys, kineto
// A trace or export of `kind` (nsys, kineto) by its name, as directories are searched for them.
bool is_profile_name(std::string_view kind, std::string_view name);
tl::expected<Result, std::string> run_whatif(const Analyzer& an, const Request& r, const analyzers::WhatifOptions& w);
tl::expected<Result, std::string> run_nvidia_smi(const Analyzer& an, const Request& r);

}  // namespace perfgap::tool_outputs::detail
