// scontrol's node line in, NodeState out; and what the health check does about each state
// (NHC's rules: never touch someone else's drain, resume only perfgap's own).
#include <gtest/gtest.h>

#include "slurm/node_state.hpp"

namespace perfgap::slurm {
namespace {

// As Slurm 22.05 prints it (`scontrol show node -o n2`), OS value with spaces included.
constexpr const char* kIdle =
    "NodeName=n2 Arch=x86_64 CoresPerSocket=1  CPUAlloc=0 CPUEfctv=1 CPUTot=1 CPULoad=5.86 "
    "AvailableFeatures=(null) ActiveFeatures=(null) Gres=(null) NodeAddr=127.0.0.1 NodeHostName=vm Port=37912 "
    "Version=22.05.8 OS=Linux 6.18.44-fc-v669 #1 SMP PREEMPT_DYNAMIC @0  RealMemory=100 AllocMem=0 FreeMem=16571 "
    "Sockets=1 Boards=1 State=IDLE ThreadsPerCore=1 TmpDisk=0 Weight=1 Owner=N/A MCS_label=N/A Partitions=ci  "
    "BootTime=2026-11-30T02:35:32 SlurmdStartTime=2026-11-30T05:31:42 LastBusyTime=2026-11-30T05:31:42 "
    "CfgTRES=cpu=1,mem=100M,billing=1 AllocTRES= CapWatts=n/a CurrentWatts=0 AveWatts=0 ExtSensorsJoules=n/s "
    "ExtSensorsWatts=0 ExtSensorsTemp=n/s\n";

NodeState parsed(const std::string& text, const std::string& node = "n2") {
  auto st = parse_node_state(text, node);
  EXPECT_TRUE(st.has_value()) << (st ? "" : st.error());
  return st ? *st : NodeState{};
}

TEST(SlurmNodeState, IdleNodeHasNoFlagsAndNoReason) {
  auto st = parsed(kIdle);
  EXPECT_EQ(st.base, "IDLE");
  EXPECT_TRUE(st.flags.empty());
  EXPECT_EQ(st.reason, "");
  EXPECT_FALSE(st.offline());
}

TEST(SlurmNodeState, ReasonKeepsSpacesAndEqualsAndLosesTheStamp) {
  auto st = parsed("NodeName=n2 State=IDLE+DRAIN Partitions=ci Reason=hand: broken PSU x=1 [root@2026-11-30T05:31:49]\n");
  EXPECT_EQ(st.base, "IDLE");
  EXPECT_TRUE(st.drained());
  EXPECT_EQ(st.reason, "hand: broken PSU x=1");
  EXPECT_EQ(st.reason_stamp, "root@2026-11-30T05:31:49");
  EXPECT_FALSE(st.drained_by_perfgap());
}

TEST(SlurmNodeState, PicksTheLineOfTheNodeAskedFor) {
  std::string text = "NodeName=n20 State=DOWN Reason=x [a@b]\nNodeName=n2 State=MIXED+DRAIN Reason=perfgap: cpu.governor\n";
  auto st = parsed(text);
  EXPECT_EQ(st.base, "MIXED");
  EXPECT_TRUE(st.drained_by_perfgap());
  EXPECT_FALSE(parse_node_state(text, "n3").has_value());
}

TEST(SlurmNodeState, NotRespondingStarAndSinfoWords) {
  auto st = parsed("NodeName=n2 State=DOWN* Reason=Not responding [slurm@2026-01-01T00:00:00]");
  EXPECT_EQ(st.base, "DOWN");
  EXPECT_TRUE(st.has("NOT_RESPONDING"));
  auto drained = parsed("NodeName=n2 State=DRAINED");
  EXPECT_TRUE(drained.drained());
}

TEST(SlurmNodeState, MissingStateIsAnError) {
  auto st = parse_node_state("NodeName=n2 Arch=x86_64\n", "n2");
  ASSERT_FALSE(st.has_value());
  EXPECT_NE(st.error().find("State="), std::string::npos);
  EXPECT_FALSE(parse_node_state("Node n2 not found\n", "n2").has_value());
}

TEST(SlurmHealthDecision, FailingIdleNodeIsDrainedWithPerfgapReason) {
  auto d = decide(parsed(kIdle), {"cpu.governor", "numa.balancing"});
  EXPECT_EQ(d.action, Action::drain);
  EXPECT_EQ(d.reason, "perfgap: cpu.governor,numa.balancing");
}

TEST(SlurmHealthDecision, SomeoneElsesDrainIsLeftAloneFailingOrNot) {
  auto st = parsed("NodeName=n2 State=IDLE+DRAIN Reason=hand [root@2026-11-30T05:31:49]");
  EXPECT_EQ(decide(st, {"cpu.governor"}).action, Action::none);
  EXPECT_EQ(decide(st, {}).action, Action::none);
  // A drain with no reason at all is not perfgap's either (NHC: "no note set").
  EXPECT_EQ(decide(parsed("NodeName=n2 State=IDLE+DRAIN"), {}).action, Action::none);
}

TEST(SlurmHealthDecision, DownFailedAndMaintenanceNodesAreLeftAlone) {
  EXPECT_EQ(decide(parsed("NodeName=n2 State=DOWN Reason=Not responding"), {"x"}).action, Action::none);
  EXPECT_EQ(decide(parsed("NodeName=n2 State=IDLE+FAIL Reason=perfgap: x"), {}).action, Action::none);
  EXPECT_EQ(decide(parsed("NodeName=n2 State=IDLE+MAINT"), {"x"}).action, Action::none);
  // Slurm 23.02+ spells the flag in full for a node in a maintenance reservation.
  auto maint = parsed("NodeName=n2 Arch=x86_64 CoresPerSocket=1 State=IDLE+MAINTENANCE+RESERVED ThreadsPerCore=1");
  EXPECT_TRUE(maint.has("MAINT"));
  EXPECT_TRUE(maint.has("RESERVED"));
  EXPECT_EQ(decide(maint, {"x"}).action, Action::none);
  EXPECT_EQ(decide(parsed("NodeName=n2 State=MIXED+MAINTENANCE+RESERVED+DRAIN Reason=perfgap:_x"), {}).action, Action::none);
  // A plain (non-maintenance) reservation is no reason to spare a failing node.
  EXPECT_EQ(decide(parsed("NodeName=n2 State=IDLE+RESERVED"), {"x"}).action, Action::drain);
}

TEST(SlurmHealthDecision, OwnDrainIsResumedWhenChecksPassUnlessARebootIsPending) {
  auto own = parsed("NodeName=n2 State=IDLE+DRAIN Reason=perfgap: cpu.governor [root@2026-11-30T05:31:49]");
  EXPECT_EQ(decide(own, {}).action, Action::resume);
  auto rebooting = parsed("NodeName=n2 State=IDLE+DRAIN+REBOOT_REQUESTED Reason=perfgap: cpu.governor");
  EXPECT_EQ(decide(rebooting, {}).action, Action::none);
}

TEST(SlurmHealthDecision, OwnDrainIsKeptOrItsReasonUpdated) {
  auto own = parsed("NodeName=n2 State=MIXED+DRAIN Reason=perfgap: cpu.governor [root@2026-11-30T05:31:49]");
  EXPECT_EQ(decide(own, {"cpu.governor"}).action, Action::none);
  auto changed = decide(own, {"numa.balancing"});
  EXPECT_EQ(changed.action, Action::drain);
  EXPECT_EQ(changed.reason, "perfgap: numa.balancing");
}

TEST(SlurmHealthDecision, LongReasonsAreCutWithACount) {
  std::vector<std::string> ids;
  for (int i = 0; i < 40; ++i) ids.push_back("layer.check_number_" + std::to_string(i));
  auto reason = drain_reason(ids);
  EXPECT_LE(reason.size(), 200u);
  EXPECT_EQ(reason.rfind("perfgap: layer.check_number_0,", 0), 0u);
  EXPECT_NE(reason.find(" more"), std::string::npos);
}

}  // namespace
}  // namespace perfgap::slurm
