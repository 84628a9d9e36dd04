// analyze nsys and kineto: GPU timeline profiles, one rank or a job's ranks (files,
// directories, globs), aligned across ranks by analyzers/profile.
#include <fmt/format.h>

#include <algorithm>
#include <thread>

#include "analyze/inputs.hpp"
#include "analyze/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "analyzers/profile_job.hpp"
#include "core/kb.hpp"
#include "fleet/inputs.hpp"

namespace perfgap::analyze::detail {

namespace {
// A job's rank files read together (docs/ANALYZE.md, cross-rank).
constexpr std::size_t kMaxProfileRanks = 1024;
// The site's knowledge base (docs/KB.md), read as explain reads it.
constexpr const char* kProfileSystemKbDir = "/etc/perfgap/kb.d";
}  // namespace

tl::expected<Result, std::string> run_profiles(const Analyzer& an, const Request& r) {
  if (auto ok = reference_is_a_file(an, r, "profile"); !ok) return tl::unexpected(ok.error());
  const std::string_view k = an.kind;
  // The knowledge base's communication kernels (data/kb/comm_kernels.yaml, kb.d, --kb) before any
  // input: a malformed file is exit 2 naming its line.
  std::vector<core::KbDir> dirs{{kProfileSystemKbDir, true}};
  for (const auto& d : r.kb_dirs) dirs.push_back({d, false});
  auto kb = core::load_kb(dirs);
  if (!kb) return tl::unexpected(fmt::format("analyze {}: knowledge base {}", k, kb.error()));
  analyzers::ProfileOptions po;
  po.iteration_range = r.iteration_range;
  po.comm_kernels = &kb->comm_kernels;
  analyzers::ProfileFigures ref;
  if (!r.reference.empty()) {
    auto p = read_profile(k, r.reference);
    if (!p) return tl::unexpected("--reference " + r.reference + ": " + p.error());
    ref = analyzers::profile_figures(*p, po);
    po.reference = &ref;
    po.reference_source = r.reference;
  }
  // A job's ranks: files, directories (their traces/exports) and quoted globs.
  auto profile_name = [&](std::string_view n) {
    if (k == "nsys") return n.ends_with(".sqlite") || n.ends_with(".nsys-rep") || n.ends_with(".qdrep");
    return n.ends_with(".json") || n.ends_with(".json.gz");
  };
  auto expanded = fleet::expand_inputs(r.files, profile_name, k == "nsys" ? "nsys export (.sqlite, .nsys-rep)" : "Kineto trace (.json, .json.gz)");
  if (!expanded.problems.empty()) return tl::unexpected(fmt::format("analyze {}: {}: {}", k, expanded.problems[0].file, expanded.problems[0].why));
  const auto& files = expanded.files;
  if (files.size() > kMaxProfileRanks)
    return tl::unexpected(fmt::format("analyze {}: {} profiles; at most {} ranks are analysed together", k, files.size(), kMaxProfileRanks));
  Collected c{an, {}, {}, 0};
  // Each rank read, reduced to its digest and dropped (analyzers/profile_job.hpp): memory does
  // not grow with the ranks. Ranks on every core (up to 8); `nsys export`s one at a time.
  const std::size_t threads = std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8);
  auto job = analyzers::analyze_profile_job(files, [&](const std::string& f) { return read_profile(k, f); }, po, threads);
  // An unreadable rank is an error finding of its own; the others are analysed, and the job-level
  // verdicts, missing it, cannot pass (profile.ranks).
  for (const auto& [file, why] : job.unusable) c.bad(file, why);
  if (job.used.empty()) return tl::unexpected(c.no_usable_input());
  c.usable = job.used.size();
  c.append(std::move(job.findings));
  return c.finish(files);
}

}  // namespace perfgap::analyze::detail
