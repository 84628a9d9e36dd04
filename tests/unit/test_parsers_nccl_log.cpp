#include <gtest/gtest.h>

#include "analyzers/analyzers.hpp"
#include "parsers/nccl_log.hpp"

#include <set>

using namespace perfgap;

namespace {
std::vector<report::Finding> judge(const std::string& text, const analyzers::NcclLogOptions& o = {}) {
  static std::vector<parsers::NcclLog> keep;
  keep.push_back(*parsers::parse_nccl_log(text));
  return analyzers::analyze_nccl_logs({{"log", &keep.back()}}, o);
}
const char* kIb =
    "node1:100:200 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\n"
    "node1:100:200 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB [1]mlx5_1:1/IB ; OOB eth0:10.0.0.1<0>\n"
    "node1:100:200 [0] NCCL INFO Using network IB\n"
    "node1:100:201 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
    "node1:100:201 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n"
    "node1:100:201 [0] NCCL INFO Channel 01/0 : 0[0] -> 1[1] via P2P/CUMEM\n"
    "node1:100:201 [0] NCCL INFO 16 coll channels, 16 collnet channels, 0 nvls channels, 16 p2p channels, 2 p2p channels per peer\n";
}

TEST(ParsersNcclLog, Lines) {
  auto l = parsers::parse_nccl_log(kIb);
  ASSERT_TRUE(l);
  ASSERT_EQ(l->versions.size(), 1u);
  EXPECT_EQ(l->versions[0].host, "node1");
  EXPECT_EQ(l->versions[0].version, "2.21.5");
  EXPECT_EQ(l->hosts, (std::set<std::string, std::less<>>{"node1"}));
  ASSERT_EQ(l->rdma_devices.size(), 2u);
  EXPECT_EQ(l->rdma_devices[0].first, "mlx5_0:1/IB");
  ASSERT_EQ(l->channels.size(), 3u);
  EXPECT_EQ(l->channels[0].net, "IB");
  EXPECT_TRUE(l->channels[0].gdrdma);
  EXPECT_EQ(l->channels[0].direction, "receive");
  EXPECT_EQ(*l->coll_channels, 16);
  EXPECT_EQ(*l->nvls_channels, 0);
  EXPECT_FALSE(parsers::parse_nccl_log("hello\nworld\n"));
}

TEST(AnalyzersNcclLog, NetStatuses) {
  auto f = judge(kIb);
  EXPECT_EQ(f[1].id, "nccl_log.net");
  EXPECT_EQ(f[1].status, report::Status::pass);
  // Socket with RDMA devices shown, on two hosts: fallback.
  f = judge("h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0\nh:1:2 [0] NCCL INFO Using network Socket\n"
            "g:1:2 [0] NCCL INFO Using network Socket\n");
  EXPECT_EQ(f[1].status, report::Status::fail);
  // NCCL found no RDMA device, two nodes over sockets: no NIC shown, so a warning that says
  // both readings (the job cannot see its NICs, or the nodes have none).
  f = judge("h:1:2 [0] NCCL INFO NET/IB : No device found.\nh:1:2 [0] NCCL INFO Using network Socket\n"
            "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n");
  EXPECT_EQ(f[1].status, report::Status::warn) << f[1].title;
  // Socket, no RDMA evidence: warn; intended: pass; expected IB: fail.
  std::string sock = "h:1:2 [0] NCCL INFO NET/Socket : Using [0]eth0:10.0.0.1<0>\nh:1:2 [0] NCCL INFO Using network Socket\n"
                     "g:1:2 [0] NCCL INFO Using network Socket\n";
  EXPECT_EQ(judge(sock)[1].status, report::Status::warn);
  analyzers::NcclLogOptions o;
  o.expect_net = "Socket";
  EXPECT_EQ(judge(sock, o)[1].status, report::Status::pass);
  o.expect_net = "IB";
  EXPECT_EQ(judge(sock, o)[1].status, report::Status::fail);
  // GDRDMA mixed within one direction.
  f = judge("h:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
            "h:1:2 [0] NCCL INFO Channel 01/0 : 8[0] -> 0[0] [receive] via NET/IB/0\n");
  EXPECT_EQ(f[1].status, report::Status::fail);
  // Send without GDRDMA (GDR read off) and receive with it is normal.
  f = judge("h:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0/GDRDMA\n"
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0\n");
  EXPECT_EQ(f[1].status, report::Status::pass);
  analyzers::NcclLogOptions gdr;
  gdr.expect_gdr = true;
  f = judge("h:1:2 [0] NCCL INFO Channel 00/0 : 8[0] -> 0[0] [receive] via NET/IB/0\n", gdr);
  EXPECT_EQ(f[1].status, report::Status::fail);
  // --expect-gdr: send without GDRDMA beside receive with it is the GDR-read policy ("read 0"),
  // said in the evidence; send without it and no receive with it fails.
  const std::string read_off = "h:1:2 [0] NCCL INFO NET/IB : GPU Direct RDMA Enabled for GPU 18100000 / HCA 0 (distance 1 < 2), read 0\n"
                               "h:1:2 [0] NCCL INFO Ring 00 : 1[18100000] -> 0[435e00000] [receive] via NET/IB/0/GDRDMA\n"
                               "h:1:2 [0] NCCL INFO Ring 00 : 0[435e00000] -> 1[18100000] [send] via NET/IB/0\n";
  f = judge(read_off, gdr);
  EXPECT_EQ(f[1].status, report::Status::pass) << f[1].title;
  bool policy_said = false;
  for (const auto& e : f[1].evidence) policy_said = policy_said || e.observed.find("GDR-read") != std::string::npos ||
                                                    e.observed.find("read policy") != std::string::npos;
  EXPECT_TRUE(policy_said);
  f = judge("h:1:2 [0] NCCL INFO Ring 00 : 0[0] -> 1[1] [send] via NET/IB/0\ng:1:2 [0] NCCL INFO Ring 00 : 1[1] -> 0[0] [send] via NET/IB/0\n", gdr);
  EXPECT_EQ(f[1].status, report::Status::fail);
  // --expect-gdr over a log that names the network but has no channel lines: not seen, skip.
  f = judge("a:1:2 [0] NCCL INFO Using network IBext_v8\nb:1:2 [0] NCCL INFO Using network IBext_v8\n", gdr);
  EXPECT_EQ(f[1].status, report::Status::skip) << f[1].title;
  EXPECT_NE(f[1].title.find("not in the log"), std::string::npos) << f[1].title;
  EXPECT_EQ(judge("a:1:2 [0] NCCL INFO Using network IBext_v8\nb:1:2 [0] NCCL INFO Using network IBext_v8\n")[1].status,
            report::Status::pass);
  // Different versions across hosts.
  f = judge("a:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nb:1:2 [0] NCCL INFO NCCL version 2.19.3+cuda12.2\n"
            "a:1:2 [0] NCCL INFO Using network IB\n");
  EXPECT_EQ(f[1].status, report::Status::fail);
  // Nothing about the network.
  EXPECT_EQ(judge("h:1:2 [0] NCCL INFO Setting affinity for GPU 0\n")[1].status, report::Status::skip);
}

TEST(AnalyzersNcclLog, TopoFileStatuses) {
  // WARN up to 2.26 (with a timestamp since 2.26), INFO since 2.27.3.
  auto f = judge("h:1:2 [0] NCCL INFO NCCL_TOPO_FILE set by environment to /etc/nccl/topo.xml\n"
                 "[2025-03-01 10:00:00] h:1:2 [0] graph/xml.cc:700 NCCL WARN Could not open XML topology file /etc/nccl/topo.xml : No such file or directory\n");
  EXPECT_EQ(f[0].id, "nccl_log.topo_file");
  EXPECT_EQ(f[0].status, report::Status::fail);
  f = judge("h:1:2 [0] NCCL INFO Could not open XML topology file /x.xml : No such file or directory\n");
  EXPECT_EQ(f[0].status, report::Status::fail);
  f = judge("h:1:2 [0] NCCL INFO Loading topology file /etc/nccl/topo.xml\n");
  EXPECT_EQ(f[0].status, report::Status::pass);
  analyzers::NcclLogOptions o;
  o.expect_topo_file = "/etc/nccl/topo.xml";
  EXPECT_EQ(judge("h:1:2 [0] NCCL INFO Using network IB\n", o)[0].status, report::Status::fail);
  EXPECT_EQ(judge("h:1:2 [0] NCCL INFO Loading topology file /other.xml\n", o)[0].status, report::Status::fail);
  EXPECT_EQ(judge("h:1:2 [0] NCCL INFO Using network IB\n")[0].status, report::Status::skip);
}

// Lines without the host:pid:tid [dev] prefix count like the others.
TEST(ParsersNcclLog, LinesWithoutPrefix) {
  auto l = parsers::parse_nccl_log(
      "NCCL version 2.23.4+cuda12.6\n"
      "NCCL INFO NET/IB : No device found.\n"
      "0: NCCL INFO Using network Socket\n"
      "[1,0]<stdout>:NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n"
      "training step 1 done\n");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->using_network.size(), 1u);
  EXPECT_EQ(l->using_network[0].first, "Socket");
  EXPECT_EQ(l->using_network[0].second, 3);
  EXPECT_EQ(l->ib_no_device, 2);
  EXPECT_EQ(l->n_nodes, 2);
  EXPECT_TRUE(l->hosts.empty());
  EXPECT_EQ(judge("NCCL INFO NET/IB : No device found.\nNCCL INFO Using network Socket\n"
                  "NCCL INFO comm 0x1 rank 0 nRanks 16 nNodes 2 localRanks 8 localRank 0 MNNVL 0\n")[1].status,
            report::Status::warn);
}

// NCCL probes IB in every job: on one node, "No device found" and "Using network Socket" are
// no fallback (nothing crosses the network); Socket channels still are.
TEST(AnalyzersNcclLog, SingleNodeIsNoFallback) {
  const char* probe = "h:1:2 [0] NCCL INFO NET/IB : No device found.\nh:1:2 [0] NCCL INFO Using network Socket\n";
  auto f = judge(probe);  // one host, no NET channel
  EXPECT_EQ(f[1].status, report::Status::skip);
  EXPECT_NE(f[1].title.find("single node"), std::string::npos) << f[1].title;
  f = judge(std::string(probe) + "h:1:2 [0] NCCL INFO comm 0x1 rank 0 nRanks 8 nNodes 1 localRanks 8 localRank 0 MNNVL 0\n");
  EXPECT_EQ(f[1].status, report::Status::skip);
  EXPECT_NE(f[1].title.find("nNodes 1"), std::string::npos) << f[1].title;
  f = judge(std::string(probe) + "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n");
  EXPECT_EQ(f[1].status, report::Status::warn) << f[1].title;
  EXPECT_NE(f[1].title.find("NCCL uses TCP sockets between nodes; NCCL found no RDMA device"), std::string::npos) << f[1].title;
  // Two hosts: inter-node.
  f = judge(std::string(probe) + "g:1:2 [0] NCCL INFO Using network Socket\n");
  EXPECT_EQ(f[1].status, report::Status::warn) << f[1].title;
  // An RDMA device shown, then sockets between nodes: the fallback fails.
  f = judge("h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0\n" + std::string(probe) +
            "h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/Socket/0\n");
  EXPECT_EQ(f[1].status, report::Status::fail) << f[1].title;
}

TEST(AnalyzersNcclLog, TwoBareVersionLinesAreAMismatch) {
  auto l = parsers::parse_nccl_log("NCCL version 2.21.5+cuda12.4\nNCCL version 2.18.3+cuda12.2\nNCCL version 2.21.5+cuda12.4\n");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->versions.size(), 2u);
  auto f = judge("NCCL version 2.21.5+cuda12.4\nNCCL version 2.18.3+cuda12.2\nNCCL INFO Using network IB\n");
  EXPECT_EQ(f[1].status, report::Status::fail);
  EXPECT_NE(f[1].title.find("2.21.5"), std::string::npos);
  EXPECT_NE(f[1].title.find("2.18.3"), std::string::npos);
  // The same version twice is no mismatch.
  f = judge("NCCL version 2.21.5+cuda12.4\nh:1:2 [0] NCCL INFO NCCL version 2.21.5+cuda12.4\nh:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 8[0] [send] via NET/IB/0/GDRDMA\n");
  EXPECT_EQ(f[1].status, report::Status::pass);
}

TEST(AnalyzersNcclLog, NetworkPluginIsEvidenceWhenNothingElseIs) {
  auto l = parsers::parse_nccl_log(
      "1: gpu-3:47930:47930 [0] NCCL INFO NCCL version 2.26.2+cuda12.2\n"
      "2: gpu-4:930643:930850 [7] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.13.2-aws\n");
  ASSERT_TRUE(l);
  ASSERT_TRUE(l->net_plugin);
  EXPECT_EQ(l->net_plugin->first, "aws-ofi-nccl 1.13.2-aws");
  auto f = judge("gpu-3:1:2 [0] NCCL INFO NET/OFI Initializing aws-ofi-nccl 1.13.2-aws\ngpu-4:1:2 [0] NCCL INFO cudaDriverVersion 12080\n");
  EXPECT_EQ(f[1].status, report::Status::skip);
  ASSERT_FALSE(f[1].evidence.empty());
  EXPECT_NE(f[1].evidence[0].observed.find("aws-ofi-nccl 1.13.2-aws"), std::string::npos);
}

// A failing job's NCCL WARN lines and error return chains (NVIDIA/nccl#928, #1405, #224,
// aws-ofi-nccl#24 came out PASS): nccl_log.errors fails naming what the lines say failed; the
// probes every job prints (libibverbs on an Ethernet node) and an error passed up with no WARN
// of its own (a fallback NCCL recovers from) are no failure.
TEST(AnalyzersNcclLog, WarnLinesAndErrorReturnsOfAFailingJob) {
  auto errors = [](const std::string& log) {
    for (auto& f : judge(log))
      if (f.id == "nccl_log.errors") return f;
    ADD_FAILURE() << "no nccl_log.errors";
    return report::Finding{};
  };
  auto ib = errors(
      "h:1:2 [0] NCCL INFO NET/IB : Using [0]mlx5_0:1/IB ; OOB eth0:10.0.0.1<0>\n"
      "h:1:9 [0] transport/net_ib.cc:1295 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<54862> with status=12 opcode=0 len=0 "
      "vendor err 129 (Recv) localGid fd00::1 remoteGids fd00::2\n"
      "h:1:9 [0] NCCL INFO transport/net.cc:1134 -> 6\n");
  EXPECT_EQ(ib.status, report::Status::fail);
  EXPECT_NE(ib.title.find("NCCL reported 1 WARN line (RDMA transport retries exhausted (completion error 12)"), std::string::npos) << ib.title;
  double returns = -1;
  for (const auto& [k, v] : ib.metrics)
    if (k == "error_returns") returns = v;
  EXPECT_DOUBLE_EQ(returns, 1);
  auto gdr = errors("h:1:9 [0] transport/net_ib.cc:1012 NCCL WARN NET/IB : Got completion from peer 10.0.0.2<1> with error 4, opcode 0, len 0, vendor err 81\n");
  EXPECT_NE(gdr.title.find("RDMA local protection error (completion error 4)"), std::string::npos) << gdr.title;
  auto sock = errors("[1,0]<stdout>:gpu6:1407:1595 [0] misc/socket.cc:432 NCCL WARN Net : Socket creation failed : Address family not supported by protocol\n");
  EXPECT_NE(sock.title.find("a TCP connection between ranks failed"), std::string::npos) << sock.title;
  auto probe = errors("[1,0]<stdout>:GPU03:1212:1284 [0] misc/ibvwrap.cu:63 NCCL WARN Failed to open libibverbs.so[.1]\n"
                      "[1,0]<stdout>:GPU03:1212:1284 [0] NCCL INFO Using internal Network Socket\n");
  EXPECT_EQ(probe.status, report::Status::pass) << probe.title;
  auto recovered = errors("axa:3048391:3048566 [0] NCCL INFO net.cc:79 -> 3\naxa:3048391:3048566 [0] NCCL INFO Using network Socket\n");
  EXPECT_EQ(recovered.status, report::Status::warn) << recovered.title;
  EXPECT_NE(recovered.title.find("(first: net.cc:79 -> 3) with no WARN line of its own"), std::string::npos) << recovered.title;
  // Channel lines are no error return ("0[0] -> 1[1]"), nor a zero result.
  EXPECT_EQ(errors("h:1:2 [0] NCCL INFO Channel 00/0 : 0[0] -> 1[1] via P2P/IPC\nh:1:2 [0] NCCL INFO init.cc:100 -> 0\n").status,
            report::Status::pass);
}

// NVIDIA/nccl#899: "GPU Direct RDMA Disabled for HCA n 'mlx5_n' (no module)" and NET/IB channels
// without GDRDMA passed as "NCCL uses network IB": it warns, naming nvidia-peermem.
TEST(AnalyzersNcclLog, GpuDirectRdmaDisabledByNcclWarns) {
  const std::string off =
      "a:5:7 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (no module)\n"
      "a:5:8 [0] NCCL INFO Channel 00 : 0[1a000] -> 1[1a000] [receive] via NET/IB/0\n"
      "b:6:9 [0] NCCL INFO Channel 00 : 1[1a000] -> 0[1a000] [receive] via NET/IB/0\n";
  auto f = judge(off);
  EXPECT_EQ(f[1].id, "nccl_log.net");
  EXPECT_EQ(f[1].status, report::Status::warn) << f[1].title;
  EXPECT_NE(f[1].title.find("NCCL says GPUDirect RDMA is disabled for its NICs (no module: nvidia-peermem not loaded)"), std::string::npos)
      << f[1].title;
  EXPECT_NE(f[1].fix.find("nvidia_peermem"), std::string::npos) << f[1].fix;
  // Channels that do use GDRDMA: the line is said, the verdict stands.
  auto on = judge("a:5:7 [0] NCCL INFO NET/IB : GPU Direct RDMA Disabled for HCA 1 'mlx5_1' (no module)\n"
                  "a:5:8 [0] NCCL INFO Channel 00 : 0[1a000] -> 1[1a000] [receive] via NET/IB/0/GDRDMA\n"
                  "b:6:9 [0] NCCL INFO Channel 00 : 1[1a000] -> 0[1a000] [receive] via NET/IB/0/GDRDMA\n");
  EXPECT_EQ(on[1].status, report::Status::pass) << on[1].title;
}

// NCCL 2.3-2.4 named the network "Using internal Network Socket" (horovod#969): read as "Using network Socket".
TEST(ParsersNcclLog, OldInternalNetworkLineIsTheNetworkChoice) {
  auto l = parsers::parse_nccl_log("GPU03:1212:1284 [0] NCCL INFO Using internal Network Socket\nGPU03:1213:1290 [1] NCCL INFO Using internal Network IB\n");
  ASSERT_TRUE(l);
  ASSERT_EQ(l->using_network.size(), 2u);
  EXPECT_EQ(l->using_network[0].first, "Socket");
  EXPECT_EQ(l->using_network[1].first, "IB");
}
