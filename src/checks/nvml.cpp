#include "checks/nvml.hpp"

#include <fmt/format.h>

#include "analyzers/analyzers.hpp"
#include "checks/util.hpp"
#include "facts/gpu.hpp"

namespace perfgap::checks::nvml {
namespace {

constexpr const char* kForceHint = "--nvml (check or snapshot) queries it anyway";

// The findings of rule `id` over the helper's samples, one per GPU.
std::vector<Finding> judged(facts::Facts& f, std::string_view id, std::string_view layer) {
  const auto& s = facts::nvml_samples(f);
  if (!s) return {core::finding(id, layer, Status::skip, s.error())};
  std::vector<analyzers::GpuSnapshotInput> in;
  in.push_back({s->first.source, &s->first.doc.snapshot, &s->first.doc.skipped, kForceHint});
  if (s->second) in.push_back({s->second->source, &s->second->doc.snapshot, &s->second->doc.skipped, kForceHint});
  std::vector<Finding> out;
  for (auto& fnd : analyzers::judge_gpu_snapshots(in)) {
    if (fnd.id != id) continue;
    // The growth rules say why they saw one sample only.
    if ((id == "gpu.pcie" || id == "gpu.nvlink") && !s->second && fnd.status != Status::skip) fnd.add(s->first.source, s->second_why);
    out.push_back(std::move(fnd));
  }
  if (out.empty()) {
    auto none = core::finding(id, layer, Status::skip,
                              fmt::format("NVML lists no GPU (driver {})", s->first.doc.snapshot.driver_version.empty()
                                                                            ? "version unknown"
                                                                            : s->first.doc.snapshot.driver_version));
    none.add(s->first.source, "gpus: []");
    return {none};
  }
  return out;
}

}  // namespace

core::CheckFn rule(std::string_view id, std::string_view layer) {
  return [id, layer](facts::Facts& f, const core::Thresholds&) { return judged(f, id, layer); };
}

}  // namespace perfgap::checks::nvml
