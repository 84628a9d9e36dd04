// whatif.overlap, exposed communication hidden under compute (docs/WHATIF.md "Overlap"), and the
// helpers the whatif analyzer's changes share (analyzers/whatif_changes.hpp).
#include <fmt/format.h>

#include <algorithm>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/whatif_changes.hpp"

namespace perfgap::analyzers::whatif_detail {

// Whether the traces can tell what a collective waits for a later rank: every rank of the job is
// in them (a recorded world size no larger than the ranks traced, or several ranks where none is
// recorded). With one rank of two, the time it waits inside a collective for the other is
// indistinguishable from the transfer.
bool waiting_known(const Job& j) {
  if (j.world > 0) return j.world <= static_cast<std::int64_t>(j.gpu.size());
  return j.gpu.size() > 1;
}

// "1 of 2 ranks" (the world unknown: "1 rank of an unknown number").
std::string ranks_traced_words(const Job& j) {
  return j.world > 0 ? fmt::format("{} of {} ranks", j.gpu.size(), j.world)
                     : fmt::format("{} rank{} of an unknown number", j.gpu.size(), j.gpu.size() == 1 ? "" : "s");
}

// Communication overlapped: each rank waiting for its collectives only where the step's end
// needs them (docs/WHATIF.md "Overlap"). An upper bound: which compute reads a collective's
// result is assumed (nothing before the step's end), not read from the trace.
Tried overlap_change(const Job& j, const parsers::FrameworkSeen& fw) {
  Tried t{"overlap", "communication",
          "if the program waited for each collective only where the step's end needs it (the optimizer, the next forward), computing on "
          "under it (an upper bound of overlapping)",
          framework_fix(fw.framework, FixTopic::whatif_overlap),
          ReplayChange{},
          {}};
  t.framework = framework_evidence(fw);
  t.change.overlap = true;
  t.whole_iterations = true;
  if (!j.overlap_why.empty()) {
    t.skip_why = "communication overlap not replayed: " + j.overlap_why;
    return t;
  }
  // Per rank and iteration as the saving is (over the whole iterations replayed, as the step the
  // saving is taken from: step_base), so that the saving never reads larger than what it hides;
  // else per iteration whose collectives chain.
  const auto& rp = j.replayer;
  const double ranks = static_cast<double>(std::max<std::size_t>(1, rp.held().size()));
  const double per_rank_iter = ranks * static_cast<double>(std::max<std::size_t>(1, rp.held_iterations()));
  double sum = 0;
  for (auto h : rp.held()) sum += static_cast<double>(h);
  const double held_ms = ms(sum / per_rank_iter);
  // What is exposed today, as profile.exposed_comm measures it (all communication), and what the
  // ranks' compute waited for collectives within iterations (the part this change can hide).
  // The waiting inside collectives only where every rank is traced: one rank of two cannot tell
  // its wait for the other from the transfer (no 0.00 said as measured then, and no metric).
  if (waiting_known(j)) {
    t.metrics = {{"exposed_ms_per_iter", ms(j.exposed_ns)}, {"waiting_ms_per_iter", ms(j.wait_ns)}, {"held_ms_per_iter", held_ms}};
    t.evidence.push_back(fmt::format("exposed today: {:.2f} ms of communication per iteration with no compute beside it (profile.exposed_comm), "
                                     "{:.2f} ms waiting inside collectives for a later rank",
                                     ms(j.exposed_ns), ms(j.wait_ns)));
  } else {
    t.metrics = {{"exposed_ms_per_iter", ms(j.exposed_ns)}, {"held_ms_per_iter", held_ms}};
    t.evidence.push_back(fmt::format("exposed today: {:.2f} ms of communication per iteration with no compute beside it (profile.exposed_comm); "
                                     "waiting inside collectives for a later rank unknown: {}; waiting counted as transfer",
                                     ms(j.exposed_ns), ranks_traced_words(j)));
  }
  if (j.replayer.chained() == 0)
    t.evidence.emplace_back("no two collectives of one iteration follow each other: the compute before each collective makes what it sends, and the "
                            "step's end needs its result, so nothing is left to overlap in this model");
  else {
    // By collective: an AllGather's, all-to-all's or broadcast's result is usually what the next
    // layer computes on, so the bound is further from what a program can reach there.
    std::vector<std::pair<double, Coll>> by;
    for (std::size_t c = 0; c < rp.held_by_coll().size(); ++c)
      if (rp.held_by_coll()[c] > 0) by.emplace_back(ms(static_cast<double>(rp.held_by_coll()[c]) / per_rank_iter), static_cast<Coll>(c));
    std::stable_sort(by.begin(), by.end(), [](const auto& a, const auto& b) { return a.first > b.first; });
    std::string kinds;
    double feeds_ms = 0;
    for (const auto& [v, c] : by) {
      kinds += fmt::format("{}{} {:.2f} ms", kinds.empty() ? "" : ", ", parsers::coll_name(c), v);
      // By collective as numbers too (explain's overlap advice reads them: an all-to-all's is another fix).
      std::string key = "held_ms_per_iter." + std::string(parsers::coll_name(c));
      std::replace(key.begin(), key.end(), ' ', '_');
      t.metrics.emplace_back(std::move(key), v);
      if (c == Coll::AllGather || c == Coll::AllToAll || c == Coll::Broadcast) feeds_ms += v;
    }
    const bool feeds = feeds_ms >= 0.1 * held_ms && feeds_ms >= 0.1;
    // Held mostly by all-to-all (an embedding model's or MoE's exchange): bucket and prefetch
    // settings do not hide it, pipelining the next batch's exchange does.
    for (const auto& [v, c] : by)
      if (c == Coll::AllToAll && 2 * v >= held_ms && held_ms > 0)
        t.fix = framework_fix(fw.framework, FixTopic::exposed_alltoall) +
                "bucket and prefetch settings (DDP, FSDP) do not hide an all-to-all; profile.exposed_comm says which collectives are exposed";
    const std::size_t n = rp.held().size();
    t.evidence.push_back(fmt::format("within iterations {} compute waits {:.2f} ms per iteration{} for collectives ({}): replayed running on, "
                                     "the collectives in issue order on their own stream, each starting once its last rank has issued it "
                                     "and the one before has ended (waiting for a late rank stays), the next iteration after the last one's end",
                                     n == 1 ? std::string("the rank's") : fmt::format("the {} ranks'", n), held_ms, n == 1 ? "" : " (their mean)",
                                     kinds.empty() ? "none" : kinds));
    if (feeds)
      t.evidence.emplace_back("an AllGather's, all-to-all's or broadcast's result is usually what the next layer computes on (FSDP's parameters, "
                              "MoE's tokens, embeddings): it hides only where it is issued ahead (prefetched, or a step ahead in a pipelined "
                              "input), so there the bound is furthest from what the program can reach");
  }
  t.evidence.emplace_back("not modelled: compute and NCCL kernels slowing each other when they share the SMs, and which compute really reads "
                          "a collective's result (the trace does not say): the saving is the most that overlapping can give");
  return t;
}

}  // namespace perfgap::analyzers::whatif_detail
