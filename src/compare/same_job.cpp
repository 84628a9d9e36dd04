#include "compare/same_job.hpp"

#include "compare/run_shape.hpp"
#include "parsers/steps.hpp"

#include <fmt/format.h>

#include <cmath>
#include <set>
#include <string_view>

namespace perfgap::compare {
namespace {

// What a report says of the job or machine it is of; empty fields: not said.
struct JobIdentity {
  std::set<std::string> gpu_models;
  std::set<long long> world_sizes;
  std::string cpu_model;
  // nccl-tests reports: the ranks and nodes each run was on (nccl_tests.busbw's metrics `ranks`
  // and `nodes`: printed, or read from the launcher command line or busbw/algbw).
  std::set<long long> nccl_ranks, nccl_nodes;
  // analyze steps: what its step log measured ("samples/s", "tokens/s", "ms per iteration"), and
  // the job's global batch size (steps.gap's metric global_batch_size, where the log says it).
  std::set<std::string> step_measures;
  std::set<double> global_batches;
  // analyze nccl-tests: the collective its busbw measured (RunShape's; "collective measured").
  std::set<std::string> collectives;
};

// gpu.inventory's title "8 GPU(s): 8 x NVIDIA H100 80GB HBM3, driver 550.90.07" (or "8 GPU(s) visible in
// this docker container (8 on PCI): ...") -> its models; the titles of a partial read name none, and
// models only PCI names ("NVIDIA 10de:2330", driver list unread) are left out.
void same_job_inventory_gpus(std::string_view title, std::set<std::string>& out) {
  std::size_t digits = 0;
  while (digits < title.size() && title[digits] >= '0' && title[digits] <= '9') ++digits;
  if (digits == 0) return;
  auto rest = title.substr(digits);
  if (rest.starts_with(" GPU(s): ")) {
    rest.remove_prefix(9);
  } else if (rest.starts_with(" GPU(s) visible in this ")) {
    const auto pci = rest.find(" on PCI): ");
    if (pci == std::string_view::npos) return;
    rest.remove_prefix(pci + 10);
  } else {
    return;
  }
  if (auto drv = rest.rfind(", driver "); drv != std::string_view::npos) rest = rest.substr(0, drv);
  while (!rest.empty()) {
    const auto comma = rest.find(',');
    auto part = rest.substr(0, comma);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (const auto x = part.find(" x "); x != std::string_view::npos) part = part.substr(x + 3);
    if (!part.empty() && !part.starts_with("NVIDIA 10de:") && part.find("model not read") == std::string_view::npos) out.emplace(part);
    if (comma == std::string_view::npos) break;
    rest = rest.substr(comma + 1);
  }
}

// "NVIDIA H100 80GB HBM3 + Tesla V100-SXM2-32GB" -> each model.
void same_job_split_models(std::string_view list, std::set<std::string>& out) {
  while (!list.empty()) {
    const auto plus = list.find(" + ");
    auto part = list.substr(0, plus);
    while (!part.empty() && part.front() == ' ') part.remove_prefix(1);
    while (!part.empty() && part.back() == ' ') part.remove_suffix(1);
    if (!part.empty()) out.emplace(part);
    if (plus == std::string_view::npos) break;
    list.remove_prefix(plus + 3);
  }
}

JobIdentity same_job_identity(const ReportView& r) {
  JobIdentity id;
  for (const auto& f : r.findings) {
    if (f.id == "profile.summary") {
      for (const auto& [source, observed] : f.evidence)
        if (auto m = gpu_model_of_profile_line(observed); !m.empty()) id.gpu_models.insert(std::move(m));
      for (const auto& [name, v] : f.metrics)
        if (name == "world_size" && std::isfinite(v) && v > 0) id.world_sizes.insert(std::llround(v));
    } else if (f.id == "whatif.replay") {
      // A whatif report: the job's world size its traces record, and the GPUs they name.
      for (const auto& [name, v] : f.metrics)
        if (name == "world_size" && std::isfinite(v) && v > 0) id.world_sizes.insert(std::llround(v));
      for (const auto& [source, observed] : f.evidence)
        if (source == kTracedGpusEvidence) same_job_split_models(observed, id.gpu_models);
    } else if (f.id == "nccl_tests.busbw") {
      // The run's shape as fleet.pace reads it (RunShape): ranks, nodes, the GPUs its Rank lines
      // name ("NVIDIA H100 80GB HBM3 + ..."), the collective measured.
      const RunShape sh = run_shape(f);
      if (sh.ranks > 0) id.nccl_ranks.insert(sh.ranks);
      if (sh.nodes > 0) id.nccl_nodes.insert(sh.nodes);
      same_job_split_models(sh.gpus, id.gpu_models);
      if (!sh.collective.empty()) id.collectives.insert(sh.collective);
    } else if (f.id == "steps.gap") {
      for (const auto& [source, observed] : f.evidence)
        if (source == parsers::kThroughputUnitEvidence && !observed.empty()) id.step_measures.emplace(observed);
      for (const auto& [name, v] : f.metrics) {
        if (name == "median_ms") id.step_measures.emplace("ms per iteration");
        if (name == "global_batch_size" && std::isfinite(v) && v > 0) id.global_batches.insert(v);
      }
    } else if (f.id == "gpu.inventory") {
      same_job_inventory_gpus(f.title, id.gpu_models);
    }
  }
  for (const auto& [key, value] : r.node_facts)
    if (key == "settings.cpu_model" && !value.empty() && value != "unknown") id.cpu_model = value;
  return id;
}

template <class T>
std::string same_job_list(const std::set<T>& s) {
  return fmt::format("{}", fmt::join(s, " + "));
}

std::string same_job_batches(const std::set<double>& s) { return fmt::format("{:g}", fmt::join(s, " + ")); }

}  // namespace

std::string gpu_model_of_label(std::string_view label) {
  for (auto at = label.find("GPU "); at != std::string_view::npos; at = label.find("GPU ", at + 4)) {
    if (at > 0 && label[at - 1] != ' ') continue;
    std::size_t i = at + 4;
    const std::size_t digits = i;
    while (i < label.size() && label[i] >= '0' && label[i] <= '9') ++i;
    if (i == digits || label.substr(i, 2) != " (") continue;
    const std::size_t open = i + 2;
    // The model ends at the ')' the label ends with or a word follows (" pid 1234", " on node-7").
    for (auto close = label.find(')', open); close != std::string_view::npos; close = label.find(')', close + 1))
      if (close + 1 == label.size() || label[close + 1] == ' ') return close > open ? std::string(label.substr(open, close - open)) : std::string();
  }
  return {};
}

std::string gpu_model_of_profile_line(std::string_view observed) {
  const auto close = observed.find("): ");
  // The per-GPU line ("...: 8568 kernels, ..."), not a note that happens to hold parentheses.
  if (close == std::string_view::npos || observed.find(" kernels, ", close) == std::string_view::npos) return {};
  return gpu_model_of_label(observed.substr(0, close + 1));
}

std::vector<std::string> different_jobs(const ReportView& before, const std::string& before_name, const ReportView& after,
                                        const std::string& after_name) {
  const auto a = same_job_identity(before), b = same_job_identity(after);
  std::vector<std::string> out;
  if (!a.gpu_models.empty() && !b.gpu_models.empty() && a.gpu_models != b.gpu_models)
    out.push_back(fmt::format("GPUs {} in {}, {} in {}", same_job_list(a.gpu_models), before_name, same_job_list(b.gpu_models), after_name));
  if (!a.world_sizes.empty() && !b.world_sizes.empty() && a.world_sizes != b.world_sizes)
    out.push_back(fmt::format("world size {} in {}, {} in {}", same_job_list(a.world_sizes), before_name, same_job_list(b.world_sizes), after_name));
  if (!a.nccl_ranks.empty() && !b.nccl_ranks.empty() && a.nccl_ranks != b.nccl_ranks)
    out.push_back(
        fmt::format("{} ranks in {}, {} in {}", same_job_list(a.nccl_ranks), before_name, same_job_list(b.nccl_ranks), after_name));
  // A job's world size against the ranks an nccl-tests run had: a bandwidth measured at another
  // scale moved its data over other links (16 ranks on 2 nodes cross the NICs, 2 on one do not).
  if (!a.world_sizes.empty() && !b.nccl_ranks.empty() && a.world_sizes != b.nccl_ranks)
    out.push_back(fmt::format("world size {} in {}, {} ranks in {}", same_job_list(a.world_sizes), before_name, same_job_list(b.nccl_ranks), after_name));
  if (!a.nccl_ranks.empty() && !b.world_sizes.empty() && a.nccl_ranks != b.world_sizes)
    out.push_back(fmt::format("{} ranks in {}, world size {} in {}", same_job_list(a.nccl_ranks), before_name, same_job_list(b.world_sizes), after_name));
  if (!a.nccl_nodes.empty() && !b.nccl_nodes.empty() && a.nccl_nodes != b.nccl_nodes)
    out.push_back(fmt::format("{} node{} in {}, {} in {}", same_job_list(a.nccl_nodes),
                              a.nccl_nodes.size() == 1 && *a.nccl_nodes.begin() == 1 ? "" : "s", before_name, same_job_list(b.nccl_nodes),
                              after_name));
  // Step logs of samples/s, tokens/s or step times: no figure of one is a figure of another.
  if (!a.step_measures.empty() && !b.step_measures.empty() && a.step_measures != b.step_measures)
    out.push_back(fmt::format("steps in {} in {}, in {} in {}", same_job_list(a.step_measures), before_name, same_job_list(b.step_measures),
                              after_name));
  // Steps of another global batch: another job (a 2-sample step is no 288-sample one).
  if (!a.global_batches.empty() && !b.global_batches.empty() && a.global_batches != b.global_batches)
    out.push_back(fmt::format("global batch size {} in {}, {} in {}", same_job_batches(a.global_batches), before_name,
                              same_job_batches(b.global_batches), after_name));
  if (!a.cpu_model.empty() && !b.cpu_model.empty() && a.cpu_model != b.cpu_model)
    out.push_back(fmt::format("CPU {} in {}, {} in {}", a.cpu_model, before_name, b.cpu_model, after_name));
  return out;
}

std::vector<std::string> different_runs(const ReportView& before, const std::string& before_name, const ReportView& after,
                                        const std::string& after_name) {
  const auto a = same_job_identity(before), b = same_job_identity(after);
  std::vector<std::string> out;
  if (!a.collectives.empty() && !b.collectives.empty() && a.collectives != b.collectives)
    out.push_back(fmt::format("{} in {}, {} in {}", same_job_list(a.collectives), before_name, same_job_list(b.collectives), after_name));
  return out;
}

}  // namespace perfgap::compare
