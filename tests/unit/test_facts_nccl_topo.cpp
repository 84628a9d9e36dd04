// NCCL topology XML: the real, publicly posted files in ../shared/fixtures/topo-xml/ (read in
// place, never copied; the tests skip when that directory is absent), trees whose PCI devices
// match one of them and trees that do not, and bad input (malformed, another format, 50 MB).
#include <gtest/gtest.h>

#include <filesystem>
#include <fstream>
#include <set>
#include <sstream>

#include "core/check.hpp"
#include "core/config.hpp"
#include "core/runner.hpp"
#include "facts/nccl.hpp"
#include "files.hpp"
#include "tree.hpp"

namespace fs = std::filesystem;
using namespace perfgap;
using fixture::read_file;

namespace {

const fs::path kTopoDir = fs::path(PERFGAP_SHARED_DIR) / "fixtures/topo-xml";

#define REQUIRE_TOPO_FILE(file)                                                   \
  if (!fs::exists(kTopoDir / (file))) GTEST_SKIP() << kTopoDir / (file) << " not present (no ../shared here)"

std::set<std::string> busids(const facts::TopoFile& t, facts::TopoPci::Kind k) {
  std::set<std::string> out;
  for (const auto& p : t.pci)
    if (p.kind == k) out.insert(p.busid);
  return out;
}

std::set<std::string> seq(std::initializer_list<const char*> v) { return {v.begin(), v.end()}; }

TEST(NcclTopoShared, AzureNdv4GpuNicPairsUnderVirtualBridges) {
  REQUIRE_TOPO_FILE("azhpc-ndv4-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "azhpc-ndv4-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->cpus, 4);
  EXPECT_EQ(busids(*t, facts::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0", "000b:00:00.0",
                                                   "000c:00:00.0", "000d:00:00.0", "000e:00:00.0"}));
  EXPECT_EQ(busids(*t, facts::TopoPci::nic), seq({"0101:00:00.0", "0102:00:00.0", "0103:00:00.0", "0104:00:00.0", "0105:00:00.0",
                                                   "0106:00:00.0", "0107:00:00.0", "0108:00:00.0"}));
  // The ffff:ff:0N.0 bridges are virtual and never matched.
  for (const auto& p : t->pci)
    if (p.is_virtual()) { EXPECT_EQ(p.kind, facts::TopoPci::bridge) << p.busid; }
  for (const auto& p : t->pci)
    if (p.busid == "000d:00:00.0") {
      EXPECT_EQ(p.numaid, 2);
      EXPECT_EQ(p.link_speed, "16 GT/s");
      EXPECT_EQ(p.link_width, 16);
    }
  EXPECT_TRUE(t->nccl_rejects.empty());
}

TEST(NcclTopoShared, AzureNdv5) {
  REQUIRE_TOPO_FILE("azhpc-ndv5-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "azhpc-ndv5-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, facts::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0008:00:00.0", "0009:00:00.0",
                                                   "000a:00:00.0", "000b:00:00.0", "000c:00:00.0"}));
  EXPECT_EQ(t->nics(), 8);
  EXPECT_EQ(facts::parse_topo_link_speed("32.0 GT/s PCIe"), 32.0);
}

TEST(NcclTopoShared, AzureNdv2FlatWithAffinity) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->gpus(), 8);
  EXPECT_EQ(busids(*t, facts::TopoPci::nic), seq({"0101:00:00.0"}));
  for (const auto& p : t->pci)
    if (p.busid == "0005:00:00.0") {
      EXPECT_EQ(p.numaid, 1);
      EXPECT_EQ(p.affinity, "000000ff,fff00000");
    }
}

TEST(NcclTopoShared, AzureNcv4DumpStyleWithSocketNet) {
  REQUIRE_TOPO_FILE("azhpc-ncv4-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "azhpc-ncv4-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, facts::TopoPci::gpu), seq({"0001:00:00.0", "0002:00:00.0", "0003:00:00.0", "0004:00:00.0"}));
  EXPECT_EQ(t->nics(), 0);
  ASSERT_EQ(t->nets.size(), 1u);
  EXPECT_EQ(t->nets[0].name, "eth0");
  EXPECT_EQ(t->nets[0].pci_busid, "");  // <nic> directly under <cpu>
  for (const auto& p : t->pci) {
    EXPECT_EQ(p.link_speed, "");           // link_speed="" states nothing
    EXPECT_FALSE(p.link_width.has_value());  // link_width="0" neither
  }
}

TEST(NcclTopoShared, AzureNcv4GraphIsNotATopology) {
  REQUIRE_TOPO_FILE("azhpc-ncv4-graph.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "azhpc-ncv4-graph.xml"));
  ASSERT_FALSE(t);
  EXPECT_NE(t.error().find("graph file"), std::string::npos) << t.error();
}

TEST(NcclTopoShared, AwsP4dSwitchesWithCommentsInline) {
  REQUIRE_TOPO_FILE("aws-ofi-nccl-p4d-24xl-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "aws-ofi-nccl-p4d-24xl-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, facts::TopoPci::gpu), seq({"0000:10:1c.0", "0000:10:1d.0", "0000:20:1c.0", "0000:20:1d.0", "0000:90:1c.0",
                                                   "0000:90:1d.0", "0000:a0:1c.0", "0000:a0:1d.0"}));
  EXPECT_EQ(busids(*t, facts::TopoPci::nic), seq({"0000:10:1b.0", "0000:20:1b.0", "0000:90:1b.0", "0000:a0:1b.0"}));
  EXPECT_TRUE(t->nccl_rejects.empty()) << t->nccl_rejects.front();
  for (const auto& p : t->pci)
    if (p.kind == facts::TopoPci::nic) { EXPECT_EQ(p.vendor, 0x1d0fu); }
}

TEST(NcclTopoShared, AwsG5BareBusIds) {
  REQUIRE_TOPO_FILE("aws-ofi-nccl-g5.48xl-topo.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "aws-ofi-nccl-g5.48xl-topo.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, facts::TopoPci::other),
            seq({"0000:00:15.0", "0000:00:16.0", "0000:00:17.0", "0000:00:18.0", "0000:00:19.0", "0000:00:1a.0", "0000:00:1b.0",
                 "0000:00:1c.0", "0000:00:1d.0"}));
  EXPECT_EQ(t->gpus(), 0);
}

TEST(NcclTopoShared, RealDumpWithBondedNics) {
  REQUIRE_TOPO_FILE("nccl-topo-dump-8xa100-5xcx6-bond-simai.xml");
  auto t = facts::parse_nccl_topo(read_file(kTopoDir / "nccl-topo-dump-8xa100-5xcx6-bond-simai.xml"));
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(busids(*t, facts::TopoPci::gpu), seq({"0000:13:00.0", "0000:19:00.0", "0000:48:00.0", "0000:4d:00.0", "0000:89:00.0",
                                                   "0000:8e:00.0", "0000:ad:00.0", "0000:b3:00.0"}));
  EXPECT_EQ(busids(*t, facts::TopoPci::nic), seq({"0000:06:00.0", "0000:1a:00.0", "0000:4f:00.0", "0000:90:00.0", "0000:b4:00.0"}));
  std::set<std::string> nets;
  for (const auto& n : t->nets) nets.insert(n.name);
  EXPECT_EQ(nets, seq({"mlx5_bond_0", "mlx5_bond_1", "mlx5_bond_2", "mlx5_bond_3", "mlx5_bond_4"}));
  for (const auto& n : t->nets)
    if (n.name == "mlx5_bond_1") { EXPECT_EQ(n.pci_busid, "0000:1a:00.0"); }
}

TEST(NcclTopoShared, EverySharedFileParsesOrSaysWhy) {
  if (!fs::exists(kTopoDir)) GTEST_SKIP() << kTopoDir << " not present";
  int n = 0;
  for (const auto& e : fs::directory_iterator(kTopoDir)) {
    auto t = facts::parse_nccl_topo(read_file(e.path()));
    bool graph = e.path().filename().string().find("graph") != std::string::npos;
    EXPECT_EQ(t.has_value(), !graph) << e.path() << ": " << (t ? "" : t.error());
    ++n;
  }
  EXPECT_GE(n, 1);
}

// ---- the check on trees built around the shared files ------------------------------------

// A node tree holding exactly the PCI functions `devs` (bdf, vendor, class, numa_node) and
// NCCL_TOPO_FILE=/opt/topo.xml holding `xml`.
struct Dev {
  std::string bdf, vendor, klass;
  int numa;
};

report::Finding run_topo_check(const std::string& dir, const std::vector<Dev>& devs, const std::string& xml) {
  fs::create_directories(dir + "/proc/self");
  std::ofstream(dir + "/proc/self/environ", std::ios::binary) << std::string("HOME=/root\0NCCL_TOPO_FILE=/opt/topo.xml\0", 41);
  fs::create_directories(dir + "/opt");
  std::ofstream(dir + "/opt/topo.xml", std::ios::binary) << xml;
  for (const auto& d : devs) {
    auto p = dir + "/sys/bus/pci/devices/" + d.bdf;
    fs::create_directories(p);
    std::ofstream(p + "/vendor") << d.vendor << "\n";
    std::ofstream(p + "/class") << d.klass << "\n";
    std::ofstream(p + "/numa_node") << d.numa << "\n";
  }
  auto root = sys::Sysroot::at(dir);
  EXPECT_TRUE(root);
  auto facts = std::make_shared<facts::Facts>(*root, facts::Options{});
  const auto* info = core::builtin_registry().find("nccl.topo_file");
  EXPECT_NE(info, nullptr);
  auto findings = core::run_checks({info}, facts, core::Config{}, core::RunOptions{});
  EXPECT_EQ(findings.size(), 1u);
  return findings.front();
}

std::vector<Dev> ndv2_devices() {
  std::vector<Dev> devs;
  for (int i = 1; i <= 8; ++i) devs.push_back({"000" + std::to_string(i) + ":00:00.0", "0x10de", "0x030200", i <= 4 ? 0 : 1});
  devs.push_back({"0101:00:00.0", "0x15b3", "0x020700", 0});
  return devs;
}

TEST(NcclTopoCheck, TreeMatchingAzureNdv2Passes) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto f = run_topo_check(tmp.path(), ndv2_devices(), read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::pass) << f.title;
}

TEST(NcclTopoCheck, TreeWithAGpuElsewhereFails) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto devs = ndv2_devices();
  devs[7].bdf = "0009:00:00.0";  // the file's 0008:00:00.0 is gone, a GPU it does not list is here
  auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
  EXPECT_NE(f.title.find("0008:00:00.0"), std::string::npos) << f.title;
}

TEST(NcclTopoCheck, TreeWithWrongNumaFails) {
  REQUIRE_TOPO_FILE("azhpc-ndv2-topo.xml");
  fixture::TempDir tmp;
  auto devs = ndv2_devices();
  devs[0].numa = 1;
  auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv2-topo.xml"));
  EXPECT_EQ(f.status, report::Status::fail) << f.title;
  EXPECT_NE(f.title.find("numa_node"), std::string::npos) << f.title;
}

TEST(NcclTopoCheck, TreeMatchingAwsP4dPassesAndAnotherNodeTypeFails) {
  REQUIRE_TOPO_FILE("aws-ofi-nccl-p4d-24xl-topo.xml");
  std::vector<Dev> devs;
  for (const char* bus : {"10", "20", "90", "a0"}) {
    int numa = (bus[0] == '1' || bus[0] == '2') ? 0 : 1;
    devs.push_back({std::string("0000:") + bus + ":1c.0", "0x10de", "0x030200", numa});
    devs.push_back({std::string("0000:") + bus + ":1d.0", "0x10de", "0x030200", numa});
    devs.push_back({std::string("0000:") + bus + ":1b.0", "0x1d0f", "0x020000", numa});
  }
  {
    fixture::TempDir tmp;
    auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "aws-ofi-nccl-p4d-24xl-topo.xml"));
    EXPECT_EQ(f.status, report::Status::pass) << f.title;
  }
  if (fs::exists(kTopoDir / "azhpc-ndv4-topo.xml")) {
    fixture::TempDir tmp;
    auto f = run_topo_check(tmp.path(), devs, read_file(kTopoDir / "azhpc-ndv4-topo.xml"));
    EXPECT_EQ(f.status, report::Status::fail) << f.title;
  }
}

TEST(NcclTopoCheck, GraphFileFails) {
  REQUIRE_TOPO_FILE("azhpc-ncv4-graph.xml");
  fixture::TempDir tmp;
  auto f = run_topo_check(tmp.path(), ndv2_devices(), read_file(kTopoDir / "azhpc-ncv4-graph.xml"));
  EXPECT_EQ(f.status, report::Status::fail);
  EXPECT_NE(f.title.find("graph file"), std::string::npos) << f.title;
}

// ---- bad input ---------------------------------------------------------------------------

TEST(NcclTopoBadInput, FiftyMegabytesIsRefusedWithoutReadingItWhole) {
  fixture::TempDir tmp;
  std::string xml = "<system version=\"1\"><cpu numaid=\"0\">";
  std::string row = "<pci busid=\"0000:18:00.0\" class=\"0x030200\" link_speed=\"16 GT/s\" link_width=\"16\"/>\n";
  xml.reserve(50u << 20);
  while (xml.size() < (50u << 20)) xml += row;
  xml += "</cpu></system>";
  auto start = std::chrono::steady_clock::now();
  auto f = run_topo_check(tmp.path(), ndv2_devices(), xml);
  auto ms = std::chrono::duration_cast<std::chrono::milliseconds>(std::chrono::steady_clock::now() - start).count();
  EXPECT_EQ(f.status, report::Status::fail);
  EXPECT_NE(f.title.find("larger than 4 MiB"), std::string::npos) << f.title;
  EXPECT_LT(ms, 5000);
  // The parser refuses it too when handed the text directly.
  auto t = facts::parse_nccl_topo(xml);
  EXPECT_FALSE(t);
}

TEST(NcclTopoBadInput, DeepNestingDoesNotExhaustTheStack) {
  std::string xml = "<system version=\"1\"><cpu numaid=\"0\">";
  for (int i = 0; i < 100000; ++i) xml += "<pci busid=\"ffff:ff:00.0\">";
  for (int i = 0; i < 100000; ++i) xml += "</pci>";
  xml += "</cpu></system>";
  auto t = facts::parse_nccl_topo(xml);
  ASSERT_TRUE(t) << t.error();
  EXPECT_EQ(t->pci.size(), 100000u);
}

TEST(NcclTopoBadInput, MalformedAndOtherFormats) {
  EXPECT_FALSE(facts::parse_nccl_topo(""));
  EXPECT_FALSE(facts::parse_nccl_topo("<system version=\"1\"><cpu></system>"));
  EXPECT_FALSE(facts::parse_nccl_topo("<system><cpu/></system>"));  // no version
  auto other = facts::parse_nccl_topo("<nvidia_smi_log/>");
  ASSERT_FALSE(other);
  EXPECT_NE(other.error().find("<nvidia_smi_log>"), std::string::npos);
  auto line = facts::parse_nccl_topo("<system version=\"1\">\n<cpu>\n</pci>\n</system>");
  ASSERT_FALSE(line);
  EXPECT_NE(line.error().find("line 3"), std::string::npos) << line.error();
}

TEST(NcclTopoBadInput, WhatNcclsOwnReaderRejects) {
  auto decl = facts::parse_nccl_topo("<?xml version=\"1.0\"?>\n<system version=\"1\"/>");
  ASSERT_TRUE(decl);
  ASSERT_FALSE(decl->nccl_rejects.empty());
  EXPECT_NE(decl->nccl_rejects[0].find("line 1"), std::string::npos);
  auto split = facts::parse_nccl_topo("<system version=\"1\">\n  <cpu numaid=\"0\"\n       affinity=\"ff\"/>\n</system>");
  ASSERT_TRUE(split);
  EXPECT_FALSE(split->nccl_rejects.empty());
  auto fine = facts::parse_nccl_topo("<!-- c -->\n<system version=\"1\">\n  <cpu numaid=\"0\"/>  <!-- x -->\n</system>\n");
  ASSERT_TRUE(fine);
  EXPECT_TRUE(fine->nccl_rejects.empty()) << fine->nccl_rejects.front();
}

}  // namespace
