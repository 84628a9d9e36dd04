// The pair search of `perfgap fanout --pairs`: which node or link of an allocation is below the
// others, from a collective benchmark run on node pairs. Pure functions: the rounds to run and
// the judgement of what they measured; slurm/pair_search runs them.
//
// Cover: the ring n0-n1, n1-n2, ..., n(N-1)-n0 scheduled into rounds of disjoint pairs (2 rounds
// for an even N, 3 for an odd one), so every node meets two different partners. A node's
// figure is its best pair: a healthy node has a fast pair unless both its partners are slow.
// The reference is the median of the nodes' best pairs; a node whose best is below
// ratio x reference is a suspect. Confirm (the bisection of the suspects): each suspect against
// a healthy partner it has not met, and each slow pair of two healthy nodes again; a suspect
// below in three runs with healthy partners is a slow node (a busy moment of one node clears
// in the confirm run), a pair slow twice between healthy nodes a slow link. More than half of the nodes slow cannot be told from a slow fabric (the median
// is theirs): the search then names nothing, and says why.
#pragma once

#include <optional>
#include <string>
#include <utility>
#include <vector>

#include "report/model.hpp"

namespace perfgap::slurm {

using NodePair = std::pair<std::string, std::string>;

struct PairMeasurement {
  int round = 0;                 // 1-based
  NodePair pair;
  std::optional<double> busbw;   // GB/s at the benchmark's largest size; none: failed
  std::string error;             // why there is no figure
  double seconds = 0;            // the srun's wall time (evidence only, never judged)
};

struct PairRule {
  double ratio = 0.5;  // below ratio x the reference: slow
};

// The cover rounds: disjoint pairs each, together every ring edge. Fewer than 2 nodes: none.
std::vector<std::vector<NodePair>> cover_rounds(const std::vector<std::string>& nodes);

struct PairJudgement {
  std::optional<double> reference;              // median of the nodes' best pairs
  std::vector<std::pair<std::string, double>> best;  // per node measured, in node order
  std::vector<std::string> suspects;            // best below ratio x reference
  std::vector<std::string> slow_nodes;          // confirmed: below in 3 runs with healthy partners
  std::vector<NodePair> slow_links;             // two healthy nodes, their pair slow twice
  std::vector<std::string> unconfirmed;         // suspects with fewer such runs
  std::vector<std::string> unmeasured;          // nodes with no successful run
  std::string undecided;                        // non-empty: why nothing can be judged
};

// What the runs so far say (cover and confirm rounds alike).
PairJudgement judge_pairs(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs, const PairRule& rule);

// The next confirm round after `runs`: each unconfirmed suspect against a healthy partner
// (one it has not met first), and
// each slow pair of two healthy nodes measured once, a pair that gave no figure once again,
// and the remaining healthy nodes paired
// among themselves (the round loads the fabric as the cover rounds did); disjoint pairs.
// Empty: nothing to confirm.
std::vector<NodePair> confirm_round(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs,
                                    const PairRule& rule);

struct PairSearchSummary {
  std::vector<std::string> benchmark;  // the command each pair ran
  int rounds = 0;
  double wall_s = 0;
  bool budget_spent = false;  // rounds were left out for the time budget
  bool interrupted = false;
};

// The fanout.pairs finding: fail naming the slow nodes and links (subject: them, as a
// hostlist and a+b), warn for unconfirmed suspects, pass when every node is at the others'
// level, skip when undecided; evidence: every pair of every round.
report::Finding pairs_finding(const std::vector<std::string>& nodes, const std::vector<PairMeasurement>& runs,
                              const PairRule& rule, const PairSearchSummary& summary);

}  // namespace perfgap::slurm
