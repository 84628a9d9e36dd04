// The pieces of perfgap whatif's changes (analyzers/whatif.cpp) that its other files share: a
// change as tried, and what the traces say of the job's ranks. Internal to the whatif analyzer.
#pragma once

#include <cstddef>
#include <string>
#include <utility>
#include <vector>

#include "analyzers/profile_model.hpp"
#include "analyzers/whatif_job.hpp"
#include "parsers/profile.hpp"

namespace perfgap::analyzers::whatif_detail {

using namespace profile_model;

// A change replayed, as a finding: what the step would be and what it saves.
struct Tried {
  std::string kind, subject, what, fix;
  ReplayChange change;
  std::vector<std::string> evidence;
  bool shown = true;  // said even when it saves little (else only when it saves 1% of the step)
  PipelineChange pchange{};  // the change for a pipeline's replay
  std::string skip_why{};    // not replayed: the traces cannot decide it (a skip finding says why)
  // The subject as numbers, after the savings' (whatif.stage: its stage index, the stages, its ranks).
  std::vector<std::pair<std::string, double>> metrics{};
  bool whole_iterations = false;  // the saving's share over the replay's whole iterations (Replay::whole_*)
  std::string framework{};        // the fix is in a framework's words (framework_fix): the evidence line that says which and why (explain reads it)
  // whatif.launch: the change removes launch overhead only; host stalls (host-bound gaps of
  // kHostStallNs or longer) are replayed removed too, apart, and this is the fix where they
  // save more than the launches do. Empty: no such second replay.
  std::string stall_fix{};
  std::vector<std::size_t> ranks{};  // a pipeline's ranks the change moves (else its on_time ranks): place_nodes
};

// Whether the traces can tell what a collective waits for a later rank (every rank of the job in them).
bool waiting_known(const Job& j);
// "1 of 2 ranks" (the world unknown: "1 rank of an unknown number").
std::string ranks_traced_words(const Job& j);
// Communication overlapped (whatif.overlap): docs/WHATIF.md "Overlap" (analyzers/whatif_overlap.cpp).
Tried overlap_change(const Job& j, const parsers::FrameworkSeen& fw);

}  // namespace perfgap::analyzers::whatif_detail
