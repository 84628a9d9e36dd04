// The pair search's plan and judgement (slurm/pairs): the cover rounds, a slow node confirmed
// against healthy partners, a busy moment cleared by the confirm run, a slow link between
// healthy nodes, and what cannot be decided. The real search on Slurm: tests/cli/test_slurm_cluster.cpp.
#include <gtest/gtest.h>

#include <map>
#include <set>

#include "slurm/pair_search.hpp"
#include "slurm/pairs.hpp"

namespace {

using perfgap::slurm::NodePair;
using perfgap::slurm::PairMeasurement;
using perfgap::slurm::PairRule;

const std::vector<std::string> kPairsFour = {"n1", "n2", "n3", "n4"};

// Runs the plan's rounds with a model of the fleet: each node's speed, a pair's busbw being the
// slower node's (a collective is as slow as its slowest member); `link` slows one pair more.
std::vector<PairMeasurement> pairs_simulate(const std::vector<std::string>& nodes, const std::map<std::string, double>& speed,
                                            std::optional<NodePair> link = std::nullopt, int* rounds = nullptr) {
  std::vector<PairMeasurement> runs;
  int round = 0;
  auto run = [&](const std::vector<NodePair>& pairs) {
    ++round;
    for (const auto& p : pairs) {
      double bw = std::min(speed.at(p.first), speed.at(p.second));
      if (link && ((p == *link) || (p.first == link->second && p.second == link->first))) bw /= 10;
      runs.push_back({round, p, bw, "", 1.0});
    }
  };
  for (const auto& r : perfgap::slurm::cover_rounds(nodes)) run(r);
  for (int c = 0; c < 3; ++c) {
    auto next = perfgap::slurm::confirm_round(nodes, runs, PairRule{});
    if (next.empty()) break;
    run(next);
  }
  if (rounds) *rounds = round;
  return runs;
}

TEST(SlurmPairs, CoverRoundsAreDisjointAndGiveEveryNodeTwoPartners) {
  for (std::size_t n = 3; n <= 9; ++n) {
    std::vector<std::string> nodes;
    for (std::size_t i = 0; i < n; ++i) nodes.push_back("n" + std::to_string(i));
    auto rounds = perfgap::slurm::cover_rounds(nodes);
    EXPECT_EQ(rounds.size(), n % 2 == 0 ? 2u : 3u) << n;
    std::map<std::string, std::set<std::string>> partners;
    for (const auto& r : rounds) {
      std::set<std::string> busy;
      for (const auto& [a, b] : r) {
        EXPECT_TRUE(busy.insert(a).second) << a << " twice in a round of " << n;
        EXPECT_TRUE(busy.insert(b).second) << b << " twice in a round of " << n;
        partners[a].insert(b);
        partners[b].insert(a);
      }
    }
    for (const auto& node : nodes) EXPECT_EQ(partners[node].size(), 2u) << node << " of " << n;
  }
  EXPECT_EQ(perfgap::slurm::cover_rounds({"a", "b"}).size(), 1u);
  EXPECT_TRUE(perfgap::slurm::cover_rounds({"a"}).empty());
}

TEST(SlurmPairs, ASlowNodeIsConfirmedAgainstHealthyPartnersAndNamed) {
  int rounds = 0;
  auto runs = pairs_simulate(kPairsFour, {{"n1", 10}, {"n2", 11}, {"n3", 1}, {"n4", 10.5}}, std::nullopt, &rounds);
  auto j = perfgap::slurm::judge_pairs(kPairsFour, runs, PairRule{});
  EXPECT_EQ(j.slow_nodes, std::vector<std::string>{"n3"});
  EXPECT_TRUE(j.slow_links.empty());
  EXPECT_TRUE(j.unconfirmed.empty());
  // Two cover rounds, one confirm round: n3 against n1, which it had not met, and the other two
  // healthy nodes as a control pair.
  EXPECT_EQ(rounds, 3);
  ASSERT_EQ(runs.size(), 6u);
  EXPECT_EQ(runs[4].pair, (NodePair{"n3", "n1"}));
  EXPECT_EQ(runs[5].pair, (NodePair{"n2", "n4"}));
  auto f = perfgap::slurm::pairs_finding(kPairsFour, runs, PairRule{}, {{"bench"}, rounds, 12.0, false, false});
  EXPECT_EQ(f.status, perfgap::report::Status::fail);
  EXPECT_EQ(f.subject, "n3");
  EXPECT_EQ(f.evidence.size(), runs.size() + 1);  // every pair of every round, and the benchmark
}

// The collective the pairs' busbw measured, told by the benchmark's command: explain prices only
// that collective's exposed time with it (issue 40).
TEST(SlurmPairs, TheCollectiveTheBenchmarkRanIsNamed) {
  auto runs = pairs_simulate(kPairsFour, {{"n1", 10}, {"n2", 11}, {"n3", 1}, {"n4", 10.5}});
  auto collective = [&](std::vector<std::string> bench) {
    auto f = perfgap::slurm::pairs_finding(kPairsFour, runs, PairRule{}, {std::move(bench), 3, 12.0, false, false});
    for (const auto& e : f.evidence)
      if (e.source == "collective measured") return e.observed;
    return std::string("none");
  };
  EXPECT_EQ(collective({"/opt/nccl-tests/build/all_reduce_perf", "-b", "1G", "-e", "1G"}), "AllReduce (by the benchmark's command)");
  EXPECT_EQ(collective({"sendrecv_perf", "-b", "1G"}), "SendRecv (by the benchmark's command)");
  EXPECT_EQ(collective({"perfgap-collbench", "-b", "1G", "alltoall"}), "AllToAll (by the benchmark's command)");
  EXPECT_EQ(collective({"perfgap-collbench", "-b", "1G", "-e", "1G"}), "AllReduce (by the benchmark's command)") << "its default";
  EXPECT_EQ(collective({"hypercube_perf", "-b", "1G"}), "none");
  EXPECT_EQ(collective({"./my_bench", "all_gather"}), "none") << "an unknown program's arguments say nothing";
}

TEST(SlurmPairs, NoSlowNodeNamesNothingAndABusyMomentIsCleared) {
  auto runs = pairs_simulate(kPairsFour, {{"n1", 10}, {"n2", 9}, {"n3", 11}, {"n4", 10}});
  EXPECT_EQ(perfgap::slurm::pairs_finding(kPairsFour, runs, PairRule{}, {}).status, perfgap::report::Status::pass);
  // n2 busy during both cover rounds: a suspect, met again in a confirm round at full speed.
  std::vector<PairMeasurement> busy = {{1, {"n1", "n2"}, 2, "", 1}, {1, {"n3", "n4"}, 10, "", 1},
                                       {2, {"n2", "n3"}, 2, "", 1}, {2, {"n4", "n1"}, 10, "", 1}};
  auto next = perfgap::slurm::confirm_round(kPairsFour, busy, PairRule{});
  ASSERT_EQ(next.size(), 2u);
  EXPECT_EQ(next[0], (NodePair{"n2", "n4"}));
  EXPECT_EQ(next[1], (NodePair{"n1", "n3"}));
  busy.push_back({3, next[0], 9.5, "", 1});
  busy.push_back({3, next[1], 10, "", 1});
  auto j = perfgap::slurm::judge_pairs(kPairsFour, busy, PairRule{});
  EXPECT_TRUE(j.slow_nodes.empty());
  EXPECT_TRUE(j.suspects.empty());
  // Its slow pair with n1, two healthy nodes now, is run again: a link is named only when slow twice.
  auto again = perfgap::slurm::confirm_round(kPairsFour, busy, PairRule{});
  ASSERT_FALSE(again.empty());
  EXPECT_EQ(again[0], (NodePair{"n1", "n2"}));
  for (const auto& p : again) busy.push_back({4, p, 10, "", 1});
  j = perfgap::slurm::judge_pairs(kPairsFour, busy, PairRule{});
  EXPECT_TRUE(j.slow_links.empty());
  EXPECT_EQ(perfgap::slurm::pairs_finding(kPairsFour, busy, PairRule{}, {}).status, perfgap::report::Status::pass);
}

TEST(SlurmPairs, ASlowLinkBetweenHealthyNodesIsNamedWhenSlowTwice) {
  const std::vector<std::string> six = {"a1", "a2", "a3", "a4", "a5", "a6"};
  std::map<std::string, double> speed;
  for (const auto& n : six) speed[n] = 10;
  auto runs = pairs_simulate(six, speed, NodePair{"a3", "a4"});
  auto j = perfgap::slurm::judge_pairs(six, runs, PairRule{});
  EXPECT_TRUE(j.slow_nodes.empty());
  ASSERT_EQ(j.slow_links.size(), 1u);
  EXPECT_EQ(j.slow_links[0], (NodePair{"a3", "a4"}));
  auto f = perfgap::slurm::pairs_finding(six, runs, PairRule{}, {});
  EXPECT_EQ(f.status, perfgap::report::Status::fail);
  EXPECT_EQ(f.subject, "a3+a4");
}

TEST(SlurmPairs, FailedRunsAndTooFewNodesAreNotJudged) {
  const std::string why = "exit 1: srun: error: Unable to create step for job 4242: Requested node configuration is not available";
  std::vector<PairMeasurement> runs = {{1, {"n1", "n2"}, 10, "", 1}, {1, {"n3", "n4"}, std::nullopt, why, 1}};
  auto j = perfgap::slurm::judge_pairs(kPairsFour, runs, PairRule{});
  EXPECT_FALSE(j.undecided.empty());
  auto f = perfgap::slurm::pairs_finding(kPairsFour, runs, PairRule{}, {});
  EXPECT_EQ(f.status, perfgap::report::Status::skip);
  EXPECT_NE(f.evidence[1].observed.find("srun: error"), std::string::npos);
  // The table (text and every format) keeps the whole reason, not its first 40 bytes.
  ASSERT_EQ(f.table.size(), 3u);
  EXPECT_EQ(f.table[2].back(), why);
}

TEST(SlurmPairs, TheFigureIsTheLargestSizesBusbwAndASingletonIsRefused) {
  const std::string two_ranks =
      "# nThread 1 nGpus 1 minBytes 1048576 maxBytes 4194304 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
      "#\n# Using devices\n"
      "#  Rank  0 Group  0 Pid   4001 on      node1 device  0 [cpus 0] CPU\n"
      "#  Rank  1 Group  0 Pid   4002 on      node2 device  0 [cpus 0] CPU\n"
      "#\n"
      "#                                                              out-of-place                       in-place          \n"
      "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
      "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
      "     1048576        262144     float     sum      -1   1000.0    1.05    1.05      0    990.0    1.06    1.06      0\n"
      "     4194304       1048576     float     sum      -1   2000.0    2.10    2.10      0   1990.0    2.11    2.11      0\n"
      "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 1.58 \n#\n";
  auto b = perfgap::slurm::pair_busbw(two_ranks);
  ASSERT_TRUE(b) << b.error();
  EXPECT_DOUBLE_EQ(*b, 2.10);
  // With the collective named, from the time column: 4 MiB in 2000 us, all_reduce's factor 1 at 2 ranks.
  auto precise = perfgap::slurm::pair_busbw("# Collective test starting: all_reduce_perf\n" + two_ranks);
  ASSERT_TRUE(precise) << precise.error();
  EXPECT_NEAR(*precise, 4194304.0 / 2000e3, 1e-9);
  std::string zero = two_ranks;
  for (const char* from : {"   2.10    2.10  ", "   1.05    1.05  "}) {
    auto at = zero.find(from);
    ASSERT_NE(at, std::string::npos);
    zero.replace(at, std::string(from).size(), "   2.10    0.00  ");
  }
  EXPECT_FALSE(perfgap::slurm::pair_busbw(zero));
  EXPECT_FALSE(perfgap::slurm::pair_busbw("srun: error: no such node\n"));
}

}  // namespace
