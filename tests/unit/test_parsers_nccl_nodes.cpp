// The nodes an NCCL_DEBUG=INFO log shows (parsers/nccl_nodes.hpp), through the NCCL-log parser:
// NCCL's nNodes, the hostnames of every rank's lines, the prefixes' hostnames and the ranks'
// bootstrap/OOB addresses, never more nodes than ranks, "not shown" only where nothing tells.
// The lines are in the formats of NCCL 2.11-2.21 (host:pid:tid [dev] NCCL INFO ...).
#include <gtest/gtest.h>

#include <string>

#include "parsers/nccl_log.hpp"
#include "parsers/nccl_nodes.hpp"

using perfgap::parsers::nccl_nodes;
using perfgap::parsers::NcclNodes;
using perfgap::parsers::parse_nccl_log;

namespace {

NcclNodes nodes_of(const std::string& log) {
  auto l = parse_nccl_log(log);
  EXPECT_TRUE(l) << (l ? "" : l.error().message);
  return l ? nccl_nodes(l->nodes) : NcclNodes{};
}

// Each rank's init line of NCCL 2.18 (no nNodes yet): "comm 0x.. rank R nranks N ... Init COMPLETE".
std::string init_line(const std::string& host, int pid, int rank, int nranks) {
  return host + ":" + std::to_string(pid) + ":" + std::to_string(pid + 51) + " [" + std::to_string(rank % 2) +
         "] NCCL INFO comm 0x55f1c2a3e8d0 rank " + std::to_string(rank) + " nranks " + std::to_string(nranks) + " cudaDev " +
         std::to_string(rank % 2) + " nvmlDev 0 busId 18000 commId 0x7c3e5a9d1b2f4e60 - Init COMPLETE\n";
}

}  // namespace

TEST(ParsersNcclNodes, NcclsOwnNodeCountComesFirst) {
  auto n = nodes_of(
      "gpu-a:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "gpu-a:1:2 [0] NCCL INFO Bootstrap : Using eth0:10.0.0.1<0>\n");
  EXPECT_EQ(n.count, 2);
  EXPECT_FALSE(n.at_least);
  EXPECT_EQ(n.basis, "NCCL's nNodes");
}

// Every rank's line names its host: the hosts are the nodes, exactly.
TEST(ParsersNcclNodes, EveryRanksHostnameCountsTheNodes) {
  std::string log = "NCCL version 2.18.5+cuda12.2\n";
  log += init_line("node-a", 41201, 0, 4) + init_line("node-a", 41202, 1, 4) + init_line("node-b", 38810, 2, 4);
  auto part = nodes_of(log);
  EXPECT_EQ(part.count, 2) << "node-a and node-b: at least two";
  EXPECT_TRUE(part.at_least) << "rank 3 not seen";
  EXPECT_EQ(part.basis, "the hostnames of the NCCL INFO lines");
  log += init_line("node-b", 38811, 3, 4);
  auto n = nodes_of(log);
  EXPECT_EQ(n.count, 2);
  EXPECT_FALSE(n.at_least);
  EXPECT_EQ(n.basis, "the hostnames of every rank's NCCL INFO lines");
  EXPECT_EQ(n.detail, "rank 0 on node-a, rank 1 on node-a, rank 2 on node-b, rank 3 on node-b");
  EXPECT_EQ(perfgap::parsers::nccl_nodes_count_words(n), "2 nodes");
}

// The RoCE run over two hosts of the field logs (nl-p40-roce-vf-ibext-v8), in its shape: the
// prefixes name four hostnames for the two ranks' two processes. Every rank's Destroy line names
// its host; without them the OOB addresses of the two ranks count the nodes, and the four
// hostnames are said not to be one per node.
TEST(ParsersNcclNodes, MoreHostnamesThanRanksAreNotTheNodes) {
  const std::string head =
      "pod-vf07:15718:15718 [0] NCCL INFO Bootstrap : Using eth0:10.244.1.10<0>\n"
      "pod-vf08:12090:12099 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE [RO]; OOB eth0:10.244.2.21<0>\n"
      "pod-vf07:15718:15726 [0] NCCL INFO NET/IB : Using [0]mlx5_2:1/RoCE [RO]; OOB eth0:10.244.1.10<0>\n"
      "pod-vf02:12090:12099 [0] NCCL INFO ncclCommInitRank comm 0x5e303a52bd70 rank 0 nranks 2 cudaDev 0 nvmlDev 0 busId 57000 commId "
      "0xadcb40d61cc1bc4b - Init COMPLETE\n";
  const std::string rank1 =
      "pod-vf01:15718:15718 [0] NCCL INFO comm 0x576eb5d4d740 rank 1 nranks 2 cudaDev 0 busId 2000 - Destroy COMPLETE\n";
  auto by_ranks = nodes_of(head + rank1);
  EXPECT_EQ(by_ranks.count, 2);
  EXPECT_FALSE(by_ranks.at_least);
  EXPECT_EQ(by_ranks.detail, "rank 0 on pod-vf02, rank 1 on pod-vf01");
  auto by_addresses = nodes_of(head + "pod-vf01:15718:15718 [0] NCCL INFO cudaDriverVersion 12040\n");
  EXPECT_EQ(by_addresses.count, 2);
  EXPECT_FALSE(by_addresses.at_least) << "two addresses of two ranks: every node";
  EXPECT_EQ(by_addresses.basis, "the ranks' OOB addresses");
  EXPECT_NE(by_addresses.detail.find("10.244.1.10, 10.244.2.21"), std::string::npos) << by_addresses.detail;
  EXPECT_NE(
      by_addresses.detail.find("the line prefixes name 4 hosts (pod-vf01, pod-vf02, pod-vf07, pod-vf08) for 2 ranks: not one per node"),
      std::string::npos)
      << by_addresses.detail;
}

// Hostnames masked by whoever posted the log (all one name) against two bootstrap addresses:
// at least two nodes, by the addresses; the hostnames said to be masked or shared.
TEST(ParsersNcclNodes, MaskedHostnamesGiveWayToTheAddresses) {
  std::string log =
      "<cluster_name>:41201:41201 [0] NCCL INFO Bootstrap : Using ens1f0:172.16.4.21<0>\n"
      "<cluster_name>:38810:38810 [0] NCCL INFO Bootstrap : Using ens1f0:172.16.4.22<0>\n";
  for (int r = 0; r < 4; ++r) log += init_line("<cluster_name>", 41201 + r, r, 4);
  auto n = nodes_of(log);
  EXPECT_EQ(n.count, 2);
  EXPECT_TRUE(n.at_least) << "two addresses for four ranks: the others may be on more nodes";
  EXPECT_EQ(n.basis, "the ranks' bootstrap addresses");
  EXPECT_NE(n.detail.find("fewer than the bootstrap addresses: masked, or one name on several nodes"), std::string::npos) << n.detail;
  EXPECT_EQ(perfgap::parsers::nccl_nodes_count_words(n), "at least 2 nodes");
}

// An excerpt of one rank's lines of a 16-rank job (nccl-tests issue 319's tail): one host, and
// nothing says how many others ran: not shown, with what was seen.
TEST(ParsersNcclNodes, OneHostOfAnExcerptIsNotTheNodeCount) {
  auto n = nodes_of("lccn09:2520136:2520910 [0] NCCL INFO comm 0x5c2e9bbbb3f0 rank 0 nranks 16 cudaDev 0 busId 18000 - Destroy COMPLETE\n");
  EXPECT_EQ(n.count, 0);
  EXPECT_EQ(n.detail, "the lines name one host (lccn09) for 16 ranks, and not every rank's line is in the log");
  EXPECT_EQ(perfgap::parsers::nccl_nodes_count_words(n), "");
  // Nothing at all: nothing to say.
  auto none = nodes_of("NCCL INFO Using network IB\n");
  EXPECT_EQ(none.count, 0);
  EXPECT_TRUE(none.detail.empty());
}

// Sockets on the loopback reach no other node; a NET/Socket line counts its first interface
// only (a node's second interface is no second node); IPv6 addresses are read whole; an empty
// or ':'-only hostname is none.
TEST(ParsersNcclNodes, LoopbackSecondInterfacesAndEmptyHostnames) {
  auto lo = nodes_of("axa:3048391:3048566 [0] NCCL INFO NET/Socket : Using [0]lo:127.0.0.1<0>\n");
  EXPECT_EQ(lo.count, 1);
  EXPECT_FALSE(lo.at_least);
  auto two = nodes_of(
      "GENOA-06:4766:4780 [0] NCCL INFO NET/Socket : Using [0]enp227s0f0:192.168.1.250<0> [1]enxfe1d:fe80::52b1:b1f3:51c0:ecca%enxfe1d<0>\n"
      "GENOA-07:5120:5133 [0] NCCL INFO NET/Socket : Using [0]enp227s0f0:192.168.1.251<0> [1]enxfe1d:fe80::52b1:b1f3:51c0:eccb%enxfe1d<0>\n");
  EXPECT_EQ(two.count, 2);
  EXPECT_TRUE(two.at_least) << "no rank count";
  EXPECT_EQ(two.basis, "the hostnames of the NCCL INFO lines");
  auto v6 = parse_nccl_log(
      "::16674:16674 [0] NCCL INFO Bootstrap : Using eth0:fd00::a:4%eth0<0>\n"
      "::16675:16675 [0] NCCL INFO Bootstrap : Using eth0:fd00::a:5%eth0<0>\n");
  ASSERT_TRUE(v6);
  EXPECT_TRUE(v6->nodes.hosts.empty()) << "the prefix names no host";
  EXPECT_EQ(v6->nodes.bootstrap.count("fd00::a:4%eth0"), 1u);
  EXPECT_EQ(nccl_nodes(v6->nodes).count, 2);
  EXPECT_EQ(nccl_nodes(v6->nodes).basis, "the ranks' bootstrap addresses");
}

// Logs of one job's ranks given apart are counted together.
TEST(ParsersNcclNodes, SignsOfSeveralLogsMerge) {
  auto a = parse_nccl_log(init_line("node-a", 100, 0, 2));
  auto b = parse_nccl_log(init_line("node-b", 200, 1, 2));
  ASSERT_TRUE(a && b);
  auto signs = a->nodes;
  EXPECT_EQ(nccl_nodes(signs).count, 0) << "one host of two ranks";
  signs.merge(b->nodes);
  EXPECT_EQ(nccl_nodes(signs).count, 2);
  EXPECT_FALSE(nccl_nodes(signs).at_least);
}

// Prefixes glued to the host token: Open MPI's --tag-output label ("[1,0]<stdout>:GPU03:1212:1284",
// horovod#969: 4 ranks on one host read as 4 nodes) and a CloudWatch copy's timestamp
// ("2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79", aws-ofi-nccl#889: one host read as two).
TEST(ParsersNcclNodes, GluedLauncherTagsAndTimestampsAreNotPartOfTheHost) {
  EXPECT_EQ(perfgap::parsers::nccl_line_host("[1,0]<stdout>:GPU03:1212:1284 [0]"), "GPU03");
  EXPECT_EQ(perfgap::parsers::nccl_line_host("[1,12]<stderr>:gpu-a:1:2 [3]"), "gpu-a");
  EXPECT_EQ(perfgap::parsers::nccl_line_host("  | 2025-05-16T16:39:51.208-07:00ip-10-36-29-253:79:79 [0]"), "ip-10-36-29-253");
  EXPECT_EQ(perfgap::parsers::nccl_line_host("2024-01-02T03:04:05Zhost-b:7:8 [1]"), "host-b");
  EXPECT_EQ(perfgap::parsers::nccl_line_host("host-c:7:8 [1]"), "host-c");
  std::string log;
  for (int r = 0; r < 4; ++r)
    log += "[1," + std::to_string(r) + "]<stdout>:" + init_line("GPU03", 1212 + r, r, 4);
  auto n = nodes_of(log);
  EXPECT_EQ(n.count, 1);
  EXPECT_FALSE(n.at_least);
}

// One rank's own file (NCCL_DEBUG_FILE per rank, an "[155]"-tagged excerpt): one process's lines
// naming peer ranks in its channels; a process driving several GPUs (nccl-tests -g 8) is not.
TEST(ParsersNcclNodes, OneRanksOwnLinesAreKnownAsSuch) {
  auto one = parse_nccl_log(
      "[155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 157[b2000] via P2P/IPC\n"
      "[155] crow-19:5330:5499 [3] NCCL INFO Ring 00 : 155[3d000] -> 153[1b000] via P2P/IPC\n");
  ASSERT_TRUE(one);
  EXPECT_EQ(one->nodes.speakers.size(), 1u);
  EXPECT_EQ(one->nodes.max_channel_rank, 157);
  auto threads = parse_nccl_log(
      "box:77:80 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nbox:77:81 [1] NCCL INFO Channel 00/0 : 1[1] -> 0[0] via P2P/IPC\n");
  ASSERT_TRUE(threads);
  EXPECT_EQ(threads->nodes.speakers.size(), 2u);
  EXPECT_EQ(threads->nodes.max_channel_rank, 1);
}
