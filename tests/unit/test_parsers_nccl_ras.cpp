// The RAS client's text status (parsers/nccl_ras.hpp): the job summary, the communicators
// table, the Errors and Warnings blocks with the processes and ranks they name, cut-short and
// foreign inputs.
#include <gtest/gtest.h>

#include <string>

#include "files.hpp"
#include "parsers/nccl_ras.hpp"

using namespace perfgap::parsers;
using perfgap::fixture::log_fixture;
using perfgap::fixture::read_file;

TEST(ParsersNcclRas, HealthyStatusFields) {
  auto r = parse_nccl_ras(read_file(log_fixture("nccl-ras/healthy.txt")));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_EQ(r->nccl_version, "2.30.1+cuda12.9");
  EXPECT_EQ(r->nodes, 4);
  EXPECT_EQ(r->processes, 32);
  EXPECT_EQ(r->gpus, 32);
  EXPECT_TRUE(r->job_summary && r->comms_section && r->errors_section && r->warnings_section);
  ASSERT_EQ(r->groups.size(), 3u);
  EXPECT_EQ(r->groups[1].group, 1);
  EXPECT_EQ(r->groups[1].comms, 8);
  EXPECT_EQ(r->groups[1].nodes, 4);
  EXPECT_EQ(r->groups[1].ranks_per_node, "1");
  EXPECT_EQ(r->groups[1].ranks_per_comm, 4);
  EXPECT_EQ(r->groups[1].ranks_in_group, 32);
  EXPECT_EQ(r->groups[1].status, "RUNNING");
  EXPECT_EQ(r->groups[1].errors, "OK");
  EXPECT_EQ(r->dead_processes, 0);
  EXPECT_EQ(r->missing_processes, 0);
  EXPECT_TRUE(r->issues.empty());
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].message;
}

TEST(ParsersNcclRas, DeadMissingErrorAndMismatchBlocks) {
  auto r = parse_nccl_ras(read_file(log_fixture("nccl-ras/dead-rank.txt")));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].line << ": " << r->damaged[0].message;
  EXPECT_EQ(r->groups[0].ranks_per_node, "7-8");
  EXPECT_EQ(r->groups[0].errors, "INCOMPLETE,ERROR");
  EXPECT_EQ(r->missing_processes, 1);
  ASSERT_EQ(r->missing.size(), 1u);
  EXPECT_EQ(r->missing[0].pid, 52790);
  EXPECT_EQ(r->missing[0].node, "10.10.4.21");
  EXPECT_EQ(r->missing[0].gpus, "2");
  EXPECT_EQ(r->dead_processes, 1);
  ASSERT_EQ(r->dead.size(), 1u);
  EXPECT_EQ(r->dead[0].pid, 52817);
  EXPECT_EQ(r->dead[0].node, "10.10.4.23");
  EXPECT_EQ(r->timeouts, 2);
  ASSERT_EQ(r->issues.size(), 3u);
  EXPECT_EQ(r->issues[0].kind, "INCOMPLETE");
  EXPECT_EQ(r->issues[0].id, "#0-0");
  EXPECT_EQ(r->issues[0].hash, "7c3f9a2e51b04d16");
  ASSERT_EQ(r->issues[0].ranks.size(), 2u);
  EXPECT_EQ(r->issues[0].ranks[1].rank, 29);
  EXPECT_EQ(r->issues[0].ranks[1].pid, 52817);
  EXPECT_EQ(r->issues[1].kind, "ERROR");
  ASSERT_EQ(r->issues[1].details.size(), 2u);
  EXPECT_EQ(r->issues[1].details[1], "3 ranks reported Remote process error");
  EXPECT_EQ(r->issues[1].ranks.size(), 3u);
  EXPECT_EQ(r->issues[2].kind, "MISMATCH");
  ASSERT_EQ(r->issues[2].ranks.size(), 2u);
  EXPECT_EQ(r->issues[2].ranks[0].detail, "has status INIT");
  EXPECT_EQ(r->issues[2].ranks[0].gpus, "5 (NVML 1)");
  EXPECT_EQ(r->issues[2].ranks[1].detail, "has launched up to operation 41872");
}

TEST(ParsersNcclRas, RanksAndProcessesWithoutInformationAndGpuLists) {
  const std::string text =
      "NCCL version 2.27.3+cuda12.8 compiled with CUDA 12.8\n\nJob summary\n===========\n\n"
      "  Nodes  Processes\n          per node\n      2          1\n      1          2\n\n"
      "  Nodes  Processes         GPUs\n(total)    (total)      (total)\n      3          4           16\n\n"
      "Communicators... (0.100s)\n=============\n\nNo communicator data collected!\n\nErrors\n======\n\n"
      "DEAD\n  3 job processes are considered dead (unreachable via the RAS network)\n"
      "  Process 7 on node fe80::1 managing GPUs 0,1 (NVML 2,3)\n  [could not find information on 2 processes]\n\n"
      "#0-0 (00000000000000ff) ERROR\n  Initialization error on 1 rank\n  Rank 4 reported Internal error -- [process information not found]\n\n"
      "Warnings\n========\n\n";
  auto r = parse_nccl_ras(text);
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->damaged.empty()) << r->damaged[0].line << ": " << r->damaged[0].message;
  EXPECT_EQ(r->nodes, 3);
  EXPECT_EQ(r->processes, 4);
  EXPECT_EQ(r->gpus, 16);
  EXPECT_TRUE(r->no_comm_data);
  EXPECT_EQ(r->dead_processes, 3);
  ASSERT_EQ(r->dead.size(), 1u);
  EXPECT_EQ(r->dead[0].gpus, "0,1 (NVML 2,3)");
  EXPECT_EQ(r->dead[0].node, "fe80::1");
  EXPECT_EQ(r->unnamed_dead, 2);
  ASSERT_EQ(r->issues.size(), 1u);
  ASSERT_EQ(r->issues[0].ranks.size(), 1u);
  EXPECT_EQ(r->issues[0].ranks[0].rank, 4);
  EXPECT_EQ(r->issues[0].ranks[0].pid, -1);
  EXPECT_EQ(r->issues[0].ranks[0].detail, "reported Internal error");
}

TEST(ParsersNcclRas, CutShortStatusIsReadWithoutItsErrorsSection) {
  auto r = parse_nccl_ras(read_file(log_fixture("nccl-ras/cut-short.txt")));
  ASSERT_TRUE(r) << r.error().describe();
  EXPECT_TRUE(r->comms_section);
  EXPECT_FALSE(r->errors_section);
}

TEST(ParsersNcclRas, UnknownLinesAreDamagedWithTheirNumbers) {
  auto r = parse_nccl_ras("Job summary\n===========\n\nsomething new\n\nErrors\n======\n\nBLAH\nDEAD\n  what is this\n");
  ASSERT_TRUE(r) << r.error().describe();
  ASSERT_EQ(r->damaged.size(), 3u);
  EXPECT_EQ(r->damaged[0].line, 4);
  EXPECT_EQ(r->damaged[1].line, 9);
  EXPECT_EQ(r->damaged[2].line, 11);
}

TEST(ParsersNcclRas, ForeignInputsJsonAndUnknownVersionsAreErrors) {
  EXPECT_FALSE(parse_nccl_ras(""));
  auto refused = parse_nccl_ras("Connecting to localhost:28028: Connection refused\n");
  ASSERT_FALSE(refused);
  EXPECT_EQ(refused.error().line, 1);
  auto json = parse_nccl_ras("{\n  \"nccl_version\": \"2.30.1\",\n");
  ASSERT_FALSE(json);
  EXPECT_NE(json.error().message.find("ncclras -f json"), std::string::npos);
  auto v3 = parse_nccl_ras("NCCL version 3.0.0 compiled with CUDA 13.0\n\nJob summary\n===========\n");
  ASSERT_FALSE(v3);
  EXPECT_EQ(v3.error().line, 1);
  EXPECT_NE(v3.error().message.find("NCCL version 3.0.0"), std::string::npos);
  std::string huge = "Job summary\n" + std::string(100000, 'x') + "\n";
  auto h = parse_nccl_ras(huge);
  ASSERT_TRUE(h);
  ASSERT_EQ(h->damaged.size(), 1u);
  EXPECT_EQ(h->damaged[0].line, 2);
}
