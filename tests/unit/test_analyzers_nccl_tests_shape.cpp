// analyze nccl-tests --reference refuses a reference of another kind of run: another collective,
// another rank or node count, where both runs say (rank counts read from busbw/algbw where the
// output prints none and the collective's bus factor says it).
#include <gtest/gtest.h>

#include <fmt/format.h>

#include <filesystem>
#include <string>

#include "analyzers/analyzers.hpp"
#include "files.hpp"
#include "findings.hpp"
#include "parsers/nccl_tests.hpp"

namespace fs = std::filesystem;
using namespace perfgap;

namespace {

const char* kHeader =
    "#       size         count      type   redop    root     time   algbw   busbw  #wrong     time   algbw   busbw  #wrong\n"
    "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)\n";

// A table of 1, 2 and 4 MiB rows with these algbw figures, busbw = algbw x factor (printed to 0.01).
std::string nccl_shape_table(double factor, const char* redop, double a1, double a2, double a4, const std::string& head = "") {
  std::string t = head + kHeader;
  std::uint64_t size = 1 << 20;
  for (double a : {a1, a2, a4}) {
    t += fmt::format("{:>12} {:>13}     float {:>7}      -1    100.0 {:7.2f} {:7.2f}       0    100.0 {:7.2f} {:7.2f}       0\n", size, size / 4, redop, a,
                     a * factor, a, a * factor);
    size *= 2;
  }
  return t;
}

std::string nccl_rank_lines(int ranks, int per_node) {
  std::string t;
  for (int r = 0; r < ranks; ++r)
    t += fmt::format("#  Rank {:2} Group  0 Pid {} on node{:02} device {:2} [0x01] NVIDIA H100 80GB HBM3\n", r, 1000 + r, r / per_node, r % per_node);
  return t;
}

report::Finding nccl_judge(const std::string& run_text, const std::string& ref_text) {
  auto run = parsers::parse_nccl_tests(run_text);
  auto ref = parsers::parse_nccl_tests(ref_text);
  EXPECT_TRUE(run && ref);
  analyzers::NcclTestsOptions o;
  o.reference = &*ref;
  o.reference_source = "ref.txt";
  return analyzers::analyze_nccl_tests(*run, "run.txt", o)[0];
}

bool nccl_shape_evidence(const report::Finding& f, const std::string& source, const std::string& part) {
  for (const auto& e : f.evidence)
    if (e.source == source && e.observed.find(part) != std::string::npos) return true;
  return false;
}

// The run alone, no basis: nccl_tests.busbw as the standalone report has it.
report::Finding nccl_alone(const std::string& run_text, const std::string& source = "run.txt") {
  auto run = parsers::parse_nccl_tests(run_text);
  EXPECT_TRUE(run) << run_text;
  if (!run) return {};
  return fixture::find(analyzers::analyze_nccl_tests(*run, source, {}), "nccl_tests.busbw");
}

bool nccl_ranks_evidence(const report::Finding& f, const std::string& part) {
  for (const auto& e : f.evidence)
    if (e.source == "ranks" && e.observed.find(part) != std::string::npos) return true;
  return false;
}

}  // namespace

// 16 ranks (all_reduce: busbw/algbw 2 x 15/16 = 1.875) against 8 (1.75), no Rank lines in
// either, collective not named: the rank counts differ, so no verdict (it failed at ~40%).
TEST(AnalyzersNcclTestsShape, RankCountsReadFromBusbwOverAlgbwDiffer) {
  auto f = nccl_judge(nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00), nccl_shape_table(1.75, "sum", 60.00, 100.00, 150.00));
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("the reference is another kind of run"), std::string::npos) << f.title;
  EXPECT_NE(f.title.find("(16 ranks here, 8 in the reference)"), std::string::npos) << f.title;
  // The figures are kept.
  EXPECT_EQ(f.table.size(), 4u);
}

// all_reduce (redop sum) against an all_gather (redop none): another collective, whatever the
// figures say (it passed at 1382.9% on real captures).
TEST(AnalyzersNcclTestsShape, ReducingAgainstNonReducingCollective) {
  auto f = nccl_judge("# Collective test starting: all_reduce_perf\n" + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00),
                      nccl_shape_table(31.0 / 32, "none", 0.61, 1.24, 0.72));
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("a reducing collective here, one that does not reduce in the reference"), std::string::npos) << f.title;
  // Both named: the names decide.
  f = nccl_judge("# Collective test starting: all_reduce_perf\n" + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00),
                 "# Collective test starting: reduce_scatter_perf\n" + nccl_shape_table(15.0 / 16, "sum", 20.00, 40.00, 60.00));
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("collective all_reduce here, reduce_scatter in the reference"), std::string::npos) << f.title;
}

// Rank lines: 16 ranks on 2 nodes against 8 on 1.
TEST(AnalyzersNcclTestsShape, PrintedRanksAndNodesDiffer) {
  auto f = nccl_judge(nccl_rank_lines(16, 8) + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00),
                      nccl_rank_lines(8, 8) + nccl_shape_table(1.75, "sum", 60.00, 100.00, 150.00));
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_NE(f.title.find("(16 ranks here, 8 in the reference; 2 nodes here, 1 in the reference)"), std::string::npos) << f.title;
  // Both runs' shapes are in the evidence, not the title.
  EXPECT_EQ(f.title.find("collective not named"), std::string::npos) << f.title;
  EXPECT_TRUE(nccl_shape_evidence(f, "run.txt", "this run: collective not named (redop sum), 16 ranks, 2 nodes"));
  EXPECT_TRUE(nccl_shape_evidence(f, "ref.txt", "the reference: collective not named (redop sum), 8 ranks, 1 node"));
}

// The same shape still fails and passes as before; a rank count the figures do not settle (small
// algbw: several n fit) is a range, which refuses only a count outside it.
TEST(AnalyzersNcclTestsShape, SameShapeAndUnsettledCountsAreJudged) {
  auto same = nccl_judge(nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00), nccl_shape_table(1.875, "sum", 60.00, 100.00, 150.00));
  EXPECT_EQ(same.status, report::Status::fail) << same.title;
  auto pass = nccl_judge(nccl_shape_table(1.875, "sum", 60.00, 100.00, 150.00), nccl_shape_table(1.875, "sum", 60.00, 100.00, 150.00));
  EXPECT_EQ(pass.status, report::Status::pass) << pass.title;
  // all_gather at 32 ranks with algbw below 1.3 GB/s: about 27 to 37 ranks fit. Against a named
  // all_gather whose Rank lines show 32 the figures are compared; against 8, not.
  const std::string ag = "# Collective test starting: all_gather_perf\n";
  auto in_range = nccl_judge(nccl_shape_table(31.0 / 32, "none", 0.61, 1.24, 0.72), ag + nccl_rank_lines(32, 8) + nccl_shape_table(31.0 / 32, "none", 0.61, 1.24, 0.72));
  EXPECT_EQ(in_range.status, report::Status::pass) << in_range.title;
  auto outside = nccl_judge(nccl_shape_table(31.0 / 32, "none", 0.61, 1.24, 0.72), ag + nccl_rank_lines(8, 8) + nccl_shape_table(0.875, "none", 0.61, 1.24, 0.72));
  EXPECT_EQ(outside.status, report::Status::skip) << outside.title;
  EXPECT_NE(outside.title.find(" ranks here, 8 in the reference)"), std::string::npos) << outside.title;
  EXPECT_EQ(outside.title.find("(by busbw/algbw) here"), std::string::npos) << outside.title;
}

// Wrong results fail whatever the reference.
TEST(AnalyzersNcclTestsShape, WrongResultsStillFailAgainstAnotherShape) {
  std::string run = nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00);
  run.replace(run.find("       0"), 8, "       5");
  auto f = nccl_judge(run, nccl_shape_table(1.75, "sum", 60.00, 100.00, 150.00));
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
}

// An output that names no collective (no "Collective test starting", file input.txt): its
// figures tell all_reduce (busbw/algbw 2(n-1)/n, above 1 only for it) and reduce_scatter
// ((n-1)/n with a reducing redop), so explain can price that collective; all_gather and
// alltoall (redop none, the same factor) and two-rank all_reduce (factor 1, as sendrecv) stay
// untold.
TEST(AnalyzersNcclTestsShape, TheCollectiveMeasuredIsToldByItsFiguresWhereTheOutputNamesNone) {
  auto measured = [](const std::string& text) {
    auto run = parsers::parse_nccl_tests(text);
    EXPECT_TRUE(run);
    if (!run) return std::string("?");
    const auto f = analyzers::analyze_nccl_tests(*run, "logs/input.txt", {})[0];
    for (const auto& e : f.evidence)
      if (e.source == parsers::kCollectiveMeasuredEvidence) return e.observed;
    return std::string();
  };
  EXPECT_TRUE(measured(nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00)).starts_with("AllReduce (by busbw/algbw = 2(n-1)/n"));
  EXPECT_TRUE(measured(nccl_rank_lines(16, 8) + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00)).starts_with("AllReduce (by busbw/algbw"));
  EXPECT_TRUE(measured(nccl_shape_table(15.0 / 16, "sum", 20.00, 40.00, 60.00)).starts_with("ReduceScatter (by busbw/algbw = (n-1)/n"));
  EXPECT_EQ(measured(nccl_shape_table(15.0 / 16, "none", 20.00, 40.00, 60.00)), "");
  EXPECT_EQ(measured(nccl_shape_table(1.0, "sum", 20.00, 40.00, 60.00)), "");
  // Rank lines of fewer ranks than the factor fits: a cut list (review 9), the factor's count and collective win.
  EXPECT_TRUE(measured(nccl_rank_lines(8, 8) + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00)).starts_with("AllReduce (by busbw/algbw"));
  // More ranks than it fits (NCCL_TESTS_SPLIT_MASK's communicators are part of the ranks listed): not told.
  EXPECT_EQ(measured(nccl_rank_lines(32, 8) + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00)), "");
  // A name wins over the figures.
  EXPECT_EQ(measured("# Collective test starting: all_reduce_perf\n" + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00)), "AllReduce");
}

// The scale where the output prints no ranks, in the standalone report too (its title and the
// metrics compare holds two reports to): nccl-tests issue 78's quoted "mpirun -n 256 -npernode
// 16" (the title read "ranks not shown, nodes not shown"), and the p5 srun-labelled runs whose
// busbw/algbw is 1.875 (16 ranks) and 1.75 (8), which --reference already told apart.
TEST(AnalyzersNcclTestsShape, TheScaleIsReadFromTheLauncherAndFromBusbwOverAlgbw) {
  const fs::path shared = PERFGAP_SHARED_DIR;
  const auto fx = shared / "fixtures/nccl-tests/all-reduce-256gpu-nccl-2.8.4-old-format-NA-errors-nccl-tests-78.txt";
  const auto p5 = shared / "field/logs/nt-p5-2node-vs-1node-reference";
  if (!fs::exists(fx) || !fs::exists(p5)) GTEST_SKIP() << "../shared is absent";
  auto busbw = [](const fs::path& p) { return nccl_alone(fixture::read_file(p), p.filename().string()); };
  const auto f78 = busbw(fx);
  EXPECT_NE(f78.title.find("all_reduce_perf on 256 ranks, 16 nodes (by the mpirun command line)"), std::string::npos) << f78.title;
  EXPECT_DOUBLE_EQ(fixture::metric(f78, "ranks"), 256);
  EXPECT_DOUBLE_EQ(fixture::metric(f78, "nodes"), 16);
  EXPECT_TRUE(nccl_ranks_evidence(f78, "256 by the mpirun command line (line 1: -n 256 -npernode 16 -g 1)"));
  const auto two = busbw(p5 / "input.txt"), one = busbw(p5 / "reference.txt");
  EXPECT_NE(two.title.find("nccl-tests on 16 ranks (by busbw/algbw), nodes not shown"), std::string::npos) << two.title;
  EXPECT_NE(one.title.find("nccl-tests on 8 ranks (by busbw/algbw), nodes not shown"), std::string::npos) << one.title;
  EXPECT_DOUBLE_EQ(fixture::metric(two, "ranks"), 16);
  EXPECT_DOUBLE_EQ(fixture::metric(one, "ranks"), 8);
  EXPECT_TRUE(nccl_ranks_evidence(two, "16 by busbw/algbw: every printed pair fits 2(n-1)/n"));
}

// A launcher line the run's own figures contradict is not used (and said); with Rank lines the
// launcher adds the nodes they do not count; an unnamed run of redop sum with busbw = algbw is no
// count (sendrecv prints that on any number of ranks), a named all_reduce_perf's is 2.
TEST(AnalyzersNcclTestsShape, ALauncherLineTheFiguresContradictAndSendrecvRatios) {
  const auto f = nccl_alone("mpirun -np 8 ./all_reduce_perf -g 1\n" + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00));
  EXPECT_NE(f.title.find("all_reduce_perf on 16 ranks (by busbw/algbw)"), std::string::npos) << f.title;
  EXPECT_TRUE(nccl_ranks_evidence(f, "the mpirun command line (line 1: -np 8 -g 1) starts 8 ranks, busbw/algbw fits 16 alone: not this run's"));
  const auto agree = nccl_alone("srun -N 2 --ntasks-per-node=8 all_reduce_perf -b 1M -e 4M\n" + nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00));
  EXPECT_NE(agree.title.find("all_reduce_perf on 16 ranks, 2 nodes (by the srun command line)"), std::string::npos) << agree.title;
  EXPECT_DOUBLE_EQ(fixture::metric(agree, "nodes"), 2);
  const auto r1 = nccl_alone(nccl_shape_table(1.0, "sum", 20.00, 40.00, 60.00));
  EXPECT_NE(r1.title.find("nccl-tests on ranks not shown"), std::string::npos) << r1.title;
  const auto named = nccl_alone("# Collective test starting: all_reduce_perf\n" + nccl_shape_table(1.0, "sum", 20.00, 40.00, 60.00));
  EXPECT_NE(named.title.find("all_reduce_perf on 2 ranks (by busbw/algbw)"), std::string::npos) << named.title;
}

// Field review 4: the p5 16-rank run against its 8-rank reference titled "the reference is another
// kind of run (16 ranks (by busbw/algbw) here, 8 ranks (by busbw/algbw) in the reference:
// collective not named (redop sum), 16 ranks (by busbw/algbw), nodes not shown here, collective not
// named (redop sum), 8 ranks ...)": the difference once, then both shapes in full. The title names
// the difference once, briefly; the shapes are evidence.
TEST(AnalyzersNcclTestsShape, AReferenceOfAnotherShapeIsNamedOnceInTheTitle) {
  const fs::path p5 = fs::path(PERFGAP_SHARED_DIR) / "field/logs/nt-p5-2node-vs-1node-reference";
  if (!fs::exists(p5 / "reference.txt")) GTEST_SKIP() << p5 << " is absent";
  auto run = parsers::parse_nccl_tests(fixture::read_file(p5 / "input.txt"));
  auto ref = parsers::parse_nccl_tests(fixture::read_file(p5 / "reference.txt"));
  ASSERT_TRUE(run && ref);
  analyzers::NcclTestsOptions o;
  o.reference = &*ref;
  o.reference_source = "reference.txt";
  const auto f = fixture::find(analyzers::analyze_nccl_tests(*run, "input.txt", o), "nccl_tests.busbw");
  EXPECT_EQ(f.status, report::Status::skip) << f.title;
  EXPECT_EQ(f.title,
            "nccl-tests on 16 ranks (by busbw/algbw), nodes not shown: the reference is another kind of run (16 ranks here, 8 in the reference): "
            "busbw against it (worst 24.8%) compares two setups, not a regression; pass a reference of the same collective on as many ranks and "
            "nodes");
  EXPECT_TRUE(nccl_shape_evidence(f, "input.txt", "this run: collective not named (redop sum), 16 ranks (by busbw/algbw), nodes not shown"));
  EXPECT_TRUE(nccl_shape_evidence(f, "reference.txt", "the reference: collective not named (redop sum), 8 ranks (by busbw/algbw), nodes not shown"));
}

// nccl-tests#119: the Rank lines of 4 ranks of a 24-rank all_reduce (the paste cut the list, with
// or without a '...'), busbw/algbw = 2 x 23/24: the factor's 24 ranks, not "4 ranks, 1 node", and
// the 4 lines' host is no host list of the run.
TEST(AnalyzersNcclTestsShape, ARankListTheBusFactorContradictsIsCut) {
  const auto table = nccl_shape_table(2.0 * 23 / 24, "sum", 20.00, 40.00, 60.00);
  for (const auto& dots : {std::string(), std::string("...\n")}) {
    const auto f = nccl_alone(nccl_rank_lines(4, 8) + dots + table);
    EXPECT_NE(f.title.find("nccl-tests on 24 ranks (by busbw/algbw), nodes not shown"), std::string::npos) << f.title;
    EXPECT_DOUBLE_EQ(fixture::metric(f, "ranks"), 24);
    EXPECT_TRUE(dots.empty() ? nccl_ranks_evidence(f, "the '# Rank' lines name 4 ranks, busbw/algbw fits 2(n-1)/n, the bus factor of all_reduce")
                             : nccl_ranks_evidence(f, "the '# Rank' list is cut ('...' after 4 of its lines)"));
    for (const auto& e : f.evidence) EXPECT_NE(e.source, parsers::kNcclTestsHostsEvidence) << e.observed;
  }
  // --nodes gives the nodes; a node report of a host the cut list does not name is still a basis.
  auto cut = parsers::parse_nccl_tests(nccl_rank_lines(4, 8) + table);
  ASSERT_TRUE(cut);
  analyzers::NcclTestsOptions o;
  o.nodes = 3;
  o.nic_gbps_total = 400;
  o.nic_basis = "node02.json: 1 ACTIVE RDMA port";
  o.nic_basis_node = "node02";
  const auto given = fixture::find(analyzers::analyze_nccl_tests(*cut, "run.txt", o), "nccl_tests.busbw");
  EXPECT_NE(given.title.find("nccl-tests on 24 ranks (by busbw/algbw), 3 nodes (by --nodes): peak busbw 115.00 GB/s"), std::string::npos) << given.title;
  EXPECT_EQ(given.title.find("not among the hosts"), std::string::npos) << given.title;
  // Every rank's line, the factor agreeing: the lines count.
  const auto whole = nccl_alone(nccl_rank_lines(24, 8) + table);
  EXPECT_NE(whole.title.find("nccl-tests on 24 ranks, 3 nodes"), std::string::npos) << whole.title;
}

// nccl-tests#287: a run of 1 rank has busbw 0 by definition; said, not "no basis to judge it" alone.
// --op all (nccl-tests#167): rows of several ops in one table are said to be taken together.
TEST(AnalyzersNcclTestsShape, OneRankAndRowsOfSeveralOpsAreSaid) {
  const auto one = nccl_alone("# Collective test starting: alltoall_perf\n" + nccl_rank_lines(1, 8) + nccl_shape_table(0.0, "none", 20.00, 40.00, 60.00));
  EXPECT_NE(one.title.find("alltoall_perf on 1 rank, 1 node"), std::string::npos) << one.title;
  EXPECT_NE(one.title.find("with 1 rank nothing crosses a link, so busbw is 0 by definition"), std::string::npos) << one.title;
  auto max_rows = nccl_shape_table(1.875, "max", 10.00, 20.00, 30.00);
  max_rows.erase(0, std::string(kHeader).size());
  const auto ops = nccl_alone(nccl_shape_table(1.875, "sum", 20.00, 40.00, 60.00) + max_rows);
  EXPECT_NE(ops.title.find("(rows of 2 kinds, float sum -1, float max -1, taken together: each size's last row is judged)"), std::string::npos)
      << ops.title;
  EXPECT_TRUE(nccl_shape_evidence(ops, "run.txt", "rows of 2 kinds in one table (float sum -1, float max -1: -d all or -o all)"));
}
