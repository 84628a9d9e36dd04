// NCCL topology XML on text: the real, publicly posted files in ../shared/fixtures/topo-xml/
// (read in place, never copied; the tests skip when that directory is absent) and bad input
// (malformed, another format, deep nesting, what NCCL's own reader rejects).
#include <gtest/gtest.h>

#include <filesystem>
#include <set>
#include <string>

#include "files.hpp"
#include "parsers/nccl_topo.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;

namespace {

const fs::path kTopoXmlDir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/topo-xml";

#define REQUIRE_TOPO_XML(file)                                                   \
  if (!fs::exists(kTopoXmlDir / (file))) GTEST_SKIP() << kTopoXmlDir / (file) << " not present (no ../shared here)"

std::set<std::string> busids(const parsers::TopoFile& t, parsers::TopoPci::Kind k) {
  std::set<std::string> out;
  for (const auto& p : t.pci)
    if (p.kind == k) out.insert(p.busid);
  return out;
}

std::set<std::string> seq(std::initializer_list<const char*> v) { return {v.begin(), v.end()}; }

TEST(ParsersNcclTopo, AzureNdv4GpuNicPairsUnderVirtualBridges) {
  REQUIRE_TOPO_XML("azhpc-ndv4-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "azhpc-ndv4-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->cpus, 4);
  EXPECT_EQ(busids(*t, parsers::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0", "000b:00:00.0",
                                                   "000c:00:00.0", "000d:00:00.0", "000e:00:00.0"}));
  EXPECT_EQ(busids(*t, parsers::TopoPci::nic), seq({"0101:00:00.0", "0102:00:00.0", "0103:00:00.0", "0104:00:00.0", "0105:00:00.0",
                                                   "0106:00:00.0", "0107:00:00.0", "0108:00:00.0"}));
  // The ffff:ff:0N.0 bridges are virtual and never matched.
  for (const auto& p : t->pci)
    if (p.is_virtual()) { EXPECT_EQ(p.kind, parsers::TopoPci::bridge) << p.busid; }
  for (const auto& p : t->pci)
    if (p.busid == "000d:00:00.0") {
      EXPECT_EQ(p.numaid, 2);
      EXPECT_EQ(p.link_speed, "16 GT/s");
      EXPECT_EQ(p.link_width, 16);
    }
  EXPECT_TRUE(t->nccl_rejects.empty());
}

TEST(ParsersNcclTopo, AzureNdv5) {
  REQUIRE_TOPO_XML("azhpc-ndv5-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "azhpc-ndv5-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, parsers::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0008:00:00.0", "0009:00:00.0",
                                                   "000a:00:00.0", "000b:00:00.0", "000c:00:00.0"}));
  EXPECT_EQ(t->nics(), 8);
  EXPECT_EQ(parsers::parse_topo_link_speed("32.0 GT/s PCIe"), 32.0);
}

TEST(ParsersNcclTopo, AzureNdv2FlatWithAffinity) {
  REQUIRE_TOPO_XML("azhpc-ndv2-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "azhpc-ndv2-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->gpus(), 8);
  EXPECT_EQ(busids(*t, parsers::TopoPci::nic), seq({"0101:00:00.0"}));
  for (const auto& p : t->pci)
    if (p.busid == "0005:00:00.0") {
      EXPECT_EQ(p.numaid, 1);
      EXPECT_EQ(p.affinity, "000000ff,fff00000");
    }
}

TEST(ParsersNcclTopo, AzureNcv4DumpStyleWithSocketNet) {
  REQUIRE_TOPO_XML("azhpc-ncv4-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "azhpc-ncv4-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, parsers::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0"}));
  EXPECT_EQ(t->nics(), 0);
  ASSERT_EQ(t->nets.size(), 1u);
  EXPECT_EQ(t->nets[0].name, "eth0");
  EXPECT_EQ(t->nets[0].pci_busid, "");  // <nic> directly under <cpu>
  for (const auto& p : t->pci) {
    EXPECT_EQ(p.link_speed, "");           // link_speed="" states nothing
    EXPECT_FALSE(p.link_width.has_value());  // link_width="0" neither
  }
}

TEST(ParsersNcclTopo, AzureNcv4GraphIsNotATopology) {
  REQUIRE_TOPO_XML("azhpc-ncv4-graph.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "azhpc-ncv4-graph.xml"));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().find("graph file"), std::string::npos) << t.error();
}

TEST(ParsersNcclTopo, AwsP4dSwitchesWithCommentsInline) {
  REQUIRE_TOPO_XML("aws-ofi-nccl-p4d-24xl-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "aws-ofi-nccl-p4d-24xl-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, parsers::TopoPci::gpu), seq({"0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0", "0000:20:1d.0", "0000:90:1c.0",
                                                   "0000:90:1d.0", "0000:a0:1c.0", "0000:a0:1d.0"}));
  EXPECT_EQ(busids(*t, parsers::TopoPci::nic), seq({"0000:10:1b.0", "0000:20:1b.0", "0000:90:1b.0", "0000:a0:1b.0"}));
  EXPECT_TRUE(t->nccl_rejects.empty()) << t->nccl_rejects.front();
  for (const auto& p : t->pci)
    if (p.kind == parsers::TopoPci::nic) { EXPECT_EQ(p.vendor, 0x1d0fu); }
}

TEST(ParsersNcclTopo, AwsG5BareBusIds) {
  REQUIRE_TOPO_XML("aws-ofi-nccl-g5.48xl-topo.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "aws-ofi-nccl-g5.48xl-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, parsers::TopoPci::other),
            seq({"0000:00:15.0", "0000:00:16.0", "0000:00:17.0", "0000:00:18.0", "0000:00:19.0", "0000:00:1a.0", "0000:00:1b.0",
                 "0000:00:1c.0", "0000:00:1d.0"}));
  EXPECT_EQ(t->gpus(), 0);
}

TEST(ParsersNcclTopo, RealDumpWithBondedNics) {
  REQUIRE_TOPO_XML("nccl-topo-dump-8xa100-5xcx6-bond-simai.xml");
  auto t = parsers::parse_nccl_topo(read_file(kTopoXmlDir / "nccl-topo-dump-8xa100-5xcx6-bond-simai.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, parsers::TopoPci::gpu), seq({"0000:13:00.0", "0000:19:00.0", "0000:48:00.0", "0000:4d:00.0", "0000:89:00.0",
                                                   "0000:8e:00.0", "0000:ad:00.0", "0000:b3:00.0"}));
  EXPECT_EQ(busids(*t, parsers::TopoPci::nic), seq({"0000:06:00.0", "0000:1a:00.0", "0000:4f:00.0", "0000:90:00.0", "0000:b4:00.0"}));
  std::set<std::string> nets;
  for (const auto& n : t->nets) nets.insert(n.name);
  EXPECT_EQ(nets, seq({"mlx5_bond_0", "mlx5_bond_1", "mlx5_bond_2", "mlx5_bond_3", "mlx5_bond_4"}));
  for (const auto& n : t->nets)
    if (n.name == "mlx5_bond_1") { EXPECT_EQ(n.pci_busid, "0000:1a:00.0"); }
}

TEST(ParsersNcclTopo, EverySharedFileParsesOrSaysWhy) {
  if (!fs::exists(kTopoXmlDir)) GTEST_SKIP() << kTopoXmlDir << " not present";
  int n = 0;
  for (const auto& e : fs::directory_iterator(kTopoXmlDir)) {
    auto t = parsers::parse_nccl_topo(read_file(e.path()));
    bool graph = e.path().filename().string().find("graph") != std::string::npos;
    EXPECT_EQ(t.has_value(), !graph) << e.path() << ": " << (t ? "" : t.error());
    ++n;
  }
  EXPECT_GE(n, 1);
}

TEST(ParsersNcclTopoBadInput, DeepNestingDoesNotExhaustTheStack) {
  std::string xml = "<system version=\"1\"><cpu numaid=\"0\">";
  for (int i = 0; i < 100000; ++i) xml += "<pci busid=\"ffff:ff:00.0\">";
  for (int i = 0; i < 100000; ++i) xml += "</pci>";
  xml += "</cpu></system>";
  auto t = parsers::parse_nccl_topo(xml);
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->pci.size(), 100000u);
}

TEST(ParsersNcclTopoBadInput, MalformedAndOtherFormats) {
  EXPECT_FALSE(parsers::parse_nccl_topo(""));
  EXPECT_FALSE(parsers::parse_nccl_topo("<system version=\"1\"><cpu></system>"));
  EXPECT_FALSE(parsers::parse_nccl_topo("<system><cpu/></system>"));  // no version
  auto other = parsers::parse_nccl_topo("<nvidia_smi_log/>");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("<nvidia_smi_log>"), std::string::npos);
  auto line = parsers::parse_nccl_topo("<system version=\"1\">\n<cpu>\n</pci>\n</system>");
  ASSERT_FALSE(line);
  EXPECT_NE(line.error().find("line 3"), std::string::npos) << line.error();
}

TEST(ParsersNcclTopoBadInput, WhatNcclsOwnReaderRejects) {
  auto decl = parsers::parse_nccl_topo("<?xml version=\"1.0\"?>\n<system version=\"1\"/>");
  ASSERT_TRUE(decl);
  ASSERT_FALSE(decl->nccl_rejects.empty());
  EXPECT_NE(decl->nccl_rejects[0].find("line 1"), std::string::npos);
  auto split = parsers::parse_nccl_topo("<system version=\"1\">\n  <cpu numaid=\"0\"\n       affinity=\"ff\"/>\n</system>");
  ASSERT_TRUE(split);
  EXPECT_FALSE(split->nccl_rejects.empty());
  auto fine = parsers::parse_nccl_topo("<!-- c -->\n<system version=\"1\">\n  <cpu numaid=\"0\"/>  <!-- x -->\n</system>\n");
  ASSERT_TRUE(fine);
  EXPECT_TRUE(fine->nccl_rejects.empty()) << fine->nccl_rejects.front();
}

}  // namespace

TEST(ParsersNcclTopo, NestingGpuDevAndCpuAreKept) {
  // What gpu.topology_file compares: each <pci>'s enclosing <pci> and <cpu>, and <gpu dev>.
  auto t = parsers::parse_nccl_topo(
      "<system version=\"1\">\n"
      " <cpu numaid=\"0\">\n"
      "  <pci busid=\"0000:15:00.0\" class=\"0x060400\">\n"
      "   <pci busid=\"0000:18:00.0\" class=\"0x030200\"><gpu dev=\"3\"/></pci>\n"
      "   <pci busid=\"0000:19:00.0\" class=\"0x020700\"><nic><net name=\"mlx5_0\"/></nic></pci>\n"
      "  </pci>\n"
      " </cpu>\n"
      " <cpu numaid=\"1\">\n"
      "  <pci busid=\"0000:9c:00.0\" class=\"0x030200\"/>\n"
      " </cpu>\n"
      "</system>\n");
  ASSERT_TRUE(t) << t.error();
  ASSERT_EQ(t->pci.size(), 4u);
  EXPECT_EQ(t->pci[0].parent, -1);
  EXPECT_EQ(t->pci[0].cpu, 0);
  EXPECT_EQ(t->pci[1].parent, 0);
  EXPECT_EQ(t->pci[1].gpu_dev, 3);
  EXPECT_EQ(t->pci[2].parent, 0);
  EXPECT_EQ(t->pci[2].nets, std::vector<std::string>{"mlx5_0"});
  EXPECT_EQ(t->pci[3].parent, -1);
  EXPECT_EQ(t->pci[3].cpu, 1);
  EXPECT_FALSE(t->pci[3].gpu_dev.has_value());
}
