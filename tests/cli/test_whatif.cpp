// `perfgap whatif` through the real binary: a job's directory of Kineto traces or nsys exports
// (the kind from the inputs), the changes sorted by saving in JSON and text, a broken rank an
// error finding naming its file and line (exit 1), bad usage exit 2.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "profile_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"

namespace fs = std::filesystem;
using perfgap::fixture::finding;
using perfgap::fixture::json_report;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_in;
namespace gen = perfgap::gen;

namespace {

// A 16-rank job on two nodes whose clocks differ, ranks 4 and 5 20 ms late together.
gen::Scenario whatif_cli_job() {
  gen::JobSpec spec;
  spec.ranks = 16;
  spec.late_rank = 4;
  spec.also_late = {5};
  spec.late_ms = 20;
  spec.clock_offset_ms = gen::node_clock_offsets(16);
  return gen::job(spec);
}

std::string whatif_cli_write(const TempDir& d, const gen::Scenario& s, bool nsys) {
  fs::create_directories(d.path() + "/ranks");
  for (std::size_t r = 0; r < s.gpus.size(); ++r) {
    const std::string name = "ranks/rank" + std::to_string(r);
    if (nsys) EXPECT_EQ(gen::write_nsys_sqlite(gen::rank_of(s, r), d.path() + "/" + name + ".sqlite"), "");
    else write_in(d, name + (r % 2 ? ".json.gz" : ".json"), r % 2 ? perfgap::fixture::gzip_text(gen::kineto_json(s, r, static_cast<int>(r)))
                                                                   : gen::kineto_json(s, r, static_cast<int>(r)));
  }
  return d.path() + "/ranks";
}

// The whatif.* changes of a report in its order, with their savings.
std::vector<std::pair<std::string, double>> whatif_cli_savings(const nlohmann::json& j) {
  std::vector<std::pair<std::string, double>> out;
  for (const auto& f : j["findings"])
    if (f["id"].get<std::string>().starts_with("whatif.") && f["id"] != "whatif.replay" && f["metrics"].contains("saved_ms_per_iter"))
      out.emplace_back(f["id"].get<std::string>() + "@" + f["subject"].get<std::string>(), f["metrics"]["saved_ms_per_iter"].get<double>());
  return out;
}

}  // namespace

TEST(WhatifCli, KinetoRanksLateTogetherAreTheFirstChange) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  auto j = json_report(PERFGAP_BINARY, {"whatif", dir, "--busbw", "400"}, 0);
  EXPECT_EQ(j["source"]["kind"], "whatif");
  EXPECT_EQ(j["source"]["inputs"].size(), 16u);
  auto replay = finding(j, "whatif.replay");
  ASSERT_TRUE(replay);
  EXPECT_EQ((*replay)["status"], "pass") << (*replay)["title"];
  const auto saved = whatif_cli_savings(j);
  ASSERT_GE(saved.size(), 3u);
  EXPECT_TRUE(saved[0].first.starts_with("whatif.late_set@")) << saved[0].first;
  EXPECT_NEAR(saved[0].second, 20, 0.15);
  for (std::size_t i = 1; i < saved.size(); ++i) EXPECT_LE(saved[i].second, saved[i - 1].second) << saved[i].first;
  EXPECT_TRUE(finding(j, "whatif.busbw"));
  // A healthy all_reduce_perf run reached 361.68 GB/s at 64 MiB, the job's AllReduce size.
  const std::string ref = perfgap::fixture::read_file(perfgap::fixture::log_fixture("nccl-tests/ref-allreduce.txt"));
  auto n = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", perfgap::fixture::log_fixture("nccl-tests/ref-allreduce.txt")}, 0);
  auto nt = finding(n, "whatif.nccl_tests");
  ASSERT_TRUE(nt) << n.dump(1);
  EXPECT_NEAR((*nt)["metrics"]["saved_ms_per_iter"].get<double>(), 20 - 67108864 * 1.875 / 361.68e9 * 1e3, 0.15);
  // An output that does not name its collective: its path does ("allreduce", not "reduce"), or
  // all_reduce=FILE; else exit 2 saying how to give it.
  std::string rows;
  for (std::size_t at = 0, next = 0; at < ref.size(); at = next) {
    next = ref.find('\n', at);
    next = next == std::string::npos ? ref.size() : next + 1;
    if (ref.substr(at, next - at).find("_perf") == std::string::npos) rows += ref.substr(at, next - at);
  }
  const auto unnamed = write_in(d, "bw/run.txt", rows);
  auto why = run_binary(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", unnamed});
  EXPECT_EQ(why.status, 2);
  EXPECT_NE(why.err.find("give it as all_reduce=" + unnamed), std::string::npos) << why.err;
  for (const auto& arg : {"all_reduce=" + unnamed, write_in(d, "bw/p5-allreduce-16g.txt", rows)}) {
    auto k = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", arg}, 0);
    auto f = finding(k, "whatif.nccl_tests");
    ASSERT_TRUE(f) << arg;
    EXPECT_NE((*f)["evidence"][0]["observed"].get<std::string>().find(": AllReduce ("), std::string::npos) << (*f)["evidence"].dump();
    EXPECT_NEAR((*f)["metrics"]["saved_ms_per_iter"].get<double>(), (*nt)["metrics"]["saved_ms_per_iter"].get<double>(), 1e-9) << arg;
  }
  auto bad = run_binary(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", dir + "/rank0.json"});
  EXPECT_EQ(bad.status, 2);
  EXPECT_NE(bad.err.find("--nccl-tests " + dir + "/rank0.json"), std::string::npos) << bad.err;
  // The text report lists them in the same order, the replay first.
  auto t = run_binary(PERFGAP_BINARY, {"whatif", dir});
  EXPECT_EQ(t.status, 0) << t.err;
  const auto at_replay = t.out.find("whatif.replay"), at_set = t.out.find("whatif.late_set"), at_launch = t.out.find("whatif.launch");
  EXPECT_LT(at_replay, at_set) << t.out;
  EXPECT_LT(at_set, at_launch) << t.out;
}

TEST(WhatifCli, NsysExportsAreReadAsNsysAndNameTheirNodes) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), true);
  auto j = json_report(PERFGAP_BINARY, {"whatif", dir, "--busbw", "100"}, 0);
  EXPECT_EQ(j["source"]["inputs"][0].get<std::string>().ends_with(".sqlite"), true);
  // nsys exports record no message sizes: --busbw cannot be replayed, and says so.
  auto bw = finding(j, "whatif.busbw");
  ASSERT_TRUE(bw);
  EXPECT_EQ((*bw)["status"], "skip");
  EXPECT_NE((*bw)["title"].get<std::string>().find("no collective's size is in the traces"), std::string::npos) << (*bw)["title"];
  auto set = finding(j, "whatif.late_set");
  ASSERT_TRUE(set);
  EXPECT_NEAR((*set)["metrics"]["saved_ms_per_iter"].get<double>(), 20, 0.15);
  // Ranks 4 and 5 are on node0: the node's change saves what they cost.
  auto node = finding(j, "whatif.node", "node0");
  ASSERT_TRUE(node);
  EXPECT_NEAR((*node)["metrics"]["saved_ms_per_iter"].get<double>(), 20, 0.15);
}

TEST(WhatifCli, ABrokenRankIsAnErrorFindingAndBadUsageIsExit2) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  const std::string whole = perfgap::fixture::read_file(dir + "/rank6.json");
  const std::string cut = write_in(d, "ranks/rank6.json", whole.substr(0, whole.size() / 3));
  auto j = json_report(PERFGAP_BINARY, {"whatif", dir}, 1);
  bool said = false;
  for (const auto& f : j["findings"])
    said = said || (f["status"] == "error" && f["title"].get<std::string>().find(cut) != std::string::npos &&
                    f["title"].get<std::string>().find("line ") != std::string::npos &&
                    f["fix"].get<std::string>().find("cut short") != std::string::npos);  // a whole copy, not another format
  EXPECT_TRUE(said) << j.dump(1);
  auto rk = finding(j, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["status"], "warn");
  auto r = run_binary(PERFGAP_BINARY, {"whatif", d.path() + "/nothing-here"});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("nothing-here"), std::string::npos) << r.err;
  r = run_binary(PERFGAP_BINARY, {"whatif", dir, "--busbw", "-3"});
  EXPECT_EQ(r.status, 2) << r.err;
  r = run_binary(PERFGAP_BINARY, {"whatif", dir, "--kind", "perf"});
  EXPECT_EQ(r.status, 2) << r.err;
}

// Another program's .json beside the traces (a run's config) is no rank: left aside and said,
// the job whole (profile.ranks passes, no error, no "ranks missing"); named on its own it is an
// error as before. --digest over the directory leaves it aside too.
TEST(WhatifCli, AJsonBesideTheTracesThatIsNoTraceIsLeftAside) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  const std::string config = write_in(d, "ranks/config.json", "{\"lr\": 0.001, \"batch\": 32}\n");
  auto j = json_report(PERFGAP_BINARY, {"whatif", dir}, 0);
  auto rk = finding(j, "profile.ranks");
  ASSERT_TRUE(rk);
  EXPECT_EQ((*rk)["status"], "pass") << rk->dump(1);
  EXPECT_NE((*rk)["title"].get<std::string>().find("16 of 16 ranks"), std::string::npos) << rk->dump(1);
  EXPECT_NE((*rk)["title"].get<std::string>().find("1 file beside them"), std::string::npos) << rk->dump(1);
  EXPECT_EQ((*rk)["metrics"]["not_traces"], 1);
  EXPECT_EQ((*rk)["metrics"]["unreadable"], 0);
  for (const auto& f : j["findings"]) EXPECT_NE(f["status"], "error") << f.dump(1);
  auto named = json_report(PERFGAP_BINARY, {"whatif", config, dir + "/rank0.json", dir + "/rank1.json.gz"}, 1);
  bool error = false;
  for (const auto& f : named["findings"]) error = error || (f["status"] == "error" && f["subject"] == config);
  EXPECT_TRUE(error) << named.dump(1);
  auto digests = json_report(PERFGAP_BINARY, {"whatif", "--digest", d.path() + "/digests", dir}, 0);
  bool aside = false;
  for (const auto& f : digests["findings"]) aside = aside || (f["id"] == "whatif.digest" && f["subject"] == config && f["status"] == "skip");
  EXPECT_TRUE(aside) << digests.dump(1);
  EXPECT_FALSE(fs::exists(d.path() + "/digests/config.pgdigest"));
}

// whatif --digest DIR where the traces are, whatif DIR elsewhere: the same answers.
TEST(WhatifCli, DigestsWrittenWhereTheTracesAreGiveTheSameAnswers) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  const std::string out = d.path() + "/digests";
  auto w = json_report(PERFGAP_BINARY, {"whatif", "--digest", out, dir}, 0);
  std::size_t written = 0;
  for (const auto& f : w["findings"]) written += f["id"] == "whatif.digest" && f["status"] == "pass";
  EXPECT_EQ(written, 16u);
  EXPECT_TRUE(fs::exists(out + "/rank3.pgdigest"));
  EXPECT_TRUE(fs::exists(out + "/rank4.pgdigest")) << "rank4.json.gz: its name without .json.gz";
  auto from_traces = json_report(PERFGAP_BINARY, {"whatif", dir}, 0);
  auto from_digests = json_report(PERFGAP_BINARY, {"whatif", out}, 0);
  EXPECT_EQ(from_digests["source"]["inputs"].size(), 16u);
  EXPECT_EQ(from_digests["findings"], from_traces["findings"]);
  // A damaged one: an error finding naming it and the byte, exit 1; a DIR that is a file: exit 2.
  write_in(d, "digests/rank7.pgdigest", "perfgap-digest\n\x01\x00\x00\x00junk");
  auto damaged = json_report(PERFGAP_BINARY, {"whatif", out}, 1);
  bool said = false;
  for (const auto& f : damaged["findings"])
    said = said || (f["status"] == "error" && f["title"].get<std::string>().find("rank7.pgdigest") != std::string::npos &&
                    f["title"].get<std::string>().find("damaged digest: byte") != std::string::npos);
  EXPECT_TRUE(said) << damaged.dump(1);
  auto r = run_binary(PERFGAP_BINARY, {"whatif", "--digest", dir + "/rank0.json", dir});
  EXPECT_EQ(r.status, 2);
  EXPECT_NE(r.err.find("--digest " + dir + "/rank0.json: is not a directory"), std::string::npos) << r.err;
}

// A whatif report that replayed nothing headed "OK", read as "nothing to gain". One rank of a
// pipeline alone (its peers' traces not given): SKIP and why in the text headline and the JSON's
// `undecided`; exit 0 (the contract has no exit status of its own for "could not decide"). The
// public HTA trace (rank 0 of 16) is no pipeline: its SendRecv kernels were launched by
// nccl:all_to_all, nccl:all_reduce, nccl:_all_gather_base and nccl:_reduce_scatter_base, so its
// collectives are replayed.
TEST(WhatifCli, NothingReplayedHeadsSkipAndWhyNotOk) {
  TempDir d;
  const auto one = write_in(d, "rank0.json", gen::kineto_json(gen::pipeline_job({}), 0, 0));
  std::vector<std::string> inputs{one};
  const auto hta = std::string(PERFGAP_SHARED_DIR) + "/fixtures/profiles/kineto_hta_a100_ws16_rank0_sendrecv.json.gz";
  if (fs::exists(hta)) {
    auto t = run_binary(PERFGAP_BINARY, {"whatif", hta});
    EXPECT_EQ(t.status, 0) << t.err;
    EXPECT_EQ(t.out.find("point-to-point"), std::string::npos) << t.out;
    EXPECT_NE(t.out.find("whatif.replay"), std::string::npos) << t.out;
  }
  for (const auto& in : inputs) {
    auto t = run_binary(PERFGAP_BINARY, {"whatif", in});
    EXPECT_EQ(t.status, 0) << t.err;
    const auto head = t.out.substr(0, t.out.find('\n'));
    EXPECT_EQ(head.rfind("perfgap whatif: SKIP  0 fail, 0 warn, 0 pass, 1 skip, 0 error; nothing could be replayed: the NCCL kernels are point-to-point", 0), 0u)
        << head;
    EXPECT_EQ(head.find(" OK "), std::string::npos) << head;
    auto j = json_report(PERFGAP_BINARY, {"whatif", in}, 0);
    ASSERT_TRUE(j.contains("undecided")) << j.dump(1);
    EXPECT_TRUE(j["undecided"].get<std::string>().starts_with("nothing could be replayed: the NCCL kernels are point-to-point")) << j["undecided"];
  }
  // A pipeline missing a rank's trace: the replay warns and no change is replayed; the headline
  // says that too. The whole pipeline: changes replayed, no `undecided`.
  gen::PipelineSpec spec;
  spec.slow_stage = 2;
  const auto job = gen::pipeline_job(spec);
  fs::create_directories(d.path() + "/pipe");
  for (std::size_t r = 0; r < job.gpus.size(); ++r) write_in(d, "pipe/rank" + std::to_string(r) + ".json", gen::kineto_json(job, r, static_cast<int>(r)));
  EXPECT_FALSE(json_report(PERFGAP_BINARY, {"whatif", d.path() + "/pipe"}, 0).contains("undecided"));
  fs::remove(d.path() + "/pipe/rank1.json");
  auto part = run_binary(PERFGAP_BINARY, {"whatif", d.path() + "/pipe"});
  EXPECT_EQ(part.status, 0) << part.err;
  EXPECT_NE(part.out.substr(0, part.out.find('\n')).find("; no change could be replayed: replayed step"), std::string::npos) << part.out;
}

// A pipeline with data-parallel copies (3 copies of 4 stages, each stage all-reducing across its
// copies; rank 5 computes 1.5x longer): the real binary replays sends, receives and AllReduces
// as one graph and names rank 5, within 2% of the step of the generator's answer, and no rank
// that only waited for it (its pipeline peers in copy 1, its stage's other copies).
TEST(WhatifCli, PipelineWithDataParallelCopiesNamesTheSlowRank) {
  TempDir d;
  gen::PipelineSpec spec;
  spec.replicas = 3;
  spec.dp_allreduce = true;
  spec.slow_rank = 5;
  gen::PipelineAnswer answer;
  const auto job = gen::pipeline_job(spec, &answer);
  fs::create_directories(d.path() + "/ppdp");
  for (std::size_t r = 0; r < job.gpus.size(); ++r) write_in(d, "ppdp/rank" + std::to_string(r) + ".json", gen::kineto_json(job, r, static_cast<int>(r)));
  const auto j = json_report(PERFGAP_BINARY, {"whatif", d.path() + "/ppdp"}, 0);
  const auto replay = finding(j, "whatif.replay");
  ASSERT_TRUE(replay) << j.dump(1);
  EXPECT_EQ((*replay)["status"], "pass") << (*replay)["title"];
  EXPECT_NE((*replay)["title"].get<std::string>().find("collectives joined on one clock"), std::string::npos) << (*replay)["title"];
  const auto rank = finding(j, "whatif.rank");
  ASSERT_TRUE(rank) << j.dump(1);
  EXPECT_NE((*rank)["subject"].get<std::string>().find("rank 5 "), std::string::npos) << (*rank)["subject"];
  EXPECT_NEAR((*rank)["metrics"]["saved_ms_per_iter"].get<double>(), answer.step_ms - answer.balanced_step_ms, 0.02 * answer.step_ms);
  for (const auto& f : j["findings"])
    if (f["id"] == "whatif.rank" || f["id"] == "whatif.late_set") {
      EXPECT_NE(f["subject"].get<std::string>().find("rank 5 "), std::string::npos) << f["subject"];
    }
  // analyze's profile.straggler names the same rank with the same saving (it named ranks 4-7,
  // rank 5 and its three pipeline peers that only wait for it, late together).
  const auto a = json_report(PERFGAP_BINARY, {"analyze", "kineto", d.path() + "/ppdp"}, 0);
  const auto st = finding(a, "profile.straggler");
  ASSERT_TRUE(st) << a.dump(1);
  EXPECT_EQ((*st)["status"], "warn") << (*st)["title"];
  const std::string title = (*st)["title"];
  EXPECT_NE(title.find("rank 5 "), std::string::npos) << title;
  for (const std::string waiting : {"rank 4 ", "rank 6 ", "rank 7 "}) EXPECT_EQ(title.find(waiting), std::string::npos) << title;
  EXPECT_NEAR((*st)["metrics"]["cost_ms_per_iter"].get<double>(), (*rank)["metrics"]["saved_ms_per_iter"].get<double>(), 0.01) << title;
}

// --nccl-tests of another scale than the job's (8 ranks on one node for a 16-rank job on two):
// its bandwidth crossed other links; the finding says each run's ranks and nodes, and a run of
// another rank count in its title. A run at the job's scale says its scale and no more.
TEST(WhatifCli, NcclTestsOfAnotherScaleIsSaid) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  const std::string ref = perfgap::fixture::read_file(perfgap::fixture::log_fixture("nccl-tests/ref-allreduce.txt"));
  auto with_ranks = [&](const std::string& name, int ranks, int per_node) {
    std::string head = "# nThread 1 nGpus 1 minBytes 524288 maxBytes 67108864\n# Using devices\n";
    for (int r = 0; r < ranks; ++r)
      head += "#  Rank " + std::to_string(r) + " Group  0 Pid " + std::to_string(1000 + r) + " on node" + std::to_string(r / per_node) + " device " +
              std::to_string(r % per_node) + " [0x18] NVIDIA H100 80GB HBM3\n";
    return write_in(d, name, head + ref);
  };
  auto small = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", with_ranks("bw8/all_reduce.txt", 8, 8)}, 0);
  auto nt = finding(small, "whatif.nccl_tests");
  ASSERT_TRUE(nt) << small.dump(1);
  EXPECT_NE((*nt)["title"].get<std::string>().find("another scale than the job's 16 ranks"), std::string::npos) << (*nt)["title"];
  EXPECT_NE((*nt)["evidence"].dump().find("nccl-tests measured on 8 ranks on 1 node; the job has 16 ranks"), std::string::npos) << (*nt)["evidence"].dump();
  EXPECT_EQ((*nt)["metrics"].value("other_scale", 0.0), 1) << "explain takes it as a hypothesis";
  auto same = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", with_ranks("bw16/all_reduce.txt", 16, 8)}, 0);
  auto ok = finding(same, "whatif.nccl_tests");
  ASSERT_TRUE(ok);
  EXPECT_EQ((*ok)["title"].get<std::string>().find("another scale"), std::string::npos) << (*ok)["title"];
  EXPECT_FALSE((*ok)["metrics"].contains("other_scale"));
  // An output naming no ranks: its busbw/algbw ratio (1.75: all_reduce's 2(n-1)/n) says 8.
  auto unnamed = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", with_ranks("bw0/all_reduce.txt", 0, 8)}, 0);
  auto inferred = finding(unnamed, "whatif.nccl_tests");
  ASSERT_TRUE(inferred);
  EXPECT_NE((*inferred)["evidence"].dump().find("nccl-tests measured on 8 ranks (by busbw/algbw); the job has 16 ranks"), std::string::npos)
      << (*inferred)["evidence"].dump();
  EXPECT_EQ((*inferred)["metrics"].value("other_scale", 0.0), 1);
  EXPECT_NE((*ok)["evidence"].dump().find("nccl-tests measured on 16 ranks on 2 nodes; the job has 16 ranks"), std::string::npos) << (*ok)["evidence"].dump();
}

// A run of one GPU (nccl-tests on a workstation) moves nothing over a link: its busbw is 0 at
// every size, and the refusal says so instead of "no row with a bus bandwidth".
TEST(WhatifCli, NcclTestsOfOneRankIsRefusedSayingWhy) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  const std::string one = write_in(d, "one/all_reduce.txt",
                                   "# nThread 1 nGpus 1 minBytes 8 maxBytes 1048576 step: 2(factor) warmup iters: 5 iters: 20 agg iters: 1 validation: 1 graph: 0\n"
                                   "#\n# Using devices\n"
                                   "#  Rank  0 Group  0 Pid   1000 on ws0 device  0 [0x01] NVIDIA GeForce RTX 5090\n#\n"
                                   "#                                                              out-of-place                       in-place          \n"
                                   "#       size         count      type   redop    root     time   algbw   busbw #wrong     time   algbw   busbw #wrong\n"
                                   "#        (B)    (elements)                               (us)  (GB/s)  (GB/s)            (us)  (GB/s)  (GB/s)       \n"
                                   "           8             2     float     sum      -1     2.50    0.00    0.00      0     0.30    0.03    0.00      0\n"
                                   "     1048576        262144     float     sum      -1    10.20  102.80    0.00      0     0.40 2621.44    0.00      0\n"
                                   "# Out of bounds values : 0 OK\n# Avg bus bandwidth    : 0 \n#\n");
  auto r = run_binary(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", one});
  EXPECT_EQ(r.status, 2) << r.err;
  EXPECT_NE(r.err.find(one + ": a run of 1 rank: nothing crosses a link"), std::string::npos) << r.err;
}

namespace {

const fs::path kWhatifShared = fs::path(PERFGAP_SHARED_DIR);
const fs::path kA100x2 = kWhatifShared / "fixtures/profiles/kineto_hta_a100x2_nccl_metadata.json.gz";
const fs::path kH100NcclTests = kWhatifShared / "fixtures/nccl-tests/all-reduce-h100-8gpu-dgxc-benchmarking-readme.txt";

// The evidence of a finding as one string.
std::string whatif_cli_evidence(const nlohmann::json& f) {
  std::string out;
  for (const auto& e : f["evidence"]) out += e["observed"].get<std::string>() + "\n";
  return out;
}

// whatif.nccl_tests of a run on another GPU than the job's: a skip naming both (null, with a
// failure, where it is not).
const nlohmann::json* whatif_cli_other_gpu(const nlohmann::json& report, const std::string& run_gpu, const std::string& job_gpu) {
  const auto* nt = finding(report, "whatif.nccl_tests");
  if (!nt) {
    ADD_FAILURE() << report.dump(1);
    return nullptr;
  }
  EXPECT_EQ((*nt)["status"], "skip") << nt->dump(1);
  const auto title = (*nt)["title"].get<std::string>();
  EXPECT_NE(title.find("another GPU (" + run_gpu + " in "), std::string::npos) << title;
  EXPECT_NE(title.find("than the job's (" + job_gpu + ")"), std::string::npos) << title;
  return nt;
}

}  // namespace

// A run of another GPU than the job's is no bound for its collectives: not replayed (skip), the
// two GPUs named, and no fix blaming the job's NCCL settings. The same run on the job's GPU replays.
TEST(WhatifCli, NcclTestsOfAnotherGpuIsNotReplayed) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);  // its traces name NVIDIA H100 80GB HBM3
  const std::string ref = perfgap::fixture::read_file(perfgap::fixture::log_fixture("nccl-tests/ref-allreduce.txt"));
  auto on_gpu = [&](const std::string& name, const std::string& gpu) {
    std::string head = "# nThread 1 nGpus 1 minBytes 524288 maxBytes 67108864\n# Using devices\n";
    for (int r = 0; r < 16; ++r)
      head += "#  Rank " + std::to_string(r) + " Group  0 Pid " + std::to_string(1000 + r) + " on node" + std::to_string(r / 8) + " device " +
              std::to_string(r % 8) + " [0x18] " + gpu + "\n";
    return write_in(d, name, head + ref);
  };
  auto other = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", on_gpu("a100/all_reduce.txt", "NVIDIA A100-SXM4-80GB")}, 0);
  const auto* nt = whatif_cli_other_gpu(other, "NVIDIA A100-SXM4-80GB", "NVIDIA H100 80GB HBM3");
  ASSERT_TRUE(nt);
  EXPECT_FALSE((*nt)["metrics"].contains("saved_ms_per_iter"));
  EXPECT_EQ(nt->value("fix", std::string()).find("NCCL settings"), std::string::npos) << nt->dump(1);
  auto same = json_report(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", on_gpu("h100/all_reduce.txt", "NVIDIA H100 80GB HBM3")}, 0);
  auto ok = finding(same, "whatif.nccl_tests");
  ASSERT_TRUE(ok);
  EXPECT_NE((*ok)["status"], "skip") << ok->dump(1);
  EXPECT_TRUE((*ok)["metrics"].contains("saved_ms_per_iter"));
}

// Before: an A100 trace replayed at an H100 DGX benchmark's bandwidth, "the step 11.86 ms (5.4%)
// shorter", its fix "the job's NCCL settings against the benchmark's".
TEST(WhatifCli, AnA100TraceIsNotPricedAtAnH100Benchmark) {
  for (const auto& p : {kA100x2, kH100NcclTests})
    if (!fs::exists(p)) GTEST_SKIP() << p << " is absent";
  auto j = json_report(PERFGAP_BINARY, {"whatif", kA100x2.string(), "--nccl-tests", kH100NcclTests.string()}, 0);
  const auto* nt = whatif_cli_other_gpu(j, "NVIDIA H100 80GB HBM3", "NVIDIA A100-PG509-200");
  ASSERT_TRUE(nt);
  EXPECT_EQ((*nt)["title"].get<std::string>().find("shorter"), std::string::npos) << (*nt)["title"];
  // The run's scale is still said in its evidence.
  EXPECT_NE(whatif_cli_evidence(*nt).find("nccl-tests measured on 8 ranks on 1 node; the job has 2 ranks"), std::string::npos)
      << whatif_cli_evidence(*nt);
}

// Field review 4: `whatif A100-trace --nccl-tests all_reduce=all-gather-mi250x-...-1490.txt` passed
// "every collective at the bus bandwidth a healthy nccl-tests run reached". The file is an
// all_gather (redop none, busbw/algbw 0.97; analyze names it AllGather by its name) whose busbw
// collapses: the label it contradicts is said, both named, and nothing replayed. The same run
// given as the all_gather it is prices none of the job's collectives: not replayed either; beside
// a run of the job's AllReduce it is, and said to be no healthy run that names no GPU where the
// job's are A100s.
TEST(WhatifCli, ALabelTheRunContradictsIsNotReplayed) {
  const fs::path mi250x = kWhatifShared / "fixtures/nccl-tests/all-gather-mi250x-srun-label-prefix-rccl-1490.txt";
  for (const auto& p : {kA100x2, mi250x})
    if (!fs::exists(p)) GTEST_SKIP() << p << " is absent";
  auto j = json_report(PERFGAP_BINARY, {"whatif", kA100x2.string(), "--nccl-tests", "all_reduce=" + mi250x.string()}, 0);
  const auto* nt = finding(j, "whatif.nccl_tests");
  ASSERT_TRUE(nt) << j.dump(1);
  EXPECT_EQ((*nt)["status"], "skip") << nt->dump(1);
  const std::string title = (*nt)["title"];
  EXPECT_NE(title.find("not replayed: " + mi250x.string() + " is given as all_reduce= (AllReduce), but the file shows another collective: its "
                       "rows' redop is none"),
            std::string::npos)
      << title;
  EXPECT_NE(title.find("its busbw/algbw is 0.972, which AllReduce's bus factor 2(n-1)/n gives on no rank count"), std::string::npos) << title;
  EXPECT_NE(title.find("analyze nccl-tests names the collective measured AllGather"), std::string::npos) << title;
  EXPECT_EQ(title.find("healthy"), std::string::npos) << title;
  EXPECT_FALSE((*nt)["metrics"].contains("saved_ms_per_iter"));

  // As the all_gather it is: the job runs no AllGather, so it is no bound for any of its collectives
  // (before: replayed, PASS at 0.0%).
  auto alone = json_report(PERFGAP_BINARY, {"whatif", kA100x2.string(), "--nccl-tests", "all_gather=" + mi250x.string()}, 0);
  const auto* none = finding(alone, "whatif.nccl_tests");
  ASSERT_TRUE(none) << alone.dump(1);
  EXPECT_EQ((*none)["status"], "skip") << none->dump(1);
  EXPECT_NE((*none)["title"].get<std::string>().find("no collective of the job is of a kind the runs measured (the runs measured AllGather; the "
                                                     "job's 20 collectives of known size are AllReduce, Broadcast)"),
            std::string::npos)
      << (*none)["title"];
  // Beside a run of the job's AllReduce (its "# Rank" lines dropped) it is replayed, and said to be no healthy run.
  TempDir d;
  const std::string ref = perfgap::fixture::read_file(perfgap::fixture::log_fixture("nccl-tests/ref-allreduce.txt"));
  std::string rows;
  for (std::size_t at = 0, next = 0; at < ref.size(); at = next) {
    next = ref.find('\n', at);
    next = next == std::string::npos ? ref.size() : next + 1;
    if (ref.substr(at, next - at).find("  Rank ") == std::string::npos) rows += ref.substr(at, next - at);
  }
  const auto ar = write_in(d, "bw/all-reduce.txt", rows);
  auto as_is = json_report(PERFGAP_BINARY,
                           {"whatif", kA100x2.string(), "--nccl-tests", "all_gather=" + mi250x.string(), "--nccl-tests", "all_reduce=" + ar}, 0);
  const auto* ag = finding(as_is, "whatif.nccl_tests");
  ASSERT_TRUE(ag) << as_is.dump(1);
  EXPECT_NE((*ag)["title"].get<std::string>().find("a run whose busbw collapses past its peak (" + mi250x.string() +
                                                   ": nccl_tests.busbw_collapse), not a healthy one"),
            std::string::npos)
      << (*ag)["title"];
  const auto ev = whatif_cli_evidence(*ag);
  EXPECT_NE(ev.find("no healthy run: analyze nccl-tests warns nccl_tests.busbw_collapse"), std::string::npos) << ev;
  EXPECT_NE(ev.find("names no GPU (no '# Rank ... device' lines): whether it ran on the job's GPUs (NVIDIA A100-PG509-200) is unknown"),
            std::string::npos)
      << ev;
}

// Before: with rank 0 of 2 alone, "0.00 ms waiting inside collectives for a later rank" and
// "measured, they move their data at 6.6 GB/s bus bandwidth once their last rank has arrived",
// while the other rank's arrival is not in the trace.
TEST(WhatifCli, OneRankOfTwoSaysItsWaitUnknown) {
  auto check = [](const nlohmann::json& j, const std::string& ranks) {
    auto ov = finding(j, "whatif.overlap");
    ASSERT_TRUE(ov) << j.dump(1);
    const auto ev = whatif_cli_evidence(*ov);
    EXPECT_NE(ev.find("waiting inside collectives for a later rank unknown: " + ranks + "; waiting counted as transfer"), std::string::npos) << ev;
    EXPECT_EQ(ev.find("ms waiting inside collectives"), std::string::npos) << ev;
    EXPECT_FALSE((*ov)["metrics"].contains("waiting_ms_per_iter")) << (*ov)["metrics"].dump();
    auto bw = finding(j, "whatif.busbw");
    ASSERT_TRUE(bw) << j.dump(1);
    const auto bev = whatif_cli_evidence(*bw);
    EXPECT_NE(bev.find("GB/s bus bandwidth including any wait for a later rank"), std::string::npos) << bev;
    EXPECT_NE(bev.find("the wait unknown: " + ranks), std::string::npos) << bev;
    EXPECT_EQ(bev.find("once their last rank has arrived"), std::string::npos) << bev;
  };
  if (fs::exists(kA100x2)) check(json_report(PERFGAP_BINARY, {"whatif", kA100x2.string(), "--busbw", "100"}, 0), "1 of 2 ranks");
  // Generated: rank 0 of a 16-rank job alone; the whole job knows its waiting.
  TempDir d;
  const auto job = whatif_cli_job();
  const auto one = write_in(d, "rank0.json", gen::kineto_json(job, 0, 0));
  check(json_report(PERFGAP_BINARY, {"whatif", one, "--busbw", "100"}, 0), "1 of 16 ranks");
  const auto dir = whatif_cli_write(d, job, false);
  auto whole = json_report(PERFGAP_BINARY, {"whatif", dir, "--busbw", "100"}, 0);
  auto ov = finding(whole, "whatif.overlap");
  ASSERT_TRUE(ov);
  EXPECT_TRUE((*ov)["metrics"].contains("waiting_ms_per_iter"));
  EXPECT_NE(whatif_cli_evidence(*ov).find("ms waiting inside collectives for a later rank"), std::string::npos);
  auto bw = finding(whole, "whatif.busbw");
  ASSERT_TRUE(bw);
  EXPECT_NE(whatif_cli_evidence(*bw).find("once their last rank has arrived"), std::string::npos);
}

// Bandwidths that replay nothing: an nccl-tests run of no collective the job runs, and a --busbw
// every collective already reaches, skip saying why (before: PASS, the step 0.00 ms (0.0%)
// shorter, which explain counted as collective bandwidth measured, or assumed, at 0); --busbw nan
// is refused as inf is (before: exit 0 and no whatif.busbw finding at all).
TEST(WhatifCli, BandwidthsThatReplayNothingSkipAndSaySo) {
  TempDir d;
  const auto dir = whatif_cli_write(d, whatif_cli_job(), false);
  // An all_gather_perf run (its "# Rank" lines dropped: the GPUs are not the point here).
  const std::string ag = perfgap::fixture::read_file(perfgap::fixture::log_fixture("explain/qps4-all-gather.txt"));
  std::string rows;
  for (std::size_t at = 0, next = 0; at < ag.size(); at = next) {
    next = ag.find('\n', at);
    next = next == std::string::npos ? ag.size() : next + 1;
    if (ag.substr(at, next - at).find("  Rank ") == std::string::npos) rows += ag.substr(at, next - at);
  }
  const auto run = write_in(d, "bw/all-gather.txt", rows);
  const std::string out = d.path() + "/wi.json";
  auto w = run_binary(PERFGAP_BINARY, {"whatif", dir, "--nccl-tests", run, "--busbw", "0.15", "--format", "json", "--output", out});
  ASSERT_EQ(w.status, 0) << w.err;
  const auto j = nlohmann::json::parse(perfgap::fixture::read_file(out));
  auto nt = finding(j, "whatif.nccl_tests");
  ASSERT_TRUE(nt) << j.dump(1);
  EXPECT_EQ((*nt)["status"], "skip") << (*nt)["title"];
  EXPECT_NE((*nt)["title"].get<std::string>().find("no collective of the job is of a kind the runs measured (the runs measured AllGather; the "
                                                   "job's "),
            std::string::npos)
      << (*nt)["title"];
  EXPECT_NE((*nt)["title"].get<std::string>().find("collectives of known size are AllReduce)"), std::string::npos) << (*nt)["title"];
  auto bw = finding(j, "whatif.busbw");
  ASSERT_TRUE(bw) << j.dump(1);
  EXPECT_EQ((*bw)["status"], "skip") << (*bw)["title"];
  EXPECT_NE((*bw)["title"].get<std::string>().find("not replayed: 0.15 GB/s is below the "), std::string::npos) << (*bw)["title"];
  EXPECT_NE((*bw)["title"].get<std::string>().find("already reach (each of its "), std::string::npos) << (*bw)["title"];
  EXPECT_NE((*bw)["title"].get<std::string>().find("nothing to replay"), std::string::npos) << (*bw)["title"];
  // explain over it: neither is a cause, measured or assumed; collective bandwidth is still to measure.
  auto e = run_binary(PERFGAP_BINARY, {"explain", "--reference", "43.2", "--measured", "63.2", out, "--format", "json"});
  ASSERT_EQ(e.status, 1) << e.err;
  const auto budget = nlohmann::json::parse(e.out)["findings"][0];
  EXPECT_FALSE(budget["metrics"].contains("step.collective_bandwidth.points")) << budget.dump(1);
  std::string missing;
  for (const auto& ev : budget["evidence"])
    if (ev["source"] == "not measured" || ev["source"] == "unexplained") missing += ev["observed"].get<std::string>() + "\n";
  EXPECT_NE(missing.find("collective bandwidth"), std::string::npos) << missing;
  // A bandwidth above what they reach is replayed.
  auto hi = json_report(PERFGAP_BINARY, {"whatif", dir, "--busbw", "400"}, 0);
  auto hbw = finding(hi, "whatif.busbw");
  ASSERT_TRUE(hbw);
  EXPECT_NE((*hbw)["status"], "skip") << (*hbw)["title"];
  for (const char* v : {"nan", "inf", "NaN"}) {
    auto r = run_binary(PERFGAP_BINARY, {"whatif", dir, "--busbw", v});
    EXPECT_EQ(r.status, 2) << v << ": " << r.out;
    EXPECT_NE(r.err.find("--busbw: Value " + std::string(v) + " not in range"), std::string::npos) << r.err;
  }
}
