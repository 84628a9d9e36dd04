// perfgap fleet over a job's NCCL reports (fleet.job_ranks, fleet.waits_on): reports written by
// the real binary (`analyze nccl-inspector`, `analyze nccl-ras`) from the Inspector fixtures of
// tests/fixtures/logs/nccl-inspector and from RAS statuses written here, beside the nodes'
// check reports (generated): per node the ranks named, the node or communicator the job waits
// on, and what that node's check report says.
#include <gtest/gtest.h>

#include <filesystem>
#include <nlohmann/json.hpp>

#include "files.hpp"
#include "fleet_gen.hpp"
#include "report_json.hpp"
#include "run.hpp"

namespace {

using nlohmann::json;
using perfgap::fixture::log_fixture;
using perfgap::fixture::run_binary;
using perfgap::fixture::TempDir;
using perfgap::fixture::write_file;

// A RAS status (ncclras's text) of the Inspector fixtures' job (4 nodes x 2 processes, pids
// 41000-41007) where `pid` (rank `rank` of the data-parallel communicator) is dead on node
// address `address`.
std::string jobfleet_ras_dead(long pid, int rank, const std::string& address) {
  return "NCCL version 2.30.1+cuda12.9 compiled with CUDA 12.9\n"
         "CUDA runtime version 12090, driver version 12090\n\n"
         "Job summary\n===========\n\n"
         "  Nodes  Processes         GPUs  Processes     GPUs\n"
         "(total)   per node  per process    (total)  (total)\n"
         "      4          2            1          8        8\n\n"
         "Communicators... (5.007s)\n=============\n\n"
         "Group     Comms     Nodes     Ranks     Ranks     Ranks    Status  Errors\n"
         "    #  in group  per comm  per node  per comm  in group\n"
         "    0         1         4       1-2         8         7   RUNNING  INCOMPLETE\n"
         "    1         4         1       1-2         2         7   RUNNING  INCOMPLETE\n\n"
         "Errors\n======\n\n"
         "DEAD\n"
         "  1 job process is considered dead (unreachable via the RAS network)\n"
         "  Process " + std::to_string(pid) + " on node " + address + " managing GPU 1\n\n"
         "#0-0 (5f3a9c21d4e7b1) INCOMPLETE\n"
         "  Missing communicator data from 1 rank\n"
         "  Rank " + std::to_string(rank) + " -- GPU 1 managed by process " + std::to_string(pid) + " on node " + address + "\n\n"
         "Warnings\n========\n\n";
}

std::vector<json> jobfleet_findings(const json& report, const std::string& id) {
  std::vector<json> out;
  for (const auto& f : report["findings"])
    if (f["id"] == id) out.push_back(f);
  return out;
}

bool jobfleet_evidence_has(const json& f, const std::string& text) {
  for (const auto& e : f["evidence"])
    if (e["observed"].get<std::string>().find(text) != std::string::npos) return true;
  return false;
}

class FleetJob : public ::testing::Test {
 protected:
  // The four nodes' check reports; gpu-node-03 the only one with the powersave governor and
  // failing cpu.governor.
  void check_reports() {
    for (int i = 1; i <= 4; ++i) {
      perfgap::fleetgen::NodeSpec spec;
      spec.name = "gpu-node-0" + std::to_string(i);
      spec.seed = static_cast<std::uint64_t>(i);
      if (i == 3) {
        spec.settings["governor"] = "powersave";
        spec.status["cpu.governor"] = "fail";
      }
      write_file(dir.path() + "/in/" + spec.name + ".json", perfgap::fleetgen::report_json(spec));
    }
  }
  void analyze(const std::string& kind, const std::string& input, const std::string& out, int want) {
    std::filesystem::create_directories(dir.path() + "/in");
    auto r = run_binary(PERFGAP_BINARY, {"analyze", kind, input, "--format", "json", "--output", dir.path() + "/in/" + out});
    ASSERT_EQ(r.status, want) << kind << " " << input << ": " << r.err;
  }
  json fleet(int want, const std::string& format = "json") {
    auto r = run_binary(PERFGAP_BINARY, {"fleet", dir.path() + "/in", "--format", format});
    EXPECT_EQ(r.status, want) << r.err << r.out;
    text = r.out;
    return format == "json" ? json::parse(r.out) : json();
  }
  TempDir dir;
  std::string text;
};

TEST_F(FleetJob, TheLateRanksNodeIsWhatTheJobWaitsOnWithItsCheckReport) {
  analyze("nccl-inspector", log_fixture("nccl-inspector/late-rank"), "inspector.json", 0);
  check_reports();
  auto rep = fleet(1);  // gpu-node-03's check report fails cpu.governor: fleet.node_failures
  auto ranks = jobfleet_findings(rep, "fleet.job_ranks");
  ASSERT_EQ(ranks.size(), 1u) << rep.dump(1);
  EXPECT_EQ(ranks[0]["subject"], "gpu-node-03");
  EXPECT_EQ(ranks[0]["status"], "warn");
  EXPECT_EQ(ranks[0]["metrics"]["processes"], 1);
  EXPECT_EQ(ranks[0]["metrics"]["processes.late"], 1);
  const std::string title = ranks[0]["title"];
  EXPECT_NE(title.find("rank 5 of 'DP Group 0' (pid 41005) late"), std::string::npos) << title;
  EXPECT_TRUE(jobfleet_evidence_has(ranks[0], "check report of gpu-node-03: fails cpu.governor")) << ranks[0].dump(1);

  auto waits = jobfleet_findings(rep, "fleet.waits_on");
  ASSERT_EQ(waits.size(), 1u);
  EXPECT_EQ(waits[0]["status"], "warn");
  EXPECT_EQ(waits[0]["metrics"]["stopped"], 0);
  // The fixture: the others spend ~4.6 ms in each AllReduce, rank 5 the 2.9 ms of work.
  EXPECT_NEAR(waits[0]["metrics"]["wait_us_per_op"].get<double>(), 1700, 100) << waits[0].dump(1);
  const std::string wt = waits[0]["title"];
  EXPECT_NE(wt.find("the job waits on gpu-node-03: rank 5"), std::string::npos) << wt;
  // Joined with the check reports: the setting only that node has.
  EXPECT_NE(wt.find("settings.governor=powersave"), std::string::npos) << wt;
  EXPECT_TRUE(jobfleet_findings(rep, "fleet.unreadable").empty()) << rep.dump(1);

  fleet(1, "text");
  EXPECT_NE(text.find("fleet.waits_on"), std::string::npos) << text;
  EXPECT_NE(text.find("the job waits on gpu-node-03"), std::string::npos) << text;
  fleet(1, "html");
  EXPECT_NE(text.find("the job waits on gpu-node-03"), std::string::npos);
}

TEST_F(FleetJob, ADeadRankStopsTheJobAndRasAddressMeetsTheInspectorsHost) {
  analyze("nccl-inspector", log_fixture("nccl-inspector/late-rank"), "inspector.json", 0);
  write_file(dir.path() + "/ras.txt", jobfleet_ras_dead(41005, 5, "10.0.0.13"));
  analyze("nccl-ras", dir.path() + "/ras.txt", "ras.json", 1);
  check_reports();
  auto rep = fleet(1);
  auto waits = jobfleet_findings(rep, "fleet.waits_on");
  ASSERT_EQ(waits.size(), 1u) << rep.dump(1);
  EXPECT_EQ(waits[0]["status"], "fail");
  EXPECT_EQ(waits[0]["metrics"]["stopped"], 1);
  EXPECT_EQ(waits[0]["metrics"]["dead"], 1);
  const std::string wt = waits[0]["title"];
  // RAS names the node by its address; process 41005 is on gpu-node-03 in the Inspector's files.
  EXPECT_NE(wt.find("the job is stopped, not slow: it waits on gpu-node-03"), std::string::npos) << wt;
  auto ranks = jobfleet_findings(rep, "fleet.job_ranks");
  ASSERT_EQ(ranks.size(), 1u) << rep.dump(1);
  EXPECT_EQ(ranks[0]["subject"], "gpu-node-03");
  EXPECT_EQ(ranks[0]["status"], "fail");
  EXPECT_EQ(ranks[0]["metrics"]["processes.dead"], 1);
  EXPECT_EQ(ranks[0]["metrics"]["processes.late"], 1);
  EXPECT_TRUE(jobfleet_evidence_has(ranks[0], "RAS names this node 10.0.0.13")) << ranks[0].dump(1);
}

TEST_F(FleetJob, AddressesWithoutAnInspectorHostStayAddresses) {
  analyze("nccl-ras", log_fixture("nccl-ras/dead-rank.txt"), "ras.json", 1);
  auto rep = fleet(1);  // measurements only: no check report
  auto ranks = jobfleet_findings(rep, "fleet.job_ranks");
  std::vector<std::string> subjects;
  for (const auto& f : ranks) subjects.push_back(f["subject"]);
  EXPECT_EQ(subjects, (std::vector<std::string>{"10.10.4.21", "10.10.4.23"})) << rep.dump(1);
  for (const auto& f : ranks) {
    EXPECT_EQ(f["status"], "fail");
    EXPECT_TRUE(jobfleet_evidence_has(f, "none of " + f["subject"].get<std::string>() + " in the input")) << f.dump(1);
  }
  auto waits = jobfleet_findings(rep, "fleet.waits_on").at(0);
  EXPECT_EQ(waits["status"], "fail");
  EXPECT_EQ(waits["metrics"]["nodes"], 2);
  EXPECT_EQ(waits["metrics"]["dead"], 1);
  EXPECT_EQ(waits["metrics"]["missing"], 1);  // 52790; 52817 is dead
  // Addresses are listed, not folded into a host list.
  EXPECT_NE(waits["title"].get<std::string>().find("waits on 10.10.4.21, 10.10.4.23 (1 dead, 1 missing)"), std::string::npos) << waits.dump(1);
}

TEST_F(FleetJob, ASlowCommunicatorIsWhereTheJobWaitsAndAHealthyJobPasses) {
  analyze("nccl-inspector", log_fixture("nccl-inspector/slow-node"), "inspector.json", 1);
  auto rep = fleet(1);
  auto waits = jobfleet_findings(rep, "fleet.waits_on").at(0);
  EXPECT_EQ(waits["status"], "fail");  // 40% of its peers' busbw
  EXPECT_NE(waits["title"].get<std::string>().find("communicator 0x2c3d4e5f607182 on gpu-node-02"), std::string::npos) << waits.dump(1);
  EXPECT_NEAR(waits["metrics"]["busbw_ratio"].get<double>(), 0.4, 0.02);
  auto ranks = jobfleet_findings(rep, "fleet.job_ranks");
  ASSERT_EQ(ranks.size(), 1u);
  EXPECT_EQ(ranks[0]["metrics"]["processes.slow_comm"], 2);

  TempDir healthy;
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-inspector", log_fixture("nccl-inspector/healthy"), "--format", "json", "--output",
                                       healthy.path() + "/inspector.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/healthy.txt"), "--format", "json", "--output",
                                  healthy.path() + "/ras.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto ok = run_binary(PERFGAP_BINARY, {"fleet", healthy.path(), "--format", "json"});
  ASSERT_EQ(ok.status, 0) << ok.err << ok.out;
  auto okrep = json::parse(ok.out);
  EXPECT_TRUE(jobfleet_findings(okrep, "fleet.job_ranks").empty());
  auto pass = jobfleet_findings(okrep, "fleet.waits_on").at(0);
  EXPECT_EQ(pass["status"], "pass") << pass.dump(1);
  EXPECT_TRUE(jobfleet_findings(okrep, "fleet.unreadable").empty()) << ok.out;
}

TEST_F(FleetJob, ARasStatusCutShortJudgesNoRankAndSkips) {
  TempDir cut;
  auto r = run_binary(PERFGAP_BINARY, {"analyze", "nccl-ras", log_fixture("nccl-ras/cut-short.txt"), "--format", "json", "--output",
                                       cut.path() + "/ras.json"});
  ASSERT_EQ(r.status, 0) << r.err;
  auto fleet = run_binary(PERFGAP_BINARY, {"fleet", cut.path(), "--format", "json"});
  ASSERT_EQ(fleet.status, 0) << fleet.err << fleet.out;
  auto waits = jobfleet_findings(json::parse(fleet.out), "fleet.waits_on").at(0);
  EXPECT_EQ(waits["status"], "skip") << waits.dump(1);
  EXPECT_NE(waits["title"].get<std::string>().find("judged no rank"), std::string::npos);
}

}  // namespace
