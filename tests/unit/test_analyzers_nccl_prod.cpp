// analyze nccl-inspector and nccl-ras (analyzers/nccl_inspector.cpp, nccl_ras.cpp) over the
// fixtures of tests/fixtures/logs/nccl-inspector (written by its generate.py) and nccl-ras.
#include <gtest/gtest.h>

#include <algorithm>
#include <filesystem>

#include "analyzers/analyzers.hpp"
#include "files.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::log_fixture;
using fixture::read_file;

namespace {

struct NcclProdJob {
  std::vector<parsers::NcclInspector> runs;
  std::vector<std::string> names;
  std::vector<analyzers::NcclInspectorInput> inputs() const {
    std::vector<analyzers::NcclInspectorInput> in;
    for (std::size_t i = 0; i < runs.size(); ++i) in.push_back({names[i], &runs[i]});
    return in;
  }
};

NcclProdJob nccl_prod_job(const std::string& dir) {
  NcclProdJob j;
  std::vector<fs::path> files;
  for (const auto& e : fs::directory_iterator(log_fixture("nccl-inspector/" + dir))) files.push_back(e.path());
  std::sort(files.begin(), files.end());
  for (const auto& f : files) {
    auto r = parsers::parse_nccl_inspector(read_file(f));
    EXPECT_TRUE(r) << f << ": " << r.error().describe();
    if (!r) continue;
    j.runs.push_back(std::move(*r));
    j.names.push_back(f.filename().string());
  }
  return j;
}

std::vector<const report::Finding*> nccl_prod_all(const std::vector<report::Finding>& fs, const std::string& id) {
  std::vector<const report::Finding*> out;
  for (const auto& f : fs)
    if (f.id == id) out.push_back(&f);
  return out;
}

double nccl_prod_metric(const report::Finding& f, const std::string& name) {
  for (const auto& [n, v] : f.metrics)
    if (n == name) return v;
  ADD_FAILURE() << "no metric " << name << " in " << f.id;
  return -1;
}

}  // namespace

TEST(AnalyzersNcclInspector, HealthyJobNamesNoRankAndNoCommunicator) {
  auto j = nccl_prod_job("healthy");
  ASSERT_EQ(j.runs.size(), 8u);
  auto fs = analyzers::analyze_nccl_inspector(j.inputs(), {});
  auto summary = nccl_prod_all(fs, "nccl_inspector.summary");
  ASSERT_EQ(summary.size(), 1u);
  EXPECT_EQ(summary[0]->status, report::Status::pass);
  EXPECT_DOUBLE_EQ(nccl_prod_metric(*summary[0], "ranks"), 16);  // 8 DP ranks + 4 x 2 TP ranks
  EXPECT_DOUBLE_EQ(nccl_prod_metric(*summary[0], "communicators"), 5);
  EXPECT_DOUBLE_EQ(nccl_prod_metric(*summary[0], "hosts"), 4);
  EXPECT_DOUBLE_EQ(nccl_prod_metric(*summary[0], "p2p_records"), 8);
  for (const char* id : {"nccl_inspector.slow_rank", "nccl_inspector.late_rank", "nccl_inspector.slow_comm"}) {
    auto v = nccl_prod_all(fs, id);
    ASSERT_EQ(v.size(), 1u) << id;
    EXPECT_EQ(v[0]->status, report::Status::pass) << id << ": " << v[0]->title;
  }
  auto bw = nccl_prod_all(fs, "nccl_inspector.busbw");
  ASSERT_EQ(bw.size(), 1u);
  EXPECT_EQ(bw[0]->status, report::Status::skip);
  EXPECT_NE(bw[0]->title.find("--nics"), std::string::npos);
}

TEST(AnalyzersNcclInspector, AllRanksEqualNameNone) {
  // MAD 0: only the share away from the median could name one, and none is away.
  parsers::NcclInspector run;
  for (int r = 0; r < 8; ++r) {
    parsers::InspectorRankColl c;
    c.comm_id = "0x1";
    c.rank = r;
    c.n_ranks = 8;
    c.nnodes = 2;
    c.host = "h";
    c.coll = "AllGather";
    c.msg_bytes = 1u << 30;
    c.count = c.bw_count = 3;
    c.sum_exec_us = 3000;
    c.sum_busbw_gbs = 300;
    run.colls.push_back(c);
  }
  run.coll_records = 24;
  auto fs = analyzers::analyze_nccl_inspector({{"x", &run}}, {});
  EXPECT_EQ(nccl_prod_all(fs, "nccl_inspector.slow_rank")[0]->status, report::Status::pass);
  EXPECT_EQ(nccl_prod_all(fs, "nccl_inspector.late_rank")[0]->status, report::Status::pass);
  // Too few peers: nothing is judged, said as skip.
  run.colls.resize(2);
  auto two = analyzers::analyze_nccl_inspector({{"x", &run}}, {});
  EXPECT_EQ(nccl_prod_all(two, "nccl_inspector.slow_rank")[0]->status, report::Status::skip);
}

TEST(AnalyzersNcclInspector, SlowRankIsNamedWithItsHostAndBandwidthAgainstTheMedian) {
  auto j = nccl_prod_job("slow-rank");
  auto fs = analyzers::analyze_nccl_inspector(j.inputs(), {});
  auto slow = nccl_prod_all(fs, "nccl_inspector.slow_rank");
  ASSERT_EQ(slow.size(), 1u);
  EXPECT_EQ(slow[0]->status, report::Status::fail) << slow[0]->title;
  EXPECT_EQ(slow[0]->subject, "0x5f3a9c21d4e7b1 rank 2");
  EXPECT_NE(slow[0]->title.find("gpu-node-02 (pid 41002)"), std::string::npos) << slow[0]->title;
  EXPECT_NE(slow[0]->title.find("'DP Group 0'"), std::string::npos) << slow[0]->title;
  EXPECT_NEAR(nccl_prod_metric(*slow[0], "busbw_ratio"), 2900.0 / 6100, 0.02);
  EXPECT_EQ(nccl_prod_metric(*slow[0], "rank"), 2);
  EXPECT_EQ(nccl_prod_all(fs, "nccl_inspector.late_rank")[0]->status, report::Status::pass);
  EXPECT_EQ(nccl_prod_all(fs, "nccl_inspector.slow_comm")[0]->status, report::Status::pass);
}

TEST(AnalyzersNcclInspector, LateRankIsTheOneWhosePeersWaitAndItsWaitIsMeasured) {
  auto j = nccl_prod_job("late-rank");
  auto fs = analyzers::analyze_nccl_inspector(j.inputs(), {});
  auto late = nccl_prod_all(fs, "nccl_inspector.late_rank");
  ASSERT_EQ(late.size(), 1u);
  EXPECT_EQ(late[0]->status, report::Status::warn);
  EXPECT_EQ(late[0]->subject, "0x5f3a9c21d4e7b1 rank 5");
  EXPECT_NE(late[0]->title.find("gpu-node-03"), std::string::npos) << late[0]->title;
  // The others spend ~4600 us, rank 5 2900 us: ~1700 us of waiting per AllReduce, 5 of them.
  EXPECT_NEAR(nccl_prod_metric(*late[0], "wait_us_per_op"), 1700, 1700 * 0.05);
  EXPECT_NEAR(nccl_prod_metric(*late[0], "wait_ms_total"), 5 * 1.7, 5 * 1.7 * 0.05);
  EXPECT_EQ(nccl_prod_all(fs, "nccl_inspector.slow_rank")[0]->status, report::Status::pass);
}

TEST(AnalyzersNcclInspector, SlowNodeShowsAsItsSlowCommunicator) {
  auto j = nccl_prod_job("slow-node");
  auto fs = analyzers::analyze_nccl_inspector(j.inputs(), {});
  auto comm = nccl_prod_all(fs, "nccl_inspector.slow_comm");
  ASSERT_EQ(comm.size(), 1u);
  EXPECT_EQ(comm[0]->status, report::Status::fail) << comm[0]->title;
  EXPECT_EQ(comm[0]->subject, "0x2c3d4e5f607182");
  EXPECT_NE(comm[0]->title.find("gpu-node-02"), std::string::npos) << comm[0]->title;
  EXPECT_NEAR(nccl_prod_metric(*comm[0], "busbw_ratio"), 0.4, 0.03);
}

TEST(AnalyzersNcclInspector, BusbwAgainstTheNicsBasisOfCommunicatorsAcrossNodes) {
  auto j = nccl_prod_job("healthy");
  analyzers::NcclInspectorOptions o;
  o.nic_gbps_total = 4 * 400;  // 200 GB/s; the DP AllReduce at ~165 GB/s busbw
  o.nic_basis = "--nics 4 --link-gbps 400";
  const auto ok_fs = analyzers::analyze_nccl_inspector(j.inputs(), o);
  auto ok = nccl_prod_all(ok_fs, "nccl_inspector.busbw");
  ASSERT_EQ(ok.size(), 1u);  // only the communicator across nodes
  EXPECT_EQ(ok[0]->subject, "0x5f3a9c21d4e7b1");
  EXPECT_EQ(ok[0]->status, report::Status::pass) << ok[0]->title;
  o.nic_gbps_total = 8 * 400;
  o.nic_basis = "--nics 8 --link-gbps 400";
  const auto low_fs = analyzers::analyze_nccl_inspector(j.inputs(), o);
  auto low = nccl_prod_all(low_fs, "nccl_inspector.busbw");
  ASSERT_EQ(low.size(), 1u);
  EXPECT_EQ(low[0]->status, report::Status::fail) << low[0]->title;
  EXPECT_NEAR(nccl_prod_metric(*low[0], "peak_ratio"), 165.0 / 400, 0.02);
  EXPECT_DOUBLE_EQ(nccl_prod_metric(*low[0], "expected_busbw_gbps"), 400);
  EXPECT_NE(low[0]->evidence[0].expected->find("--nics 8 --link-gbps 400"), std::string::npos);
}

TEST(AnalyzersNcclRas, DeadRankMissingProcessErrorAndMismatchAreNamed) {
  auto r = parsers::parse_nccl_ras(read_file(log_fixture("nccl-ras/dead-rank.txt")));
  ASSERT_TRUE(r);
  auto fs = analyzers::analyze_nccl_ras(*r, "ras.txt");
  auto dead = nccl_prod_all(fs, "nccl_ras.dead");
  ASSERT_EQ(dead.size(), 1u);
  EXPECT_EQ(dead[0]->status, report::Status::fail);
  EXPECT_NE(dead[0]->title.find("process 52817 on node 10.10.4.23, GPU 5"), std::string::npos) << dead[0]->title;
  EXPECT_EQ(dead[0]->evidence[0].source, "ras.txt:29");
  auto missing = nccl_prod_all(fs, "nccl_ras.missing");
  ASSERT_EQ(missing.size(), 1u);
  EXPECT_EQ(missing[0]->status, report::Status::fail);
  EXPECT_NE(missing[0]->title.find("1 process of 32 job processes sent no communicator data"), std::string::npos) << missing[0]->title;
  EXPECT_NE(missing[0]->title.find("1 communicator incomplete"), std::string::npos) << missing[0]->title;
  auto err = nccl_prod_all(fs, "nccl_ras.comm_error");
  ASSERT_EQ(err.size(), 1u);
  EXPECT_EQ(err[0]->status, report::Status::fail);
  EXPECT_EQ(err[0]->subject, "7c3f9a2e51b04d16");
  EXPECT_NE(err[0]->title.find("Remote process error"), std::string::npos) << err[0]->title;
  EXPECT_EQ(nccl_prod_metric(*err[0], "ranks_named"), 3);
  auto mm = nccl_prod_all(fs, "nccl_ras.mismatch");
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(mm[0]->status, report::Status::warn);
  EXPECT_EQ(mm[0]->subject, "0e41d2c7a9b35f68");
}

TEST(AnalyzersNcclRas, HealthyStatusPassesAndACutShortOneDecidesNothing) {
  auto r = parsers::parse_nccl_ras(read_file(log_fixture("nccl-ras/healthy.txt")));
  ASSERT_TRUE(r);
  auto fs = analyzers::analyze_nccl_ras(*r, "ras.txt");
  ASSERT_EQ(fs.size(), 4u);
  for (const auto& f : fs) EXPECT_EQ(f.status, report::Status::pass) << f.id << ": " << f.title;
  EXPECT_NE(nccl_prod_all(fs, "nccl_ras.comm_error")[0]->title.find("13 communicators"), std::string::npos);
  auto cut = parsers::parse_nccl_ras(read_file(log_fixture("nccl-ras/cut-short.txt")));
  ASSERT_TRUE(cut);
  for (const auto& f : analyzers::analyze_nccl_ras(*cut, "cut.txt")) EXPECT_EQ(f.status, report::Status::skip) << f.id << ": " << f.title;
}

// RAS names the smaller group of a MISMATCH whichever side it is on (NVIDIA/nccl#1911: the two
// ranks named were ahead; NCCL's own example: the six named are behind). The ranks ahead are
// never given as the job's stragglers (the "nccl ranks" line explain and fleet read).
TEST(AnalyzersNcclRas, MismatchSaysWhetherTheNamedRanksAreBehindOrAhead) {
  auto status = [](const std::string& warnings) {
    return "NCCL version 2.27.3+cuda12.8 compiled with CUDA 12.8\n\nJob summary\n===========\n\n"
           "  Nodes  Processes         GPUs\n(total)    (total)      (total)\n      4         32           32\n\n"
           "Communicators... (0.00s)\n=============\n\n"
           "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
           "    #  in group  per comm  per node  per comm  in group\n"
           "    0         1         4         8        32        32   RUNNING  MISMATCH\n\n"
           "Errors\n======\n\nWarnings\n========\n\n#0-0 (27a079b828ff1a75) MISMATCH\n" +
           warnings;
  };
  auto mismatch = [&](const std::string& warnings) {
    auto r = parsers::parse_nccl_ras(status(warnings));
    EXPECT_TRUE(r) << r.error().describe();
    auto fs = analyzers::analyze_nccl_ras(*r, "ras.txt");
    auto mm = nccl_prod_all(fs, "nccl_ras.mismatch");
    EXPECT_EQ(mm.size(), 1u);
    return *mm[0];
  };
  const auto ahead = mismatch(
      "  Communicator ranks have different AllGather operation counts\n  30 ranks have launched up to operation 640\n"
      "  2 ranks have launched up to operation 641\n  Rank 12 -- GPU 4 managed by process 323032 on node 10.0.0.1\n"
      "  Rank 13 -- GPU 5 managed by process 323033 on node 10.0.0.1\n");
  EXPECT_NE(ahead.title.find("the ranks RAS names (12, 13) are ahead, at operation 641: the job waits on the other 30 ranks at operation 640"),
            std::string::npos)
      << ahead.title;
  EXPECT_NE(ahead.fix.find("the 30 ranks at operation 640 are behind"), std::string::npos) << ahead.fix;
  EXPECT_EQ(nccl_prod_metric(ahead, "ranks_behind"), 30);
  for (const auto& e : ahead.evidence) EXPECT_NE(e.source, std::string(parsers::kNcclRanksEvidence)) << e.observed;

  const auto behind = mismatch(
      "  Communicator ranks have different collective operation counts\n  26 ranks have launched up to operation 6650\n"
      "  6 ranks have launched up to operation 6649\n  Rank 0 -- GPU 0 managed by process 483072 on node 10.0.0.2\n"
      "  Rank 2 -- GPU 2 managed by process 483074 on node 10.0.0.2\n");
  EXPECT_NE(behind.title.find("the ranks named (0, 2) are behind, at operation 6649 (the other 26 at 6650)"), std::string::npos) << behind.title;
  bool named = false;
  for (const auto& e : behind.evidence) named = named || e.source == parsers::kNcclRanksEvidence;
  EXPECT_TRUE(named);

  // One rank behind, its count on its own line (2.27's form).
  const auto one = mismatch(
      "  Communicator ranks have different AllReduce operation counts\n  7 ranks have launched up to operation 64\n"
      "  Rank 7 has launched up to operation 60 -- GPU 3 managed by process 1650386 on node node1\n");
  EXPECT_NE(one.title.find("the ranks named (7) are behind, at operation 60 (the other 7 at 64)"), std::string::npos) << one.title;
}

// NVIDIA/nccl#1762: the table's Errors column says MISMATCH, but the status was cut after its
// Errors section (no Warnings, where MISMATCH blocks are): undecided, not "no communicator with
// ranks out of step".
TEST(AnalyzersNcclRas, AMismatchTheTableMarksButTheStatusLacksIsNoPass) {
  const std::string text =
      "NCCL version 2.27.3+cuda12.8 compiled with CUDA 12.8\n\nJob summary\n===========\n\n"
      "  Nodes  Processes         GPUs\n(total)    (total)      (total)\n      1          2            2\n\n"
      "Communicators... (0.00s)\n=============\n\n"
      "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
      "    #  in group  per comm  per node  per comm  in group\n"
      "    0         4         1         1         2         1   RUNNING  MISMATCH\n\n"
      "Errors\n======\n\n";
  auto r = parsers::parse_nccl_ras(text);
  ASSERT_TRUE(r) << r.error().describe();
  auto fs = analyzers::analyze_nccl_ras(*r, "ras.txt");
  auto mm = nccl_prod_all(fs, "nccl_ras.mismatch");
  ASSERT_EQ(mm.size(), 1u);
  EXPECT_EQ(mm[0]->status, report::Status::skip) << mm[0]->title;
  EXPECT_NE(mm[0]->title.find("the communicators table marks 4 communicators MISMATCH, but the status holds no MISMATCH block"),
            std::string::npos)
      << mm[0]->title;
  EXPECT_EQ(nccl_prod_all(fs, "nccl_ras.comm_error")[0]->status, report::Status::pass);
}
