// analyze nsys and kineto: GPU timeline profiles, one rank or a job's ranks (files,
// directories, globs), aligned across ranks by analyzers/profile.
#include <fmt/format.h>

#include <algorithm>
#include <new>
#include <thread>

#include "analyze/inputs.hpp"
#include "analyze/kinds.hpp"
#include "analyzers/analyzers.hpp"
#include "fleet/inputs.hpp"

namespace perfgap::analyze::detail {

namespace {
// A job's rank files read together (docs/ANALYZE.md, cross-rank).
constexpr std::size_t kMaxProfileRanks = 1024;
}  // namespace

tl::expected<Result, std::string> run_profiles(const Analyzer& an, const Request& r) {
  if (auto ok = reference_is_a_file(an, r, "profile"); !ok) return tl::unexpected(ok.error());
  const std::string_view k = an.kind;
  analyzers::ProfileOptions po;
  po.iteration_range = r.iteration_range;
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
  parsers::Profile merged;
  std::vector<std::string> used;
  // Kineto ranks are read on every core (up to 8), a batch of one file per thread at a time,
  // and merged in the files' order: the model (and report) is the one a single thread builds,
  // and at most a batch of unmerged ranks is held. (nsys may run `nsys export`, one at a time.)
  const std::size_t threads = k == "kineto" ? std::clamp<std::size_t>(std::thread::hardware_concurrency(), 1, 8) : 1;
  std::vector<tl::expected<parsers::Profile, std::string>> batch;
  for (std::uint32_t i = 0; i < files.size(); ++i) {
    if (i % threads == 0) {
      batch.clear();
      const std::size_t n = std::min<std::size_t>(threads, files.size() - i);
      for (std::size_t j = 0; j < n; ++j) batch.emplace_back(tl::unexpected(std::string("not read")));
      std::vector<std::thread> pool;
      for (std::size_t j = 1; j < n; ++j) pool.emplace_back([&, j] { batch[j] = read_profile(k, files[i + j]); });
      batch[0] = read_profile(k, files[i]);
      for (auto& t : pool) t.join();
    }
    auto& p = batch[i % threads];
    if (!p) {
      // Of a job's ranks, a missing one would silently change who is late: the whole run stops.
      if (files.size() > 1) return tl::unexpected(fmt::format("{}: {}", files[i], p.error()));
      c.bad(files[i], p.error());
      continue;
    }
    if (files.size() > 1)
      for (auto& g : p->gpus) g.label = files[i] + ": " + g.label;
    merged.merge(std::move(*p), i);
    used.push_back(files[i]);
    // The job's activities reserved once, from the first rank's count: growing by doubling
    // held the old and the new array together at the last growth (64 ranks of 50 MB: 1.1 GB
    // peak for 0.6 GB of activities). Capacity never written costs no memory, so a generous
    // guess is cheap (held to 64 M activities, 4 GiB of address space, and let go when refused);
    // ranks larger than the first grow it as before.
    if (i == 0 && files.size() > 1) {
      try {
        merged.acts.reserve(std::min<std::size_t>(merged.acts.size() / 4 * 5 * files.size(), std::size_t{1} << 26));
      } catch (const std::bad_alloc&) {
      }
    }
  }
  if (used.empty()) return tl::unexpected(c.no_usable_input());
  c.usable = used.size();
  std::string source = used.size() == 1 ? used[0] : fmt::format("{} profiles", used.size());
  c.append(analyzers::analyze_profile(merged, source, po));
  return c.finish(files);
}

}  // namespace perfgap::analyze::detail
